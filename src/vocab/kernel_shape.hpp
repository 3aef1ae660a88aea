// The kernel-shape fields of a case, one per ShapeAxis (each reached through its row of the axis
// table, vocab/shape_axes.cpp). In the vocabulary, beside the axes, so that
// a method's own rules across its axes (MethodInfo::axes_limits, shape_skip) read a shape.
#pragma once

#include <cstdint>
#include <optional>

#include "vocab/methods.hpp"

namespace p2pbench {

// The kernel-shape fields of a case (unset: the method has no such axis). Declared once here: the
// sweep expands shapes of it, and a case and its load carry one (plan/case_spec.hpp).
struct KernelShape {
  std::optional<int> blocks;
  std::optional<int> threads;
  std::optional<int> unroll;
  std::optional<uint64_t> smem_bytes;
  std::optional<int> stages;
  std::optional<uint64_t> chunk_bytes;  // put_signal: bytes per put (each followed by its signal)
  std::optional<int> chunks_in_flight;  // put_signal: puts a channel may have unconsumed
  std::optional<uint64_t> routing_skew; // tokens: 0 uniform routing, s > 0 Zipf expert popularity of exponent s / 100
  std::optional<uint64_t> tiles;        // gemm_rs: column tiles of the GEMM, each reduce-scattered as it is done
  std::optional<uint64_t> gemm_k;       // gemm_rs: the GEMM's inner dimension K
  std::optional<uint64_t> signal_group; // put_signal_ce: chunks per signal (the receiver waits per group)
  std::optional<uint64_t> signal_copy;  // put_signal_ce: 0 signal and credit by stream memory writes, 1 by 4-byte copies
  std::optional<uint64_t> copy_batch;   // put_signal_ce: 0 a copy call per put, 1 a group's puts in one batch call
  std::optional<uint64_t> claim_pieces; // all-gathers: pieces a block claims at a time (0: block b takes b, b + blocks, ...)

  // The value of axis `a` (nullopt: unset), and setting it.
  std::optional<uint64_t> axis_value(ShapeAxis a) const;
  void set_axis(ShapeAxis a, uint64_t v);
};

}  // namespace p2pbench
