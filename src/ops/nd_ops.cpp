// OneFlow's n-d index ops: gather_nd, scatter_nd, tensor_scatter_nd_update, tensor_scatter_nd_add.
// The last axis of `indices` (length K) addresses the leading K dims of the target; each index row
// picks a slice of the remaining dims. As in OneFlow, repeated rows add up in the scatters
// (tensor_scatter_nd_update zeroes the addressed slices, then adds the updates).
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/gather_nd.h"
#include "decl/scatter_nd.h"
#include "decl/tensor_scatter_nd_add.h"
#include "decl/tensor_scatter_nd_update.h"
#include "decl/zeros.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/index.h"
#endif

namespace oneflow {

namespace {

struct NdGeom {
  DimVector out_shape;          // indices.shape[:-1] + target.shape[K:]
  int64_t rows = 1, slice = 1;  // index rows, elements per slice
  std::vector<int64_t> offsets; // per index row: element offset of its slice in the contiguous target
};

NdGeom MakeNdGeom(const DimVector& target, const Tensor& indices, const char* op, bool with_offsets) {
  OF_CHECK(indices.dtype() == DType::kInt32 || indices.dtype() == DType::kInt64)
      << "indices must be an int32 or int64 tensor, got " << DTypeName(indices.dtype());
  OF_CHECK(indices.dim() >= 1) << "indices must have at least 1 dimension";
  const int64_t k = indices.sizes()[indices.dim() - 1];
  OF_CHECK_INDEX(k <= static_cast<int64_t>(target.size()))
      << "the last dim of indices (" << k << ") must not exceed the number of dims of the target ("
      << target.size() << ")";
  NdGeom g;
  for (int d = 0; d + 1 < indices.dim(); ++d) g.out_shape.push_back(indices.sizes()[d]);
  for (int d = k; d < target.size(); ++d) {
    g.out_shape.push_back(target[d]);
    g.slice *= target[d];
  }
  g.rows = 1;
  for (int d = 0; d + 1 < indices.dim(); ++d) g.rows *= indices.sizes()[d];
  if (!with_offsets) return g;
  CheckHasData(indices);
  Tensor idx = Contiguous(CastTo(OnHost(indices), DType::kInt64));  // CUDA indices: a host copy
  const int64_t* ip = idx.data<int64_t>();
  const DimVector st = ContiguousStrides(target);
  g.offsets.assign(g.rows, 0);
  for (int64_t r = 0; r < g.rows; ++r) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = ip[r * k + j];
      OF_CHECK_INDEX(v >= 0 && v < target[j])
          << "index " << v << " is out of bounds for dimension " << j << " with size " << target[j];
      off += v * (target[j] == 1 ? 0 : st[j]);
    }
    g.offsets[r] = off;
  }
  return g;
}

void CheckUpdates(const NdGeom& g, const Tensor& updates, DType dtype, const char* op) {
  OF_CHECK(updates.sizes() == g.out_shape) << "updates must have shape indices.shape[:-1] + shape[K:] = "
                                           << ShapeStr(g.out_shape) << ", got " << ShapeStr(updates.sizes());
  OF_CHECK(updates.dtype() == dtype) << "updates (" << DTypeName(updates.dtype())
                                     << ") must have the dtype of the target (" << DTypeName(dtype) << ")";
}

#ifdef ONEFLOW_WITH_CUDA
// CUDA tensors go through the advanced-indexing kernels (cuda/index.h): the rows are the index
// positions, a slice the contiguous inner run.
Tensor RowGeometry(const NdGeom& g, const Device& device, cuda::AdvGeom* a) {
  *a = cuda::AdvGeom{g.rows, 1, 1, g.slice, 1};
  Tensor geo = Empty(DimVector{g.rows + 2}, DType::kInt64);
  int64_t* d = geo.data<int64_t>();
  std::copy(g.offsets.begin(), g.offsets.end(), d);
  d[g.rows] = d[g.rows + 1] = 0;  // the one pre and one post offset
  return MovedTo(geo, device);
}
#endif

// out (contiguous) slices at the index rows += updates rows (in row order: repeated rows add up
// deterministically); threads split the slice elements. CUDA: atomic adds (any order).
void AddSlices(const Tensor& out, const NdGeom& g, const Tensor& updates) {
  if (g.rows == 0 || g.slice == 0) return;
  Tensor u = Contiguous(updates);
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    cuda::AdvGeom a;
    const Tensor geo = RowGeometry(g, out.device(), &a);
    cuda::AdvPut(out.raw_ptr(), u, false, geo, a, true);
    return;
  }
