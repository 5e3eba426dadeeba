// Advanced indexing's gather and put kernels (ops/index_ops.cpp builds the geometry and checks
// the indices): CPU in kernels/adv_index.cpp, CUDA in cuda/adv_index.cpp (Note [Kernel
// registry]). Both address self through its storage (offsets are in elements from the storage's
// start), so self is the tensor itself, never a copy.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

// Note [Advanced indexing geometry]: self's dims split into the indexed ones and the rest; the
// result is [pre..., broadcast index shape..., post...] (pre is empty when the indexed dims are
// not adjacent: NumPy/PyTorch's placement rule). Offsets are kept per index position (`n` of
// them), per pre position and per post position except the innermost post dim, which is walked
// as a strided run -- never one offset per result element.
struct AdvIndex {
  DimVector result_shape;
  int64_t n = 1;
  std::vector<int64_t> offsets;   // per index position: self.offset() + sum of index * stride
  Tensor device_offsets;          // the same on self's device, for indices there (then `offsets` is empty)
  std::vector<int64_t> pre_off;   // per pre position
  std::vector<int64_t> post_off;  // per post position (all post dims but the innermost)
  int64_t inner = 1, inner_stride = 0;
  bool has_post = false;
};


// out (contiguous, the result's shape) = self's elements at the geometry's positions.
void AdvGather(const Tensor& self, const AdvIndex& a, const Tensor& out);
// self's elements at the geometry's positions = (accumulate: +=; bool: or) values, in the result's
// contiguous layout, or the one element of v when `scalar` (v may then be a host scalar).
// Repeated positions without accumulate: the CPU keeps the last value, CUDA one of them (as
// PyTorch's backends).
void AdvPut(const Tensor& self, const AdvIndex& a, const Tensor& v, bool scalar, bool accumulate);

namespace kernels {
struct AdvGatherKernel {
  static constexpr const char* kName = "index_gather";
  using Fn = void (*)(const Tensor& self, const AdvIndex& a, const Tensor& out);
  using Writes = KernelWrites<2>;
};
struct AdvPutKernel {
  static constexpr const char* kName = "index_put";
  using Fn = void (*)(const Tensor& self, const AdvIndex& a, const Tensor& v, bool scalar, bool accumulate);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
