#include "vocab/shape_axes.hpp"

#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "vocab/kernel_shape.hpp"

namespace p2pbench {

namespace {

// KernelShape's field `kField` as the table's accessors: its fields hold int or uint64_t, every
// value a whole number the table passes as uint64_t.
template <auto kField>
std::optional<uint64_t> field_value(const KernelShape& shape) {
  const auto& value = shape.*kField;
  return value ? std::optional<uint64_t>(static_cast<uint64_t>(*value)) : std::nullopt;
}

template <auto kField>
void set_field(KernelShape& shape, uint64_t value) {
  using Value = typename std::remove_reference_t<decltype(shape.*kField)>::value_type;
  shape.*kField = static_cast<Value>(value);
}

// In ShapeAxis order. Columns: axis, name, label, CLI flag, its help, counts bytes, allows zero,
// case-name key, case-name word, value before the axis, KernelShape's field.
constexpr ShapeAxisInfo kTable[] = {
    {ShapeAxis::kBlocks, "blocks", "b", "--blocks", "blocks (= SMs) of both SM kernels", false, false, "blocks",
     nullptr, std::nullopt, field_value<&KernelShape::blocks>, set_field<&KernelShape::blocks>},
    {ShapeAxis::kThreads, "threads", "t", "--threads", "threads per block of the LD/ST kernel (ldst.threads)", false,
     false, "threads", nullptr, std::nullopt, field_value<&KernelShape::threads>, set_field<&KernelShape::threads>},
    {ShapeAxis::kUnroll, "unroll", "u", "--unroll", "16-byte loads in flight per thread, 1/2/4/8 (ldst.unroll)", false,
     false, "unroll", nullptr, std::nullopt, field_value<&KernelShape::unroll>, set_field<&KernelShape::unroll>},
    {ShapeAxis::kSmemBytes, "smem_bytes", "smem ", "--smem", "shared memory per block of the TMA kernel (tma.smem_bytes)",
     true, false, "smem", nullptr, std::nullopt, field_value<&KernelShape::smem_bytes>,
     set_field<&KernelShape::smem_bytes>},
    {ShapeAxis::kStages, "stages", "s", "--stages", "shared-memory stages of the TMA ring (tma.stages)", false, false,
     "stages", nullptr, std::nullopt, field_value<&KernelShape::stages>, set_field<&KernelShape::stages>},
    {ShapeAxis::kChunkBytes, "chunk_bytes", "chunk ", "--chunk-bytes",
     "bytes per put of the put_signal methods, each followed by its signal (put_signal_*.chunk_bytes)", true, false,
     "chunk", nullptr, std::nullopt, field_value<&KernelShape::chunk_bytes>, set_field<&KernelShape::chunk_bytes>},
    {ShapeAxis::kChunksInFlight, "chunks_in_flight", "w", "--chunks-in-flight",
     "puts a put_signal channel may have unconsumed (put_signal_*.chunks_in_flight)", false, false, "in_flight",
     nullptr, std::nullopt, field_value<&KernelShape::chunks_in_flight>, set_field<&KernelShape::chunks_in_flight>},
    {ShapeAxis::kRoutingSkew, "routing_skew", "skew ", "--routing-skew",
     "the tokens methods' expert popularity: 0 uniform, s > 0 Zipf of exponent s/100 (tokens_*.routing_skew)", false,
     true, "skew", nullptr, std::nullopt, field_value<&KernelShape::routing_skew>,
     set_field<&KernelShape::routing_skew>},
    {ShapeAxis::kTiles, "tiles", "tiles ", "--tiles",
     "column tiles of the GEMM -> reduce-scatter pipeline (gemm_rs_*.tiles)", false, false, "tiles", nullptr,
     std::nullopt, field_value<&KernelShape::tiles>, set_field<&KernelShape::tiles>},
    {ShapeAxis::kGemmK, "gemm_k", "K ", "--gemm-k", "the pipeline GEMM's inner dimension K (gemm_rs_*.gemm_k)", false,
     false, "k", nullptr, std::nullopt, field_value<&KernelShape::gemm_k>, set_field<&KernelShape::gemm_k>},
    // Before these three: a signal per chunk, written by the stream, a copy call per put.
    {ShapeAxis::kSignalGroup, "signal_group", "group ", "--signal-group",
     "chunks per signal of the copy engine's put with signal (put_signal_ce.signal_group)", false, false, "group",
     nullptr, 1, field_value<&KernelShape::signal_group>, set_field<&KernelShape::signal_group>},
    {ShapeAxis::kSignalCopy, "signal_copy", "signal copy ", "--signal-copy",
     "1: the copy engine's signals and credits as 4-byte copies, 0: as stream memory writes "
     "(put_signal_ce.signal_copy)",
     false, true, "signal", "copy", 0, field_value<&KernelShape::signal_copy>, set_field<&KernelShape::signal_copy>},
    {ShapeAxis::kCopyBatch, "copy_batch", "batch ", "--copy-batch",
     "1: a signal group's puts in one cudaMemcpyBatchAsync, 0: a cudaMemcpyAsync per put (put_signal_ce.copy_batch)",
     false, true, "copies", "batch", 0, field_value<&KernelShape::copy_batch>, set_field<&KernelShape::copy_batch>},
    // Before it: block b of the all-gathers took pieces b, b + blocks, ...
    {ShapeAxis::kClaimPieces, "claim_pieces", "claim ", "--claim-pieces",
     "pieces an all-gather block claims at a time from a counter its rank's blocks share, 0: block b takes pieces "
     "b, b + blocks, ... (all_gather_put.claim_pieces, all_gather_tma.claim_pieces)",
     false, true, "claim", nullptr, 0, field_value<&KernelShape::claim_pieces>, set_field<&KernelShape::claim_pieces>},
};

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kTable); ++i)
    if (kTable[i].axis != static_cast<ShapeAxis>(i)) return false;
  return std::size(kTable) == kShapeAxisCount;
}
static_assert(rows_in_enum_order(), "kTable: one row per ShapeAxis, in the enum's order");

}  // namespace

const ShapeAxisInfo& shape_axis_info(ShapeAxis a) {
  const auto i = static_cast<size_t>(a);
  if (i >= kShapeAxisCount) throw std::out_of_range("no shape axis " + std::to_string(i));
  return kTable[i];
}

const char* to_string(ShapeAxis a) { return shape_axis_info(a).name; }

}  // namespace p2pbench
