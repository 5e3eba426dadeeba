// Composite linalg ops (`backward: composite` in linalg.yaml): legacy-convention wrappers (qr,
// svd), values-only forms, pseudo-inverse and matrix powers, from differentiable table ops.
#include <cmath>

#include "autograd/autocast.h"
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "ops/host_fallback.h"
#include "ops/linalg_common.h"
#include "decl/abs.h"
#include "decl/all.h"
#include "decl/amax.h"
#include "decl/cast.h"
#include "decl/clone.h"
#include "decl/conj.h"
#include "decl/empty.h"
#include "decl/eq.h"
#include "decl/eye.h"
#include "decl/gt.h"
#include "decl/inverse.h"
#include "decl/linalg_eigh.h"
#include "decl/linalg_eigvalsh.h"
#include "decl/linalg_lstsq.h"
#include "decl/linalg_matrix_rank.h"
#include "decl/linalg_pinv.h"
#include "decl/linalg_qr.h"
#include "decl/linalg_svd.h"
#include "decl/linalg_svdvals.h"
#include "decl/log.h"
#include "decl/logdet.h"
#include "decl/lt.h"
#include "decl/matmul.h"
#include "decl/matrix_power.h"
#include "decl/maximum.h"
#include "decl/mul.h"
#include "decl/narrow.h"
#include "decl/pinverse.h"
#include "decl/qr.h"
#include "decl/real.h"
#include "decl/reciprocal.h"
#include "decl/reshape.h"
#include "decl/slogdet.h"
#include "decl/squeeze.h"
#include "decl/sum.h"
#include "decl/svd.h"
#include "decl/transpose.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"
#include "decl/zeros.h"

namespace oneflow::functional {

namespace {
Tensor MT(const Tensor& t) { return functional::Transpose(t, -2, -1); }
// The conjugate transpose (the transpose for real t: conj of a real tensor is a view).
Tensor MH(const Tensor& t) { return functional::Conj(MT(t)); }
bool NeedsGrad(const Tensor& t) { return GradMode::is_enabled() && RequiresGrad(t); }
}  // namespace

Tensor Logdet(const Tensor& input) {
  OpScope scope("logdet");
  auto [sign, logabs] = functional::Slogdet(input);
  // Complex: log(det) = log(sign) + log|det|, the principal branch.
  if (IsComplex(input.dtype())) return functional::Log(sign) + logabs;
  // log(det) is NaN for a negative determinant.
  return functional::Where(functional::Lt(sign, S(0)), S(std::nan("")), logabs);
}

std::tuple<Tensor, Tensor> Qr(const Tensor& input, bool some) {
  OpScope scope("qr");
  return functional::LinalgQr(input, some ? "reduced" : "complete");
}

std::tuple<Tensor, Tensor, Tensor> Svd(const Tensor& input, bool some, bool compute_uv) {
  OpScope scope("svd");
  if (!compute_uv) {
    // PyTorch's legacy form: the values, with zero-filled full U and V.
    linalg::CheckMatrices(input, false);
    const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1];
    DimVector su = linalg::BatchShape(input), sv = su;
    su.push_back(m);
    su.push_back(m);
    sv.push_back(n);
    sv.push_back(n);
    Tensor s = functional::LinalgSvdvals(input);
    return {::oneflow::Zeros(su, input.dtype(), input.device(), false), s,
            ::oneflow::Zeros(sv, input.dtype(), input.device(), false)};
  }
  auto [U, S, Vh] = functional::LinalgSvd(input, !some);
  return {U, S, MH(Vh)};
}

Tensor LinalgSvdvals(const Tensor& A) {
  OpScope scope("linalg.svdvals");
  if (autocast::IsActive()) [[unlikely]] {
    // PyTorch's CPU autocast float32 list (a hand-written entry: the table's `autocast:` is for
    // generated ones): 16-bit inputs run in float32.
    if (auto dt = autocast::TargetOf(autocast::Policy::kFp32, A)) {
      autocast::ExcludeGuard guard;
      return functional::LinalgSvdvals(autocast::Cast(A, *dt));
    }
  }
  // The gradient needs the singular vectors; without one, LAPACK skips them.
  if (NeedsGrad(A)) return std::get<1>(functional::LinalgSvd(A, false));
  return std::get<1>(OF_KERNEL_CALL("linalg.svdvals", SvdKernel(OF_H(A), false, false)));
}

