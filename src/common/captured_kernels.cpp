#include "common/captured_kernels.hpp"

#include "common/cuda_check.hpp"
#include "common/driver_entry_point.hpp"

namespace p2pbench {

namespace {

// The node's parameters through the driver's call: a library that launches through the driver
// (NCCL, cuBLASLt) leaves nodes whose runtime view may lack the function.
CUDA_KERNEL_NODE_PARAMS node_params(cudaGraphNode_t node, const std::string& what) {
  using KernelNodeParams = CUresult(CUDAAPI*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*);
  static const KernelNodeParams get_params = driver_entry_point<KernelNodeParams>("cuGraphKernelNodeGetParams", 12000);
  CUDA_KERNEL_NODE_PARAMS params{};
  driver_check(get_params(node, &params), "reading a kernel's launch shape in " + what);
  return params;
}

// The function of `kernel` in the current context (a CUkernel is context-free; the occupancy
// calculator wants a function); null with `why_not` set where the driver gives none.
CUfunction function_of(CUkernel kernel, std::string& why_not) {
  using GetFunction = CUresult(CUDAAPI*)(CUfunction*, CUkernel);
  static const GetFunction get_function = driver_entry_point<GetFunction>("cuKernelGetFunction", 12000);
  CUfunction function = nullptr;
  const CUresult result = get_function(&function, kernel);
  if (result != CUDA_SUCCESS)
    why_not = "the driver gives no function of the node's kernel: " + driver_error_name(result);
  return result == CUDA_SUCCESS ? function : nullptr;
}

}  // namespace

std::vector<CapturedKernel> kernel_nodes(const Graph& graph, const std::string& what) {
  size_t count = 0;
  cuda_check(cudaGraphGetNodes(graph.get(), nullptr, &count), "counting the nodes of " + what);
  std::vector<cudaGraphNode_t> nodes(count);
  cuda_check(cudaGraphGetNodes(graph.get(), nodes.data(), &count), "listing the nodes of " + what);
  std::vector<CapturedKernel> kernels;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    cuda_check(cudaGraphNodeGetType(node, &type), "reading a node's type in " + what);
    if (type != cudaGraphNodeTypeKernel) continue;
    const CUDA_KERNEL_NODE_PARAMS p = node_params(node, what);
    CapturedKernel k;
    k.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
    k.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
    k.dynamic_shared_bytes = p.sharedMemBytes;
    k.function = p.func;
    k.kernel = p.kern;  // the driver reads it only where func is null
    kernels.push_back(k);
  }
  return kernels;
}

std::vector<CapturedKernel> captured_kernels(cudaStream_t stream, const std::function<void()>& enqueue,
                                             const std::string& what) {
  return kernel_nodes(capture_graph(stream, enqueue, what), what);
}

uint64_t total_blocks(const std::vector<CapturedKernel>& kernels) {
  uint64_t blocks = 0;
  for (const CapturedKernel& k : kernels) blocks += k.blocks();
  return blocks;
}

std::optional<int> resident_blocks_per_sm(const CapturedKernel& kernel, std::string& why_not) {
  CUfunction function = kernel.function;
  if (function == nullptr && kernel.kernel != nullptr) function = function_of(kernel.kernel, why_not);
  if (function == nullptr) {
    if (why_not.empty()) why_not = "the node names no kernel";
    return std::nullopt;
  }
  using Occupancy = CUresult(CUDAAPI*)(int*, CUfunction, int, size_t);
  static const Occupancy occupancy = driver_entry_point<Occupancy>("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050);
  int blocks = 0;
  const CUresult result = occupancy(&blocks, function, int(kernel.threads_per_block()), kernel.dynamic_shared_bytes);
  if (result != CUDA_SUCCESS) {
    why_not = "the driver's occupancy calculator: " + driver_error_name(result);
    return std::nullopt;
  }
  return blocks;
}

}  // namespace p2pbench
