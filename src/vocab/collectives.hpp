// The arithmetic of collective operations, as nccl-tests reports them: a case's bytes are the
// operation's size (reduce-scatter: each rank's input; all-gather: each rank's output;
// all-reduce: the vector; all-to-all: each rank's input, which is as large as its output),
// split into one chunk per rank. Algorithm bandwidth is size / time; bus bandwidth scales it by
// what each rank's links must carry, so that it compares with a point-to-point figure whatever
// the rank count:
//   reduce-scatter, all-gather, all-to-all  busbw = algbw x (n - 1) / n
//   all-reduce                              busbw = algbw x 2 (n - 1) / n
// All-to-all: rank me sends chunk r of its input to rank r, which puts it at chunk me of its
// output (nccl-tests' alltoall).
// Elements are f32 or bf16 (the method's collective_element), accessed 16 bytes at a time: 4 f32
// or 8 bf16 a vector. Reduce-scatter and all-gather chunks are whole: a size that does not split
// into n chunks of whole 16-byte vectors is rounded down (its row says the bytes used), as
// nccl-tests rounds its counts. An all-reduce keeps its size; its chunks (for the algorithms
// that split it) are rounded up to whole vectors, the last one shorter.
#pragma once

#include <cstdint>
#include <optional>

#include "vocab/methods.hpp"

namespace p2pbench {

constexpr uint64_t kCollectiveVectorBytes = 16;  // one access

constexpr uint64_t element_bytes(CollectiveElement e) { return e == CollectiveElement::kBf16 ? 2 : 4; }
constexpr uint64_t vector_elements(CollectiveElement e) { return kCollectiveVectorBytes / element_bytes(e); }
// f32's: for code that knows only f32 elements.
constexpr uint64_t kCollectiveElementBytes = element_bytes(CollectiveElement::kF32);

const char* to_string(Collective c);  // "reduce_scatter", "all_gather", "all_reduce", "all_to_all" ("none")
const char* to_string(CollectiveElement e);  // "f32", "bf16"

// (n - 1) / n (all-reduce: 2 (n - 1) / n); 0 for kNone or fewer than one rank.
double bus_factor(Collective c, int ranks);

struct CollectiveSize {
  CollectiveElement element = CollectiveElement::kF32;
  uint64_t elements = 0;        // of the whole operation (reduce-scatter's input, all-gather's output, the vector,
                                // all-to-all's input)
  uint64_t chunk_elements = 0;  // of one rank's chunk (the last all-reduce chunk may be shorter)
  uint64_t bytes = 0;           // the size the figures use: elements x element_bytes(element)
  // Elements of rank r's chunk: [first(r), end(r)).
  uint64_t first(int r) const;
  uint64_t end(int r) const;
};

// The operation's size for a case of `bytes` over `ranks` ranks; nullopt where it holds no whole
// chunk per rank (reduce-scatter, all-gather, all-to-all: less than a 16-byte vector per rank;
// all-reduce: not whole elements).
std::optional<CollectiveSize> collective_size(Collective c, uint64_t bytes, int ranks,
                                              CollectiveElement e = CollectiveElement::kF32);

// Each rank's input and output, in elements (reduce-scatter: the vector in, its chunk out;
// all-gather: a chunk in, the vector out; all-reduce, all-to-all: the vector both).
uint64_t input_elements(Collective c, const CollectiveSize& s);
uint64_t output_elements(Collective c, const CollectiveSize& s);

// GB/s (1e9 bytes per second) of `bytes` in `seconds`: the algorithm bandwidth, and the bus bandwidth.
double algorithm_gbps(uint64_t bytes, double seconds);
double bus_gbps(Collective c, int ranks, uint64_t bytes, double seconds);

}  // namespace p2pbench
