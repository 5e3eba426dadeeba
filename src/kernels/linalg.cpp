// CPU kernels of the dense factorisations (kernels/linalg.h) on LAPACK: matrices over threads
// when there are several (each LAPACK call single-threaded), else LAPACK threads the one call;
// workspace sizes from a query on the first matrix (the same for all).
#include "kernels/linalg.h"

#include <algorithm>
#include <cstring>

#include "kernels/lapack.h"

namespace oneflow {

using namespace linalg;  // NOLINT

namespace {

template <typename T>
T* Mat(const Tensor& buf, int64_t b) {
  const int64_t per = buf.sizes()[buf.dim() - 1] * buf.sizes()[buf.dim() - 2];
  return buf.data<T>() + b * per;
}

std::vector<int> InverseCpu(const Tensor& buf, int64_t n, int64_t batch) {
  std::vector<int> infos(batch, 0);
  DispatchLapack(buf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    int info = 0;
    T query = 0;
    std::vector<int> piv0(n);
    lapack::Getri(n, Mat<T>(buf, 0), n, piv0.data(), &query, -1, &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(batch, [&](int64_t b) {
      std::vector<int> piv(n);
      std::vector<T> work(lwork);
      T* a = Mat<T>(buf, b);
      lapack::Getrf(n, n, a, n, piv.data(), &infos[b]);
      if (infos[b] == 0) lapack::Getri(n, a, n, piv.data(), work.data(), lwork, &infos[b]);
    });
  });
  return infos;
}

void DeterminantsCpu(const Tensor& buf, int64_t n, int64_t batch, const Tensor& det, const Tensor& sign,
                     const Tensor& logabs) {
  DispatchLapack(buf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* dp = det.defined() ? det.data<T>() : nullptr;
    T* sp = sign.defined() ? sign.data<T>() : nullptr;
    RealOf<T>* lp = logabs.defined() ? logabs.data<RealOf<T>>() : nullptr;
    ForEachMatrix(batch, [&](int64_t b) {
      std::vector<int> piv(n);
      int info = 0;
      T* a = Mat<T>(buf, b);
      if (n > 0) lapack::Getrf(n, n, a, n, piv.data(), &info);  // info > 0: singular, U has a zero
      FromLu(a, n + 1, piv.data(), n, b, dp, sp, lp);
    });
  });
}

std::vector<int> SolveCpu(const Tensor& abuf, const Tensor& xbuf, int64_t n, int64_t k, int64_t batch) {
  std::vector<int> infos(batch, 0);
  DispatchLapack(abuf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    ForEachMatrix(batch, [&](int64_t i) {
      std::vector<int> piv(n);
      T* am = Mat<T>(abuf, i);
      lapack::Getrf(n, n, am, n, piv.data(), &infos[i]);
      int info = 0;
      if (infos[i] == 0) lapack::Getrs('N', n, k, am, n, piv.data(), Mat<T>(xbuf, i), n, &info);
    });
  });
  return infos;
}

std::vector<int> CholeskyCpu(const Tensor& buf, int64_t n, int64_t batch, bool upper) {
  std::vector<int> infos(batch, 0);
  DispatchLapack(buf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    ForEachMatrix(batch, [&](int64_t b) {
      T* a = Mat<T>(buf, b);
      lapack::Potrf('L', n, a, n, &infos[b]);
      // potrf leaves the strict upper triangle (column-major) untouched: zero it.
      for (int64_t j = 1; j < n; ++j) std::memset(static_cast<void*>(a + j * n), 0, j * sizeof(T));
      // upper=True returns U = L^H; buf read row-major is L^T, so a complex U is its conjugate.
      if constexpr (!std::is_same_v<T, RealOf<T>>)
        if (upper)
          for (int64_t i = 0; i < n * n; ++i) a[i] = std::conj(a[i]);
    });
  });
  return infos;
}

void QrCpu(const Tensor& abuf, const Tensor& qbuf, const Tensor& R, int64_t m, int64_t n, int64_t qcols,
           int64_t rrows, int64_t batch, bool want_q) {
  const int64_t k = std::min(m, n);
  DispatchLapack(abuf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    int info = 0;
    T q1 = 0, q2 = 0;
    std::vector<T> tau0(std::max<int64_t>(k, 1));
    lapack::Geqrf(m, n, Mat<T>(abuf, 0), m, tau0.data(), &q1, -1, &info);
    if (want_q) lapack::Orgqr(m, qcols, k, Mat<T>(qbuf, 0), m, tau0.data(), &q2, -1, &info);
    const int lwork = std::max(lapack::WorkSize(q1), lapack::WorkSize(q2));
    ForEachMatrix(batch, [&](int64_t b) {
      std::vector<T> tau(std::max<int64_t>(k, 1)), work(lwork);
      int inf = 0;
      T* a = Mat<T>(abuf, b);
      lapack::Geqrf(m, n, a, m, tau.data(), work.data(), lwork, &inf);
      // R: the upper triangle of the first rrows rows (row-major output, column-major a).
      T* r = R.data<T>() + b * rrows * n;
      for (int64_t i = 0; i < std::min(rrows, m); ++i)
        for (int64_t j = i; j < n; ++j) r[i * n + j] = a[j * m + i];
      if (!want_q) return;
      T* q = Mat<T>(qbuf, b);
      if (q != a) std::memcpy(static_cast<void*>(q), a, n * m * sizeof(T));
      lapack::Orgqr(m, qcols, k, q, m, tau.data(), work.data(), lwork, &inf);
    });
  });
}

