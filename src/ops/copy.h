// Copies and casts: the one place that converts between dtypes and layouts.
#pragma once
#include "core/tensor.h"
#include "decl/contiguous.h"

namespace oneflow {

// dst[...] = src broadcast to dst's shape, converted to dst's dtype. dst may be any view.
void CopyInto(const Tensor& dst, const Tensor& src);
// t itself when it already has `dtype`, else a converted contiguous copy.
Tensor CastTo(const Tensor& t, DType dtype);
Tensor Contiguous(const Tensor& t);  // t itself when already contiguous
void CheckSameDevice(const Tensor& a, const Tensor& b);
// Fills t with a scalar (in place, no version bump).
void FillWith(const Tensor& t, const Scalar& value);

}  // namespace oneflow
