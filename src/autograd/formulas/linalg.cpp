#include "autograd/formulas/linalg.h"

#include "autograd/formulas.h"
#include "decl/abs.h"
#include "decl/amax.h"
#include "decl/any.h"
#include "decl/cast.h"
#include "decl/cat.h"
#include "decl/complex.h"
#include "decl/conj.h"
#include "decl/det.h"
#include "decl/diag_embed.h"
#include "decl/diagonal.h"
#include "decl/eq.h"
#include "decl/expand.h"
#include "decl/eye.h"
#include "decl/imag.h"
#include "decl/inverse.h"
#include "decl/linalg_solve.h"
#include "decl/linalg_svd.h"
#include "decl/matmul.h"
#include "decl/narrow.h"
#include "decl/ne.h"
#include "decl/prod.h"
#include "decl/real.h"
#include "decl/transpose.h"
#include "decl/tril.h"
#include "decl/triu.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"
#include "decl/zeros_like.h"

namespace oneflow::functional {

namespace {

Tensor MT(const Tensor& t) { return functional::Transpose(t, -2, -1); }
// The conjugate transpose: every formula below is the complex one (PyTorch's convention, the
// gradient is the conjugate Wirtinger derivative), and for real tensors conj is a view, so MH is
// the transpose.
Tensor MH(const Tensor& t) { return functional::Conj(MT(t)); }
bool Complex(const Tensor& t) { return IsComplex(t.dtype()); }
// i * Im(z) = (z - conj(z)) / 2, without building the complex unit.
Tensor IImag(const Tensor& z) { return (z - functional::Conj(z)) * 0.5; }
// Refuses a loss that depends on the phases of complex singular/eigen vectors (each is unique
// only up to e^{i phi}): their gauge term `phase_term` must vanish (PyTorch's check, same tolerance).
void CheckGaugeInvariant(const Tensor& phase_term, const char* message) {
  if (!phase_term.defined() || phase_term.numel() == 0) return;
  const double worst =
      ItemOf(functional::Amax(functional::Abs(phase_term), std::nullopt, false)).ToDouble();
  OF_CHECK(worst <= 1e-2) << message;
}
Tensor MatMul(const Tensor& a, const Tensor& b) { return functional::Matmul(a, b); }
Tensor U2(const Tensor& t) { return functional::Unsqueeze(functional::Unsqueeze(t, -1), -1); }
// The identity shaped like the trailing n x n of `like`.
Tensor EyeOf(int64_t n, const Tensor& like) {
  return functional::Eye(n, std::nullopt, like.dtype(), like.device(), false);
}
// Whether a gradient carries anything (multi-output nodes receive zeros for unused outputs, and
// the vector terms of svd/eigh divide by eigen-gaps that vanish for repeated values).
bool HasValues(const Tensor& g) {
  if (!g.defined() || g.numel() == 0) return false;
  return ItemOf(::oneflow::Any(::oneflow::Ne(g, WrappedNumber(Scalar(0))), std::nullopt, false)).ToInt() != 0;
}

}  // namespace

// d inv(A) = -inv(A) dA inv(A)  =>  gA = -inv(A)^H g inv(A)^H.
Tensor InverseGrad(const Tensor& grad, const Tensor& inv) { return -MatMul(MatMul(MH(inv), grad), MH(inv)); }

// d det(A) = det(A) tr(inv(A) dA)  =>  gA = g conj(det(A) inv(A)^T) = g conj(cof(A)). For a
// singular A the cofactors come from the SVD A = U diag(s) V^H: conj(cof(A)) = conj(det(U)
// det(V^H)) U diag(prod_{j != i} s_j) V^H, which stays finite.
Tensor DetGrad(const Tensor& grad, const Tensor& A, const Tensor& det) {
  const int64_t n = A.sizes()[A.dim() - 1];
  if (n == 0) return functional::ZerosLike(A, std::nullopt, std::nullopt, false);
  const bool singular = ItemOf(::oneflow::Any(::oneflow::Eq(det, WrappedNumber(Scalar(0))), std::nullopt, false)).ToInt();
  if (!singular) return U2(grad * functional::Conj(det)) * MH(functional::Inverse(A));
  auto [U, s, Vh] = functional::LinalgSvd(A, false);
  DimVector sq = s.sizes();
  sq.push_back(n);
  Tensor grid = functional::Expand(functional::Unsqueeze(s, -2), sq);  // [.., i, j] = s_j
  Tensor prod_others = functional::Prod(functional::Where(functional::Cast(EyeOf(n, A), DType::kBool), S(1), grid), -1,
                                        false, std::nullopt);
  Tensor unit = functional::Conj(functional::Det(U) * functional::Det(Vh));
  Tensor cof = MatMul(U * functional::Unsqueeze(prod_others, -2), Vh) * U2(unit);
  return U2(grad) * cof;
}

// With dz = tr(inv(A) dA) = d log det A: d log|det A| = Re dz and, for complex A, d sign =
// i sign Im dz. So gA = c inv(A)^H with c = g_logabsdet - i Im(conj(g_sign) sign) (a real sign is
// locally constant).
Tensor SlogdetGrad(const Tensor& grad_sign, const Tensor& grad_logabsdet, const Tensor& A, const Tensor& sign) {
  Tensor c = grad_logabsdet;
  if (Complex(A) && grad_sign.defined()) c = c - IImag(functional::Conj(grad_sign) * sign);
  return U2(c) * MH(functional::Inverse(A));
}

namespace {
bool IsVectorCase(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == DimVector(A.sizes().begin(), A.sizes().end() - 1));
}
}  // namespace

