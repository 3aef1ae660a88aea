#include "engines/atomic_engine.hpp"

#include "common/errors.hpp"

namespace p2pbench {

kernels::AtomicShape atomic_shape_of(const CaseSpec& c) {
  using kernels::AtomicPattern;
  using kernels::AtomicType;
  kernels::AtomicShape shape;
  bool known = false;
  for (AtomicType t : {AtomicType::kU32, AtomicType::kF32, AtomicType::kF32x4, AtomicType::kF16x2, AtomicType::kBf16x2,
                       AtomicType::kF16x8, AtomicType::kBf16x8})
    if (c.atomic_type == kernels::atomic_type_name(t)) {
      shape.type = t;
      known = true;
    }
  if (!known) throw InputError("atomic.types", c.atomic_type.value_or("(none)"), "unknown atomic type");
  shape.pattern = c.atomic_pattern == "hot_spot" ? AtomicPattern::kHotSpot : AtomicPattern::kDistinct;
  shape.blocks = c.blocks.value_or(1);
  shape.threads = c.threads.value_or(256);
  shape.ops_per_thread = uint32_t(c.ops_per_thread.value_or(1));
  shape.hot_addresses = uint32_t(c.hot_addresses.value_or(1));
  return shape;
}

}  // namespace p2pbench
