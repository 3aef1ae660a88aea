#include "vocab/collectives.hpp"

#include <algorithm>

namespace p2pbench {

const char* to_string(Collective c) {
  switch (c) {
    case Collective::kNone: return "none";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllGather: return "all_gather";
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllToAll: return "all_to_all";
  }
  return "?";
}

const char* to_string(CollectiveElement e) {
  switch (e) {
    case CollectiveElement::kF32: return "f32";
    case CollectiveElement::kBf16: return "bf16";
  }
  return "?";
}

double bus_factor(Collective c, int ranks) {
  if (ranks < 1) return 0;
  const double share = double(ranks - 1) / double(ranks);
  switch (c) {
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return share;
    case Collective::kAllReduce: return 2 * share;
    case Collective::kNone: return 0;
  }
  return 0;
}

uint64_t CollectiveSize::first(int r) const { return std::min(elements, uint64_t(r) * chunk_elements); }
uint64_t CollectiveSize::end(int r) const { return std::min(elements, uint64_t(r + 1) * chunk_elements); }

std::optional<CollectiveSize> collective_size(Collective c, uint64_t bytes, int ranks, CollectiveElement e) {
  if (ranks < 1 || c == Collective::kNone) return std::nullopt;
  const uint64_t n = uint64_t(ranks), v = vector_elements(e), b = element_bytes(e);
  CollectiveSize s;
  s.element = e;
  if (c == Collective::kAllReduce) {
    if (bytes == 0 || bytes % b != 0) return std::nullopt;
    s.elements = bytes / b;
    const uint64_t per_rank = (s.elements + n - 1) / n;
    s.chunk_elements = (per_rank + v - 1) / v * v;
  } else {
    s.chunk_elements = bytes / b / n / v * v;
    if (s.chunk_elements == 0) return std::nullopt;
    s.elements = s.chunk_elements * n;
  }
  s.bytes = s.elements * b;
  return s;
}

uint64_t input_elements(Collective c, const CollectiveSize& s) {
  return c == Collective::kAllGather ? s.chunk_elements : s.elements;
}

uint64_t output_elements(Collective c, const CollectiveSize& s) {
  return c == Collective::kReduceScatter ? s.chunk_elements : s.elements;
}

double algorithm_gbps(uint64_t bytes, double seconds) { return seconds > 0 ? double(bytes) / seconds / 1e9 : 0; }

double bus_gbps(Collective c, int ranks, uint64_t bytes, double seconds) {
  return algorithm_gbps(bytes, seconds) * bus_factor(c, ranks);
}

}  // namespace p2pbench
