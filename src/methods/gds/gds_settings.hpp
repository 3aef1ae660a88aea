// The gds methods' config section, "gds": {"directory"}: where their file goes. Declared with the
// methods (MethodInfo::settings), so the config layer knows no key of theirs.
#pragma once

#include <optional>
#include <string>

#include "config/settings_section.hpp"
#include "plan/case_spec.hpp"

namespace p2pbench::gds {

extern const SettingsSection kSection;

// The directory of the case's file (the config's gds.directory), or nullopt where none was given.
std::optional<std::string> directory_of(const CaseSpec& c);

}  // namespace p2pbench::gds
