#include "config/interference_config.hpp"

#include <algorithm>
#include <set>

#include "common/errors.hpp"
#include "config/axis.hpp"
#include "config/config_keys.hpp"

namespace p2pbench {

namespace {

using json = nlohmann::json;
using Namer = std::function<std::string(const std::string&)>;

constexpr uint64_t kMaxGemmDim = 65536;
constexpr uint64_t kGemmAlignment = 16;       // bf16 rows of 32 bytes keep cuBLASLt's fast kernels
constexpr uint64_t kMaxSmPartition = 1024;    // more SMs than any GPU has is a typo
constexpr uint64_t kMinHbmBytes = 1ull << 20;

// A method may run beside a workload where the registry says so (the only ones engine_names() lists).
std::optional<Method> parse_engine(const std::string& s) {
  const auto m = parse_method(s);
  return m && may_run_beside_workload(method_info(*m)) ? m : std::nullopt;
}

GemmShape parse_gemm(const json& v, const Namer& name) {
  if (!v.is_object())
    throw InputError(name("interference.gemm"), v.dump(), "must be an object {\"m\", \"n\", \"k\", \"operands\"}");
  reject_unknown_keys(v, {"m", "n", "k", "operands"}, "interference.gemm.", name);
  GemmShape shape;
  if (v.contains("operands")) {
    const json& o = v["operands"];
    const auto& known = gemm_operand_names();
    if (!o.is_string() || std::find(known.begin(), known.end(), o.get<std::string>()) == known.end())
      throw InputError(name("interference.gemm.operands"), o.dump(),
                       "must be \"gaussian\" (full-entropy bf16, the default) or \"eighths\" (17 values, low entropy)");
    shape.operands = o.get<std::string>();
  }
  for (auto [key, target] : {std::pair{"m", &shape.m}, std::pair{"n", &shape.n}, std::pair{"k", &shape.k}}) {
    if (!v.contains(key)) continue;
    const json& d = v[key];
    const std::string full = std::string("interference.gemm.") + key;
    if (!d.is_number_integer() || d.get<int64_t>() < int64_t(kGemmAlignment) || uint64_t(d.get<int64_t>()) > kMaxGemmDim ||
        d.get<int64_t>() % int64_t(kGemmAlignment) != 0)
      throw InputError(name(full), d.dump(),
                       "must be a multiple of 16 from 16 to " + std::to_string(kMaxGemmDim) + " (bf16 operands, 32-byte rows)");
    *target = uint64_t(d.get<int64_t>());
  }
  return shape;
}

std::vector<uint64_t> parse_partitions(const json& v, const Namer& name) {
  const std::string key = "interference.sm_partitions";
  if (!v.is_array() || v.empty())
    throw InputError(name(key), v.dump(), "expected a non-empty list of SM counts (0 = no partition), e.g. [0, 8, 16]");
  std::vector<uint64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item_key = key + "[" + std::to_string(i) + "]";
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || uint64_t(v[i].get<int64_t>()) > kMaxSmPartition)
      throw InputError(name(item_key), v[i].dump(),
                       "must be an integer from 0 (no partition) to " + std::to_string(kMaxSmPartition) + " SMs");
    const uint64_t k = uint64_t(v[i].get<int64_t>());
    if (std::find(out.begin(), out.end(), k) != out.end()) throw InputError(name(item_key), v[i].dump(), "listed twice");
    out.push_back(k);
  }
  return out;
}

}  // namespace

std::vector<Method> load_methods() {
  std::vector<Method> out;
  for (const MethodInfo& m : method_registry())
    if (m.runs_as_load) out.push_back(m.id);
  return out;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const MethodInfo& m : method_registry())
    if (may_run_beside_workload(m)) names.push_back(m.name);
  return names;
}

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = {"gemm", "hbm"};
  return names;
}

void parse_interference_section(const json& section, const Namer& name, InterferenceSettings& out) {
  if (!section.is_object()) throw InputError(name("interference"), section.dump(), "must be an object");
  reject_unknown_keys(section,
                      {"workloads", "gemm", "hbm_bytes", "engines", "sm_partitions", "both_gpus_busy", "transfer_high_priority"},
                      "interference.", name);
  if (section.contains("workloads"))
    out.workloads = parse_name_list(section["workloads"], "interference.workloads", name, workload_names());
  if (section.contains("gemm")) out.gemm = parse_gemm(section["gemm"], name);
  if (section.contains("hbm_bytes")) {
    out.hbm_bytes = parse_size(section["hbm_bytes"], name("interference.hbm_bytes"));
    if (out.hbm_bytes < kMinHbmBytes || out.hbm_bytes % 16 != 0)
      throw InputError(name("interference.hbm_bytes"), section["hbm_bytes"].dump(),
                       "must be a multiple of 16 bytes, at least 1 MiB (a launch that short measures the launch, not HBM)");
  }
  if (section.contains("engines"))
    out.engines = parse_name_list<Method>(section["engines"], "interference.engines", name, engine_names(), parse_engine);
  if (section.contains("sm_partitions")) out.sm_partitions = parse_partitions(section["sm_partitions"], name);
  const auto flag = [&](const char* key, bool& value) {
    if (!section.contains(key)) return;
    const json& v = section[key];
    if (!v.is_boolean()) throw InputError(name(std::string("interference.") + key), v.dump(), "must be true or false");
    value = v.get<bool>();
  };
  flag("both_gpus_busy", out.both_gpus_busy);
  flag("transfer_high_priority", out.transfer_high_priority);
}

json InterferenceSettings::to_json() const {
  json engine_names = json::array();
  for (Method m : engines) engine_names.push_back(to_string(m));
  return {{"workloads", workloads},
          {"gemm", {{"m", gemm.m}, {"n", gemm.n}, {"k", gemm.k}, {"operands", gemm.operands}}},
          {"hbm_bytes", hbm_bytes},
          {"engines", engine_names},
          {"sm_partitions", sm_partitions},
          {"both_gpus_busy", both_gpus_busy},
          {"transfer_high_priority", transfer_high_priority}};
}

}  // namespace p2pbench
