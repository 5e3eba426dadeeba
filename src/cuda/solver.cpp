// cuSOLVER's 64-bit generic API (cusolverDnX*) for cuda/solver.h: one handle per device bound to
// its stream, workspaces from the caching allocator, the matrices of a batch one call each.
#include "cuda/solver.h"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "cuda/runtime.h"
#include "decl/empty.h"
#include "ops/copy.h"

#ifdef ONEFLOW_WITH_CUSOLVER
#include <cuda_runtime.h>
#include <cusolverDn.h>
#endif

namespace oneflow::cuda {

#ifndef ONEFLOW_WITH_CUSOLVER

bool HasSolver() { return false; }

namespace {
// Unreachable: without cuSOLVER RegisterLinalgKernels registers nothing, and only those kernels
// call these functions.
[[noreturn]] void NoSolver(const Tensor& t) {
  OF_ASSERT(false) << "cuSOLVER call on device " << t.device().index << " in a build without cuSOLVER";
  __builtin_unreachable();
}
}  // namespace

std::vector<int> Getrf(const Tensor& buf, const Tensor&) { NoSolver(buf); }
void Getrs(const Tensor& lu, const Tensor&, const Tensor&) { NoSolver(lu); }
std::vector<int> Potrf(const Tensor& buf) { NoSolver(buf); }
std::vector<int> Syevd(const Tensor& buf, const Tensor&, bool, bool) { NoSolver(buf); }
void Geqrf(const Tensor& buf, int64_t, int64_t, const Tensor&) { NoSolver(buf); }
void Orgqr(const Tensor& q, int64_t, int64_t, int64_t, const Tensor&) { NoSolver(q); }
std::vector<int> Gesvd(const Tensor& buf, int64_t, int64_t, const Tensor&, const Tensor&, const Tensor&, bool) {
  NoSolver(buf);
}

#else

bool HasSolver() { return true; }

namespace {

#define OF_CUSOLVER_CHECK(expr)                                                                 \
  do {                                                                                          \
    cusolverStatus_t of_s_ = (expr);                                                            \
    OF_CHECK(of_s_ == CUSOLVER_STATUS_SUCCESS) << "cuSOLVER error " << static_cast<int>(of_s_) \
                                               << " (" #expr ")";                               \
  } while (0)

struct Context {
  cusolverDnHandle_t handle = nullptr;
  cusolverDnParams_t params = nullptr;
};

// One handle per device, bound to the device's stream.
Context& ContextOf(int device) {
  static std::mutex mu;
  static std::vector<Context> contexts;
  std::lock_guard<std::mutex> lock(mu);
  if (contexts.empty()) contexts.resize(DeviceCount());
  Context& c = contexts[device];
  if (!c.handle) {
    DeviceGuard guard(device);
    OF_CUSOLVER_CHECK(cusolverDnCreate(&c.handle));
    OF_CUSOLVER_CHECK(cusolverDnSetStream(c.handle, static_cast<cudaStream_t>(Stream(device))));
    OF_CUSOLVER_CHECK(cusolverDnCreateParams(&c.params));
  }
  return c;
}

cudaDataType TypeOf(const Tensor& t) { return t.dtype() == DType::kFloat64 ? CUDA_R_64F : CUDA_R_32F; }

// A device workspace of `bytes` (none for 0) and a host one.
struct Work {
  Tensor device;
  std::vector<char> host;
  Work(size_t dbytes, size_t hbytes, const Device& dev) : host(hbytes) {
    if (dbytes) device = Empty(DimVector{static_cast<int64_t>(dbytes)}, DType::kUInt8, dev);
  }
  void* d() const { return device.defined() ? device.raw_ptr() : nullptr; }
  void* h() { return host.empty() ? nullptr : host.data(); }
};

std::vector<int> Infos(const Tensor& info) {
  const Tensor h = OnHost(info);  // waits for the factorisations
  const int* p = h.data<int>();
  return std::vector<int>(p, p + h.numel());
}

// What every call sets up: the buffer's device made current, its handle, the element type.
struct Call {
  DeviceGuard guard;
  Context& c;
  cudaDataType t;
  int64_t es;
  explicit Call(const Tensor& buf)
      : guard(buf.device().index), c(ContextOf(buf.device().index)), t(TypeOf(buf)), es(buf.element_size()) {}
  std::tuple<Context, cudaDataType, int64_t> Parts() const { return {c, t, es}; }  // (handles are pointers)
};

int64_t Dim(const Tensor& buf) { return buf.sizes()[buf.dim() - 1]; }
int64_t Batch(const Tensor& buf) { return buf.numel() / (Dim(buf) * Dim(buf)); }

}  // namespace

std::vector<int> Getrf(const Tensor& buf, const Tensor& piv) {
  const Call call(buf);
  const auto [c, t, es] = call.Parts();
  const int64_t n = Dim(buf), batch = Batch(buf);
  size_t dbytes = 0, hbytes = 0;
  OF_CUSOLVER_CHECK(cusolverDnXgetrf_bufferSize(c.handle, c.params, n, n, t, buf.raw_ptr(), n, t, &dbytes, &hbytes));
  Work w(dbytes, hbytes, buf.device());
  Tensor info = Empty(DimVector{batch}, DType::kInt32, buf.device());
  for (int64_t b = 0; b < batch; ++b)
    OF_CUSOLVER_CHECK(cusolverDnXgetrf(c.handle, c.params, n, n, t, buf.raw_ptr() + b * n * n * es, n,
                                       piv.ptr<int64_t>() + b * n, t, w.d(), dbytes, w.h(), hbytes,
                                       info.ptr<int>() + b));
  return Infos(info);
}

void Getrs(const Tensor& lu, const Tensor& piv, const Tensor& x) {
  const Call call(lu);
  const auto [c, t, es] = call.Parts();
  const int64_t n = Dim(lu), batch = Batch(lu), k = x.sizes()[x.dim() - 2];
  Tensor info = Empty(DimVector{batch}, DType::kInt32, lu.device());
  for (int64_t b = 0; b < batch; ++b)
    OF_CUSOLVER_CHECK(cusolverDnXgetrs(c.handle, c.params, CUBLAS_OP_N, n, k, t, lu.raw_ptr() + b * n * n * es, n,
                                       piv.ptr<int64_t>() + b * n, t, x.raw_ptr() + b * n * k * es, n,
                                       info.ptr<int>() + b));
  // getrs reports only argument errors (the factors were checked by Getrf's caller).
}

std::vector<int> Potrf(const Tensor& buf) {
  const Call call(buf);
  const auto [c, t, es] = call.Parts();
  const int64_t n = Dim(buf), batch = Batch(buf);
  size_t dbytes = 0, hbytes = 0;
  OF_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(c.handle, c.params, CUBLAS_FILL_MODE_LOWER, n, t, buf.raw_ptr(), n,
                                                t, &dbytes, &hbytes));
  Work w(dbytes, hbytes, buf.device());
  Tensor info = Empty(DimVector{batch}, DType::kInt32, buf.device());
  for (int64_t b = 0; b < batch; ++b)
    OF_CUSOLVER_CHECK(cusolverDnXpotrf(c.handle, c.params, CUBLAS_FILL_MODE_LOWER, n, t,
                                       buf.raw_ptr() + b * n * n * es, n, t, w.d(), dbytes, w.h(), hbytes,
                                       info.ptr<int>() + b));
  return Infos(info);
}

