#include "autograd/formulas/linalg.h"

#include "autograd/formulas.h"
#include "decl/any.h"
#include "decl/cast.h"
#include "decl/cat.h"
#include "decl/det.h"
#include "decl/diag_embed.h"
#include "decl/diagonal.h"
#include "decl/eq.h"
#include "decl/expand.h"
#include "decl/eye.h"
#include "decl/inverse.h"
#include "decl/linalg_solve.h"
#include "decl/linalg_svd.h"
#include "decl/matmul.h"
#include "decl/narrow.h"
#include "decl/ne.h"
#include "decl/prod.h"
#include "decl/transpose.h"
#include "decl/tril.h"
#include "decl/triu.h"
#include "decl/unsqueeze.h"
#include "decl/where.h"
#include "decl/zeros_like.h"

namespace oneflow::functional {

namespace {

Tensor MT(const Tensor& t) { return functional::Transpose(t, -2, -1); }
Tensor MatMul(const Tensor& a, const Tensor& b) { return functional::Matmul(a, b); }
Tensor U2(const Tensor& t) { return functional::Unsqueeze(functional::Unsqueeze(t, -1), -1); }
// The identity shaped like the trailing n x n of `like`.
Tensor EyeOf(int64_t n, const Tensor& like) {
  return ::oneflow::Eye(n, std::nullopt, like.dtype(), like.device(), false);
}
// Whether a gradient carries anything (multi-output nodes receive zeros for unused outputs, and
// the vector terms of svd/eigh divide by eigen-gaps that vanish for repeated values).
bool HasValues(const Tensor& g) {
  if (!g.defined() || g.numel() == 0) return false;
  return ItemOf(::oneflow::Any(::oneflow::Ne(g, WrappedNumber(Scalar(0))), std::nullopt, false)).ToInt() != 0;
}

}  // namespace

// d inv(A) = -inv(A) dA inv(A)  =>  gA = -inv(A)^T g inv(A)^T.
Tensor InverseGrad(const Tensor& grad, const Tensor& inv) { return -MatMul(MatMul(MT(inv), grad), MT(inv)); }

// d det(A) = det(A) tr(inv(A) dA)  =>  gA = g det(A) inv(A)^T, the cofactor matrix times g. For a
// singular A the cofactors come from the SVD A = U diag(s) V^T: cof(A) = det(U) det(V)
// U diag(prod_{j != i} s_j) V^T, which stays finite.
Tensor DetGrad(const Tensor& grad, const Tensor& A, const Tensor& det) {
  const int64_t n = A.sizes()[A.dim() - 1];
  if (n == 0) return functional::ZerosLike(A, std::nullopt, std::nullopt, false);
  const bool singular = ItemOf(::oneflow::Any(::oneflow::Eq(det, WrappedNumber(Scalar(0))), std::nullopt, false)).ToInt();
  if (!singular) return U2(grad * det) * MT(functional::Inverse(A));
  auto [U, s, Vh] = functional::LinalgSvd(A, false);
  DimVector sq = s.sizes();
  sq.push_back(n);
  Tensor grid = functional::Expand(functional::Unsqueeze(s, -2), sq);  // [.., i, j] = s_j
  Tensor prod_others = functional::Prod(functional::Where(::oneflow::Cast(EyeOf(n, A), DType::kBool), S(1), grid), -1,
                                        false, std::nullopt);
  Tensor unit = functional::Det(U) * functional::Det(Vh);
  Tensor cof = MatMul(U * functional::Unsqueeze(prod_others, -2), Vh) * U2(unit);
  return U2(grad) * cof;
}

// d log|det A| = tr(inv(A) dA)  =>  gA = g inv(A)^T.
Tensor SlogdetGrad(const Tensor& grad_logabsdet, const Tensor& A) {
  return U2(grad_logabsdet) * MT(functional::Inverse(A));
}

namespace {
bool IsVectorCase(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == DimVector(A.sizes().begin(), A.sizes().end() - 1));
}
}  // namespace

// AX = B: gB = A^-T g, gA = -gB X^T. XA = B: gB = g A^-T, gA = -X^T gB.
Tensor SolveGradB(const Tensor& grad, const Tensor& A, const Tensor& B, bool left) {
  return functional::LinalgSolve(MT(A), grad, left);
}

