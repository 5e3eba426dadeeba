// OneFlow's n-d index ops: gather_nd, scatter_nd, tensor_scatter_nd_update, tensor_scatter_nd_add.
// The last axis of `indices` (length K) addresses the leading K dims of the target; each index row
// picks a slice of the remaining dims. As in OneFlow, repeated rows add up in the scatters
// (tensor_scatter_nd_update zeroes the addressed slices, then adds the updates).
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "kernels/index_nd.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/gather_nd.h"
#include "decl/scatter_nd.h"
#include "decl/tensor_scatter_nd_add.h"
#include "decl/tensor_scatter_nd_update.h"
#include "decl/zeros.h"

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

// out (contiguous) slices at the index rows += updates rows (kernels/index_nd.h).
void AddSlices(const Tensor& out, const NdGeom& g, const Tensor& updates) {
  NdAddRows(out, Contiguous(updates), g.offsets, g.slice);
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
  NdGatherRows(p, out, g.offsets, g.slice);
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
  NdZeroRows(out, g.offsets, g.slice);
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
