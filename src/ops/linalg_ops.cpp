// LU-based linalg kernels (inverse, det, slogdet, solve) and cholesky on LAPACK (kernels/lapack.h).
// Each matrix is factorised in a column-major copy, so pivots, signs and error messages are the
// ones PyTorch (LAPACK on column-major data too) reports.
#include <cmath>
#include <cstring>

#include "kernels/lapack.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/cholesky.h"
#include "decl/contiguous.h"
#include "decl/det.h"
#include "decl/diagonal.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/eye.h"
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
#include "decl/triu.h"
#include "decl/unsqueeze.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/solver.h"
#endif

namespace oneflow {

namespace linalg {

bool IsMeta(const Tensor& t) { return t.device().type == DeviceType::kMeta; }

void CheckMatrices(const Tensor& A, bool square) {
  OF_CHECK(A.dim() >= 2) << "The input tensor A must have at least 2 dimensions.";
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1];
  if (square) {
    OF_CHECK(m == n) << "A must be batches of square matrices, but they are " << m << " by " << n << " matrices";
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

template <typename T>
T* MatrixPtr(const Tensor& buf, int64_t b) {
  const int64_t per = buf.sizes()[buf.dim() - 1] * buf.sizes()[buf.dim() - 2];
  return buf.data<T>() + b * per;
}

}  // namespace

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
#ifdef ONEFLOW_WITH_CUDA
  if (buf.device().type == DeviceType::kCUDA) {  // cuSOLVER has no getri: solve A X = I
    const Tensor piv = Empty(DimVector{batch, n}, DType::kInt64, buf.device());
    infos = cuda::Getrf(buf, piv);
    const Tensor x = Contiguous(Expand(Eye(n, std::nullopt, input.dtype(), buf.device(), false), buf.sizes()));
    cuda::Getrs(buf, piv, x);
    return {ColMajorView(x), infos};
  }
#endif
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    // Workspace size from a query on the first matrix's shape (same for all).
    int info = 0;
    T query = 0;
    std::vector<int> piv0(n);
    lapack::Getri(n, MatrixPtr<T>(buf, 0), n, piv0.data(), &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(batch, [&](int64_t b) {
      std::vector<int> piv(n);
      std::vector<T> work(lwork);
      T* a = MatrixPtr<T>(buf, b);
      lapack::Getrf(n, n, a, n, piv.data(), &infos[b]);
      if (infos[b] == 0) lapack::Getri(n, a, n, piv.data(), work.data(), lwork, &infos[b]);
    });
  });
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

namespace {

// det(A) = (-1)^(row swaps) * prod(diag(U)) of A's LU; also as sign and log|det| (slogdet).
// Matrix b's results from U's diagonal (every `step`-th element of u) and LAPACK's 1-based pivots.
// A complex sign is the product of the unit phases d / |d| (0 once a d is 0).
template <typename T, typename P>
void FromLu(const T* u, int64_t step, const P* piv, int64_t n, int64_t b, T* det, T* sign, RealOf<T>* logabs) {
  using R = RealOf<T>;
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

template <typename T>
void LuDeterminants(const Tensor& buf, int64_t n, int64_t batch, T* det, T* sign, RealOf<T>* logabs) {
  ForEachMatrix(batch, [&](int64_t b) {
    std::vector<int> piv(n);
    int info = 0;
    T* a = MatrixPtr<T>(buf, b);
    if (n > 0) lapack::Getrf(n, n, a, n, piv.data(), &info);  // info > 0: singular, U has a zero
    FromLu(a, n + 1, piv.data(), n, b, det, sign, logabs);
  });
}

#ifdef ONEFLOW_WITH_CUDA
// The same from a CUDA buffer: LU on the device, U's diagonal and the pivots (batch x n each)
// finished on the host; results copied into the CUDA outputs.
void CudaLuDeterminants(const Tensor& buf, int64_t n, int64_t batch, const Tensor& det, const Tensor& sign,
                        const Tensor& logabs) {
  const Tensor piv = Empty(DimVector{batch, n}, DType::kInt64, buf.device());
  if (n > 0) cuda::Getrf(buf, piv);  // info > 0: singular, U has a zero (det 0)
  const Tensor diag = Contiguous(OnHost(Diagonal(buf, 0, -2, -1))), p = OnHost(piv);
  Tensor hd = det.defined() ? Empty(det.sizes(), det.dtype()) : Tensor();
  Tensor hs = sign.defined() ? Empty(sign.sizes(), sign.dtype()) : Tensor();
  Tensor hl = logabs.defined() ? Empty(logabs.sizes(), logabs.dtype()) : Tensor();
  DispatchFloat(buf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      for (int64_t b = 0; b < batch; ++b)
        FromLu(diag.data<T>() + b * n, 1, p.data<int64_t>() + b * n, n, b, hd.defined() ? hd.data<T>() : nullptr,
               hs.defined() ? hs.data<T>() : nullptr, hl.defined() ? hl.data<T>() : nullptr);
    }
  });
  if (hd.defined()) CopyInto(det, hd);
  if (hs.defined()) CopyInto(sign, hs);
  if (hl.defined()) CopyInto(logabs, hl);
}
#endif

}  // namespace

