// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), the
// counter-based generator of PyTorch's CUDA backend. Block `c` (a 128-bit counter) under key `k`
// (the seed) is a pure function of (k, c): any chunk of a large fill is generated independently,
// by any thread or CUDA thread, and a generator's whole state is (seed, offset).
// Host/device-neutral: plain integer arithmetic only.
#pragma once
#include <cstdint>

#include "core/hd.h"

namespace oneflow {

struct Philox4x32 {
  static constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  // The key schedule's increments: the golden ratio and sqrt(3) - 1, as 32-bit fractions.
  static constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  static constexpr int kRounds = 10;

  // One block: counter (c0..c3), key (k0, k1) -> 4 random words, in place.
  OF_HD static inline void Block(uint32_t c[4], uint32_t k0, uint32_t k1) {
    for (int r = 0; r < kRounds; ++r) {
      const uint64_t p0 = uint64_t(kM0) * c[0], p1 = uint64_t(kM1) * c[2];
      const uint32_t n0 = uint32_t(p1 >> 32) ^ c[1] ^ k0, n2 = uint32_t(p0 >> 32) ^ c[3] ^ k1;
      c[1] = uint32_t(p1);
      c[3] = uint32_t(p0);
      c[0] = n0;
      c[2] = n2;
      k0 += kW0;
      k1 += kW1;
    }
  }
};

// Words of `n` consecutive blocks, counters (lo + i, hi) for i in [0, n), key `seed`:
// out[4 * i + j] = word j of block i. Lanes are independent, so the rounds run as
// structure-of-arrays loops the compiler vectorises (32x32->64 multiplies).
void PhiloxFill(uint64_t seed, uint64_t lo, uint64_t hi, int64_t n, uint32_t* out);

}  // namespace oneflow
