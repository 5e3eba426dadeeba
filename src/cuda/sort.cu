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
#include "kernels/sort.h"
#include "kernels/sort_keys.h"
#include "ops/copy.h"
#include "ops/index_util.h"

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
__global__ void SelectRowsKernel(const T* sv, const int64_t* si, int64_t rows, int64_t n, int kind, int64_t k,
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

// kthvalue (kind 0, rank k) / median (1) / nanmedian (2) / mode (3) of each row of SortRows'
// ascending output sv (values) / si (positions), [nrows, n] contiguous, into values / indices
// ([nrows] contiguous), as the CPU's SelectKernel (kernels/sort.h) picks.
void SelectFromSorted(const Tensor& sv, const Tensor& si, int64_t nrows, int64_t n, int kind, int64_t k,
                      const Tensor& values, const Tensor& indices) {
  if (nrows == 0) return;
  DeviceGuard guard(sv.device().index);
  DispatchAll(sv.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    SelectRowsKernel<T><<<GridFor(nrows), kThreads, 0, static_cast<cudaStream_t>(Stream(sv.device().index))>>>(
        sv.ptr<T>(), si.ptr<int64_t>(), nrows, n, kind, k, values.ptr<T>(), indices.ptr<int64_t>());
  });
  CheckLaunch("the selection kernel");
}

// Rows (contiguous [nrows, n]) sorted stably (descending: Note [Sort keys] order reversed); the
// first k of each row into values / indices (contiguous [nrows, k]; either may be undefined).
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

// The CUDA kernels of kernels/sort.h (sort, topk, kthvalue / median / mode) on SortRows.

// t viewed with `dim` moved last (no copy); a 0-d t as one element.
Tensor DimLast(const Tensor& t, int dim) {
  if (t.dim() == 0) return MakeView(t, DimVector{1}, DimVector{1}, t.offset());
  DimVector sz, st;
  for (int d = 0; d < t.dim(); ++d)
    if (d != dim) sz.push_back(t.sizes()[d]), st.push_back(t.strides()[d]);
  sz.push_back(t.sizes()[dim]);
  st.push_back(t.strides()[dim]);
  return MakeView(t, sz, st, t.offset());
}

// The rows of `in` along dim (made contiguous, dim last) sorted on the device; their first
// k into values / indices (which have k entries along dim; either may be undefined).
void SortAlong(const Tensor& in, int dim, bool descending, int64_t k, const Tensor& values,
               const Tensor& indices) {
  const Tensor rows = Contiguous(DimLast(in, dim));
  const int64_t n = rows.sizes()[rows.dim() - 1], nrows = n ? rows.numel() / n : 0;
  Tensor v, i;  // [.., k] in the dim-last layout, then copied into the outputs' views
  if (values.defined()) v = Empty(DimLast(values, dim).sizes(), values.dtype(), values.device());
  if (indices.defined()) i = Empty(DimLast(indices, dim).sizes(), DType::kInt64, indices.device());
  SortRows(rows, nrows, n, descending, k, v, i);
  if (v.defined()) CopyInto(DimLast(values, dim), v);
  if (i.defined()) CopyInto(DimLast(indices, dim), i);
}

void SortCuda(const Tensor& in, int dim, bool descending, const Tensor& values, const Tensor& indices) {
  SortAlong(in, dim, descending, SizeAt(in, dim), values, indices);
}

void TopkCuda(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  SortAlong(in, dim, largest, k, values, indices);
}

// Every row sorted on the device, then one pick per row.
void SelectCuda(const Tensor& in, int dim, SelectKind kind, int64_t k, const Tensor& values, const Tensor& indices) {
  const Tensor rows = Contiguous(DimLast(in, dim));
  const int64_t n = rows.sizes()[rows.dim() - 1], nrows = rows.numel() / n;
  const Tensor sv = Empty(rows.sizes(), in.dtype(), in.device());
  const Tensor si = Empty(rows.sizes(), DType::kInt64, in.device());
  SortRows(rows, nrows, n, false, n, sv, si);
  const Tensor v = Empty(DimVector{nrows}, in.dtype(), in.device());
  const Tensor i = Empty(DimVector{nrows}, DType::kInt64, in.device());
  SelectFromSorted(sv, si, nrows, n, static_cast<int>(kind), k, v, i);
  const Tensor vd = DimLast(values, dim), id = DimLast(indices, dim);  // [..., 1]: nrows elements
  CopyInto(vd, MakeView(v, vd.sizes(), ContiguousStrides(vd.sizes()), 0));
  CopyInto(id, MakeView(i, id.sizes(), ContiguousStrides(id.sizes()), 0));
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterSortKernels() {
  kernels::RegisterKernel<kernels::SortKernel>(DeviceType::kCUDA, &SortCuda);
  kernels::RegisterKernel<kernels::TopkKernel>(DeviceType::kCUDA, &TopkCuda);
  kernels::RegisterKernel<kernels::SelectKernel>(DeviceType::kCUDA, &SelectCuda);
}

}  // namespace oneflow::cuda
