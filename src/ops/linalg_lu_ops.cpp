// LU factorization with partial pivoting (linalg_lu_factor) on LAPACK's getrf, on a column-major
// copy. The LU family (lu_factor / lu_factor_ex / lu / lu_unpack / lu_solve) and the gradient are
// compositions in python/oneflow/linalg/_lu.py. CUDA tensors take the host fallback (no kernel).
#include <algorithm>
#include <vector>

#include "kernels/lapack.h"
#include "ops/copy.h"
#include "ops/linalg_common.h"
#include "decl/empty.h"
#include "decl/linalg_lu_factor.h"
#include "decl/zeros.h"

namespace oneflow {

using namespace linalg;  // NOLINT

std::tuple<Tensor, Tensor, Tensor> LinalgLuFactor(const Tensor& A) {
  OpScope scope("linalg.lu_factor");
  CheckInput(A, false);
  const int64_t m = A.sizes()[A.dim() - 2], n = A.sizes()[A.dim() - 1], k = std::min(m, n);
  DimVector piv_shape = BatchShape(A), info_shape = BatchShape(A);
  piv_shape.push_back(k);
  Tensor buf = ColMajorCopy(A);  // getrf works in place
  Tensor piv = Empty(piv_shape, DType::kInt32, A.device());
  Tensor info = Zeros(info_shape, DType::kInt32, A.device(), false);
  if (IsMeta(buf) || A.numel() == 0) return {ColMajorView(buf), piv, info};
  if (A.device().type != DeviceType::kCPU) OF_THROW_NO_KERNEL(A.device().index) << "linalg.lu_factor has no CUDA kernel";
  const int64_t nb = BatchOf(A), per = m * n;
  int32_t* pp = piv.data<int32_t>();
  int32_t* ip = info.data<int32_t>();
  DispatchLapack(A.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* base = buf.data<T>();
    ForEachMatrix(nb, [&](int64_t b) {
      int inf = 0;
      lapack::Getrf(static_cast<int>(m), static_cast<int>(n), base + b * per, static_cast<int>(m), pp + b * k, &inf);
      ip[b] = inf;
    });
  });
  return {ColMajorView(buf), piv, info};
}

}  // namespace oneflow
