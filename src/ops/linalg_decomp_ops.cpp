// QR, SVD and symmetric/Hermitian eigendecomposition on LAPACK (geqrf/orgqr or ungqr, gesdd,
// syevd or heevd), on column-major copies; results are column-major views like PyTorch's.
// Singular values and Hermitian eigenvalues are real also for complex input.
#include <cstring>

#include "kernels/linalg.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/abs.h"
#include "decl/cast.h"
#include "decl/contiguous.h"
#include "decl/diagonal.h"
#include "decl/empty.h"
#include "decl/linalg_eigh.h"
#include "decl/linalg_matrix_rank.h"
#include "decl/linalg_qr.h"
#include "decl/linalg_svd.h"
#include "decl/narrow.h"
#include "decl/squeeze.h"
#include "decl/zeros.h"

namespace oneflow {

using namespace linalg;  // NOLINT

namespace {

DimVector WithMatrix(const DimVector& batch, int64_t rows, int64_t cols) {
  DimVector s = batch;
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

// Identity-like [.., rows, cols] (ones on the main diagonal): what the factors of an empty
// matrix are.
Tensor EyeLike(const DimVector& batch, int64_t rows, int64_t cols, DType dt, Device dev) {
  Tensor e = Zeros(WithMatrix(batch, rows, cols), dt, dev, false);
  if (dev.type != DeviceType::kMeta && e.numel() > 0) FillWith(Diagonal(e, 0, -2, -1), Scalar(1));
  return e;
}

}  // namespace

std::tuple<Tensor, Tensor> LinalgQr(const Tensor& A, const std::string& mode) {
  OpScope scope("linalg.qr");
  OF_CHECK(mode == "reduced" || mode == "r" || mode == "complete")
      << "qr received unrecognized mode '" << mode << "' but expected one of 'reduced' (default), 'r', or 'complete'";
  CheckInput(A, false);
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1], k = std::min(m, n);
  const DimVector batch = BatchShape(A);
  const int64_t nb = BatchOf(A);
  const bool complete = mode == "complete";
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  Tensor abuf = ColMajorCopy(A);  // geqrf works in place: R above the diagonal, reflectors below
  Tensor R = Zeros(WithMatrix(batch, rrows, n), A.dtype(), A.device(), false);
  // Q needs m x qcols; when that is wider than A (complete, m > n) it gets its own buffer.
  Tensor qbuf = qcols > n ? Empty(WithMatrix(batch, qcols, m), A.dtype(), A.device()) : abuf;
  Tensor Q = mode == "r" ? Empty(DimVector{0}, A.dtype(), A.device()) : Narrow(ColMajorView(qbuf), -1, 0, qcols);
  if (IsMeta(abuf)) return {Q, R};
  if (A.numel() == 0) {
    if (mode != "r") Q = Contiguous(EyeLike(batch, m, qcols, A.dtype(), A.device()));
    return {Q, R};
  }
  QrInto(abuf, qbuf, R, m, n, qcols, rrows, nb, mode != "r");
  return {Q, R};
}

std::tuple<Tensor, Tensor, Tensor> SvdKernel(const Tensor& A, bool full_matrices, bool compute_uv) {
  CheckInput(A, false);
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1], k = std::min(m, n);
  const DimVector batch = BatchShape(A);
  const int64_t nb = BatchOf(A);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor S = Empty(WithMatrix(batch, 1, k), ToRealDType(A.dtype()), A.device());  // real, also for complex A
  S = Squeeze(S, DimVector{-2});
  // U column-major m x ucols and Vh column-major vrows x n, as row-major [ucols, m] / [n, vrows].
  Tensor ubuf = compute_uv ? Empty(WithMatrix(batch, ucols, m), A.dtype(), A.device()) : Tensor();
  Tensor vbuf = compute_uv ? Empty(WithMatrix(batch, n, vrows), A.dtype(), A.device()) : Tensor();
  Tensor U = compute_uv ? ColMajorView(ubuf) : Empty(DimVector{0}, A.dtype(), A.device());
  Tensor Vh = compute_uv ? ColMajorView(vbuf) : Empty(DimVector{0}, A.dtype(), A.device());
  if (IsMeta(S) || nb == 0) return {U, S, Vh};
  if (k == 0) {
    if (compute_uv) {
      U = Contiguous(EyeLike(batch, m, ucols, A.dtype(), A.device()));
      Vh = Contiguous(EyeLike(batch, vrows, n, A.dtype(), A.device()));
    }
    return {U, S, Vh};
  }
  const auto converge = [](int info) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "singular values (error code: " + std::to_string(info) + ").";
  };
  const std::vector<int> infos = SvdInto(A, S, ubuf, vbuf, m, n, nb, full_matrices, compute_uv);
  RaiseOnInfo(infos, A.dim() > 2, converge);
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor, Tensor> LinalgSvd(const Tensor& A, bool full_matrices) {
  OpScope scope("linalg.svd");
  return SvdKernel(A, full_matrices, true);
}

