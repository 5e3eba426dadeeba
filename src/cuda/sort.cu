// sort / argsort / topk on CUDA (cuda/ops.h): the rows' values become Note [Sort keys] keys
// (complemented for descending order), CUB's segmented radix sort orders (key, position) pairs
// stably, and the first k positions of each row are read back into values (the input's exact
// bits) and indices. Equal values keep their order, as on the CPU.
#include <cuda_runtime.h>

#include <cub/device/device_segmented_radix_sort.cuh>
#include <vector>

#include "cuda/check.h"
#include "cuda/ops.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "decl/empty.h"
#include "kernels/sort_keys.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = kGridThreads;

template <typename T>
__global__ void KeysKernel(const T* x, int64_t total, int64_t n, bool descending, KeyOf<T>* keys, int64_t* pos) {
  OF_GRID_LOOP(e, total) {
    const KeyOf<T> k = ToKey<T>(x[e]);
    keys[e] = descending ? static_cast<KeyOf<T>>(~k) : k;
    pos[e] = e % n;
  }
}

template <typename T>
__global__ void TakeKernel(const T* x, const int64_t* pos, int64_t rows, int64_t n, int64_t k, T* values,
                           int64_t* indices) {
  OF_GRID_LOOP(e, rows * k) {
    const int64_t r = e / k, p = pos[r * n + e % k];
    if (values) values[e] = x[r * n + p];
    if (indices) indices[e] = p;
  }
}

// kthvalue / median / nanmedian / mode of each row from its stable ascending sort (values sv,
// input positions si), as the CPU's SelectTyped picks: NaN keys sort last, in position order.
template <typename T>
__global__ void SelectKernel(const T* sv, const int64_t* si, int64_t rows, int64_t n, int kind, int64_t k,
                             T* values, int64_t* indices) {
  OF_GRID_LOOP(r, rows) {
    const T* v = sv + r * n;
    const int64_t* p = si + r * n;
    int64_t nans = 0;
    while (nans < n && IsNanKey<T>(ToKey<T>(v[n - 1 - nans]))) ++nans;
    int64_t at = k;  // kKth
    if (kind == 1) at = nans > 0 ? n - nans : (n - 1) / 2;        // kMedian: the first NaN, if any
    else if (kind == 2) at = nans == n ? 0 : (n - nans - 1) / 2;  // kNanMedian
    if (kind == 3) {  // kMode: the longest run, the first among ties, at its last position
      int64_t best = 0;
      for (int64_t s0 = 0, e0 = 0; s0 < n; s0 = e0) {
        e0 = s0 + 1;
        while (e0 < n && ToKey<T>(v[e0]) == ToKey<T>(v[s0])) ++e0;
        if (e0 - s0 > best) {
          best = e0 - s0;
          at = e0 - 1;
        }
      }
    }
    values[r] = v[at];
    indices[r] = p[at];
  }
}

}  // namespace

void SelectFromSorted(const Tensor& sv, const Tensor& si, int64_t nrows, int64_t n, int kind, int64_t k,
                      const Tensor& values, const Tensor& indices) {
  if (nrows == 0) return;
  DeviceGuard guard(sv.device().index);
  DispatchAll(sv.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    SelectKernel<T><<<GridFor(nrows), kThreads, 0, static_cast<cudaStream_t>(Stream(sv.device().index))>>>(
        sv.ptr<T>(), si.ptr<int64_t>(), nrows, n, kind, k, values.ptr<T>(), indices.ptr<int64_t>());
  });
  CheckLaunch("the selection kernel");
}

void SortRows(const Tensor& rows, int64_t nrows, int64_t n, bool descending, int64_t k, const Tensor& values,
              const Tensor& indices) {
  if (nrows * n == 0 || k == 0) return;
  const int64_t total = nrows * n;
  OF_CHECK(total < (int64_t(1) << 31) && nrows < (int64_t(1) << 31))
      << "sort: more than 2^31 elements in one CUDA sort are not supported yet";
  const Device dev = rows.device();
  DeviceGuard guard(dev.index);
  const cudaStream_t stream = static_cast<cudaStream_t>(Stream(dev.index));
  Tensor offsets_host = Empty(DimVector{nrows + 1}, DType::kInt64);
  for (int64_t r = 0; r <= nrows; ++r) offsets_host.data<int64_t>()[r] = r * n;
  const Tensor offsets = MovedTo(offsets_host, dev);
  const int64_t* off = offsets.ptr<int64_t>();
  DispatchAll(rows.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using K = KeyOf<T>;
    const int64_t kb = static_cast<int64_t>(sizeof(K));
    const Tensor keys = Empty(DimVector{2 * total * kb}, DType::kUInt8, dev);
    const Tensor pos = Empty(DimVector{2 * total}, DType::kInt64, dev);
    K* k_in = reinterpret_cast<K*>(keys.raw_ptr());
    K* k_out = k_in + total;
    int64_t* p_in = pos.ptr<int64_t>();
    int64_t* p_out = p_in + total;
    KeysKernel<T><<<GridFor(total), kThreads, 0, stream>>>(rows.ptr<T>(), total, n, descending, k_in, p_in);
    CheckLaunch("the sort keys kernel");
    size_t bytes = 0;
    OF_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, k_in, k_out, p_in, p_out,
                                                           static_cast<int>(total), static_cast<int>(nrows), off,
                                                           off + 1, 0, int(sizeof(K) * 8), stream));
    const Tensor temp = Empty(DimVector{static_cast<int64_t>(bytes > 0 ? bytes : 1)}, DType::kUInt8, dev);
    OF_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.raw_ptr(), bytes, k_in, k_out, p_in, p_out,
                                                           static_cast<int>(total), static_cast<int>(nrows), off,
                                                           off + 1, 0, int(sizeof(K) * 8), stream));
    TakeKernel<T><<<GridFor(nrows * k), kThreads, 0, stream>>>(
        rows.ptr<T>(), p_out, nrows, n, k, values.defined() ? values.ptr<T>() : nullptr,
        indices.defined() ? indices.ptr<int64_t>() : nullptr);
    CheckLaunch("the sort gather kernel");
  });
}

}  // namespace oneflow::cuda
