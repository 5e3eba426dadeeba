// LU-based linalg kernels (inverse, det, slogdet, solve) and cholesky on LAPACK (kernels/lapack.h).
// Each matrix is factorised in a column-major copy, so pivots, signs and error messages are the
// ones PyTorch (LAPACK on column-major data too) reports.
#include <cmath>
#include <cstring>

#include "kernels/linalg.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/cholesky.h"
#include "decl/contiguous.h"
#include "decl/det.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/inverse.h"
#include "decl/linalg_cholesky_ex.h"
#include "decl/linalg_inv_ex.h"
#include "decl/linalg_solve.h"
#include "decl/linalg_solve_ex.h"
#include "decl/narrow.h"
#include "decl/select.h"
#include "decl/slogdet.h"
#include "decl/squeeze.h"
#include "decl/transpose.h"
#include "decl/unsqueeze.h"

namespace oneflow {

namespace linalg {

bool IsMeta(const Tensor& t) { return t.device().type == DeviceType::kMeta; }

void CheckMatrices(const Tensor& A, bool square) {
  // Note [Upstream's words] (src/autograd/meta.cpp), the op named as upstream names it.
  const char* op = OpScope::Current() ? OpScope::Current() : "linalg";
  OF_CHECK(A.dim() >= 2) << "The input tensor A must have at least 2 dimensions. [OneFlow: " << op
                         << ": The input tensor must be at least 2 dimensions.]";
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1];
  if (square) {
    OF_CHECK(m == n) << "A must be batches of square matrices, but they are " << m << " by " << n << " matrices"
                     << " [OneFlow: RuntimeError: " << op << ": A must be batches of square matrices, but they are "
                     << m << " by " << n << " matrices]";
  }
  OF_CHECK(IsFloating(A.dtype()) || IsComplex(A.dtype())) << "Expected a floating point or complex tensor as input. Got "
                                                          << TorchTypeName(A.dtype());
  OF_CHECK(A.dtype() == DType::kFloat32 || A.dtype() == DType::kFloat64 || IsComplex(A.dtype()))
      << "Low precision dtypes not supported. Got " << TorchTypeName(A.dtype());
}

void CheckInput(const Tensor& A, bool square) {
  CheckMatrices(A, square);
  if (IsComplex(A.dtype()) && A.device().type == DeviceType::kCUDA)
    OF_THROW_NO_KERNEL(A.device().index) << "complex matrices have no CUDA kernel";
}

int64_t BatchOf(const Tensor& A) { return NumelOf(BatchShape(A)); }

DimVector BatchShape(const Tensor& A) { return DimVector(A.sizes().begin(), A.sizes().end() - 2); }

Tensor ColMajorCopy(const Tensor& A) {
  DimVector s = A.sizes();
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  Tensor buf = Empty(s, A.dtype(), A.device());
  CopyInto(ColMajorView(buf), A);
  return buf;
}

Tensor ColMajorView(const Tensor& buf) { return Transpose(buf, -2, -1); }

}  // namespace linalg

using namespace linalg;  // NOLINT

namespace {

// LAPACK's infos as PyTorch's `info` output: int32, one per matrix, on the input's device.
Tensor InfoTensor(const std::vector<int>& infos, const DimVector& batch, const Device& device) {
  if (device.type == DeviceType::kMeta) return Empty(batch, DType::kInt32, device);
  Tensor host = Empty(batch, DType::kInt32, Device{});
  if (!infos.empty()) std::memcpy(host.data<int32_t>(), infos.data(), infos.size() * sizeof(int));
  if (device.type == DeviceType::kCPU) return host;
  Tensor out = Empty(batch, DType::kInt32, device);
  CopyInto(out, host);
  return out;
}

std::string SingularInverse(int info) {
  return "The diagonal element " + std::to_string(info) +
         " is zero, the inversion could not be completed because the input matrix is singular.";
}

std::string SingularSolve(int) { return "The solver failed because the input matrix is singular."; }

// The inverse and LAPACK's info per matrix, without raising (the entries of singular matrices
// are then whatever the factorisation left). Callers set the OpScope.
std::tuple<Tensor, std::vector<int>> InverseInfos(const Tensor& input) {
  CheckInput(input, true);
  const int64_t n = input.sizes()[input.dim() - 1], batch = BatchOf(input);
  Tensor buf = ColMajorCopy(input);
  std::vector<int> infos(batch, 0);
  if (IsMeta(buf) || input.numel() == 0) return {ColMajorView(buf), infos};
  infos = LuInverseInPlace(buf, n, batch);
  return {ColMajorView(buf), infos};
}

}  // namespace

