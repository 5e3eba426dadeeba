// Grid-stride launches of the elementwise kernels of src/cuda (index, pool, normalization, sort,
// random, scan): kGridThreads threads per block, at most 2^20 blocks, each thread looping.
#pragma once
#include <cstdint>

namespace oneflow::cuda {

constexpr int kGridThreads = 256;

// Blocks for n elements (at least one).
inline unsigned GridFor(int64_t n) {
  const int64_t b = (n + kGridThreads - 1) / kGridThreads;
  return static_cast<unsigned>(b < (int64_t(1) << 20) ? (b > 0 ? b : 1) : (int64_t(1) << 20));
}

}  // namespace oneflow::cuda

// for (e over [0, n)) with a grid-stride step.
#define OF_GRID_LOOP(e, n)                                                                  \
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < (n); \
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
