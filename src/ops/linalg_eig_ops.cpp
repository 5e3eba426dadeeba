// General (non-symmetric) eigendecomposition of square matrices (linalg_eig) on LAPACK's geev
// (real input: conjugate pairs assembled from geev's real pairs; complex input: cgeev/zgeev).
// CUDA tensors take the host fallback (cuSOLVER's geev is not wired).
#include <complex>
#include <vector>

#include "kernels/lapack.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/empty.h"
#include "decl/linalg_eig.h"

namespace oneflow {

using namespace linalg;  // NOLINT

namespace {

// Real A: geev returns eigenvalues as (wr, wi) and a conjugate pair's vectors as the real and
// imaginary parts in two columns; both are assembled into the complex outputs.
void RealEig(const Tensor& buf, int64_t n, int64_t nb, bool compute_v, const Tensor& w, const Tensor& V,
             std::vector<int>& infos) {
  DispatchFloat(buf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      using C = std::complex<T>;
      const int ni = static_cast<int>(n);
      int lwork = -1, info = 0;
      T query = 0;
      std::vector<T> wr0(n), wi0(n);
      lapack::Geev(compute_v ? 'V' : 'N', ni, buf.data<T>(), ni, wr0.data(), wi0.data(), nullptr, ni, &query, -1,
                   &info);
      lwork = std::max(1, static_cast<int>(query));
      C* wp = w.data<C>();
      C* vp = compute_v ? V.data<C>() : nullptr;
      ForEachMatrix(nb, [&](int64_t b) {
        std::vector<T> wr(n), wi(n), vr(compute_v ? n * n : 1), work(lwork);
        T* a = buf.data<T>() + b * n * n;
        lapack::Geev(compute_v ? 'V' : 'N', ni, a, ni, wr.data(), wi.data(), vr.data(), ni, work.data(), lwork,
                     &infos[b]);
        for (int64_t j = 0; j < n; ++j) wp[b * n + j] = C(wr[j], wi[j]);
        if (!compute_v) return;
        C* out = vp + b * n * n;  // row-major [n, n]: out[r * n + j] is row r of eigenvector j
        for (int64_t j = 0; j < n; ++j) {
          if (wi[j] == 0) {
            for (int64_t r = 0; r < n; ++r) out[r * n + j] = C(vr[j * n + r], 0);
          } else if (wi[j] > 0 && j + 1 < n) {  // a conjugate pair in columns j, j + 1
            for (int64_t r = 0; r < n; ++r) {
              const C v(vr[j * n + r], vr[(j + 1) * n + r]);
              out[r * n + j] = v;
              out[r * n + j + 1] = std::conj(v);
            }
            ++j;
          }
        }
      });
    }
  });
}

// Complex A: geev's eigenvalues and (column-major) right eigenvectors are complex already; the
// vectors are copied out row-major.
void ComplexEig(const Tensor& buf, int64_t n, int64_t nb, bool compute_v, const Tensor& w, const Tensor& V,
                std::vector<int>& infos) {
  DispatchComplex(buf.dtype(), [&](auto tag) {
    using C = typename std::decay_t<decltype(tag)>::type;
    const int ni = static_cast<int>(n);
    int info = 0;
    C query = 0, dummy = 0;
    lapack::Geev(compute_v ? 'V' : 'N', ni, buf.data<C>(), ni, w.data<C>(), &dummy, ni, &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(nb, [&](int64_t b) {
      std::vector<C> vr(compute_v ? n * n : 1), work(lwork);
      lapack::Geev(compute_v ? 'V' : 'N', ni, buf.data<C>() + b * n * n, ni, w.data<C>() + b * n, vr.data(), ni,
                   work.data(), lwork, &infos[b]);
      if (!compute_v) return;
      C* out = V.data<C>() + b * n * n;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < n; ++r) out[r * n + j] = vr[j * n + r];
    });
  });
}

}  // namespace

std::tuple<Tensor, Tensor> LinalgEig(const Tensor& A, bool compute_v) {
  OpScope scope("linalg.eig");
  CheckInput(A, true);
  const int64_t n = A.sizes()[A.dim() - 1];
  const DType cdt = ToRealDType(A.dtype()) == DType::kFloat32 ? DType::kComplex64 : DType::kComplex128;
  DimVector wshape = BatchShape(A), vshape = BatchShape(A);
  wshape.push_back(n);
  vshape.push_back(compute_v ? n : 0);
  vshape.push_back(compute_v ? n : 0);
  Tensor w = Empty(wshape, cdt, A.device()), V = Empty(compute_v ? vshape : DimVector{0}, cdt, A.device());
  if (IsMeta(w) || A.numel() == 0) return {w, V};
  if (A.device().type != DeviceType::kCPU) OF_THROW_NO_KERNEL(A.device().index) << "linalg.eig has no CUDA kernel";
  const Tensor buf = ColMajorCopy(A);
  const int64_t nb = BatchOf(A);
  std::vector<int> infos(nb, 0);
  if (IsComplex(A.dtype()))
    ComplexEig(buf, n, nb, compute_v, w, V, infos);
  else
    RealEig(buf, n, nb, compute_v, w, V, infos);
  RaiseOnInfo(infos, nb > 1 || A.dim() > 2, [](int info) {
    return "linalg.eig: The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
           "repeated eigenvalues (error code: " + std::to_string(info) + ").";
  });
  return {w, V};
}

}  // namespace oneflow
