// LD/ST copy: every thread of the grid moves 16-byte vectors with ordinary loads and stores.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/copy_device.cuh"
#include "kernels/copy_kernels.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {
namespace {

constexpr int kCopyMaxThreads = 1024;

// minBlocks 1 lets ptxas use up to 64 registers/thread at 1024 threads; one block per SM is
// enforced by the shared-memory padding, not by the launch bounds.
template <int Unroll>
__global__ void __launch_bounds__(kCopyMaxThreads, 1)
    ldst_copy_kernel(const uint8_t* src, uint8_t* dst, size_t bytes, unsigned* block_smids) {
  if (block_smids != nullptr && threadIdx.x == 0) block_smids[blockIdx.x] = ptx::smid();
  const size_t workers = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t worker = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  detail::copy_any<Unroll>(src, dst, bytes, worker, workers);
}

using LdstKernel = void (*)(const uint8_t*, uint8_t*, size_t, unsigned*);

// Unroll is a template parameter so the loads live in registers; the shape picks it at run time.
LdstKernel ldst_kernel_for(int unroll) {
  switch (unroll) {
    case 1: return ldst_copy_kernel<1>;
    case 2: return ldst_copy_kernel<2>;
    case 4: return ldst_copy_kernel<4>;
    case 8: return ldst_copy_kernel<8>;
    default: return nullptr;
  }
}

std::string describe(const LdstShape& s) {
  return "ldst shape (blocks " + std::to_string(s.blocks) + ", threads " + std::to_string(s.threads) +
         ", unroll " + std::to_string(s.unroll) + ")";
}

}  // namespace

std::optional<std::string> ldst_unsupported_reason(const LdstShape& shape, int device) {
  if (shape.blocks < 1) return "blocks must be at least 1 (got " + std::to_string(shape.blocks) + ")";
  if (shape.threads < 32 || shape.threads > kCopyMaxThreads || shape.threads % 32 != 0)
    return "threads per block must be a multiple of 32 in 32..1024 (got " + std::to_string(shape.threads) + ")";
  if (ldst_kernel_for(shape.unroll) == nullptr)
    return "unroll must be 1, 2, 4 or 8 (got " + std::to_string(shape.unroll) + ")";
  int optin = 0;
  cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
             "querying the opt-in shared memory per block");
  const size_t pad = detail::one_block_per_sm_smem(device);
  if (pad > static_cast<size_t>(optin))
    return "this GPU cannot give one block more than half of an SM's shared memory (" + std::to_string(pad) +
           " > " + std::to_string(optin) + " bytes), so one block per SM cannot be enforced";
  return std::nullopt;
}

void ldst_prepare(const LdstShape& shape, int device) {
  if (auto why = ldst_unsupported_reason(shape, device)) throw InputError(describe(shape) + ": " + *why);
  const size_t pad = detail::one_block_per_sm_smem(device);
  cuda_check(cudaFuncSetAttribute(ldst_kernel_for(shape.unroll), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(pad)),
             "allowing " + std::to_string(pad) + " bytes of dynamic shared memory for the " + describe(shape));
}

void ldst_copy(const LdstShape& shape, const void* src, void* dst, size_t bytes, cudaStream_t stream,
               unsigned* block_smids) {
  const LdstKernel kernel = ldst_kernel_for(shape.unroll);
  if (kernel == nullptr) throw InputError(describe(shape) + ": unroll must be 1, 2, 4 or 8");
  // The padding is never touched: it only keeps a second block off the SM.
  const size_t pad = detail::one_block_per_sm_smem(detail::current_device());
  kernel<<<shape.blocks, shape.threads, pad, stream>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst),
                                                       bytes, block_smids);
  cuda_check_launch("the LD/ST copy kernel, " + describe(shape));
}

}  // namespace p2pbench::kernels
