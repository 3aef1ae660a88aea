// Parsing of sweep axes and byte sizes, shared by the config file and the command line.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/text_format.hpp"  // format_size, for the callers that parse and print sizes

namespace p2pbench {

// "4096", "64K", "64k", "64KiB", "64kib", "1M", "1MiB", "1g", "1GiB", "1T" (binary multiples in
// any case, as nccl-tests reads -b/-e; plain numbers are bytes). Throws InputError naming `key`
// on anything else, including zero, negative sizes and sizes that do not fit in 64 bits.
uint64_t parse_size_text(const std::string& text, const std::string& key);
uint64_t parse_size(const nlohmann::json& value, const std::string& key);

// "a,b,c" -> {"a", "b", "c"} (an empty string gives one empty item).
std::vector<std::string> split_list(const std::string& text, char separator = ',');


// An axis in a config file: a JSON list of values, or {"min": A, "max": B, "factor": F}
// (geometric range; factor defaults to 2). `sizes` selects size parsing for the values;
// `zero_allowed`: 0 is a value of the axis (in a list, not as a range's start).
std::vector<uint64_t> parse_axis(const nlohmann::json& value, const std::string& key, bool sizes,
                                 bool zero_allowed = false);

// The same axis on the command line: "1,2,4", or "MIN..MAX" (powers of two), or "MIN..MAX:F".
// Returns the JSON form, so that flags and files are validated by one code path.
nlohmann::json axis_flag_to_json(const std::string& text, const std::string& flag);

// The values of a geometric range: min, min*F, ... below max, and max itself (always included,
// so "1..132" ends at 132). Throws on min > max.
std::vector<uint64_t> geometric_range(uint64_t min, uint64_t max, uint64_t factor, const std::string& key);

}  // namespace p2pbench
