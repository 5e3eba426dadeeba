// The factorisations behind the dense linalg ops (ops/linalg_ops.cpp: inv, det / slogdet, solve,
// cholesky; ops/linalg_decomp_ops.cpp: qr, svd, eigh), on column-major work buffers
// (linalg::ColMajorCopy: a contiguous [batch, cols, rows] tensor whose rows are the matrices'
// columns). Kernels that factor return LAPACK's info per matrix (copied to the host: the ops raise
// PyTorch's errors from them). CPU on LAPACK in kernels/linalg.cpp, CUDA on cuSOLVER in
// cuda/linalg_solver.cpp (Note [Kernel registry]); complex CUDA input never reaches these
// (linalg::CheckInput sends it to the host fallback).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"
#include "ops/linalg_common.h"

namespace oneflow {

// buf [batch, n, n] (n > 0) replaced by the inverses of its matrices (whatever the factorisation
// left for a singular one).
std::vector<int> LuInverseInPlace(const Tensor& buf, int64_t n, int64_t batch);
// det (or sign and log|det|, slogdet) [batch] of buf's matrices from their LU (buf destroyed);
// the outputs not asked for are undefined.
void LuDeterminantsInto(const Tensor& buf, int64_t n, int64_t batch, const Tensor& det, const Tensor& sign,
                        const Tensor& logabs);
// A X = B: abuf [batch, n, n] (destroyed), xbuf [batch, k, n] the right-hand sides, replaced by
// the solutions (n, k > 0).
std::vector<int> LuSolveInPlace(const Tensor& abuf, const Tensor& xbuf, int64_t n, int64_t k, int64_t batch);
// buf [batch, n, n] replaced by the lower Cholesky factor L (column-major, zeros above), so buf
// read row-major is L^T; complex `upper` conjugates it into U = L^H.
std::vector<int> CholeskyInPlace(const Tensor& buf, int64_t n, int64_t batch, bool upper);
// QR of abuf's m x n matrices ([batch, n, m], destroyed): R (row-major [batch, rrows, n], zeroed)
// gets the upper triangle of the first min(rrows, m) rows; with want_q, qbuf ([batch, >= qcols,
// m], abuf itself when wide enough) gets the m x qcols Q in its first columns.
void QrInto(const Tensor& abuf, const Tensor& qbuf, const Tensor& R, int64_t m, int64_t n, int64_t qcols, int64_t rrows,
            int64_t batch, bool want_q);
// SVD of A's m x n matrices (min(m, n) > 0): S [batch, min(m, n)] real; with compute_uv, U into
// ubuf ([batch, ucols, m] column-major, ucols = m when full else min(m, n)) and Vh into vbuf
// ([batch, n, vrows] column-major), undefined otherwise.
std::vector<int> SvdInto(const Tensor& A, const Tensor& S, const Tensor& ubuf, const Tensor& vbuf, int64_t m,
                         int64_t n, int64_t batch, bool full, bool compute_uv);
// Symmetric / Hermitian eigendecomposition of vbuf's matrices ([batch, n, n]; `lower`: the
// triangle read): eigenvalues ascending into w [batch, n] (real), eigenvectors over vbuf's
// columns when `vectors`.
std::vector<int> SymEigInPlace(const Tensor& vbuf, const Tensor& w, int64_t n, int64_t batch, bool vectors,
                               bool lower);

// det(A) = (-1)^(row swaps) * prod(diag(U)) of A's LU; also as sign and log|det| (slogdet).
// Matrix b's results from U's diagonal (every `step`-th element of u) and LAPACK's 1-based pivots.
// A complex sign is the product of the unit phases d / |d| (0 once a d is 0).
template <typename T, typename P>
void FromLu(const T* u, int64_t step, const P* piv, int64_t n, int64_t b, T* det, T* sign,
            linalg::RealOf<T>* logabs) {
  using R = linalg::RealOf<T>;
  T prod = 1, sgn = 1;
  R perm = 1, la = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T d = u[i * step];
    const R ad = std::abs(d);
    if (piv[i] != i + 1) perm = -perm;
    prod *= d;
    if constexpr (std::is_same_v<T, R>) {
      sgn = d > 0 ? sgn : (d < 0 ? -sgn : T(0));
    } else {
      sgn = ad == 0 ? T(0) : sgn * (d / ad);
    }
    la += std::log(ad);
  }
  // Complex: T(perm) * x (not perm * x) keeps a zero imaginary part +0, as PyTorch's sign is,
  // so that log(sign) of a negative real determinant is +i pi.
  if (det) det[b] = T(perm) * prod;
  if (sign) sign[b] = T(perm) * sgn;
  if (logabs) logabs[b] = la;
}

namespace kernels {
struct LuInverseKernel {
  static constexpr const char* kName = "lu_inverse";
  using Fn = std::vector<int> (*)(const Tensor& buf, int64_t n, int64_t batch);
  using Writes = KernelWrites<0>;
};
struct LuDeterminantsKernel {
  static constexpr const char* kName = "lu_determinants";
  using Fn = void (*)(const Tensor& buf, int64_t n, int64_t batch, const Tensor& det, const Tensor& sign,
                      const Tensor& logabs);
  using Writes = KernelWrites<3, 4, 5>;
};
struct LuSolveKernel {
  static constexpr const char* kName = "lu_solve";
  using Fn = std::vector<int> (*)(const Tensor& abuf, const Tensor& xbuf, int64_t n, int64_t k, int64_t batch);
  using Writes = KernelWrites<1>;
};
struct CholeskyFactorKernel {
  static constexpr const char* kName = "cholesky";
  using Fn = std::vector<int> (*)(const Tensor& buf, int64_t n, int64_t batch, bool upper);
  using Writes = KernelWrites<0>;
};
struct QrFactorKernel {
  static constexpr const char* kName = "qr";
  using Fn = void (*)(const Tensor& abuf, const Tensor& qbuf, const Tensor& R, int64_t m, int64_t n, int64_t qcols,
                      int64_t rrows, int64_t batch, bool want_q);
  using Writes = KernelWrites<1, 2>;
};
struct SvdFactorKernel {
  static constexpr const char* kName = "svd";
  using Fn = std::vector<int> (*)(const Tensor& A, const Tensor& S, const Tensor& ubuf, const Tensor& vbuf, int64_t m,
                                  int64_t n, int64_t batch, bool full, bool compute_uv);
  using Writes = KernelWrites<1, 2, 3>;
};
struct SymEigKernel {
  static constexpr const char* kName = "eigh";
  using Fn = std::vector<int> (*)(const Tensor& vbuf, const Tensor& w, int64_t n, int64_t batch, bool vectors,
                                  bool lower);
  using Writes = KernelWrites<0, 1>;
};
}  // namespace kernels

}  // namespace oneflow
