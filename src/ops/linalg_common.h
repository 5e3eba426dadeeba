// Shared plumbing of the LAPACK-backed linalg kernels: input checks with PyTorch's messages,
// column-major work copies, batch loops and LAPACK error reporting.
#pragma once
#include <complex>
#include <string>
#include <tuple>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"

namespace oneflow::linalg {

// A has >= 2 dims (square when asked) and is float32/float64/complex64/complex128; messages name
// the op (the scope). The checks of composite ops, which run on any device through other ops.
void CheckMatrices(const Tensor& A, bool square);
// CheckMatrices, for a kernel: complex CUDA tensors (cuSOLVER is wired for the real types only)
// raise the no-kernel error, which the host fallback catches around a kernel entry
// (Note [Host fallback]) -- so a composite calls its kernels through OF_KERNEL_CALL.
void CheckInput(const Tensor& A, bool square);

// Calls f(Tag<T>{}) for the element types LAPACK has (s, d, c, z); CheckInput refused the rest.
template <typename F>
void DispatchLapack(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: f(Tag<float>{}); return;
    case DType::kFloat64: f(Tag<double>{}); return;
    case DType::kComplex64: f(Tag<std::complex<float>>{}); return;
    case DType::kComplex128: f(Tag<std::complex<double>>{}); return;
    default: OF_THROW(kType) << "expected a float32, float64, complex64 or complex128 tensor, got " << DTypeName(t);
  }
}
// The real type of a LAPACK element type (singular values, Hermitian eigenvalues, |det|).
template <typename T> struct RealOfT { using type = T; };
template <typename T> struct RealOfT<std::complex<T>> { using type = T; };
template <typename T> using RealOf = typename RealOfT<T>::type;
bool IsMeta(const Tensor& t);
int64_t BatchOf(const Tensor& A);  // number of matrices
DimVector BatchShape(const Tensor& A);  // A.shape[:-2]
// A fresh buffer holding A's matrices column-major: row-major shape [..., cols, rows]; the
// matrices as the user sees them are its transposed view (ColMajorView).
Tensor ColMajorCopy(const Tensor& A);
Tensor ColMajorView(const Tensor& buf);  // the [..., rows, cols] view of such a buffer
// Runs f(b) for every matrix b; matrices go to separate threads when there are several (each
// LAPACK call then runs single-threaded), else LAPACK threads the one call. f must not throw.
template <typename F>
void ForEachMatrix(int64_t batch, const F& f) {
  if (batch > 1) {
    ParallelFor(0, batch, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) f(b);
    });
  } else if (batch == 1) {
    f(0);
  }
}
// Raises `message(info)` (LinAlgError) for the first matrix with a nonzero info, prefixed "(Batch element i): "
// for batched inputs (PyTorch's format).
template <typename M>
void RaiseOnInfo(const std::vector<int>& infos, bool batched, const M& message) {
  for (size_t b = 0; b < infos.size(); ++b) {
    if (infos[b] == 0) continue;
    if (batched) OF_THROW(kLinAlg) << "(Batch element " << b << "): " << message(infos[b]);
    OF_THROW(kLinAlg) << message(infos[b]);
  }
}

}  // namespace oneflow::linalg

namespace oneflow {
// The decomposition kernels behind linalg_svd/linalg_eigh, also used without vectors by the
// composites (svdvals, eigvalsh, matrix_rank) when no gradient is needed. Callers set the OpScope.
std::tuple<Tensor, Tensor, Tensor> SvdKernel(const Tensor& A, bool full_matrices, bool compute_uv);
std::tuple<Tensor, Tensor> EighKernel(const Tensor& A, const std::string& uplo, bool compute_v);
}  // namespace oneflow
