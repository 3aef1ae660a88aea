#include "vocab/kernel_shape.hpp"

namespace p2pbench {

std::optional<uint64_t> KernelShape::axis_value(ShapeAxis a) const {
  auto wide = [](const std::optional<int>& v) { return v ? std::optional<uint64_t>(uint64_t(*v)) : std::nullopt; };
  switch (a) {
    case ShapeAxis::kBlocks: return wide(blocks);
    case ShapeAxis::kThreads: return wide(threads);
    case ShapeAxis::kUnroll: return wide(unroll);
    case ShapeAxis::kSmemBytes: return smem_bytes;
    case ShapeAxis::kStages: return wide(stages);
    case ShapeAxis::kChunkBytes: return chunk_bytes;
    case ShapeAxis::kChunksInFlight: return wide(chunks_in_flight);
    case ShapeAxis::kRoutingSkew: return routing_skew;
    case ShapeAxis::kTiles: return tiles;
    case ShapeAxis::kGemmK: return gemm_k;
    case ShapeAxis::kSignalGroup: return signal_group;
    case ShapeAxis::kSignalCopy: return signal_copy;
    case ShapeAxis::kCopyBatch: return copy_batch;
  }
  return std::nullopt;
}

void KernelShape::set_axis(ShapeAxis a, uint64_t v) {
  switch (a) {
    case ShapeAxis::kBlocks: blocks = int(v); break;
    case ShapeAxis::kThreads: threads = int(v); break;
    case ShapeAxis::kUnroll: unroll = int(v); break;
    case ShapeAxis::kSmemBytes: smem_bytes = v; break;
    case ShapeAxis::kStages: stages = int(v); break;
    case ShapeAxis::kChunkBytes: chunk_bytes = v; break;
    case ShapeAxis::kChunksInFlight: chunks_in_flight = int(v); break;
    case ShapeAxis::kRoutingSkew: routing_skew = v; break;
    case ShapeAxis::kTiles: tiles = v; break;
    case ShapeAxis::kGemmK: gemm_k = v; break;
    case ShapeAxis::kSignalGroup: signal_group = v; break;
    case ShapeAxis::kSignalCopy: signal_copy = v; break;
    case ShapeAxis::kCopyBatch: copy_batch = v; break;
  }
}

}  // namespace p2pbench
