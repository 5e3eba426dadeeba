// cuBLAS is column-major; a row-major product C = A B is computed as the column-major
// C^T = B^T A^T, which reads the same memory: operands swap places and keep their own
// "transposed" flags. Operands are used in place when one of their two strides is 1 (as on the
// CPU, kernels/gemm.cpp), else copied to a contiguous tensor first.
#include "cuda/blas.h"

#include <cublas_v2.h>

#include <atomic>
#include <complex>
#include <mutex>
#include <vector>

#include "cuda/check.h"
#include "cuda/runtime.h"
#include "kernels/gemm.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

std::atomic<bool> allow_tf32{false};

#define OF_CUBLAS_CHECK(expr)                                                                 \
  do {                                                                                        \
    cublasStatus_t of_st_ = (expr);                                                           \
    OF_CHECK(of_st_ == CUBLAS_STATUS_SUCCESS)                                                 \
        << "cuBLAS error: " << cublasGetStatusString(of_st_) << " (" #expr ")";              \
  } while (0)

// One handle per device, bound to the device's stream.
cublasHandle_t Handle(int device) {
  static std::mutex mu;
  static std::vector<cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  if (handles.empty()) handles.resize(DeviceCount(), nullptr);
  if (!handles[device]) {
    DeviceGuard g(device);
    OF_CUBLAS_CHECK(cublasCreate(&handles[device]));
    OF_CUBLAS_CHECK(cublasSetStream(handles[device], static_cast<cudaStream_t>(Stream(device))));
  }
  return handles[device];
}

struct Operand {
  const void* data;
  bool trans;  // stored as the transpose of the row-major [rows, cols] operand
  int64_t ld;
  int64_t batch_stride;
};

// A [rows, cols] matrix (the last two dims of t) as cuBLAS can read it, or null when t's layout
// needs a copy.
bool AsOperand(const Tensor& t, int64_t rows, int64_t cols, Operand* o) {
  const int nd = t.dim();
  const int64_t s0 = t.strides()[nd - 2], s1 = t.strides()[nd - 1];
  const int64_t c1 = std::max<int64_t>(1, cols), r1 = std::max<int64_t>(1, rows);
  o->data = t.raw_ptr();
  o->batch_stride = nd == 3 ? t.strides()[0] : 0;
  if (s1 == 1 && (s0 >= c1 || rows == 1)) { o->trans = false; o->ld = std::max(s0, c1); return true; }
  if (s0 == 1 && (s1 >= r1 || cols == 1)) { o->trans = true; o->ld = std::max(s1, r1); return true; }
  return false;
}

Operand Prepare(const Tensor& t, int64_t rows, int64_t cols, Tensor* keep) {
  Operand o;
  if (AsOperand(t, rows, cols, &o)) return o;
  *keep = Contiguous(t);
  AsOperand(*keep, rows, cols, &o);
  return o;
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

Types TypesOf(DType dt, int device) {
  switch (dt) {
    case DType::kFloat32:
      return {CUDA_R_32F, allow_tf32.load() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case DType::kFloat64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::kFloat16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::kBFloat16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case DType::kComplex64: return {CUDA_C_32F, CUBLAS_COMPUTE_32F};
    case DType::kComplex128: return {CUDA_C_64F, CUBLAS_COMPUTE_64F};
    default: break;
  }
  // The registration's dtypes (RegisterBlasKernels) keep every other dtype away.
  OF_ASSERT(false) << "cuBLAS GEMM of " << DTypeName(dt) << " on device " << device;
  return {};
}

// c[batch] = alpha a[batch] b[batch] + beta c[batch], row-major; batch 1 for 2-D operands.
void Run(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta,
         int64_t batch) {
  const int nd = c.dim();
  const int64_t m = c.sizes()[nd - 2], n = c.sizes()[nd - 1], k = a.sizes()[nd - 1];
  if (m == 0 || n == 0 || batch == 0) return;
  const Types ty = TypesOf(c.dtype(), c.device().index);
  Tensor ka, kb, kc;
  Operand oa = Prepare(a, m, k, &ka), ob = Prepare(b, k, n, &kb);
  // The output must be row-major with unit column stride.
  Tensor out = c;
  const int64_t cs0 = c.strides()[nd - 2], cs1 = c.strides()[nd - 1];
  const bool direct = cs1 == 1 && cs0 >= n && (nd == 2 || c.strides()[0] >= m * cs0 || batch == 1);
  if (!direct) {
    kc = Contiguous(c);
    out = kc;
  }
  const int64_t ldc = std::max<int64_t>(out.strides()[nd - 2], std::max<int64_t>(n, 1));
  const int64_t cstride = nd == 3 ? out.strides()[0] : 0;
  // k == 0: the empty sum is 0 and cuBLAS scales c by beta, as BLAS does.
  const int64_t lda = std::max<int64_t>(oa.ld, 1), ldb = std::max<int64_t>(ob.ld, 1);
  const int dev = c.device().index;
  DeviceGuard g(dev);
  cublasHandle_t h = Handle(dev);
  const cublasOperation_t opb = ob.trans ? CUBLAS_OP_T : CUBLAS_OP_N, opa = oa.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  // alpha / beta in the compute type (complex for complex data: (re, im) pairs, as cuComplex).
  const std::complex<double> ac = alpha.ToComplex(), bc = beta.ToComplex();
  const double ad = ac.real(), bd = bc.real();
  const float af = static_cast<float>(ad), bf = static_cast<float>(bd);
  const std::complex<float> acf(ac), bcf(bc);
  const bool cplx = IsComplex(c.dtype()), dbl = ty.compute == CUBLAS_COMPUTE_64F;
  const void* pa = cplx ? (dbl ? static_cast<const void*>(&ac) : &acf) : dbl ? static_cast<const void*>(&ad) : &af;
  const void* pb = cplx ? (dbl ? static_cast<const void*>(&bc) : &bcf) : dbl ? static_cast<const void*>(&bd) : &bf;
  if (batch == 1) {
    OF_CUBLAS_CHECK(cublasGemmEx(h, opb, opa, n, m, k, pa, ob.data, ty.data, ldb, oa.data, ty.data, lda, pb,
                                 out.raw_ptr(), ty.data, ldc, ty.compute, CUBLAS_GEMM_DEFAULT));
  } else {
    OF_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, opb, opa, n, m, k, pa, ob.data, ty.data, ldb, ob.batch_stride,
                                               oa.data, ty.data, lda, oa.batch_stride, pb, out.raw_ptr(), ty.data,
                                               ldc, cstride, batch, ty.compute, CUBLAS_GEMM_DEFAULT));
  }
  if (!direct) CopyInto(c, out);
}

void Gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta) {
  Run(a, b, c, alpha, beta, 1);
}

void BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& alpha, const Scalar& beta) {
  Run(a, b, out, alpha, beta, out.sizes()[0]);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterBlasKernels() {
  // cuBLAS multiplies floating-point and complex matrices only (TypesOf): integer products run on
  // host copies, decided by the registry (Note [Kernel registry]).
  constexpr kernels::DTypeSet kGemmDTypes = kernels::DTypeSet::All().Without(
      {DType::kBool, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32, DType::kInt64});
  kernels::RegisterKernel<kernels::GemmKernel>(DeviceType::kCUDA, &Gemm, kGemmDTypes);
  kernels::RegisterKernel<kernels::BatchedGemmKernel>(DeviceType::kCUDA, &BatchedGemm, kGemmDTypes);
}

void SetAllowTF32(bool allow) { allow_tf32.store(allow); }
bool AllowTF32() { return allow_tf32.load(); }

}  // namespace oneflow::cuda
