// LDL factorisation of symmetric / Hermitian matrices with Bunch-Kaufman pivoting
// (linalg_ldl_factor_ex, linalg_ldl_factor, linalg_ldl_solve) on LAPACK's sytrf/hetrf and
// sytrs/hetrs, lower triangle, on column-major copies: LD and the pivots are LAPACK's compact
// form, as PyTorch returns them (a negative pivot pair marks a 2x2 block of D). Not
// differentiable (PyTorch has no derivative either). CUDA tensors take the host fallback.
#include <cstring>
#include <string>
#include <vector>

#include "kernels/lapack.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/cast.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/linalg_ldl_factor.h"
#include "decl/linalg_ldl_factor_ex.h"
#include "decl/linalg_ldl_solve.h"
#include "decl/zeros.h"

namespace oneflow {

using namespace linalg;  // NOLINT

namespace {

DimVector WithTail(DimVector s, std::initializer_list<int64_t> tail) {
  for (int64_t d : tail) s.push_back(d);
  return s;
}

void RequireHost(const Tensor& t, const char* op) {
  if (t.device().type != DeviceType::kCPU) OF_THROW_NO_KERNEL(t.device().index) << op << " has no CUDA kernel";
}

// LD, pivots and sytrf's info per matrix, without raising. Callers set the OpScope.
std::tuple<Tensor, Tensor, std::vector<int>> LdlInfos(const Tensor& A, bool hermitian) {
  CheckInput(A, true);
  const int64_t n = A.sizes()[A.dim() - 1], nb = BatchOf(A);
  Tensor buf = ColMajorCopy(A);  // sytrf works in place on the lower triangle
  Tensor piv = Empty(WithTail(BatchShape(A), {n}), DType::kInt32, A.device());
  std::vector<int> infos(nb, 0);
  if (IsMeta(buf) || A.numel() == 0) return {ColMajorView(buf), piv, infos};
  RequireHost(A, "linalg.ldl_factor");
  // Hermitian only means something for complex input (hetrf); real matrices take sytrf.
  const bool he = hermitian && IsComplex(A.dtype());
  DispatchLapack(A.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const int ni = static_cast<int>(n);
    T* base = buf.data<T>();
    int32_t* pp = piv.data<int32_t>();
    const auto trf = [&](T* a, int* piv_b, T* work, int lwork, int* info) {
      if (he)
        lapack::Hetrf('L', ni, a, ni, piv_b, work, lwork, info);
      else
        lapack::Sytrf('L', ni, a, ni, piv_b, work, lwork, info);
    };
    int info = 0;
    T query = 0;
    trf(base, pp, &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(nb, [&](int64_t b) {
      std::vector<T> work(lwork);
      T* a = base + b * n * n;
      trf(a, pp + b * n, work.data(), lwork, &infos[b]);
      // sytrf leaves the strict upper triangle (column-major) as it was: zero it.
      for (int64_t j = 1; j < n; ++j) std::memset(static_cast<void*>(a + j * n), 0, j * sizeof(T));
    });
  });
  return {ColMajorView(buf), piv, infos};
}

std::string SingularD(int info) {
  return "The factorization could not be completed because the block diagonal matrix D is exactly singular: D(" +
         std::to_string(info) + "," + std::to_string(info) + ") is zero.";
}

Tensor InfoOf(const std::vector<int>& infos, const Tensor& A) {
  Tensor info = Zeros(BatchShape(A), DType::kInt32, Device{}, false);
  if (!infos.empty()) std::memcpy(info.data<int32_t>(), infos.data(), infos.size() * sizeof(int));
  if (A.device().type == DeviceType::kCPU) return info;
  Tensor out = Empty(info.sizes(), DType::kInt32, A.device());
  if (!IsMeta(out)) CopyInto(out, info);
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> LinalgLdlFactorEx(const Tensor& A, bool hermitian, bool check_errors) {
  OpScope scope("linalg.ldl_factor_ex");
  auto [LD, piv, infos] = LdlInfos(A, hermitian);
  if (check_errors) RaiseOnInfo(infos, A.dim() > 2, SingularD);
  return {LD, piv, InfoOf(infos, A)};
}

std::tuple<Tensor, Tensor> LinalgLdlFactor(const Tensor& A, bool hermitian) {
  OpScope scope("linalg.ldl_factor");
  auto [LD, piv, infos] = LdlInfos(A, hermitian);
  RaiseOnInfo(infos, A.dim() > 2, SingularD);
  return {LD, piv};
}

Tensor LinalgLdlSolve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  OpScope scope("linalg.ldl_solve");
  CheckInput(LD, true);
  OF_CHECK_INDEX(B.dim() >= 2) << "Dimension out of range (expected to be in range of [-1, 0], but got -2)";
  const int64_t n = LD.sizes()[LD.dim() - 1], k = B.sizes()[B.dim() - 1];
  OF_CHECK(B.sizes()[B.dim() - 2] == n) << "Incompatible matrix sizes for linalg.ldl_solve: each A matrix is " << n
                                        << " by " << n << " but each b matrix is " << B.sizes()[B.dim() - 2] << " by "
                                        << k;
  OF_CHECK(B.dtype() == LD.dtype()) << "Expected b and A to have the same dtype, but found b of type "
                                    << TorchTypeName(B.dtype()) << " and A of type " << TorchTypeName(LD.dtype())
                                    << " instead.";
  OF_CHECK(pivots.dtype() == DType::kInt32 || pivots.dtype() == DType::kInt64)
      << "pivots should be an integer tensor (int32), got " << TorchTypeName(pivots.dtype());
  OF_CHECK(pivots.dim() == LD.dim() - 1 && pivots.sizes()[pivots.dim() - 1] == n)
      << "Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
      << ShapeStr(pivots.sizes()) << " instead";
  CheckSameDevice(LD, B);
  CheckSameDevice(LD, pivots);
  // Batch dims broadcast between the factors (LD with its pivots) and B.
  const DimVector batch = BroadcastShapes(BatchShape(LD), BatchShape(B));
  Tensor ld = ColMajorCopy(Expand(LD, WithTail(batch, {n, n})));
  Tensor x = ColMajorCopy(Expand(B, WithTail(batch, {n, k})));
  if (IsMeta(x) || x.numel() == 0) return ColMajorView(x);
  RequireHost(LD, "linalg.ldl_solve");
  Tensor piv = Contiguous(Cast(Expand(pivots, WithTail(batch, {n})), DType::kInt32));
  const bool he = hermitian && IsComplex(LD.dtype());
  const int64_t nb = NumelOf(batch);
  DispatchLapack(LD.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const int ni = static_cast<int>(n), ki = static_cast<int>(k);
    ForEachMatrix(nb, [&](int64_t b) {
      int info = 0;  // only argument errors, which the checks above exclude
      const T* a = ld.data<T>() + b * n * n;
      const int* p = piv.data<int32_t>() + b * n;
      T* xb = x.data<T>() + b * n * k;
      if (he)
        lapack::Hetrs('L', ni, ki, a, ni, p, xb, ni, &info);
      else
        lapack::Sytrs('L', ni, ki, a, ni, p, xb, ni, &info);
    });
  });
  return ColMajorView(x);
}

}  // namespace oneflow