// AX = B: gB = A^-H g, gA = -gB X^H. XA = B: gB = g A^-H, gA = -X^H gB.
Tensor SolveGradB(const Tensor& grad, const Tensor& A, const Tensor& B, bool left) {
  return functional::LinalgSolve(MH(A), grad, left);
}

Tensor SolveGradA(const Tensor& grad, const Tensor& A, const Tensor& X, bool left) {
  Tensor gB = functional::LinalgSolve(MH(A), grad, left);
  if (IsVectorCase(A, X)) return -(functional::Unsqueeze(gB, -1) * functional::Unsqueeze(functional::Conj(X), -2));
  return left ? -MatMul(gB, MH(X)) : -MatMul(MH(X), gB);
}

// A = L L^H. With P = Phi(L^H gL) (lower triangle, halved diagonal), gA = L^-H P L^-1, made
// Hermitian: the factorisation reads one triangle, the gradient is taken over Hermitian dA.
Tensor CholeskyGrad(const Tensor& grad, const Tensor& result, bool upper) {
  Tensor L = upper ? MH(result) : result;
  Tensor gL = upper ? MH(grad) : grad;
  Tensor P = functional::Tril(MatMul(MH(L), gL), 0);
  P = P - functional::DiagEmbed(functional::Diagonal(P, 0, -2, -1), 0, -2, -1) * 0.5;
  Tensor X = functional::LinalgSolve(MH(L), P, true);   // L^-H P
  Tensor gA = functional::LinalgSolve(L, X, false);     // (L^-H P) L^-1
  return (gA + MH(gA)) * 0.5;
}

namespace {
// QR backward for m >= n (reduced): with N = gR R^H - Q^H gQ and C the Hermitian matrix copying
// N's strict upper triangle below it (conjugated) with diagonal Re(diag N), gA = (gQ + Q C) R^-H.
// From dA = dQ R + Q dR: Q^H dQ is skew-Hermitian and dR R^-1 upper triangular with a real
// diagonal (LAPACK's R has a real diagonal, also for complex A).
Tensor QrGradTall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor N = MatMul(gR, MH(R)) - MatMul(MH(Q), gQ);
  Tensor C = functional::Triu(N, 0) + MH(functional::Triu(N, 1));
  if (Complex(N)) C = C - functional::DiagEmbed(IImag(functional::Diagonal(N, 0, -2, -1)), 0, -2, -1);
  return functional::LinalgSolve(MH(R), gQ + MatMul(Q, C), false);  // (..) R^-H
}
}  // namespace