std::vector<int> Syevd(const Tensor& buf, const Tensor& w, bool vectors, bool lower) {
  const Call call(buf);
  const auto [c, t, es] = call.Parts();
  const int64_t n = Dim(buf), batch = Batch(buf);
  const cusolverEigMode_t job = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t fill = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  size_t dbytes = 0, hbytes = 0;
  OF_CUSOLVER_CHECK(cusolverDnXsyevd_bufferSize(c.handle, c.params, job, fill, n, t, buf.raw_ptr(), n, t, w.raw_ptr(),
                                                t, &dbytes, &hbytes));
  Work work(dbytes, hbytes, buf.device());
  Tensor info = Empty(DimVector{batch}, DType::kInt32, buf.device());
  for (int64_t b = 0; b < batch; ++b)
    OF_CUSOLVER_CHECK(cusolverDnXsyevd(c.handle, c.params, job, fill, n, t, buf.raw_ptr() + b * n * n * es, n, t,
                                       w.raw_ptr() + b * n * es, t, work.d(), dbytes, work.h(), hbytes,
                                       info.ptr<int>() + b));
  return Infos(info);
}

void Geqrf(const Tensor& buf, int64_t m, int64_t n, const Tensor& tau) {
  const Call call(buf);
  const auto [c, t, es] = call.Parts();
  const int64_t k = std::min(m, n), batch = buf.numel() / (m * n);
  size_t dbytes = 0, hbytes = 0;
  OF_CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(c.handle, c.params, m, n, t, buf.raw_ptr(), m, t, tau.raw_ptr(), t,
                                                &dbytes, &hbytes));
  Work work(dbytes, hbytes, buf.device());
  Tensor info = Empty(DimVector{batch}, DType::kInt32, buf.device());
  for (int64_t b = 0; b < batch; ++b)
    OF_CUSOLVER_CHECK(cusolverDnXgeqrf(c.handle, c.params, m, n, t, buf.raw_ptr() + b * m * n * es, m, t,
                                       tau.raw_ptr() + b * k * es, t, work.d(), dbytes, work.h(), hbytes,
                                       info.ptr<int>() + b));
}

