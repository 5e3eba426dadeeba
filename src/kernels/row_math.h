// Reductions over one contiguous row for the fused softmax-like kernels (softmax family,
// attention). GCC vectorises neither a float max nor a float sum reduction without -ffast-math
// (reassociation, NaN order), and `#pragma omp simd reduction` keeps its accumulator in memory
// (a store-to-load chain per vector: ~8x slower than the loop below on 128-float rows). So the
// partial results live in kLanes accumulators, one AVX register, updated by an inner loop that
// `omp simd` turns into one vector instruction; the lanes are combined at the end. Summing in
// lanes reorders the additions: results differ from a sequential sum by rounding only.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

namespace oneflow {

template <typename M> inline constexpr int kRowLanes = 32 / sizeof(M);  // one 256-bit register

// max over x[0..n) of kSign * x[i]; NaN elements are skipped (callers get NaN from the exp pass,
// where x - max is NaN); -inf for n == 0.
template <int kSign = 1, typename M>
inline M RowMax(const M* x, int64_t n) {
  constexpr int L = kRowLanes<M>;
  M acc[L];
  for (int l = 0; l < L; ++l) acc[l] = -std::numeric_limits<M>::infinity();
  int64_t i = 0;
  for (; i + L <= n; i += L) {
#pragma omp simd
    for (int l = 0; l < L; ++l) {
      const M v = kSign * x[i + l];
      acc[l] = v > acc[l] ? v : acc[l];
    }
  }
  // The lanes combined as a tree (log2 L dependent steps, not L: short rows wait on this)
  for (int w = L / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] = acc[l + w] > acc[l] ? acc[l + w] : acc[l];
  M m = acc[0];
  for (; i < n; ++i) m = std::max(m, kSign * x[i]);
  return m;
}

// sum over x[0..n) of x[i] (kDot: x[i] * y[i]).
template <bool kDot = false, typename M>
inline M RowSum(const M* x, const M* y, int64_t n) {
  constexpr int L = kRowLanes<M>;
  M acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
#pragma omp simd
    for (int l = 0; l < L; ++l) acc[l] += kDot ? x[i + l] * y[i + l] : x[i + l];
  }
  for (int w = L / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  M s = acc[0];
  for (; i < n; ++i) s += kDot ? x[i] * y[i] : x[i];
  return s;
}

template <typename M> inline M RowSum(const M* x, int64_t n) { return RowSum<false>(x, x, n); }
template <typename M> inline M RowDot(const M* x, const M* y, int64_t n) { return RowSum<true>(x, y, n); }

}  // namespace oneflow