Tensor Inverse(const Tensor& input) {
  OpScope scope("linalg.inv");
  auto [x, infos] = InverseInfos(input);
  RaiseOnInfo(infos, infos.size() > 1 || input.dim() > 2, SingularInverse);
  return x;
}

std::tuple<Tensor, Tensor> LinalgInvEx(const Tensor& A, bool check_errors) {
  OpScope scope("linalg.inv_ex");
  auto [x, infos] = InverseInfos(A);
  if (check_errors) RaiseOnInfo(infos, infos.size() > 1 || A.dim() > 2, SingularInverse);
  return {x, InfoTensor(infos, BatchShape(A), A.device())};
}

Tensor Det(const Tensor& input) {
  OpScope scope("linalg.det");
  CheckInput(input, true);
  const int64_t n = input.sizes()[input.dim() - 1], batch = BatchOf(input);
  Tensor out = Empty(BatchShape(input), input.dtype(), input.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  Tensor buf = ColMajorCopy(input);
  LuDeterminantsInto(buf, n, batch, out, Tensor(), Tensor());
  return out;
}

std::tuple<Tensor, Tensor> Slogdet(const Tensor& input) {
  OpScope scope("linalg.slogdet");
  CheckInput(input, true);
  const int64_t n = input.sizes()[input.dim() - 1], batch = BatchOf(input);
  Tensor sign = Empty(BatchShape(input), input.dtype(), input.device());
  Tensor logabs = Empty(BatchShape(input), ToRealDType(input.dtype()), input.device());
  if (IsMeta(sign) || sign.numel() == 0) return {sign, logabs};
  Tensor buf = ColMajorCopy(input);
  LuDeterminantsInto(buf, n, batch, Tensor(), sign, logabs);
  return {sign, logabs};
}

namespace {

// linalg.solve's X (A X = B or X A = B) and the infos of A's LU, without raising. Callers set
// the OpScope.
std::tuple<Tensor, std::vector<int>> SolveInfos(const Tensor& A, const Tensor& B, bool left) {
  CheckInput(A, true);
  OF_CHECK(A.dtype() == B.dtype()) << "Expected A and B to have the same dtype, but found A of type "
                                   << TorchTypeName(A.dtype()) << " and B of type " << TorchTypeName(B.dtype())
                                   << " instead";
  CheckSameDevice(A, B);
  const int64_t n = A.sizes()[A.dim() - 1];
  // B is a vector (or a batch of them) when it has one dim fewer than A and matches A's shape
  // without the last dim (PyTorch's rule).
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == DimVector(A.sizes().begin(), A.sizes().end() - 1));
  OF_CHECK(!(vector && !left)) << "Vector broadcasting of the left hand side is not supported for left=False. In "
                                  "this case linalg.solve is equivalent to B / A.squeeze(-1)";
  // Work on X A = B through its transpose: A^T X^T = B^T.
  Tensor a = left ? A : Transpose(A, -2, -1);
  Tensor b = vector ? Unsqueeze(B, -1) : (left ? B : Transpose(B, -2, -1));
  OF_CHECK(b.dim() >= 2 && b.sizes()[b.dim() - 2] == n)
      << "Incompatible shapes of A and B for the equation " << (left ? "AX = B" : "XA = B") << " (" << n << "x" << n
      << " and " << (b.dim() >= 2 ? b.sizes()[b.dim() - 2] : 0) << "x" << (b.dim() >= 1 ? b.sizes()[b.dim() - 1] : 0)
      << ")";
  const int64_t k = b.sizes()[b.dim() - 1];
  DimVector batch = BroadcastShapes(BatchShape(a), BatchShape(b));
  DimVector sa = batch, sb = batch;
  sa.push_back(n);
  sa.push_back(n);
  sb.push_back(n);
  sb.push_back(k);
  Tensor abuf = ColMajorCopy(Expand(a, sa)), xbuf = ColMajorCopy(Expand(b, sb));
  const int64_t nb = NumelOf(batch);
  std::vector<int> infos(nb, 0);
  if (!IsMeta(abuf) && n > 0 && k > 0) infos = LuSolveInPlace(abuf, xbuf, n, k, nb);
  Tensor x = ColMajorView(xbuf);
  if (vector) return {Squeeze(x, DimVector{-1}), infos};
  return {left ? x : Transpose(x, -2, -1), infos};
}

// The batch shape of the infos: A's broadcast with B's matrices' (B a vector or batch of them
// when it has one dim fewer than A, as in SolveInfos).
DimVector SolveBatch(const Tensor& A, const Tensor& B) {
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == DimVector(A.sizes().begin(), A.sizes().end() - 1));
  const DimVector bb = vector ? DimVector(B.sizes().begin(), B.sizes().end() - 1) : BatchShape(B);
  return BroadcastShapes(BatchShape(A), bb);
}

}  // namespace

