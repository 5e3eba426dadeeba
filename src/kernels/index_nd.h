// The slice loops of the n-d index ops (ops/nd_ops.cpp: gather_nd, scatter_nd,
// tensor_scatter_nd_update / _add): each index row addresses one slice of `slice` contiguous
// elements, at element offset offsets[r] of a contiguous target. CPU in kernels/index_nd.cpp, CUDA
// in cuda/index_nd.cpp over the advanced-indexing kernels (Note [Kernel registry]).
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// out [rows, slice] (contiguous) = the slices of src (contiguous) at the offsets.
void NdGatherRows(const Tensor& src, const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice);
// The slices of out (contiguous) at the offsets += updates [rows, slice] (contiguous); repeated
// rows add up (CPU: in row order; CUDA: atomic adds). bool: or.
void NdAddRows(const Tensor& out, const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice);
// The slices of out (contiguous) at the offsets set to zero.
void NdZeroRows(const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice);

namespace kernels {
struct NdGatherRowsKernel {
  static constexpr const char* kName = "gather_nd_rows";
  using Fn = void (*)(const Tensor& src, const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice);
  using Writes = KernelWrites<1>;
};
struct NdAddRowsKernel {
  static constexpr const char* kName = "scatter_nd_add_rows";
  using Fn = void (*)(const Tensor& out, const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice);
  using Writes = KernelWrites<0>;
};
struct NdZeroRowsKernel {
  static constexpr const char* kName = "scatter_nd_zero_rows";
  using Fn = void (*)(const Tensor& out, const std::vector<int64_t>& offsets, int64_t slice);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
