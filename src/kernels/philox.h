// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator. Element i of a tensor draws from counter i under a key taken from the
// device generator once per op, so the values do not depend on how the work is split across
// threads (reproducible under flow.manual_seed for any thread count), and every thread can start
// anywhere without skipping ahead. Used by dropout and rrelu (src/ops/random_kernels.cpp).
#pragma once
#include <cstdint>

namespace oneflow {

struct Philox {
  uint32_t key0, key1;

  explicit Philox(uint64_t seed)
      : key0(static_cast<uint32_t>(seed)), key1(static_cast<uint32_t>(seed >> 32)) {}

  // Four 32-bit draws for the 64-bit counter `n`.
  void Draw(uint64_t n, uint32_t out[4]) const {
    uint32_t c0 = static_cast<uint32_t>(n), c1 = static_cast<uint32_t>(n >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = key0, k1 = key1;
    for (int r = 0; r < 10; ++r) {
      const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
      const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<uint32_t>(p1);
      c3 = static_cast<uint32_t>(p0);
      c0 = n0;
      c2 = n2;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
  }
};

// A uniform draw in [0, 1) with 24 bits (exact in float).
inline float Uniform24(uint32_t u) { return static_cast<float>(u >> 8) * (1.0f / 16777216.0f); }

}  // namespace oneflow
