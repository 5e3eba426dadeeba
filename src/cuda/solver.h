// cuSOLVER's dense LU and Cholesky factorisations for the linalg kernels (ops/linalg_ops.cpp),
// the CUDA side of kernels/lapack.h. Each works in place on a batch of column-major n x n
// matrices: a contiguous [batch, n, n] buffer whose rows are the matrices' columns (what
// linalg::ColMajorCopy makes), float32 or float64. They return LAPACK's info of every matrix
// (copied to the host: one sync per call, as the CPU's error checks need the values). Builds
// without cuSOLVER throw the OF_THROW_NO_KERNEL error: those ops run on host copies
// (Note [Host fallback]).
#pragma once
#include <vector>

#include "core/tensor.h"

namespace oneflow::cuda {

// LU with partial pivoting; piv: int64 [batch, n] on the device (1-based rows, as LAPACK).
std::vector<int> Getrf(const Tensor& buf, const Tensor& piv);
// Solves with Getrf's factors: x is a contiguous [batch, k, n] buffer (n x k column-major
// right-hand sides), overwritten by the solutions.
void Getrs(const Tensor& lu, const Tensor& piv, const Tensor& x);
// Cholesky, lower factor in the lower triangle (column-major); the other triangle is untouched.
std::vector<int> Potrf(const Tensor& buf);

}  // namespace oneflow::cuda
