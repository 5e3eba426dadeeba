// Copies and casts: the one place that converts between dtypes and layouts.
#pragma once
#include <initializer_list>
#include <vector>

#include "core/tensor.h"
#include "decl/contiguous.h"

namespace oneflow {

// dst[...] = src broadcast to dst's shape, converted to dst's dtype. dst may be any view.
void CopyInto(const Tensor& dst, const Tensor& src);
// t itself when it already has `dtype`, else a converted contiguous copy.
Tensor CastTo(const Tensor& t, DType dtype);
Tensor Contiguous(const Tensor& t);  // t itself when already contiguous
// Same device, or one of them a Python number or a 0-d CPU tensor (a scalar: as in PyTorch,
// `cuda_tensor * torch.tensor(2.)` is allowed).
void CheckSameDevice(const Tensor& a, const Tensor& b);
// The device an op on these operands runs on: the first one's that is not such a scalar (else
// the first one's).
const Device& OpDevice(std::initializer_list<const Tensor*> ops);
// Fills t with a scalar (in place, no version bump).
void FillWith(const Tensor& t, const Scalar& value);
// t itself when it is on `device` already, else a copy there (no autograd): host-side work of an
// op on CUDA tensors (checks, small per-row tables) moves its inputs with this.
Tensor MovedTo(const Tensor& t, const Device& device);
inline Tensor OnHost(const Tensor& t) { return MovedTo(t, Device{}); }
// A contiguous copy of a CPU tensor in page-locked memory (Tensor.pin_memory(); CUDA builds),
// and whether a tensor's data is page-locked.
Tensor PinnedCopy(const Tensor& t);
bool IsPinned(const Tensor& t);
// A 1-d float64 (int64) tensor holding v, on `device`: host-made tables for device kernels.
Tensor VectorTensor(const std::vector<double>& v, const Device& device);
Tensor VectorTensor(const std::vector<int64_t>& v, const Device& device);

}  // namespace oneflow
