// CPU kernel of searchsorted / bucketize (kernels/search.h): values spread over threads, each a
// binary search of its row.
#include "kernels/search.h"

#include "core/parallel.h"

namespace oneflow {

namespace {

template <typename T, typename O>
void SearchRows(const Tensor& seq, const Tensor& values, const Tensor& sorter, bool right, const Tensor& out) {
  using M = OpMath<T>;
  const int64_t len = seq.dim() == 0 ? 1 : seq.sizes()[seq.dim() - 1];
  const int64_t per_row = seq.dim() <= 1 ? values.numel() : values.sizes()[values.dim() - 1];
  const T* s = seq.data<T>();
  const T* v = values.data<T>();
  const int64_t* so = sorter.defined() ? sorter.data<int64_t>() : nullptr;
  O* o = out.data<O>();
  ParallelFor(0, values.numel(), kGrainSize / 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t row = seq.dim() <= 1 ? 0 : i / per_row;
      const T* r = s + row * len;
      const int64_t* rs = so ? so + row * len : nullptr;
      o[i] = static_cast<O>(SearchRow<T>(r, rs, len, static_cast<M>(v[i]), right));
    }
  });
}

void SearchSortedRowsCpu(const Tensor& seq, const Tensor& values, const Tensor& sorter, bool right,
                         const Tensor& out) {
  DispatchNumber(values.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if (out.dtype() == DType::kInt32) SearchRows<T, int32_t>(seq, values, sorter, right, out);
    else SearchRows<T, int64_t>(seq, values, sorter, right, out);
  });
}

// The CPU kernel in the registry (Note [Kernel registry]); the entry below reaches it.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::SearchSortedRowsKernel>(DeviceType::kCPU, &SearchSortedRowsCpu);
  return true;
}();

}  // namespace

void SearchSortedRows(const Tensor& seq, const Tensor& values, const Tensor& sorter, bool right, const Tensor& out) {
  kernels::CallKernel<kernels::SearchSortedRowsKernel>(out.device(), seq, values, sorter, right, out);
}

}  // namespace oneflow