std::vector<int> SvdCpu(const Tensor& A, const Tensor& S, const Tensor& ubuf, const Tensor& vbuf, int64_t m, int64_t n,
                        int64_t batch, bool full, bool compute_uv) {
  const int64_t k = std::min(m, n), vrows = full ? n : k;
  const char jobz = !compute_uv ? 'N' : (full ? 'A' : 'S');
  std::vector<int> infos(batch, 0);
  const Tensor abuf = ColMajorCopy(A);  // gesdd destroys it
  DispatchLapack(A.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using R = RealOf<T>;
    const int ldu = m, ldvt = std::max<int>(vrows, 1);
    int info = 0;
    T query = 0, dummy = 0;
    std::vector<int> iwork0(8 * k);
    T* u0 = compute_uv ? Mat<T>(ubuf, 0) : &dummy;
    T* v0 = compute_uv ? Mat<T>(vbuf, 0) : &dummy;
    lapack::Gesdd(jobz, m, n, Mat<T>(abuf, 0), m, S.data<R>(), u0, ldu, v0, ldvt, &query, -1, iwork0.data(), &info);
    const int lwork = lapack::WorkSize(query);
    ForEachMatrix(batch, [&](int64_t b) {
      std::vector<T> work(lwork);
      std::vector<int> iwork(8 * k);
      T d = 0;
      lapack::Gesdd(jobz, m, n, Mat<T>(abuf, b), m, S.data<R>() + b * k, compute_uv ? Mat<T>(ubuf, b) : &d, ldu,
                    compute_uv ? Mat<T>(vbuf, b) : &d, ldvt, work.data(), lwork, iwork.data(), &infos[b]);
    });
  });
  return infos;
}

std::vector<int> SymEigCpu(const Tensor& vbuf, const Tensor& w, int64_t n, int64_t batch, bool vectors, bool lower) {
  const char jobz = vectors ? 'V' : 'N', ul = lower ? 'L' : 'U';
  std::vector<int> infos(batch, 0);
  DispatchLapack(vbuf.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using R = RealOf<T>;
    int info = 0, iq = 0;
    T q = 0;
    lapack::Syevd(jobz, ul, n, Mat<T>(vbuf, 0), n, w.data<R>(), &q, -1, &iq, -1, &info);
    const int lwork = lapack::WorkSize(q), liwork = std::max(1, iq);
    ForEachMatrix(batch, [&](int64_t b) {
      std::vector<T> work(lwork);
      std::vector<int> iwork(liwork);
      lapack::Syevd(jobz, ul, n, Mat<T>(vbuf, b), n, w.data<R>() + b * n, work.data(), lwork, iwork.data(), liwork,
                    &infos[b]);
    });
  });
  return infos;
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::LuInverseKernel>(DeviceType::kCPU, &InverseCpu);
  kernels::RegisterKernel<kernels::LuDeterminantsKernel>(DeviceType::kCPU, &DeterminantsCpu);
  kernels::RegisterKernel<kernels::LuSolveKernel>(DeviceType::kCPU, &SolveCpu);
  kernels::RegisterKernel<kernels::CholeskyFactorKernel>(DeviceType::kCPU, &CholeskyCpu);
  kernels::RegisterKernel<kernels::QrFactorKernel>(DeviceType::kCPU, &QrCpu);
  kernels::RegisterKernel<kernels::SvdFactorKernel>(DeviceType::kCPU, &SvdCpu);
  kernels::RegisterKernel<kernels::SymEigKernel>(DeviceType::kCPU, &SymEigCpu);
  return true;
}();

}  // namespace

std::vector<int> LuInverseInPlace(const Tensor& buf, int64_t n, int64_t batch) {
  return kernels::CallKernel<kernels::LuInverseKernel>(buf.device(), buf, n, batch);
}

void LuDeterminantsInto(const Tensor& buf, int64_t n, int64_t batch, const Tensor& det, const Tensor& sign,
                        const Tensor& logabs) {
  kernels::CallKernel<kernels::LuDeterminantsKernel>(buf.device(), buf, n, batch, det, sign, logabs);
}

std::vector<int> LuSolveInPlace(const Tensor& abuf, const Tensor& xbuf, int64_t n, int64_t k, int64_t batch) {
  return kernels::CallKernel<kernels::LuSolveKernel>(abuf.device(), abuf, xbuf, n, k, batch);
}

std::vector<int> CholeskyInPlace(const Tensor& buf, int64_t n, int64_t batch, bool upper) {
  return kernels::CallKernel<kernels::CholeskyFactorKernel>(buf.device(), buf, n, batch, upper);
}

void QrInto(const Tensor& abuf, const Tensor& qbuf, const Tensor& R, int64_t m, int64_t n, int64_t qcols, int64_t rrows,
            int64_t batch, bool want_q) {
  kernels::CallKernel<kernels::QrFactorKernel>(abuf.device(), abuf, qbuf, R, m, n, qcols, rrows, batch, want_q);
}

std::vector<int> SvdInto(const Tensor& A, const Tensor& S, const Tensor& ubuf, const Tensor& vbuf, int64_t m,
                         int64_t n, int64_t batch, bool full, bool compute_uv) {
  return kernels::CallKernel<kernels::SvdFactorKernel>(A.device(), A, S, ubuf, vbuf, m, n, batch, full, compute_uv);
}

std::vector<int> SymEigInPlace(const Tensor& vbuf, const Tensor& w, int64_t n, int64_t batch, bool vectors,
                               bool lower) {
  return kernels::CallKernel<kernels::SymEigKernel>(vbuf.device(), vbuf, w, n, batch, vectors, lower);
}

}  // namespace oneflow
