// Warp-per-row helpers of the row kernels (softmax.cu, nll.cu): one warp reduces one row, its
// lanes striding the row; max and sum are butterfly shuffles, so every lane ends with the result.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "core/dtype.h"
#include "core/error.h"

namespace oneflow::cuda {

constexpr int kWarpThreads = 32;
constexpr int kRowWarps = 8;  // rows (warps) per block

template <typename M>
__device__ inline M WarpSum(M v) {
  for (int o = kWarpThreads / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// NaN-blind (a NaN element makes the row's sum NaN instead).
template <typename M>
__device__ inline M WarpMax(M v) {
  for (int o = kWarpThreads / 2; o > 0; o >>= 1) {
    const M u = __shfl_xor_sync(0xffffffffu, v, o);
    v = u > v ? u : v;
  }
  return v;
}

__device__ inline float DevExp(float x) { return expf(x); }
__device__ inline double DevExp(double x) { return exp(x); }
__device__ inline float DevLog(float x) { return logf(x); }
__device__ inline double DevLog(double x) { return log(x); }

// Blocks of kRowWarps rows for `rows` rows.
inline unsigned RowBlocks(int64_t rows, const char* op) {
  const int64_t blocks = (rows + kRowWarps - 1) / kRowWarps;
  OF_CHECK(blocks < (int64_t(1) << 31)) << op << "(): too many rows (" << rows << ") for one CUDA launch";
  return static_cast<unsigned>(blocks);
}

}  // namespace oneflow::cuda
