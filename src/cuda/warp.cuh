// Reduction helpers of the row kernels (softmax.cu, nll.cu, normalization.cu, row_stats.cu): a
// warp (or a block) reduces one row, its lanes striding the row; max and sum are butterfly
// shuffles, so every lane ends with the result.
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

// Combiners of BlockReduce (plain sum; max NaN-blind as WarpMax; NaN-propagating max / min).
struct AddOp {
  template <typename M> __device__ M operator()(M a, M b) const { return a + b; }
};
struct MaxOp {
  template <typename M> __device__ M operator()(M a, M b) const { return b > a ? b : a; }
};
struct NanMaxOp {
  template <typename M> __device__ M operator()(M a, M b) const { return (a != a || a > b) ? a : b; }
};
struct NanMinOp {
  template <typename M> __device__ M operator()(M a, M b) const { return (a != a || a < b) ? a : b; }
};

// v combined by `op` over a block of `threads` threads (a multiple of 32, at most 1024),
// returned to every thread: butterfly shuffles in each warp, then the warps' partials in order.
// Called by all threads of the block; consecutive calls are safe.
template <typename M, typename Op>
__device__ inline M BlockReduce(M v, Op op) {
  __shared__ M part[32];
  for (int o = kWarpThreads / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / kWarpThreads, lane = threadIdx.x % kWarpThreads;
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  M r = part[0];
  for (int w = 1; w < static_cast<int>(blockDim.x) / kWarpThreads; ++w) r = op(r, part[w]);
  return r;
}
template <typename M>
__device__ inline M BlockSum(M v) { return BlockReduce(v, AddOp{}); }
template <typename M>
__device__ inline M BlockMax(M v) { return BlockReduce(v, MaxOp{}); }

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
