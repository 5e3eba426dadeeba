// Index kernels of CUDA tensors (src/cuda/index.cu): the device side of gather / scatter /
// index_select / index_add / embedding / advanced indexing, registered for kernels/
// gather_scatter.h, index_slices.h, embedding.h and adv_index.h by the cuda/*.cpp of those names
// (Note [Kernel registry]). Shapes and index ranges are checked first (CUDA indices by their
// min / max on the device, ops/index_util.h); indices here are int64 and in range.
#pragma once
#include <cstdint>

#include "core/scalar.h"
#include "core/tensor.h"

namespace oneflow::cuda {

// out[p] = input[p with coordinate dim replaced by index[p]]; out and index contiguous with one
// shape, input any strided view.
void GatherDim(const Tensor& out, const Tensor& input, int dim, const Tensor& index);
// self[p with dim -> index[p]] = src[p] (add: +=, atomically); index contiguous, self and src
// any strides (src at least index's extent). add: any dtype (cuda/atomic.cuh).
void ScatterDim(const Tensor& self, int dim, const Tensor& index, const Tensor& src, bool add);
// The same with self[...] = combine(self[...], src[p]) atomically: op 2 multiply, 3 max, 4 min
// (scatter's reduce modes; NaN takes over max / min, as on the CPU).
void ScatterDimReduce(const Tensor& self, int dim, const Tensor& index, const Tensor& src, int op);
// out [outer, n, inner] = x [outer, size, inner] rows idx[0..n) (contiguous).
void IndexRows(const Tensor& out, const Tensor& x, const Tensor& idx, int64_t outer, int64_t size, int64_t inner);
// self [outer, size, inner] rows idx[j] += alpha * scale[j] * src [outer, n, inner] row j, atomically;
// rows equal to `skip` get nothing; scale (float64 [n]) may be undefined (1); a complex alpha
// scales complex values (real dtypes take its real part, as Scalar::To does).
void IndexRowsAdd(const Tensor& self, const Tensor& src, const Tensor& idx, int64_t outer, int64_t size,
                  int64_t inner, const Scalar& alpha, int64_t skip, const Tensor& scale);
// Advanced indexing (ops/index_ops.cpp, Note [Advanced indexing geometry]): `geo` (int64, on the
// device) holds the n index-position offsets, then the `pre` offsets, then the `post` offsets,
// all in elements from the start of self's storage (`base`). Result element e (row-major over
// [pre, n, post, inner]) is base[pre[p] + offs[k] + post[j] + i * inner_stride].
struct AdvGeom {
  int64_t n, pre, post, inner, inner_stride;
};
// out (contiguous, the result's shape) = base[...].
void AdvGather(const char* base, const Tensor& out, const Tensor& geo, const AdvGeom& g);
// base[...] = values[e] (values contiguous in the result's layout, or one element when `scalar`);
// accumulate: += atomically (any dtype, cuda/atomic.cuh), or for bool an or. Repeated positions without
// accumulate keep one of the values (as PyTorch's CUDA backend).
void AdvPut(char* base, const Tensor& values, bool scalar, const Tensor& geo, const AdvGeom& g, bool accumulate);

}  // namespace oneflow::cuda
