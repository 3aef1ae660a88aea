// The GEMM -> reduce-scatter pipeline's tiles. Each rank computes D_r = A_r B_r (bf16 operands,
// f32 D, column-major, M = N) and the ranks reduce-scatter the sum of their D: D is cut into
// `tiles` column tiles of N / tiles columns (each contiguous in memory), and tile t belongs to
// rank t % ranks, so every rank owns tiles spread over the whole GEMM and a tile can be sent as
// soon as it is computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace p2pbench::gemm_rs {

struct TileSchedule {
  uint64_t m = 0, n = 0, k = 0;  // D is m x n (m = n), the inner dimension k
  uint64_t tiles = 0;
  int ranks = 0;

  uint64_t columns() const { return n / tiles; }          // of one tile
  uint64_t tile_elements() const { return m * columns(); }
  uint64_t first_element(uint64_t t) const { return t * tile_elements(); }
  int owner(uint64_t t) const { return int(t % uint64_t(ranks)); }
  std::vector<uint64_t> owned_by(int rank) const;          // the rank's tiles, in order
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }  // one rank's GEMM
};

// The schedule of a case: `bytes` is D's size in f32 (m = n = sqrt(bytes / 4)). Nullopt with
// `why` set where it does not split: bytes not 4 m^2 with m a multiple of 16, k not a positive
// multiple of 16, or n not a multiple of 16 x tiles (every tile whole 16-column blocks).
std::optional<TileSchedule> tile_schedule(uint64_t bytes, uint64_t k, uint64_t tiles, int ranks, std::string& why);

}  // namespace p2pbench::gemm_rs
