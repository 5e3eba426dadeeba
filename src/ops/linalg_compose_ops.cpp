// Composite linalg ops (`backward: composite` in linalg.yaml): legacy-convention wrappers (qr,
// svd), values-only forms, pseudo-inverse and matrix powers, from differentiable table ops.
#include <cmath>

#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "ops/linalg_common.h"

namespace oneflow::functional {

namespace {
Tensor MT(const Tensor& t) { return functional::Transpose(t, -2, -1); }
bool NeedsGrad(const Tensor& t) { return GradMode::is_enabled() && RequiresGrad(t); }
}  // namespace

Tensor Logdet(const Tensor& input) {
  OpScope scope("logdet");
  auto [sign, logabs] = functional::Slogdet(input);
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
    linalg::CheckInput(input, false);
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
  return {U, S, MT(Vh)};
}

Tensor LinalgSvdvals(const Tensor& A) {
  OpScope scope("linalg.svdvals");
  // The gradient needs the singular vectors; without one, LAPACK skips them.
  if (NeedsGrad(A)) return std::get<1>(functional::LinalgSvd(A, false));
  return std::get<1>(SvdKernel(A, false, false));
}

Tensor LinalgEigvalsh(const Tensor& A, const std::string& UPLO) {
  OpScope scope("linalg.eigvalsh");
  if (NeedsGrad(A)) return std::get<0>(functional::LinalgEigh(A, UPLO));
  return std::get<0>(EighKernel(A, UPLO, false));
}

Tensor LinalgPinv(const Tensor& input, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  OpScope scope("linalg.pinv");
  OF_CHECK(input.dim() >= 2 && (input.dtype() == DType::kFloat32 || input.dtype() == DType::kFloat64))
      << "expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types, got "
      << DTypeName(input.dtype()) << ShapeStr(input.sizes());
  const int64_t m = input.sizes()[input.dim() - 2], n = input.sizes()[input.dim() - 1];
  if (input.numel() == 0) return MT(input) * 0.0;  // empty, but connected to the input's graph
  // Values above max(atol, rtol * largest) are inverted, the rest dropped. rtol defaults to
  // eps * max(m, n), or to 0 when only a positive atol is given (PyTorch's rule).
  const double eps = input.dtype() == DType::kFloat32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
  const double r = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : eps * std::max(m, n));
  const double a = atol.value_or(0.0);
  Tensor U, s, Vh;
  if (hermitian) {
    auto [w, V] = functional::LinalgEigh(input, "L");
    U = V;
    s = w;
    Vh = MT(V);
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
  return functional::Matmul(MT(Vh) * functional::Unsqueeze(inv, -2), MT(U));
}

Tensor Pinverse(const Tensor& input, double rcond) {
  OpScope scope("pinverse");
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
