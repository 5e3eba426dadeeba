// Gathers and scatters along one dim (ops/gather_ops.cpp: gather, take_along_dim, index_select;
// ops/scatter_ops.cpp: scatter and its reductions). Each kernel answers the first index it met
// outside [0, size) (nullopt when all were in range) and the op raises; a kernel that meets a bad
// index may have written part of a fresh output (dropped by the raise), while in-place callers
// check their indices before (FindOutOfRange). CPU in kernels/gather_scatter.cpp, CUDA in
// cuda/gather_scatter.cpp (Note [Kernel registry]).
#pragma once
#include <cstdint>
#include <optional>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

enum class ScatterOp { kAssign, kAdd, kMul, kMax, kMin };

// out[p] = input[p with coordinate `dim` replaced by index[p]]; index (int32 / int64) and out
// contiguous with the same shape; input any strided view (broadcast dims have stride 0).
std::optional<int64_t> GatherDim(const Tensor& out, const Tensor& input, int dim, const Tensor& index);
// out [outer, n, inner] = x [outer, size, inner] rows idx[0..n); x contiguous, idx (int32 / int64)
// contiguous.
std::optional<int64_t> IndexSelectRows(const Tensor& out, const Tensor& x, const Tensor& idx, int64_t outer,
                                       int64_t size, int64_t inner);
// self[p with `dim` replaced by index[p]] = combine(that, src[p]) for every position p of index;
// index contiguous int64; src any strided view (stride 0 for a broadcast value, which may be a
// host scalar for a device self). Complex self: kAssign, kAdd and kMul only (checked by the op).
std::optional<int64_t> ScatterDim(const Tensor& self, int dim, const Tensor& index, const Tensor& src, ScatterOp op);

namespace kernels {
struct GatherDimKernel {
  static constexpr const char* kName = "gather";
  using Fn = std::optional<int64_t> (*)(const Tensor& out, const Tensor& input, int dim, const Tensor& index);
  using Writes = KernelWrites<0>;
};
struct IndexSelectRowsKernel {
  static constexpr const char* kName = "index_select";
  using Fn = std::optional<int64_t> (*)(const Tensor& out, const Tensor& x, const Tensor& idx, int64_t outer,
                                        int64_t size, int64_t inner);
  using Writes = KernelWrites<0>;
};
struct ScatterDimKernel {
  static constexpr const char* kName = "scatter";
  using Fn = std::optional<int64_t> (*)(const Tensor& self, int dim, const Tensor& index, const Tensor& src,
                                        ScatterOp op);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