Tensor QrGrad(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R, const std::string& mode) {
  OF_CHECK(mode != "r") << "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.";
  const int64_t m = Q.sizes()[Q.dim() - 2], n = R.sizes()[R.dim() - 1];
  OF_CHECK(mode == "reduced" || m <= n)
      << "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.";
  if (m >= n) return QrGradTall(gQ, gR, Q, R);
  // m < n: A = [X | Y] with X = Q R1 square and Y = Q R2, so gY = Q gR2 and X's backward gets
  // gQ - Q gR2 R2^H (from dR2 = Q^H (dY - dQ R2)).
  Tensor R1 = functional::Narrow(R, -1, 0, m), R2 = functional::Narrow(R, -1, m, n - m);
  Tensor gR1 = functional::Narrow(gR, -1, 0, m), gR2 = functional::Narrow(gR, -1, m, n - m);
  Tensor gX = QrGradTall(gQ - MatMul(MatMul(Q, gR2), MH(R2)), gR1, Q, R1);
  return functional::Cat(std::vector<Tensor>{gX, MatMul(Q, gR2)}, -1);
}

// A = U diag(S) V^H (k = min(m, n) columns). With J = U^H gU, K = V^H gV, E_ij = S_j^2 - S_i^2:
// gA = U [ ((J - J^H) S_j + S_i (K - K^H)) / E + diag(gS + i Im(J_ii) / S_i) ] V^H
//      + (I - U U^H) gU S^-1 V^H  (m > k)  +  U S^-1 gV^H (I - V V^H)  (n > k).
// The imaginary diagonal term is complex-only: U's and V's column phases are fixed only together
// (Im J_ii + Im K_ii = 0 for a loss that does not depend on them, which is checked), and the
// phase difference moves with Im (U^H dA V)_ii / S_i.
Tensor SvdGrad(const Tensor& gU_in, const Tensor& gS, const Tensor& gVh_in, const Tensor& U_in, const Tensor& S,
               const Tensor& Vh_in, bool full_matrices) {
  const int64_t k = S.sizes()[S.dim() - 1];
  Tensor U = full_matrices ? functional::Narrow(U_in, -1, 0, k) : U_in;
  Tensor Vh = full_matrices ? functional::Narrow(Vh_in, -2, 0, k) : Vh_in;
  const bool has_u = HasValues(gU_in), has_v = HasValues(gVh_in);
  Tensor gU = has_u ? (full_matrices ? functional::Narrow(gU_in, -1, 0, k) : gU_in) : Tensor();
  Tensor gVh = has_v ? (full_matrices ? functional::Narrow(gVh_in, -2, 0, k) : gVh_in) : Tensor();
  const int64_t m = U.sizes()[U.dim() - 2], n = Vh.sizes()[Vh.dim() - 1];
  Tensor inner = functional::DiagEmbed(gS, 0, -2, -1);
  if (!has_u && !has_v) return MatMul(U * functional::Unsqueeze(gS, -2), Vh);
  Tensor Si = functional::Unsqueeze(S, -1), Sj = functional::Unsqueeze(S, -2);
  Tensor S2 = S * S;
  Tensor E = functional::Unsqueeze(S2, -2) - functional::Unsqueeze(S2, -1) + EyeOf(k, S);
  Tensor V = MH(Vh);
  Tensor J, K, off;
  if (has_u) {
    J = MatMul(MH(U), gU);
    off = (J - MH(J)) * Sj / E;
  }
  if (has_v) {
    K = MatMul(Vh, MH(gVh));
    Tensor t = Si * (K - MH(K)) / E;
    off = off.defined() ? off + t : t;
  }
  if (Complex(U)) {
    Tensor phase = has_u ? functional::Imag(functional::Diagonal(J, 0, -2, -1)) : Tensor();
    if (has_v) {
      Tensor pv = functional::Imag(functional::Diagonal(K, 0, -2, -1));
      phase = has_u ? phase + pv : pv;
    }
    CheckGaugeInvariant(phase,
                        "linalg.svd: The singular vectors in the complex case are specified up to multiplication by "
                        "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.");
    // (J - J^H)'s diagonal is 2i Im J_ii: replaced by i Im J_ii / S_i.
    off = off * (1.0 - EyeOf(k, S));
    if (has_u) off = off + functional::DiagEmbed(IImag(functional::Diagonal(J, 0, -2, -1)) / S, 0, -2, -1);
  }
  inner = inner + off;
  Tensor gA = MatMul(MatMul(U, inner), Vh);
  if (has_u && m > k) gA = gA + MatMul((gU - MatMul(U, J)) / Sj, Vh);
  if (has_v && n > k) gA = gA + MatMul(U, MH((MH(gVh) - MatMul(V, K)) / Sj));
  return gA;
}

