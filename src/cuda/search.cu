// searchsorted / bucketize on CUDA (kernels/search.h): one thread per value, the CPU's binary
// search (kernels/search.h).
#include <cuda_runtime.h>

#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/search.h"

namespace oneflow::cuda {

namespace {

template <typename T, typename O>
__global__ void SearchKernel(const T* seq, const T* values, const int64_t* sorter, int64_t n, int64_t len,
                             int64_t per_row, bool rows, bool right, O* out) {
  OF_GRID_LOOP(i, n) {
    const int64_t row = rows ? i / per_row : 0;
    out[i] = static_cast<O>(SearchRow<T>(seq + row * len, sorter ? sorter + row * len : nullptr, len,
                                         static_cast<OpMath<T>>(values[i]), right));
  }
}

void SearchSortedRows(const Tensor& seq, const Tensor& values, const Tensor& sorter, bool right, const Tensor& out) {
  const int64_t n = values.numel();
  if (n == 0) return;
  const int64_t len = seq.dim() == 0 ? 1 : seq.sizes()[seq.dim() - 1];
  const int64_t per_row = seq.dim() <= 1 ? n : values.sizes()[values.dim() - 1];
  DeviceGuard guard(out.device().index);
  const cudaStream_t s = static_cast<cudaStream_t>(Stream(out.device().index));
  DispatchNumber(values.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const int64_t* so = sorter.defined() ? sorter.ptr<int64_t>() : nullptr;
    if (out.dtype() == DType::kInt32)
      SearchKernel<T, int32_t><<<GridFor(n), kGridThreads, 0, s>>>(seq.ptr<T>(), values.ptr<T>(), so, n, len, per_row,
                                                                   seq.dim() > 1, right, out.ptr<int32_t>());
    else
      SearchKernel<T, int64_t><<<GridFor(n), kGridThreads, 0, s>>>(seq.ptr<T>(), values.ptr<T>(), so, n, len, per_row,
                                                                   seq.dim() > 1, right, out.ptr<int64_t>());
  });
  CheckLaunch("the searchsorted kernel");
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterSearchKernels() {
  kernels::RegisterKernel<kernels::SearchSortedRowsKernel>(DeviceType::kCUDA, &SearchSortedRows);
}

}  // namespace oneflow::cuda
