#include "vocab/kernel_shape.hpp"

namespace p2pbench {

std::optional<uint64_t> KernelShape::axis_value(ShapeAxis a) const { return shape_axis_info(a).value_of(*this); }

void KernelShape::set_axis(ShapeAxis a, uint64_t v) { shape_axis_info(a).set(*this, v); }

}  // namespace p2pbench
