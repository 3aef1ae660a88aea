#include "methods/gemm_rs/gemm_rs_kernels.hpp"

#include <string>

#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "kernels/f32_vectors.cuh"
#include "kernels/rank_barrier.cuh"

namespace p2pbench::gemm_rs {
namespace {

constexpr int kVector = kernels::kF32Vector;

// f(k) for the block's 16-byte vectors of a tile (tile_elements is a multiple of 16): piece j
// of blockDim.x vectors goes to block j % gridDim.x on every rank.
template <class F>
__device__ void for_each_vector(const TileReduce& l, F f) {
  const uint64_t piece = uint64_t(blockDim.x) * kVector;
  for (uint64_t p = blockIdx.x * piece; p < l.tile_elements; p += gridDim.x * piece) {
    const uint64_t k = p + threadIdx.x * kVector;
    if (k < l.tile_elements) f(k);
  }
}

__device__ void reduce_tiles_body(const TileReduce& l) {
  __shared__ uint32_t start;
  if (threadIdx.x == 0) start = l.counts[blockIdx.x];
  __syncthreads();
  uint32_t count = start;
  const uint32_t operation = count / 2 + 1;  // two barriers per operation; the flags count operations
  const kernels::F32x4 zero = {};
  for (uint64_t t = uint64_t(l.me); t < l.tiles; t += uint64_t(l.ranks)) {
    float* mine = l.output[l.me] + t * l.tile_elements;
    for_each_vector(l, [&](uint64_t k) { kernels::store_f32(mine + k, zero, kVector); });
  }
  bool ok = kernels::rank_barrier(l, ++count);
  for (uint64_t t = 0; ok && t < l.tiles; ++t) {
    if (l.wait_for_tiles) {
      bool ready = true;
      if (threadIdx.x == 0) ready = kernels::wait_for_count(l, l.ready + t, operation, kernels::kNoPeer);
      if (!__syncthreads_and(ready)) {
        ok = false;
        break;
      }
    }
    const float* tile = l.partial + t * l.tile_elements;
    float* owner = l.output[t % uint64_t(l.ranks)] + t * l.tile_elements;
    for_each_vector(l, [&](uint64_t k) { kernels::add_f32_into(owner + k, kernels::load_f32(tile + k, kVector), kVector); });
  }
  if (ok) kernels::rank_barrier(l, ++count);
  // Counted as if every barrier passed: after a timeout the sample fails and the next resets.
  if (threadIdx.x == 0) l.counts[blockIdx.x] = start + 2;
}

__global__ void reduce_tiles_kernel(TileReduce l) { reduce_tiles_body(l); }

struct TileReduceSet {
  TileReduce rank[kernels::kMaxBarrierRanks];
};

// blockIdx.y = the rank: its blocks run the body as that rank's own launch would.
__global__ void reduce_tiles_in_one_grid_kernel(TileReduceSet s) { reduce_tiles_body(s.rank[blockIdx.y]); }

__global__ void mark_kernel(uint32_t* flag) { ptx::st_release_sys(flag, *flag + 1); }

}  // namespace

void reduce_tiles(const TileReduce& l, int blocks, int threads, cudaStream_t stream) {
  reduce_tiles_kernel<<<blocks, threads, 0, stream>>>(l);
  cuda_check(cudaGetLastError(), "launching the pipeline's tile reduce-scatter");
}

void reduce_tiles_in_one_grid(const std::vector<TileReduce>& ranks, int blocks, int threads, cudaStream_t stream) {
  if (ranks.empty() || ranks.size() > size_t(kernels::kMaxBarrierRanks))
    throw RuntimeFailure("reduce_tiles_in_one_grid takes 1 to " + std::to_string(kernels::kMaxBarrierRanks) + " ranks");
  TileReduceSet s;
  for (size_t r = 0; r < ranks.size(); ++r) s.rank[r] = ranks[r];
  reduce_tiles_in_one_grid_kernel<<<dim3(unsigned(blocks), unsigned(ranks.size())), threads, 0, stream>>>(s);
  cuda_check(cudaGetLastError(), "launching every rank's tile reduce-scatter in one grid");
}

void mark_tile_done(uint32_t* flag, cudaStream_t stream) {
  mark_kernel<<<1, 1, 0, stream>>>(flag);
  cuda_check(cudaGetLastError(), "launching a tile's done flag");
}

}  // namespace p2pbench::gemm_rs
