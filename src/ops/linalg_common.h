// Shared plumbing of the LAPACK-backed linalg kernels: input checks with PyTorch's messages,
// column-major work copies, batch loops and LAPACK error reporting.
#pragma once
#include <string>
#include <tuple>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"

namespace oneflow::linalg {

// A has >= 2 dims (square when asked) and is float32/float64; messages name `op` (the scope).
void CheckInput(const Tensor& A, bool square);
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
