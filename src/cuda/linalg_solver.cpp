// CUDA kernels of the dense factorisations (kernels/linalg.h) on cuSOLVER (cuda/solver.h): the
// CPU's column-major buffers factored in place; what cuSOLVER lacks is composed here (inv solves
// A X = I, det finishes U's diagonal and the pivots on the host, a wide SVD factors A^T). In a
// build without cuSOLVER the solver calls raise the no-kernel error, which the op-level host
// fallback catches (Note [Host fallback]).
#include <algorithm>
#include <type_traits>

#include "cuda/solver.h"
#include "decl/contiguous.h"
#include "decl/diagonal.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/eye.h"
#include "decl/narrow.h"
#include "decl/transpose.h"
#include "decl/triu.h"
#include "kernels/linalg.h"
#include "ops/copy.h"

namespace oneflow::cuda {

using namespace linalg;  // NOLINT

namespace {

DimVector WithMatrix(DimVector s, int64_t rows, int64_t cols) {
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

std::vector<int> InverseCuda(const Tensor& buf, int64_t n, int64_t batch) {
  const Tensor piv = Empty(DimVector{batch, n}, DType::kInt64, buf.device());
  std::vector<int> infos = Getrf(buf, piv);
  const Tensor x = Contiguous(Expand(Eye(n, std::nullopt, buf.dtype(), buf.device(), false), buf.sizes()));
  Getrs(buf, piv, x);  // cuSOLVER has no getri
  CopyInto(buf, x);
  return infos;
}

// LU on the device, U's diagonal and the pivots (batch x n each) finished on the host; results
// copied into the device outputs.
void DeterminantsCuda(const Tensor& buf, int64_t n, int64_t batch, const Tensor& det, const Tensor& sign,
                      const Tensor& logabs) {
  const Tensor piv = Empty(DimVector{batch, n}, DType::kInt64, buf.device());
  if (n > 0) Getrf(buf, piv);  // info > 0: singular, U has a zero (det 0)
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

std::vector<int> SolveCuda(const Tensor& abuf, const Tensor& xbuf, int64_t n, int64_t, int64_t batch) {
  const Tensor piv = Empty(DimVector{batch, n}, DType::kInt64, abuf.device());
  std::vector<int> infos = Getrf(abuf, piv);
  Getrs(abuf, piv, xbuf);
  return infos;
}

std::vector<int> CholeskyCuda(const Tensor& buf, int64_t, int64_t, bool) {
  std::vector<int> infos = Potrf(buf);
  Tensor factor = buf;  // (a handle: Triu_ writes buf's storage)
  Triu_(factor, 0);  // the strict upper triangle (column-major) is buf's strict lower one
  return infos;
}

void QrCuda(const Tensor& abuf, const Tensor& qbuf, const Tensor& R, int64_t m, int64_t n, int64_t qcols,
            int64_t rrows, int64_t batch, bool want_q) {
  const int64_t k = std::min(m, n);
  const Tensor tau = Empty(DimVector{batch, std::max<int64_t>(k, 1)}, abuf.dtype(), abuf.device());
  Geqrf(abuf, m, n, tau);
  // R: the upper triangle of the first rrows rows of the factored (column-major) A.
  const int64_t rr = std::min(rrows, m);
  CopyInto(Narrow(R, -2, 0, rr), Triu(Narrow(ColMajorView(abuf), -2, 0, rr), 0));
  if (!want_q) return;
  if (!qbuf.is_same(abuf)) CopyInto(Narrow(qbuf, -2, 0, n), abuf);  // the reflectors
  Orgqr(qbuf, m, qcols, k, tau);
}

// gesvd needs rows >= cols: a wide A is factored as A^T = U' S V'^T, so that U = V' and Vh = U'^T.
std::vector<int> SvdCuda(const Tensor& A, const Tensor& S, const Tensor& ubuf, const Tensor& vbuf, int64_t m,
                         int64_t n, int64_t, bool full, bool compute_uv) {
  const bool tall = m >= n;
  const int64_t rm = tall ? m : n, rn = tall ? n : m, ru = full ? rm : rn;
  const DimVector batch = BatchShape(A);
  Tensor work = ColMajorCopy(tall ? A : Transpose(A, -2, -1));
  Tensor u2 = compute_uv ? Empty(WithMatrix(batch, ru, rm), A.dtype(), A.device()) : Tensor();
  Tensor vt2 = compute_uv ? Empty(WithMatrix(batch, rn, rn), A.dtype(), A.device()) : Tensor();
  std::vector<int> infos = Gesvd(work, rm, rn, S, u2, vt2, full);
  if (compute_uv) {
    CopyInto(ColMajorView(ubuf), tall ? ColMajorView(u2) : Transpose(ColMajorView(vt2), -2, -1));
    CopyInto(ColMajorView(vbuf), tall ? ColMajorView(vt2) : Transpose(ColMajorView(u2), -2, -1));
  }
  return infos;
}

std::vector<int> SymEigCuda(const Tensor& vbuf, const Tensor& w, int64_t, int64_t, bool vectors, bool lower) {
  return Syevd(vbuf, w, vectors, lower);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterLinalgKernels() {
  // Without cuSOLVER the device has no linalg kernel: the registry's answer sends them to the host.
  if (!HasSolver()) return;
  kernels::RegisterKernel<kernels::LuInverseKernel>(DeviceType::kCUDA, &InverseCuda);
  kernels::RegisterKernel<kernels::LuDeterminantsKernel>(DeviceType::kCUDA, &DeterminantsCuda);
  kernels::RegisterKernel<kernels::LuSolveKernel>(DeviceType::kCUDA, &SolveCuda);
  kernels::RegisterKernel<kernels::CholeskyFactorKernel>(DeviceType::kCUDA, &CholeskyCuda);
  kernels::RegisterKernel<kernels::QrFactorKernel>(DeviceType::kCUDA, &QrCuda);
  kernels::RegisterKernel<kernels::SvdFactorKernel>(DeviceType::kCUDA, &SvdCuda);
  kernels::RegisterKernel<kernels::SymEigKernel>(DeviceType::kCUDA, &SymEigCuda);
}

}  // namespace oneflow::cuda
