// What a ping-pong message holds (kernels/latency_kernels.hpp): payload word w of message seq s
// from the initiator = word_hash(w) ^ seq_hash(s); the responder sends the complement. Shared by
// the kernel protocols (latency_kernels.cu) and the copy engine's (ce_ping_pong.cu).
#pragma once

#include <cstdint>

namespace p2pbench::kernels::ping_pong {

// payload_then_flag, tma_then_flag and ce_then_flag: the flag's own line before the payload.
constexpr uint32_t kFlagLineBytes = 128;

// murmur3's 32-bit finaliser: a bijection, so distinct inputs never collide.
__host__ __device__ __forceinline__ uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// Both bijective, so a word of another message (s' != s), another offset (w' != w) or the
// other direction never matches. word_hash is one IMAD (odd multiplier) rather than a mixer, so
// that recomputing it (which the compiler may do inside the poll loop rather than keep it in a
// register) stays cheap; seq_hash, computed once per message, makes every message's bits look
// random.
__host__ __device__ __forceinline__ uint32_t word_hash(uint32_t key, uint32_t w) { return w * 0x9e3779b1u + key; }
__host__ __device__ __forceinline__ uint32_t seq_hash(uint32_t key, uint32_t s) { return fmix32(s ^ key); }

// The keys of a seed (the same on both sides).
__host__ __device__ __forceinline__ uint32_t word_key(uint64_t seed) { return fmix32(uint32_t(seed) ^ 0x9e3779b9u); }
__host__ __device__ __forceinline__ uint32_t seq_key(uint64_t seed) { return fmix32(uint32_t(seed >> 32) ^ 0x7f4a7c15u); }

// What the sender of message `seq` XORs into word_hash: seq_hash, complemented by the responder.
__host__ __device__ __forceinline__ uint32_t message_mask(uint32_t seq_k, uint32_t seq, bool from_initiator) {
  return seq_hash(seq_k, seq) ^ (from_initiator ? 0u : ~0u);
}

}  // namespace p2pbench::kernels::ping_pong
