// The binary search of searchsorted / bucketize (ops/search_ops.cpp), shared by the CPU loop and
// the CUDA kernel (cuda/search.cu), hence OF_HD.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/hd.h"

namespace oneflow {

// Insertion point of x in the sorted row r[0..len) (read through the sorter rs when given):
// PyTorch's comparisons (`>=` for left, `>` for right), so NaN values land at the end.
template <typename T>
OF_INLINE_HD int64_t SearchRow(const T* r, const int64_t* rs, int64_t len, OpMath<T> x, bool right) {
  using M = OpMath<T>;
  int64_t lo = 0, hi = len;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    const M m = static_cast<M>(r[rs ? rs[mid] : mid]);
    const bool go_right = right ? !(m > x) : !(m >= x);
    if (go_right) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace oneflow