#endif
  DispatchAllAndComplex(out.dtype(), [&](auto tag) {  // (complex: gather_nd's gradient)
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    T* o = out.data<T>();
    const T* up = u.data<T>();
    ParallelFor(0, g.slice, std::max<int64_t>(1, kGrainSize / g.rows), [&](int64_t b, int64_t e) {
      for (int64_t r = 0; r < g.rows; ++r) {
        T* dst = o + g.offsets[r];
        const T* src = up + r * g.slice;
        for (int64_t i = b; i < e; ++i) {
          if constexpr (std::is_same_v<T, bool>) dst[i] = dst[i] || src[i];
          else dst[i] = static_cast<T>(static_cast<M>(dst[i]) + static_cast<M>(src[i]));
        }
      }
    });
  });
}

Tensor ContiguousClone(const Tensor& t) {
  Tensor out = Empty(t.sizes(), t.dtype(), t.device());
  if (t.device().type != DeviceType::kMeta) CopyInto(out, t);
  return out;
}

}  // namespace

Tensor GatherNd(const Tensor& params, const Tensor& indices) {
  OpScope scope("gather_nd");
  const bool meta = params.device().type == DeviceType::kMeta;
  NdGeom g = MakeNdGeom(params.sizes(), indices, "gather_nd", !meta);
  Tensor out = Empty(g.out_shape, params.dtype(), params.device());
  if (meta || out.numel() == 0) return out;
  Tensor p = Contiguous(params);
#ifdef ONEFLOW_WITH_CUDA
  if (p.device().type == DeviceType::kCUDA) {
    cuda::AdvGeom a;
    const Tensor geo = RowGeometry(g, p.device(), &a);
    cuda::AdvGather(p.raw_ptr(), out, geo, a);
    return out;
  }
#endif
  DispatchBySize(p.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* src = p.data<U>();
    U* o = out.data<U>();
    ParallelFor(0, g.rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.slice)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const U* s = src + g.offsets[r];
        U* d = o + r * g.slice;
        for (int64_t i = 0; i < g.slice; ++i) d[i] = s[i];
      }
    });
  });
  return out;
}

Tensor ScatterNd(const Tensor& indices, const Tensor& updates, const DimVector& shape) {
  OpScope scope("scatter_nd");
  for (int64_t s : shape) OF_CHECK(s >= 0) << "shape must be non-negative, got " << ShapeStr(shape);
  const bool meta = updates.device().type == DeviceType::kMeta;
  NdGeom g = MakeNdGeom(shape, indices, "scatter_nd", false);
  CheckUpdates(g, updates, updates.dtype(), "scatter_nd");
  Tensor out = Zeros(shape, updates.dtype(), updates.device(), false);
  if (meta) return out;
  g = MakeNdGeom(shape, indices, "scatter_nd", true);
  AddSlices(out, g, updates);
  return out;
}

Tensor TensorScatterNdUpdate(const Tensor& params, const Tensor& indices, const Tensor& updates) {
  OpScope scope("tensor_scatter_nd_update");
  const bool meta = params.device().type == DeviceType::kMeta;
  NdGeom g = MakeNdGeom(params.sizes(), indices, "tensor_scatter_nd_update", !meta);
  CheckUpdates(g, updates, params.dtype(), "tensor_scatter_nd_update");
  Tensor out = ContiguousClone(params);
  if (meta || g.slice == 0) return out;
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    cuda::AdvGeom a;
    const Tensor geo = RowGeometry(g, out.device(), &a);
    cuda::AdvPut(out.raw_ptr(), MovedTo(ScalarToTensor(Scalar(0), out.dtype()), out.device()), true, geo, a, false);
    AddSlices(out, g, updates);
    return out;
  }
#endif
  DispatchBySize(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    U* o = out.data<U>();
    for (int64_t r = 0; r < g.rows; ++r) std::fill(o + g.offsets[r], o + g.offsets[r] + g.slice, U(0));
  });
  AddSlices(out, g, updates);
  return out;
}

Tensor TensorScatterNdAdd(const Tensor& params, const Tensor& indices, const Tensor& updates) {
  OpScope scope("tensor_scatter_nd_add");
  const bool meta = params.device().type == DeviceType::kMeta;
  NdGeom g = MakeNdGeom(params.sizes(), indices, "tensor_scatter_nd_add", !meta);
  CheckUpdates(g, updates, params.dtype(), "tensor_scatter_nd_add");
  Tensor out = ContiguousClone(params);
  if (meta) return out;
  AddSlices(out, g, updates);
  return out;
}

}  // namespace oneflow
