// Expert-parallel routing for the tokens method (dispatch and combine): which ranks each token
// goes to, and where it lands. Pure C++: the same on every rank, compiler and library (SplitMix64,
// plan/seeded_sample.hpp), so every rank computes every other rank's routing without talking.
//
// A rank holds `tokens_per_rank` tokens of `hidden_bytes` each (DeepSeek-V3: 7168 bf16 = 14 KiB).
// Each token picks `top_k` distinct experts of `experts`, uniformly or with Zipf-skewed expert
// popularity (expert popularity ranks shuffled by the seed, so the hot experts are not all on one
// rank); experts live in contiguous blocks, one block per rank. A token goes once to each rank
// owning one of its experts (DeepEP sends a token once per rank, not once per expert); its own
// rank's copy is a local copy, counted apart from the bytes that cross the link.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace p2pbench::tokens {

constexpr uint64_t kDeepSeekV3HiddenBytes = 7168 * 2;  // bf16

enum class Skew { kUniform, kZipf };

struct RouterSpec {
  uint64_t tokens_per_rank = 4096;
  uint32_t experts = 256;
  uint32_t top_k = 8;
  Skew skew = Skew::kUniform;
  double zipf_exponent = 1.0;  // kZipf: the popularity of the i-th hottest expert is 1 / (i + 1)^s
  uint64_t seed = 1;

  // Why these cannot route `ranks` ranks, or "" (top_k above experts, fewer experts than ranks).
  std::string problem(int ranks) const;
};

// The rank that owns `expert`: experts are split into `ranks` contiguous blocks, the first
// experts % ranks blocks one expert larger.
int rank_of_expert(uint32_t expert, uint32_t experts, int ranks);

// One source rank's tokens: for each, its experts (ascending) and the ranks it goes to (ascending).
struct Routing {
  int src = 0;
  std::vector<std::vector<uint32_t>> experts;
  std::vector<std::vector<int>> destinations;
};

Routing route(const RouterSpec& spec, int ranks, int src);

// Where dispatched tokens land: rank d's receive buffer holds, for each source rank in order,
// the tokens that source routed to d, in token order (local ones included, in their place).
class TokenLayout {
 public:
  explicit TokenLayout(const std::vector<Routing>& by_source);  // one Routing per rank, in rank order

  int ranks() const { return int(counts_.size()); }
  uint64_t count(int src, int dst) const { return counts_.at(size_t(src)).at(size_t(dst)); }
  // The first slot (in tokens) of `src`'s block in `dst`'s receive buffer, and its size.
  uint64_t block_offset(int src, int dst) const;
  uint64_t received(int dst) const;  // tokens in dst's buffer
  // Token sends between different ranks (what crosses the link) and to the own rank.
  uint64_t crossing() const;
  uint64_t local() const;

 private:
  std::vector<std::vector<uint64_t>> counts_;  // [src][dst]
};

// For each token of `r`, its slot within r.src's block of `dst`'s buffer, or kNotSent.
constexpr uint64_t kNotSent = UINT64_MAX;
std::vector<uint64_t> slots_in_block(const Routing& r, int dst);

}  // namespace p2pbench::tokens