Tensor Det(const Tensor& input) {
  OpScope scope("linalg.det");
  CheckInput(input, true);
  const int64_t n = input.sizes()[input.dim() - 1], batch = BatchOf(input);
  Tensor out = Empty(BatchShape(input), input.dtype(), input.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  Tensor buf = ColMajorCopy(input);
#ifdef ONEFLOW_WITH_CUDA
  if (buf.device().type == DeviceType::kCUDA) {
    CudaLuDeterminants(buf, n, batch, out, Tensor(), Tensor());
    return out;
  }
#endif
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    LuDeterminants<T>(buf, n, batch, out.data<T>(), nullptr, nullptr);
  });
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
#ifdef ONEFLOW_WITH_CUDA
  if (buf.device().type == DeviceType::kCUDA) {
    CudaLuDeterminants(buf, n, batch, Tensor(), sign, logabs);
    return {sign, logabs};
  }
#endif
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    LuDeterminants<T>(buf, n, batch, nullptr, sign.data<T>(), logabs.data<RealOf<T>>());
  });
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
#ifdef ONEFLOW_WITH_CUDA
  if (abuf.device().type == DeviceType::kCUDA && n > 0 && k > 0) {
    const Tensor piv = Empty(DimVector{nb, n}, DType::kInt64, abuf.device());
    infos = cuda::Getrf(abuf, piv);
    cuda::Getrs(abuf, piv, xbuf);
  } else
#endif
  if (!IsMeta(abuf) && n > 0 && k > 0) {
    DispatchLapack(A.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      ForEachMatrix(nb, [&](int64_t i) {
        std::vector<int> piv(n);
        T* am = MatrixPtr<T>(abuf, i);
        lapack::Getrf(n, n, am, n, piv.data(), &infos[i]);
        int info = 0;
        if (infos[i] == 0) lapack::Getrs('N', n, k, am, n, piv.data(), MatrixPtr<T>(xbuf, i), n, &info);
      });
    });
  }
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
#ifdef ONEFLOW_WITH_CUDA
  if (buf.device().type == DeviceType::kCUDA) {
    infos = cuda::Potrf(buf);
    Triu_(buf, 0);  // the strict upper triangle (column-major) is buf's strict lower one
  } else
#endif
  DispatchLapack(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    ForEachMatrix(batch, [&](int64_t b) {
      T* a = MatrixPtr<T>(buf, b);
      lapack::Potrf('L', n, a, n, &infos[b]);
      // potrf leaves the strict upper triangle (column-major) untouched: zero it.
      for (int64_t j = 1; j < n; ++j) std::memset(static_cast<void*>(a + j * n), 0, j * sizeof(T));
      // upper=True returns U = L^H; buf read row-major is L^T, so a complex U is its conjugate.
      if constexpr (!std::is_same_v<T, RealOf<T>>)
        if (upper)
          for (int64_t i = 0; i < n * n; ++i) a[i] = std::conj(a[i]);
    });
  });
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
