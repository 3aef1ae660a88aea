#include "vocab/variants.hpp"

namespace p2pbench {

const std::vector<std::string>& signal_protocol_names() {
  static const std::vector<std::string> names = {"flag_in_data", "payload_then_flag", "tma_then_flag", "ce_then_flag"};
  return names;
}

const std::vector<std::string>& gemm_operand_names() {
  static const std::vector<std::string> names = {"gaussian", "eighths"};
  return names;
}

const std::vector<std::string>& read_load_names() {
  static const std::vector<std::string> names = {"plain", "relaxed_sys", "absolute", "generic"};
  return names;
}

const std::vector<std::string>& read_launch_names() {
  static const std::vector<std::string> names = {"single", "every_sm"};
  return names;
}

const std::vector<std::string>& read_timing_names() {
  static const std::vector<std::string> names = {"kernel_timer", "events"};
  return names;
}

const std::vector<std::string>& read_owner_names() {
  static const std::vector<std::string> names = {"idle", "busy"};
  return names;
}

std::string ReadChase::protocol() const {
  const ReadChase d;
  std::string p = load;
  if (launch != d.launch) p += ",launch=" + launch;
  if (timing != d.timing) p += ",timing=" + timing;
  if (owner != d.owner) p += ",owner=" + owner;
  if (stride_bytes != d.stride_bytes) p += ",stride=" + std::to_string(stride_bytes);
  if (loads != d.loads) p += ",loads=" + std::to_string(loads);
  return p;
}

const std::vector<std::string>& atomic_type_names() {
  static const std::vector<std::string> names = {"u32", "f32", "f32x4", "f16x2", "bf16x2", "f16x8", "bf16x8"};
  return names;
}

const std::vector<std::string>& atomic_pattern_names() {
  static const std::vector<std::string> names = {"distinct", "hot_spot"};
  return names;
}

uint64_t atomic_type_bytes(const std::string& type) {
  return (type == "f32x4" || type == "f16x8" || type == "bf16x8") ? 16 : 4;
}

}  // namespace p2pbench