Tensor SolveGradA(const Tensor& grad, const Tensor& A, const Tensor& X, bool left) {
  Tensor gB = functional::LinalgSolve(MT(A), grad, left);
  if (IsVectorCase(A, X)) return -(functional::Unsqueeze(gB, -1) * functional::Unsqueeze(X, -2));
  return left ? -MatMul(gB, MT(X)) : -MatMul(MT(X), gB);
}

// A = L L^T. With P = Phi(L^T gL) (lower triangle, halved diagonal), gA = L^-T P L^-1,
// symmetrised: the factorisation reads one triangle, the gradient is taken over symmetric dA.
Tensor CholeskyGrad(const Tensor& grad, const Tensor& result, bool upper) {
  Tensor L = upper ? MT(result) : result;
  Tensor gL = upper ? MT(grad) : grad;
  Tensor P = functional::Tril(MatMul(MT(L), gL), 0);
  P = P - functional::DiagEmbed(functional::Diagonal(P, 0, -2, -1), 0, -2, -1) * 0.5;
  Tensor X = functional::LinalgSolve(MT(L), P, true);   // L^-T P
  Tensor gA = functional::LinalgSolve(L, X, false);     // (L^-T P) L^-1
  return (gA + MT(gA)) * 0.5;
}

namespace {
// QR backward for m >= n (reduced): with N = gR R^T - Q^T gQ and C the symmetric matrix copying
// N's upper triangle (diagonal included) below it, gA = (gQ + Q C) R^-T. From dA = dQ R + Q dR,
// Q^T dQ skew and dR R^-1 upper triangular.
Tensor QrGradTall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor N = MatMul(gR, MT(R)) - MatMul(MT(Q), gQ);
  Tensor C = functional::Triu(N, 0) + MT(functional::Triu(N, 1));
  return functional::LinalgSolve(MT(R), gQ + MatMul(Q, C), false);  // (..) R^-T
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
  // gQ - Q gR2 R2^T (from dR2 = Q^T (dY - dQ R2)).
  Tensor R1 = functional::Narrow(R, -1, 0, m), R2 = functional::Narrow(R, -1, m, n - m);
  Tensor gR1 = functional::Narrow(gR, -1, 0, m), gR2 = functional::Narrow(gR, -1, m, n - m);
  Tensor gX = QrGradTall(gQ - MatMul(MatMul(Q, gR2), MT(R2)), gR1, Q, R1);
  return functional::Cat(std::vector<Tensor>{gX, MatMul(Q, gR2)}, -1);
}

// A = U diag(S) V^T (k = min(m, n) columns). With J = U^T gU, K = V^T gV, E_ij = S_j^2 - S_i^2:
// gA = U [ (skew(J) S_j + S_i skew(K)) / E + diag(gS) ] V^T
//      + (I - U U^T) gU S^-1 V^T  (m > k)  +  U S^-1 gV^T (I - V V^T)  (n > k).
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
  Tensor V = MT(Vh);
  Tensor J, K;
  if (has_u) {
    J = MatMul(MT(U), gU);
    inner = inner + (J - MT(J)) * Sj / E;
  }
  if (has_v) {
    K = MatMul(Vh, MT(gVh));
    inner = inner + Si * (K - MT(K)) / E;
  }
  Tensor gA = MatMul(MatMul(U, inner), Vh);
  if (has_u && m > k) gA = gA + MatMul((gU - MatMul(U, J)) / Sj, Vh);
  if (has_v && n > k) gA = gA + MatMul(U, MT((MT(gVh) - MatMul(V, K)) / Sj));
  return gA;
}

// A = V diag(L) V^T. With X = V^T gV projected on the skew matrices (the tangent space of the
// orthogonal group) and E_ij = L_j - L_i: gA = V (X / E + diag(gL)) V^T.
Tensor EighGrad(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  const int64_t n = L.sizes()[L.dim() - 1];
  Tensor inner = functional::DiagEmbed(gL, 0, -2, -1);
  if (HasValues(gV)) {
    Tensor X = MatMul(MT(V), gV);
    X = (X - MT(X)) * 0.5;
    Tensor E = functional::Unsqueeze(L, -2) - functional::Unsqueeze(L, -1) + EyeOf(n, L);
    inner = inner + X / E;
  }
  return MatMul(MatMul(V, inner), MT(V));
}

}  // namespace oneflow::functional
