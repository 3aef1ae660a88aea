// The kernel-shape axes, in one table (shape_axes.cpp): their names in configs, rows and case
// names, their CLI flags, the report's labels and what rows before an axis ran. KernelShape's
// accessors, the CLI's axis flags, case names and `p2pbench --list-methods --json` (which the
// Python report reads) derive from it, so an axis is added as an enumerator, a row and its
// KernelShape field.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace p2pbench {

struct KernelShape;  // vocab/kernel_shape.hpp: a case's values of these axes

// The kernel-shape fields of a case (and of its row), in the order of every list of them (rows,
// case names, --help, the report's columns). kCount is not an axis: it counts them.
enum class ShapeAxis { kBlocks, kThreads, kUnroll, kSmemBytes, kStages, kChunkBytes, kChunksInFlight, kRoutingSkew,
                       kTiles, kGemmK, kSignalGroup, kSignalCopy, kCopyBatch, kClaimPieces, kCount };
inline constexpr size_t kShapeAxisCount = static_cast<size_t>(ShapeAxis::kCount);
// Every axis, in enum order.
inline constexpr std::array<ShapeAxis, kShapeAxisCount> kShapeAxes = [] {
  std::array<ShapeAxis, kShapeAxisCount> axes{};
  for (size_t i = 0; i < kShapeAxisCount; ++i) axes[i] = static_cast<ShapeAxis>(i);
  return axes;
}();

// What one axis is beyond its value.
struct ShapeAxisInfo {
  ShapeAxis axis;
  const char* name;      // the config key in a method's section, the row's field, the CSV column
  const char* label;     // the report's short label before a value ("b" -> "b132", "smem " -> "smem 128K")
  const char* cli_flag;  // sets it in every method that sweeps it ("--smem")
  const char* cli_help;  // that flag's --help line
  bool counts_bytes;     // its config values may be sizes ("16KiB")
  bool allows_zero;      // 0 is one of its values (routing_skew 0: uniform routing)
  // How a case's name shows it: "/KEY:VALUE", or "/KEY:WORD" where `name_word` is set (an on/off
  // switch: "/signal:copy").
  const char* name_key;
  const char* name_word;
  // The value every case ran at before the axis existed: left out of case names there, so those
  // keep their names, and what the report reads a row without the field as. Unset: always named.
  std::optional<uint64_t> value_before_axis;
  std::optional<uint64_t> (*value_of)(const KernelShape& shape);  // KernelShape's field (unset: nullopt)
  void (*set)(KernelShape& shape, uint64_t value);
};

const ShapeAxisInfo& shape_axis_info(ShapeAxis a);

// "blocks", "threads", ..., "copy_batch": the axis' name.
const char* to_string(ShapeAxis a);
// Whether the axis counts bytes (its config values may be sizes: "16KiB").
inline bool is_byte_axis(ShapeAxis a) { return shape_axis_info(a).counts_bytes; }
// Whether 0 is one of the axis' values.
inline bool axis_allows_zero(ShapeAxis a) { return shape_axis_info(a).allows_zero; }

}  // namespace p2pbench