// A = V diag(L) V^H. With X = V^H gV projected on the skew-Hermitian matrices (the tangent space
// of the unitary group) and E_ij = L_j - L_i: gA = V (X / E + diag(gL)) V^H. A complex loss must
// not depend on the eigenvectors' phases (Im diag(V^H gV) = 0, checked).
Tensor EighGrad(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  const int64_t n = L.sizes()[L.dim() - 1];
  Tensor inner = functional::DiagEmbed(gL, 0, -2, -1);
  if (HasValues(gV)) {
    Tensor X = MatMul(MH(V), gV);
    if (Complex(X))
      CheckGaugeInvariant(functional::Imag(functional::Diagonal(X, 0, -2, -1)),
                          "linalg.eigh: The eigenvectors in the complex case are specified up to multiplication by "
                          "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.");
    X = (X - MH(X)) * 0.5;
    Tensor E = functional::Unsqueeze(L, -2) - functional::Unsqueeze(L, -1) + EyeOf(n, L);
    inner = inner + X / E;
  }
  if (inner.dtype() != V.dtype()) inner = functional::Cast(inner, V.dtype());  // real gL, complex V
  return MatMul(MatMul(V, inner), MH(V));
}

// A V = V diag(L), columns of V of unit norm. With C = V^-1 dV and P = V^-1 dA V: dL = diag(P),
// C_ij = P_ij / (L_j - L_i) off the diagonal, and Re C_jj fixed by the norms (Im C_jj is the
// phase, which the loss must not depend on: checked). So with X = V^H gV - V^H V diag(Re diag
// X): gA = V^-H (X / conj(E) + diag(gL)) V^H, E_ij = L_j - L_i; its real part for real A.
Tensor EigGrad(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V, const Tensor& A) {
  OF_CHECK(V.numel() > 0 || L.numel() == 0) << "linalg.eig: the backward needs the eigenvectors (compute_v=True)";
  const int64_t n = L.sizes()[L.dim() - 1];
  Tensor inner = functional::DiagEmbed(gL, 0, -2, -1);
  if (HasValues(gV)) {
    Tensor X = MatMul(MH(V), gV);
    Tensor d = functional::Diagonal(X, 0, -2, -1);
    CheckGaugeInvariant(functional::Imag(d),
                        "linalg.eig: The eigenvectors in the complex case are specified up to multiplication by "
                        "e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.");
    X = X - MatMul(MH(V), V * functional::Unsqueeze(functional::Real(d), -2));
    Tensor E = functional::Unsqueeze(L, -2) - functional::Unsqueeze(L, -1) + EyeOf(n, L);
    inner = inner + X / functional::Conj(E) * (1.0 - EyeOf(n, L));
  }
  Tensor gA = functional::LinalgSolve(MH(V), MatMul(inner, MH(V)), true);
  return Complex(A) ? gA : functional::Real(gA);
}

}  // namespace oneflow::functional
