// Row-wise reductions for the statistics and norm ops: the input is rearranged (a permutation,
// copied only when the reduced dims are not already the trailing contiguous ones) into
// contiguous [outer, inner] rows, inner = the reduced elements of one output. Each row is reduced
// by a two-level loop: vectorised lanes inside, rows split over threads, and a single long row
// split over threads with the partial results combined.
#pragma once
#include <optional>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"

namespace oneflow {

struct ReduceDims {
  bool mask[kMaxDims] = {false};
  DimVector out_shape;        // the result's shape (keepdim applied)
  int64_t outer = 1, inner = 1;
};

// dim None or empty: every dim. Bad dims: IndexError; repeated dims: RuntimeError.
ReduceDims MakeReduceDims(const Tensor& in, const std::optional<DimVector>& dim, bool keepdim);
// The input's values as contiguous [outer, inner] rows (the reduced dims last, in order).
Tensor ReducedLast(const Tensor& in, const ReduceDims& r);

// Calls f(row_begin, row_end) over [0, rows) split across threads (rows of `inner` elements).
template <typename F>
void ForRows(int64_t rows, int64_t inner, const F& f) {
  ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, inner)), f);
}

// Reduces [0, n) of one long row with `part(b, e) -> P` over threads, combining partials in order.
template <typename P, typename Part, typename Combine>
P SplitRow(int64_t n, P init, const Part& part, const Combine& combine) {
  const int nt = GetNumThreads();
  std::vector<P> parts(nt, init);
  std::vector<char> used(nt, 0);
  ParallelFor(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    const int t = omp_in_parallel() ? omp_get_thread_num() : 0;
    parts[t] = part(b, e);
    used[t] = 1;
  });
  P acc = init;
  for (int t = 0; t < nt; ++t)
    if (used[t]) acc = combine(acc, parts[t]);
  return acc;
}

// Applies row(x_row, n, split) -> R to every row of contiguous [outer, inner] rows of T, writing
// emit(r, result): rows over threads, or one long row split inside `row` itself (split = true,
// through SplitRow).
template <typename T, typename Row, typename Emit>
void EachRow(const Tensor& rows, int64_t outer, int64_t inner, const Row& row, const Emit& emit) {
  const T* x = rows.data<T>();
  if (outer == 1) {
    emit(0, row(x, inner, true));
    return;
  }
  ForRows(outer, inner, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) emit(o, row(x + o * inner, inner, false));
  });
}

}  // namespace oneflow
