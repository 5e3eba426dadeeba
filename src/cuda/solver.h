// cuSOLVER's dense LU and Cholesky factorisations for the linalg kernels (ops/linalg_ops.cpp),
// the CUDA side of kernels/lapack.h. Each works in place on a batch of column-major n x n
// matrices: a contiguous [batch, n, n] buffer whose rows are the matrices' columns (what
// linalg::ColMajorCopy makes), float32 or float64. They return LAPACK's info of every matrix
// (copied to the host: one sync per call, as the CPU's error checks need the values). A build
// without cuSOLVER registers no CUDA linalg kernel (HasSolver), so those ops run on host copies
// by the registry's answer (Note [Kernel registry]); its functions here are then never called.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace oneflow::cuda {

// Whether this build has cuSOLVER (the functions below work).
bool HasSolver();

// LU with partial pivoting; piv: int64 [batch, n] on the device (1-based rows, as LAPACK).
std::vector<int> Getrf(const Tensor& buf, const Tensor& piv);
// Solves with Getrf's factors: x is a contiguous [batch, k, n] buffer (n x k column-major
// right-hand sides), overwritten by the solutions.
void Getrs(const Tensor& lu, const Tensor& piv, const Tensor& x);
// Cholesky, lower factor in the lower triangle (column-major); the other triangle is untouched.
std::vector<int> Potrf(const Tensor& buf);
// Symmetric eigendecomposition (divide and conquer): eigenvalues ascending into w (contiguous
// [batch, n]), eigenvectors over buf's columns when `vectors`; `lower`: the triangle read.
std::vector<int> Syevd(const Tensor& buf, const Tensor& w, bool vectors, bool lower);
// QR of m x n column-major matrices (buf [batch, n, m]): R above the diagonal, the reflectors
// below, their factors in tau ([batch, min(m, n)]); Orgqr turns the first k reflectors of
// q ([batch, >= cols, m], the reflectors in its first columns) into the m x cols matrix Q.
void Geqrf(const Tensor& buf, int64_t m, int64_t n, const Tensor& tau);
// SVD of m x n column-major matrices with m >= n (gesvd needs it; callers factor a wide matrix's
// transpose): buf [batch, n, m] (destroyed), s [batch, n]; with `vectors`, u [batch, m or n, m]
// (m x m when `full`, else m x n) and vt [batch, n, n] (V^T), undefined otherwise.
std::vector<int> Gesvd(const Tensor& buf, int64_t m, int64_t n, const Tensor& s, const Tensor& u, const Tensor& vt,
                       bool full);
void Orgqr(const Tensor& q, int64_t m, int64_t cols, int64_t k, const Tensor& tau);

}  // namespace oneflow::cuda