std::tuple<Tensor, Tensor> EighKernel(const Tensor& A, const std::string& uplo, bool compute_v) {
  OF_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u")
      << "Expected UPLO argument to be 'L' or 'U', but got " << uplo;
  CheckInput(A, true);
  const int64_t n = A.sizes()[A.dim() - 1];
  const DimVector batch = BatchShape(A);
  const int64_t nb = BatchOf(A);
  Tensor w = Squeeze(Empty(WithMatrix(batch, 1, n), ToRealDType(A.dtype()), A.device()), DimVector{-2});
  Tensor vbuf = ColMajorCopy(A);  // syevd overwrites the matrix with the eigenvectors
  Tensor V = compute_v ? ColMajorView(vbuf) : Empty(DimVector{0}, A.dtype(), A.device());
  if (IsMeta(w) || A.numel() == 0) return {w, V};
  const std::vector<int> infos = SymEigInPlace(vbuf, w, n, nb, compute_v, uplo == "L" || uplo == "l");
  RaiseOnInfo(infos, A.dim() > 2, [](int info) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " + std::to_string(info) + ").";
  });
  return {w, V};
}

std::tuple<Tensor, Tensor> LinalgEigh(const Tensor& A, const std::string& UPLO) {
  OpScope scope("linalg.eigh");
  return EighKernel(A, UPLO, true);
}

Tensor LinalgMatrixRank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  OpScope scope("linalg.matrix_rank");
  CheckInput(A, hermitian);
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1];
  // Singular values (|eigenvalues| for hermitian input) above max(atol, rtol * largest) count.
  Tensor s = hermitian ? Abs(std::get<0>(EighKernel(A, "L", false))) : std::get<1>(SvdKernel(A, false, false));
  Tensor out = Empty(BatchShape(A), DType::kInt64, A.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  const int64_t k = s.sizes()[s.dim() - 1];
  const double eps = ToRealDType(A.dtype()) == DType::kFloat32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  const double r = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : eps * std::max(m, n));
  const double a = atol.value_or(0.0);
  // The count reads the k values of each matrix on the host (CUDA: one small copy back).
  Tensor sd = Contiguous(OnHost(Cast(s, DType::kFloat64)));
  const double* sp = sd.data<double>();
  Tensor ranks = out.device().type == DeviceType::kCPU ? out : Empty(out.sizes(), DType::kInt64);
  for (int64_t b = 0; b < out.numel(); ++b) {
    double mx = 0;
    for (int64_t i = 0; i < k; ++i) mx = std::max(mx, sp[b * k + i]);
    const double tol = std::max(a, r * mx);
    int64_t rank = 0;
    for (int64_t i = 0; i < k; ++i) rank += sp[b * k + i] > tol;
    ranks.data<int64_t>()[b] = rank;
  }
  if (!ranks.is_same(out)) CopyInto(out, ranks);
  return out;
}

}  // namespace oneflow