Tensor LinalgSolve(const Tensor& A, const Tensor& B, bool left) {
  OpScope scope("linalg.solve");
  auto [x, infos] = SolveInfos(A, B, left);
  RaiseOnInfo(infos, false, SingularSolve);
  return x;
}

std::tuple<Tensor, Tensor> LinalgSolveEx(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  OpScope scope("linalg.solve_ex");
  auto [x, infos] = SolveInfos(A, B, left);
  if (check_errors) RaiseOnInfo(infos, false, SingularSolve);
  // One info per matrix of A (PyTorch's shape): the infos of A's broadcast copies are A's own.
  Tensor info = InfoTensor(infos, SolveBatch(A, B), A.device());
  const DimVector ab = BatchShape(A);
  while (info.dim() > static_cast<int64_t>(ab.size())) info = Select(info, 0, 0);
  for (size_t d = 0; d < ab.size(); ++d)
    if (ab[d] == 1 && info.sizes()[d] != 1) info = Narrow(info, static_cast<int64_t>(d), 0, 1);
  return {x, Contiguous(info)};
}

namespace {

// The factor and potrf's info per matrix, without raising. Callers set the OpScope.
std::tuple<Tensor, std::vector<int>> CholeskyInfos(const Tensor& input, bool upper) {
  CheckInput(input, true);
  const int64_t n = input.sizes()[input.dim() - 1], batch = BatchOf(input);
  Tensor buf = ColMajorCopy(input);
  // L sits column-major in buf, i.e. buf read row-major is L^T (= U for real input).
  std::vector<int> infos(batch, 0);
  if (IsMeta(buf) || input.numel() == 0) return {upper ? buf : ColMajorView(buf), infos};
  infos = CholeskyInPlace(buf, n, batch, upper);
  return {upper ? buf : ColMajorView(buf), infos};
}

std::string NotPositiveDefinite(int info) {
  return "The factorization could not be completed because the input is not positive-definite (the leading minor "
         "of order " + std::to_string(info) + " is not positive-definite).";
}

}  // namespace

Tensor Cholesky(const Tensor& input, bool upper) {
  OpScope scope("linalg.cholesky");
  auto [L, infos] = CholeskyInfos(input, upper);
  RaiseOnInfo(infos, input.dim() > 2, NotPositiveDefinite);
  return L;
}

std::tuple<Tensor, Tensor> LinalgCholeskyEx(const Tensor& A, bool upper, bool check_errors) {
  OpScope scope("linalg.cholesky_ex");
  auto [L, infos] = CholeskyInfos(A, upper);
  if (check_errors) RaiseOnInfo(infos, A.dim() > 2, NotPositiveDefinite);
  return {L, InfoTensor(infos, BatchShape(A), A.device())};
}

}  // namespace oneflow