namespace {
// The legacy (32-bit) orgqr: the generic API has none.
template <typename T>
void OrgqrAll(Context& c, const Tensor& q, int64_t m, int64_t cols, int64_t k, const Tensor& tau) {
  OF_CHECK(m < (int64_t(1) << 31) && cols < (int64_t(1) << 31)) << "qr: matrix too large for cuSOLVER's orgqr";
  constexpr bool dbl = std::is_same_v<T, double>;
  int lwork = 0;
  if constexpr (dbl) OF_CUSOLVER_CHECK(cusolverDnDorgqr_bufferSize(c.handle, m, cols, k, q.ptr<T>(), m, tau.ptr<T>(), &lwork));
  else OF_CUSOLVER_CHECK(cusolverDnSorgqr_bufferSize(c.handle, m, cols, k, q.ptr<T>(), m, tau.ptr<T>(), &lwork));
  const Tensor work = Empty(DimVector{std::max(lwork, 1)}, q.dtype(), q.device());
  const Tensor info = Empty(DimVector{1}, DType::kInt32, q.device());
  // q's matrices are its last two dims (it may hold more columns than `cols`: A's own buffer).
  const int64_t per = q.sizes()[q.dim() - 1] * q.sizes()[q.dim() - 2], batch = q.numel() / per;
  for (int64_t b = 0; b < batch; ++b) {
    T* a = q.ptr<T>() + b * per;
    const T* tb = tau.ptr<T>() + b * k;  // tau is [batch, k]
    if constexpr (dbl) OF_CUSOLVER_CHECK(cusolverDnDorgqr(c.handle, m, cols, k, a, m, tb, work.ptr<T>(), lwork, info.ptr<int>()));
    else OF_CUSOLVER_CHECK(cusolverDnSorgqr(c.handle, m, cols, k, a, m, tb, work.ptr<T>(), lwork, info.ptr<int>()));
  }
}
}  // namespace

std::vector<int> Gesvd(const Tensor& buf, int64_t m, int64_t n, const Tensor& s, const Tensor& u, const Tensor& vt,
                       bool full) {
  const Call call(buf);
  const auto [c, t, es] = call.Parts();
  const bool vectors = u.defined();
  const signed char jobu = vectors ? (full ? 'A' : 'S') : 'N', jobvt = vectors ? 'A' : 'N';
  const int64_t ucols = full ? m : n, batch = buf.numel() / (m * n);
  auto ptr = [&](const Tensor& x, int64_t off) { return x.defined() ? static_cast<void*>(x.raw_ptr() + off * es) : nullptr; };
  size_t dbytes = 0, hbytes = 0;
  OF_CUSOLVER_CHECK(cusolverDnXgesvd_bufferSize(c.handle, c.params, jobu, jobvt, m, n, t, buf.raw_ptr(), m, t,
                                                s.raw_ptr(), t, ptr(u, 0), m, t, ptr(vt, 0), n, t, &dbytes, &hbytes));
  Work work(dbytes, hbytes, buf.device());
  Tensor info = Empty(DimVector{batch}, DType::kInt32, buf.device());
  for (int64_t b = 0; b < batch; ++b)
    OF_CUSOLVER_CHECK(cusolverDnXgesvd(c.handle, c.params, jobu, jobvt, m, n, t, buf.raw_ptr() + b * m * n * es, m,
                                       t, s.raw_ptr() + b * n * es, t, ptr(u, b * m * ucols), m, t,
                                       ptr(vt, b * n * n), n, t, work.d(), dbytes, work.h(), hbytes,
                                       info.ptr<int>() + b));
  return Infos(info);
}

void Orgqr(const Tensor& q, int64_t m, int64_t cols, int64_t k, const Tensor& tau) {
  Call call(q);
  if (q.dtype() == DType::kFloat64) OrgqrAll<double>(call.c, q, m, cols, k, tau);
  else OrgqrAll<float>(call.c, q, m, cols, k, tau);
}

#endif  // ONEFLOW_WITH_CUSOLVER

}  // namespace oneflow::cuda
