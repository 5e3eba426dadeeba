// The binary search of searchsorted / bucketize (ops/search_ops.cpp), shared by the CPU loop
// (kernels/search.cpp) and the CUDA kernel (cuda/search.cu), hence OF_HD; and their kernel entry.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/hd.h"
#include "core/tensor.h"
#include "kernels/registry.h"

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

// The insertion point of every value (contiguous) in its row of seq (contiguous, the values'
// dtype; one row when 1-d, else rows matching the values' leading dims), through sorter (int64,
// in range) when defined; out int32 or int64, values' shape. CPU in kernels/search.cpp, CUDA in
// cuda/search.cu (Note [Kernel registry]).
void SearchSortedRows(const Tensor& seq, const Tensor& values, const Tensor& sorter, bool right, const Tensor& out);

namespace kernels {
struct SearchSortedRowsKernel {
  static constexpr const char* kName = "searchsorted_rows";
  using Fn = void (*)(const Tensor& seq, const Tensor& values, const Tensor& sorter, bool right, const Tensor& out);
  using Writes = KernelWrites<4>;
};
}  // namespace kernels

}  // namespace oneflow
