// The kernels a library's launch would run, read from a capture of that launch into a CUDA graph
// that is never launched: a library (NCCL, cuBLASLt) chooses its grids itself and says nothing of
// them, but the driver holds each kernel node's launch shape. NCCL's engines report their SMs from
// here (engines/nccl_engine.hpp NcclGridProbe), and the GEMM workload the grid of cuBLASLt's kernel
// (workloads/gemm_workload.hpp), which decides whether a transfer's blocks can find a free SM.
#pragma once

#include <cuda.h>  // CUfunction, CUkernel: the node's kernel, for the occupancy calculator
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_raii.hpp"

namespace p2pbench {

struct LaunchDims {
  unsigned x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

// One kernel node of a captured graph, as the driver's node parameters give it.
struct CapturedKernel {
  LaunchDims grid, block;
  unsigned dynamic_shared_bytes = 0;
  // The kernel: a function of a context, or (where the launch named a context-free kernel and
  // no function) a CUkernel; both null where the node names neither.
  CUfunction function = nullptr;
  CUkernel kernel = nullptr;
  uint64_t blocks() const { return grid.count(); }
  uint64_t threads_per_block() const { return block.count(); }
};

// The kernel nodes of `graph` (other nodes, e.g. memsets, left out), in the graph's node order;
// `what` names the graph in errors.
std::vector<CapturedKernel> kernel_nodes(const Graph& graph, const std::string& what);

// Captures what `enqueue` queues on `stream` and returns its kernel nodes; the graph is never
// launched, so nothing runs and the stream's later launches are as before. `stream` must be the
// one the real launches go to (a green context's stream included): a library may size its grid
// by the stream's context.
std::vector<CapturedKernel> captured_kernels(cudaStream_t stream, const std::function<void()>& enqueue,
                                             const std::string& what);

// The blocks of all `kernels` together.
uint64_t total_blocks(const std::vector<CapturedKernel>& kernels);

// How many blocks of `kernel` one SM can hold at once (the driver's occupancy calculator, for its
// block and dynamic shared memory, in the current context); nullopt, with `why_not` saying why,
// where the node named no kernel or the driver cannot say.
std::optional<int> resident_blocks_per_sm(const CapturedKernel& kernel, std::string& why_not);

}  // namespace p2pbench
