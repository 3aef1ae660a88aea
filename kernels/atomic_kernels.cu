// Remote atomics: one reduction kernel per type, an exact on-device verification.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "common/bounded_copier.hpp"
#include "common/cuda_check.hpp"
#include "common/cuda_raii.hpp"
#include "common/errors.hpp"
#include "common/event_wait.hpp"
#include "kernels/device_caps.hpp"
#include "kernels/atomic_kernels.hpp"
#include "kernels/ptx.cuh"

namespace p2pbench::kernels {
namespace {

constexpr int kAtomicMaxThreads = 1024;
constexpr uint64_t kMaxTotalThreads = uint64_t{1} << 31;

// Packed 1.0 in both halves of an f16x2 / bf16x2 operand.
constexpr uint32_t kF16x2One = 0x3c003c00u;
constexpr uint32_t kBf16x2One = 0x3f803f80u;

__host__ __device__ constexpr size_t bytes_of(AtomicType t) {
  return (t == AtomicType::kF32x4 || t == AtomicType::kF16x8 || t == AtomicType::kBf16x8) ? 16 : 4;
}

// The largest integer count every lane of the type holds exactly (adding 1 to it rounds).
uint64_t exact_limit(AtomicType t) {
  switch (t) {
    case AtomicType::kU32: return 0xffffffffull;
    case AtomicType::kF32:
    case AtomicType::kF32x4: return uint64_t{1} << 24;
    case AtomicType::kF16x2:
    case AtomicType::kF16x8: return 2048;
    case AtomicType::kBf16x2:
    case AtomicType::kBf16x8: return 256;
  }
  return 0;
}

bool needs_sm90(AtomicType t) {
  return t == AtomicType::kF32x4 || t == AtomicType::kBf16x2 || t == AtomicType::kF16x8 ||
         t == AtomicType::kBf16x8;
}

// Packed -1.0 in both halves.
constexpr uint32_t kF16x2MinusOne = 0xbc00bc00u;
constexpr uint32_t kBf16x2MinusOne = 0xbf80bf80u;

template <AtomicType kType>
__device__ __forceinline__ void add_unit(uint8_t* p, bool minus) {
  if constexpr (kType == AtomicType::kU32) {
    ptx::red_add_u32(p, minus ? 0xffffffffu : 1u);  // -1 modulo 2^32
  } else if constexpr (kType == AtomicType::kF32) {
    ptx::red_add_f32(p, minus ? -1.0f : 1.0f);
  } else if constexpr (kType == AtomicType::kF32x4) {
    const float v = minus ? -1.0f : 1.0f;
    ptx::red_add_v4_f32(p, v, v, v, v);
  } else if constexpr (kType == AtomicType::kF16x2) {
    ptx::red_add_f16x2(p, minus ? kF16x2MinusOne : kF16x2One);
  } else if constexpr (kType == AtomicType::kBf16x2) {
    ptx::red_add_bf16x2(p, minus ? kBf16x2MinusOne : kBf16x2One);
  } else if constexpr (kType == AtomicType::kF16x8) {
    const uint32_t v = minus ? kF16x2MinusOne : kF16x2One;
    ptx::red_add_v4_f16x2(p, v, v, v, v);
  } else {
    const uint32_t v = minus ? kBf16x2MinusOne : kBf16x2One;
    ptx::red_add_v4_bf16x2(p, v, v, v, v);
  }
}

// hot_addresses == 0: distinct (element = global thread index). The element is fixed per
// thread, so the loop body is the reduction alone; consecutive ops of a warp go to the same
// 32 elements (one or four 128-byte lines), ops of different warps to different ones. The
// sign of op i (balanced, see the header) is the same in every thread: no divergence.
template <AtomicType kType>
__global__ void __launch_bounds__(kAtomicMaxThreads)
    atomic_kernel(uint8_t* target, uint32_t ops, uint32_t hot_addresses, bool negate) {
  const uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t e = hot_addresses == 0 ? t : t % hot_addresses;
  uint8_t* p = target + e * bytes_of(kType);
  const bool even_count = (ops & 1u) == 0;
#pragma unroll 4
  for (uint32_t i = 0; i < ops; ++i) {
    const bool minus_op = (i & 1u) != 0 && !(even_count && i + 1 == ops);
    add_unit<kType>(p, minus_op != negate);
  }
}

using AtomicKernel = void (*)(uint8_t*, uint32_t, uint32_t, bool);

AtomicKernel atomic_kernel_for(AtomicType t) {
  switch (t) {
    case AtomicType::kU32: return atomic_kernel<AtomicType::kU32>;
    case AtomicType::kF32: return atomic_kernel<AtomicType::kF32>;
    case AtomicType::kF32x4: return atomic_kernel<AtomicType::kF32x4>;
    case AtomicType::kF16x2: return atomic_kernel<AtomicType::kF16x2>;
    case AtomicType::kBf16x2: return atomic_kernel<AtomicType::kBf16x2>;
    case AtomicType::kF16x8: return atomic_kernel<AtomicType::kF16x8>;
    case AtomicType::kBf16x8: return atomic_kernel<AtomicType::kBf16x8>;
  }
  return nullptr;
}

struct VerifyCounters {
  unsigned long long bad;    // elements with a wrong word
  unsigned long long first;  // lowest bad element, ~0ull if none
};

// Elements below `split` expect word `high`, the others word `low` (hot spot: the first
// threads % hot_addresses elements receive one thread's ops more).
__global__ void verify_kernel(const uint32_t* target, uint64_t elements, uint32_t words_per_element, uint64_t split,
                              uint32_t low, uint32_t high, VerifyCounters* out) {
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  unsigned long long first = ~0ull;
  for (uint64_t e = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < elements; e += step) {
    const uint32_t want = e < split ? high : low;
    bool ok = true;
    for (uint32_t w = 0; w < words_per_element; ++w) ok &= target[e * words_per_element + w] == want;
    if (!ok) {
      ++bad;
      first = min(first, static_cast<unsigned long long>(e));
    }
  }
  if (bad != 0) {
    atomicAdd(&out->bad, bad);
    atomicMin(&out->first, first);
  }
}

// Bit patterns of the integer n (exact in the type: n within exact_limit).
uint32_t f16_bits(uint64_t n) {
  if (n == 0) return 0;
  int e = 0;
  while ((n >> (e + 1)) != 0) ++e;                          // n in [2^e, 2^(e+1))
  // Exact for n <= 2048 (at most 11 significant bits).
  const auto mantissa = static_cast<uint32_t>((e <= 10 ? n << (10 - e) : n >> (e - 10)) & 0x3ff);
  return (static_cast<uint32_t>(e + 15) << 10) | mantissa;
}

uint32_t f32_bits(uint64_t n) {
  const auto f = static_cast<float>(n);
  uint32_t b = 0;
  std::memcpy(&b, &f, 4);
  return b;
}

// The 32-bit word every lane-pair of an element holds after `count` ops of +1 on it.
uint32_t expected_word(AtomicType t, uint64_t count) {
  switch (t) {
    case AtomicType::kU32: return static_cast<uint32_t>(count);
    case AtomicType::kF32:
    case AtomicType::kF32x4: return f32_bits(count);
    case AtomicType::kF16x2:
    case AtomicType::kF16x8: return f16_bits(count) | (f16_bits(count) << 16);
    case AtomicType::kBf16x2:
    case AtomicType::kBf16x8: {
      const uint32_t h = f32_bits(count) >> 16;  // count <= 256: the low 16 bits are 0
      return h | (h << 16);
    }
  }
  return 0;
}

float f16_to_float(uint32_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = 0;
  if (exp == 0) {
    v = static_cast<float>(man) / 1024.0f / 16384.0f;  // subnormal: man * 2^-24
  } else if (exp == 31) {
    v = man == 0 ? INFINITY : NAN;
  } else {
    v = (1.0f + static_cast<float>(man) / 1024.0f) * static_cast<float>(1u << exp) / 32768.0f;
  }
  return sign != 0 ? -v : v;
}

float bits_to_float(uint32_t b) {
  float f = 0;
  std::memcpy(&f, &b, 4);
  return f;
}

// The element's value as text, lane by lane.
std::string describe_value(AtomicType t, const uint32_t* words, uint32_t n_words) {
  std::ostringstream s;
  s << "{";
  for (uint32_t w = 0; w < n_words; ++w) {
    const uint32_t b = words[w];
    if (w > 0) s << ", ";
    switch (t) {
      case AtomicType::kU32: s << b; break;
      case AtomicType::kF32:
      case AtomicType::kF32x4: s << bits_to_float(b); break;
      case AtomicType::kF16x2:
      case AtomicType::kF16x8: s << f16_to_float(b & 0xffff) << ", " << f16_to_float(b >> 16); break;
      case AtomicType::kBf16x2:
      case AtomicType::kBf16x8: s << bits_to_float(b << 16) << ", " << bits_to_float(b & 0xffff0000u); break;
    }
  }
  s << "}";
  return s.str();
}

uint64_t total_threads(const AtomicShape& s) {
  return static_cast<uint64_t>(std::max(s.blocks, 0)) * static_cast<uint64_t>(std::max(s.threads, 0));
}

uint32_t net_per_thread(const AtomicShape& s) { return (s.ops_per_thread & 1u) != 0 ? 1u : 2u; }

// Threads whose ops land on the most-hit element.
uint64_t max_threads_per_element(const AtomicShape& s) {
  if (s.pattern == AtomicPattern::kDistinct) return 1;
  const uint64_t t = total_threads(s);
  return (t + s.hot_addresses - 1) / s.hot_addresses;
}

std::string describe(const AtomicShape& s) {
  return std::string("atomics (") + atomic_type_name(s.type) + ", " + atomic_pattern_name(s.pattern) + ", blocks " +
         std::to_string(s.blocks) + ", threads " + std::to_string(s.threads) + ", ops/thread " +
         std::to_string(s.ops_per_thread) +
         (s.pattern == AtomicPattern::kHotSpot ? ", hot addresses " + std::to_string(s.hot_addresses) : "") + ")";
}

// Checks that need no device: the shape's own consistency and its exactness for one launch.
std::optional<std::string> shape_reason(const AtomicShape& s) {
  if (s.blocks < 1) return "blocks must be at least 1 (got " + std::to_string(s.blocks) + ")";
  if (s.threads < 1 || s.threads > kAtomicMaxThreads)
    return "threads per block must be in 1..1024 (got " + std::to_string(s.threads) + ")";
  if (total_threads(s) > kMaxTotalThreads)
    return "blocks x threads must be at most 2^31 (got " + std::to_string(total_threads(s)) + ")";
  if (s.ops_per_thread < 1) return std::string("ops_per_thread must be at least 1");
  if (s.pattern == AtomicPattern::kHotSpot && s.hot_addresses < 1)
    return std::string("hot_spot needs hot_addresses >= 1");
  const uint64_t bound = max_threads_per_element(s) * net_per_thread(s);
  if (bound > exact_limit(s.type))
    return std::string("not exactly verifiable: the most-hit element can reach ") + std::to_string(bound) + " (" +
           std::to_string(max_threads_per_element(s)) + " threads x " + std::to_string(net_per_thread(s)) +
           "), above " + std::to_string(exact_limit(s.type)) + ", the largest count " + atomic_type_name(s.type) +
           " holds exactly (fewer threads or more hot addresses" +
           (net_per_thread(s) == 2 ? ", or an odd ops_per_thread)" : ")");
  return std::nullopt;
}

}  // namespace

const char* atomic_type_name(AtomicType type) {
  switch (type) {
    case AtomicType::kU32: return "u32";
    case AtomicType::kF32: return "f32";
    case AtomicType::kF32x4: return "f32x4";
    case AtomicType::kF16x2: return "f16x2";
    case AtomicType::kBf16x2: return "bf16x2";
    case AtomicType::kF16x8: return "f16x8";
    case AtomicType::kBf16x8: return "bf16x8";
  }
  return "?";
}

const char* atomic_pattern_name(AtomicPattern pattern) {
  return pattern == AtomicPattern::kDistinct ? "distinct" : "hot_spot";
}

std::optional<std::string> atomic_unsupported_reason(const AtomicShape& shape, int device) {
  if (auto why = shape_reason(shape)) return why;
  if (needs_sm90(shape.type))
    if (auto why = requires_hopper(device, std::string(atomic_type_name(shape.type)) + " reductions")) return why;
  return std::nullopt;
}

uint64_t atomic_elements(const AtomicShape& shape) {
  return shape.pattern == AtomicPattern::kDistinct ? total_threads(shape) : shape.hot_addresses;
}

size_t atomic_target_bytes(const AtomicShape& shape) { return atomic_elements(shape) * bytes_of(shape.type); }

uint64_t atomic_operations(const AtomicShape& shape) { return total_threads(shape) * shape.ops_per_thread; }

size_t atomic_bytes_per_op(const AtomicShape& shape) { return bytes_of(shape.type); }

uint32_t atomic_net_per_thread(const AtomicShape& shape) { return net_per_thread(shape); }

void atomic_reset(void* target, const AtomicShape& shape, cudaStream_t stream) {
  cuda_check(cudaMemsetAsync(target, 0, atomic_target_bytes(shape), stream), "zeroing the atomics target");
}

void atomic_prepare(const AtomicShape& shape) {
  if (auto why = shape_reason(shape)) throw InputError(describe(shape) + ": " + *why);
  cudaFuncAttributes attrs{};
  cuda_check(cudaFuncGetAttributes(&attrs, atomic_kernel_for(shape.type)),
             "loading the " + describe(shape) + " kernel");
}

void enqueue_atomics(const AtomicShape& shape, void* target, bool negate, cudaStream_t stream) {
  if (auto why = shape_reason(shape)) throw InputError(describe(shape) + ": " + *why);
  if (reinterpret_cast<uintptr_t>(target) % bytes_of(shape.type) != 0)
    throw InputError(describe(shape) + ": target must be " + std::to_string(bytes_of(shape.type)) + "-byte aligned");
  const uint32_t hot = shape.pattern == AtomicPattern::kHotSpot ? shape.hot_addresses : 0;
  atomic_kernel_for(shape.type)<<<shape.blocks, shape.threads, 0, stream>>>(static_cast<uint8_t*>(target),
                                                                           shape.ops_per_thread, hot, negate);
  cuda_check_launch("the " + describe(shape) + " kernel");
}

std::optional<std::string> atomic_verify(const AtomicShape& shape, const void* target, uint64_t launches,
                                         cudaStream_t stream) {
  if (auto why = shape_reason(shape)) return describe(shape) + ": " + *why;
  // Expected counts after an odd number of launches: distinct, every element net; hot spot,
  // element e gets the threads t with t % H == e: T / H of them, one more for e < T % H.
  // After an even number: 0 everywhere.
  const uint64_t elements = atomic_elements(shape);
  const uint64_t per_thread_total = (launches & 1u) != 0 ? net_per_thread(shape) : 0;
  uint64_t low_count = per_thread_total;
  uint64_t split = 0;
  if (shape.pattern == AtomicPattern::kHotSpot) {
    low_count = total_threads(shape) / shape.hot_addresses * per_thread_total;
    split = total_threads(shape) % shape.hot_addresses;
  }
  const uint32_t low = expected_word(shape.type, low_count);
  const uint32_t high = expected_word(shape.type, low_count + per_thread_total);
  const auto words = static_cast<uint32_t>(bytes_of(shape.type) / 4);

  DeviceBuffer counters(sizeof(VerifyCounters), "the atomics verification counters");
  auto* c = static_cast<VerifyCounters*>(counters.get());
  cuda_check(cudaMemsetAsync(c, 0, sizeof(VerifyCounters::bad), stream), "clearing the verification counters");
  cuda_check(cudaMemsetAsync(&c->first, 0xff, sizeof(VerifyCounters::first), stream),
             "clearing the verification counters");
  const auto blocks = static_cast<unsigned>(std::min<uint64_t>(4096, (elements + 255) / 256 + 1));
  verify_kernel<<<blocks, 256, 0, stream>>>(static_cast<const uint32_t*>(target), elements, words, split, low, high, c);
  cuda_check_launch("the atomics verification kernel");
  wait_for_stream(stream, kLocalWorkWaitS, "the atomics verification");
  BoundedCopier copier;
  const VerifyCounters host = copier.read(c, "the atomics verification counters");
  if (host.bad == 0) return std::nullopt;

  uint32_t value[4] = {};
  copier.to_host(value, static_cast<const uint8_t*>(target) + host.first * bytes_of(shape.type), bytes_of(shape.type),
                 "the first wrong atomics element");
  const uint32_t want_word = host.first < split ? high : low;
  uint32_t want[4] = {want_word, want_word, want_word, want_word};
  return describe(shape) + ": " + std::to_string(host.bad) + " of " + std::to_string(elements) +
         " elements wrong after " + std::to_string(launches) + " launches; first: element " +
         std::to_string(host.first) + " = " + describe_value(shape.type, value, words) + ", expected " +
         describe_value(shape.type, want, words);
}

}  // namespace p2pbench::kernels