Tensor LinalgEigvalsh(const Tensor& A, const std::string& UPLO) {
  OpScope scope("linalg.eigvalsh");
  if (autocast::IsActive()) [[unlikely]] {
    // PyTorch's CPU autocast float32 list (a hand-written entry: the table's `autocast:` is for
    // generated ones): 16-bit inputs run in float32.
    if (auto dt = autocast::TargetOf(autocast::Policy::kFp32, A)) {
      autocast::ExcludeGuard guard;
      return functional::LinalgEigvalsh(autocast::Cast(A, *dt), UPLO);
    }
  }
  if (NeedsGrad(A)) return std::get<0>(functional::LinalgEigh(A, UPLO));
  return std::get<0>(OF_KERNEL_CALL("linalg.eigvalsh", EighKernel(OF_H(A), UPLO, false)));
}

Tensor LinalgPinv(const Tensor& input, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  OpScope scope("linalg.pinv");
  const DType real = ToRealDType(input.dtype());
  OF_CHECK(input.dim() >= 2 && (real == DType::kFloat32 || real == DType::kFloat64))
      << "expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types, got "
      << DTypeName(input.dtype()) << ShapeStr(input.sizes());
  const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1];
  if (input.numel() == 0) return MT(input) * 0.0;  // empty, but connected to the input's graph
  // Values above max(atol, rtol * largest) are inverted, the rest dropped. rtol defaults to
  // eps * max(m, n), or to 0 when only a positive atol is given (PyTorch's rule).
  const double eps = real == DType::kFloat32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  const double r = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : eps * std::max(m, n));
  const double a = atol.value_or(0.0);
  Tensor U, s, Vh;
  if (hermitian) {
    auto [w, V] = functional::LinalgEigh(input, "L");
    U = V;
    s = w;
    Vh = MH(V);
  } else {
    std::tie(U, s, Vh) = functional::LinalgSvd(input, false);
  }
  Tensor mag = hermitian ? functional::Abs(s) : s;
  Tensor largest = functional::Amax(mag, DimVector{-1}, true);
  Tensor tol = functional::Maximum(functional::Mul(largest, S(r)), S(a));
  Tensor keep = functional::Gt(mag, tol);
  // 1/s where kept; the masked-out values are replaced before dividing so that no inf reaches
  // the gradient.
  Tensor inv = functional::Where(keep, functional::Reciprocal(functional::Where(keep, s, S(1))), S(0));
  return functional::Matmul(MH(Vh) * functional::Unsqueeze(inv, -2), MH(U));
}

Tensor Pinverse(const Tensor& input, double rcond) {
  OpScope scope("pinverse");
  if (autocast::IsActive()) [[unlikely]] {
    // PyTorch's CPU autocast float32 list (a hand-written entry: the table's `autocast:` is for
    // generated ones): 16-bit inputs run in float32.
    if (auto dt = autocast::TargetOf(autocast::Policy::kFp32, input)) {
      autocast::ExcludeGuard guard;
      return functional::Pinverse(autocast::Cast(input, *dt), rcond);
    }
  }
  return functional::LinalgPinv(input, std::nullopt, rcond, false);
}

Tensor MatrixPower(const Tensor& input, int64_t n) {
  OpScope scope("linalg.matrix_power");
  OF_CHECK(input.dim() >= 2) << "The input tensor A must have at least 2 dimensions.";
  const int64_t m = input.sizes()[input.dim() - 1];
  OF_CHECK(input.sizes()[input.dim() - 2] == m)
      << "A must be batches of square matrices, but they are " << input.sizes()[input.dim() - 2] << " by " << m
      << " matrices";
  if (n == 0) {
    // The identity, connected to the input's graph (a zero gradient), as PyTorch's.
    Tensor eye = ::oneflow::Eye(m, std::nullopt, input.dtype(), input.device(), false);
    return input * 0.0 + eye;
  }
  Tensor base = n < 0 ? functional::Inverse(input) : input;
  int64_t e = n < 0 ? -n : n;
  if (e == 1) return n < 0 ? base : functional::Clone(base);
  // Binary powering: log2(n) squarings.
  Tensor result, p = base;
  while (e > 0) {
    if (e & 1) result = result.defined() ? functional::Matmul(result, p) : p;
    e >>= 1;
    if (e > 0) p = functional::Matmul(p, p);
  }
  return result;
}

}  // namespace oneflow::functional

