// Helpers shared by the random op files (random_ops.cpp, random_inplace_ops.cpp,
// random_sample_ops.cpp).
#pragma once
#include <optional>

#include "core/generator.h"
#include "kernels/random_fill.h"
#include "ops/copy.h"
#include "decl/empty.h"

namespace oneflow {

inline bool IsMeta(const Tensor& t) { return t.device().type == DeviceType::kMeta; }

// PyTorch's C type names in its bound messages ("from is out of bounds for unsigned char").
const char* CTypeName(DType t);
// [from, to_inclusive] must lie in the dtype's range (integral dtypes; floats warn-free as the
// values are exact up to 2^digits anyway).
void CheckRandomBounds(DType t, int64_t from, int64_t to_inclusive);
// Continuous distributions need a floating dtype; PyTorch's wording per op. complex_ok: the
// uniform and normal fills, which take complex tensors too (FillContinuousParts).
void CheckFloatingFill(DType t, const char* what, bool complex_ok = false);
// FillContinuous (kernels/random_fill.h) of a contiguous tensor; a complex one gets independent
// real and imaginary parts, as PyTorch's: uniform in [a, b) each, normal with mean a and std
// b / sqrt(2) each (so that E|z - a|^2 = b^2).
void FillContinuousParts(const Tensor& t, RandDist dist, double a, double b, Generator& g);

// Fills `self` (any layout) in place through fill(contiguous tensor): directly when `self` is
// contiguous, else through a contiguous temporary copied in. Checks `self` is writable first.
template <typename F>
Tensor& FillInPlace(Tensor& self, const F& fill) {
  for (int d = 0; d < self.dim(); ++d)
    OF_CHECK(!(self.strides()[d] == 0 && self.sizes()[d] > 1))
        << "unsupported operation: more than one element of the written-to tensor refers to a "
           "single memory location. Please clone() the tensor before performing the operation.";
  if (IsMeta(self)) return self;
  if (self.is_contiguous()) {
    fill(self);
  } else {
    Tensor tmp = Empty(self.sizes(), self.dtype(), self.device());
    fill(tmp);
    CopyInto(self, tmp);
  }
  self.BumpVersion();
  return self;
}

inline void SetRequiresGrad(Tensor& t, bool requires_grad) {
  OF_CHECK(!requires_grad || IsFloating(t.dtype()))
      << "Only Tensors of floating point dtype can require gradients";
  t.impl()->requires_grad_ = requires_grad;
}

}  // namespace oneflow
