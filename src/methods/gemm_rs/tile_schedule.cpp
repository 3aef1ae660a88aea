#include "methods/gemm_rs/tile_schedule.hpp"

#include <cmath>

namespace p2pbench::gemm_rs {

std::vector<uint64_t> TileSchedule::owned_by(int rank) const {
  std::vector<uint64_t> out;
  for (uint64_t t = 0; t < tiles; ++t)
    if (owner(t) == rank) out.push_back(t);
  return out;
}

std::optional<TileSchedule> tile_schedule(uint64_t bytes, uint64_t k, uint64_t tiles, int ranks, std::string& why) {
  const uint64_t elements = bytes / 4;
  uint64_t m = uint64_t(std::llround(std::sqrt(double(elements))));
  while (m * m > elements) --m;
  while ((m + 1) * (m + 1) <= elements) ++m;
  if (bytes % 4 != 0 || m * m != elements || m % 16 != 0) {
    why = "bytes (" + std::to_string(bytes) + ") must be the f32 D of a square GEMM: 4 m^2 with m a multiple of 16";
    return std::nullopt;
  }
  if (k == 0 || k % 16 != 0) {
    why = "gemm_k (" + std::to_string(k) + ") must be a positive multiple of 16";
    return std::nullopt;
  }
  if (tiles == 0 || m % (16 * tiles) != 0) {
    why = "tiles (" + std::to_string(tiles) + ") must split n = " + std::to_string(m) + " into whole 16-column blocks";
    return std::nullopt;
  }
  if (ranks < 1) {
    why = "a pipeline needs ranks";
    return std::nullopt;
  }
  return TileSchedule{m, m, k, tiles, ranks};
}

}  // namespace p2pbench::gemm_rs