namespace oneflow::functional {

std::tuple<Tensor, Tensor, Tensor, Tensor> LinalgLstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                                                       std::optional<std::string> driver) {
  OpScope scope("linalg.lstsq");
  const std::string drv = driver.value_or("gelsy");
  OF_CHECK(drv == "gels" || drv == "gelsy" || drv == "gelsd" || drv == "gelss")
      << "parameter `driver` should be one of (gels, gelsy, gelsd, gelss), but got " << drv;
  linalg::CheckMatrices(A, false);
  OF_CHECK(A.dtype() == B.dtype()) << "Expected A and B to have the same dtype, but found A of type "
                                   << DTypeName(A.dtype()) << " and B of type " << DTypeName(B.dtype());
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1];
  const bool vector = B.dim() == A.dim() - 1;
  // PyTorch's rule: B has A's batch dims or one dim less (a vector right-hand side); a B of more
  // dims than A was broadcast against it.
  OF_CHECK(B.dim() >= 1 && (vector || B.dim() >= 2) && B.dim() <= A.dim())
      << "input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1 (got "
      << A.dim() << " and " << B.dim() << ")";
  Tensor b = vector ? functional::Unsqueeze(B, -1) : B;
  OF_CHECK(b.sizes()[b.dim() - 2] == m) << "input.size(-2) should match other.size(-2)";
  // The minimum-norm least-squares solution pinv(A) B, singular values below rcond * largest
  // dropped (LAPACK's rcond; default eps * max(m, n)).
  const double eps = ToRealDType(A.dtype()) == DType::kFloat32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  const double r = rcond && *rcond > 0 ? *rcond : eps * std::max(m, n);
  Tensor x = functional::Matmul(functional::LinalgPinv(A, std::nullopt, r, false), b);
  if (vector) x = functional::Squeeze(x, DimVector{-1});
  Tensor rank = drv == "gels" ? ::oneflow::Empty(DimVector{0}, DType::kInt64, A.device())
                              : functional::LinalgMatrixRank(A, std::nullopt, r, false);
  // Singular values are reported, not differentiated (PyTorch's); residuals are differentiable,
  // even when empty (an empty slice of the solution keeps them in its graph).
  // (real, also for complex A)
  Tensor sv = drv == "gelsd" || drv == "gelss"
                  ? std::get<1>(OF_KERNEL_CALL("linalg.lstsq", SvdKernel(OF_H(A), false, false)))
                  : ::oneflow::Empty(DimVector{0}, ToRealDType(A.dtype()), A.device());
  // Residuals: only for overdetermined full-rank systems, and not from gelsy (as LAPACK/PyTorch).
  Tensor residuals = functional::Narrow(functional::Reshape(x, DimVector{-1}), 0, 0, 0);
  if (IsComplex(residuals.dtype())) residuals = functional::Real(residuals);  // real, as |res|^2
  if (drv != "gelsy" && m > n && A.device().type != DeviceType::kMeta && A.numel() > 0) {
    Tensor ranks = rank.numel() ? rank : functional::LinalgMatrixRank(A, std::nullopt, r, false);
    const bool full = ItemOf(::oneflow::All(::oneflow::Eq(ranks, WrappedNumber(Scalar(n))), std::nullopt, false)).ToInt();
    if (full) {
      Tensor res = functional::Matmul(A, vector ? functional::Unsqueeze(x, -1) : x) - b;
      // |res|^2: real also for complex systems.
      Tensor sq = IsComplex(res.dtype()) ? functional::Real(res * functional::Conj(res)) : res * res;
      residuals = functional::Sum(sq, DimVector{-2}, false, std::nullopt);
      if (vector) residuals = functional::Squeeze(residuals, DimVector{-1});
    }
  }
  return {x, residuals, rank, sv};
}

}  // namespace oneflow::functional
