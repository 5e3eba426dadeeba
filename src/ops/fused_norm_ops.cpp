// rms_norm and skip_rms_norm (src/ops/table/fused.yaml): each row of the normalized dims is
// read once into L1 (skip_rms_norm forms x + bias + alpha * skip there), its mean square taken
// with the lane reduction of kernels/row_math.h and the scaled row written; threads split rows.
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/row_math.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/rms_norm.h"
#include "decl/skip_rms_norm.h"

namespace oneflow {

namespace {

void CheckCpuFloat(const Tensor& x) {
  OF_CHECK(x.device().type == DeviceType::kCPU || x.device().type == DeviceType::kMeta)
      << "is implemented for CPU tensors only, got a tensor on " << x.device().str();
  OF_CHECK(IsFloating(x.dtype())) << "expected a floating point input, got " << DTypeName(x.dtype());
}

// Optional operand t of shape `sizes` (checked, cast to dtype, contiguous), or undefined.
Tensor Operand(const Tensor& t, const DimVector& sizes, const Tensor& x, const char* what) {
  if (!t.defined()) return t;
  OF_CHECK(t.sizes() == sizes) << "expected " << what << " of shape " << ShapeStr(sizes) << ", got "
                               << ShapeStr(t.sizes());
  CheckSameDevice(x, t);
  return Contiguous(CastTo(t, x.dtype()));
}

// y[r] = h[r] / sqrt(mean(h[r]^2) + eps) * w with h[r] = x[r] + bias + alpha * skip[r] (absent
// terms left out), for rows of n elements.
template <typename T>
void RmsRows(const T* x, const T* w, const T* bias, const T* skip, double alpha, double eps, T* y, int64_t rows,
             int64_t n) {
  using M = OpMath<T>;
  const M al = static_cast<M>(alpha), ep = static_cast<M>(eps), inv_n = M(1) / static_cast<M>(n);
  ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)), [&](int64_t b, int64_t e) {
    std::vector<M> buf(n);
    M* __restrict h = buf.data();
    for (int64_t r = b; r < e; ++r) {
      const T* __restrict xr = x + r * n;
      for (int64_t j = 0; j < n; ++j) h[j] = static_cast<M>(xr[j]);
      if (bias) {
        for (int64_t j = 0; j < n; ++j) h[j] += static_cast<M>(bias[j]);
      }
      if (skip) {
        const T* __restrict sr = skip + r * n;
        for (int64_t j = 0; j < n; ++j) h[j] += al * static_cast<M>(sr[j]);
      }
      const M inv = M(1) / std::sqrt(RowDot(h, h, n) * inv_n + ep);
      T* __restrict yr = y + r * n;
      if (w) {
        for (int64_t j = 0; j < n; ++j) yr[j] = static_cast<T>(h[j] * inv * static_cast<M>(w[j]));
      } else {
        for (int64_t j = 0; j < n; ++j) yr[j] = static_cast<T>(h[j] * inv);
      }
    }
  });
}

Tensor RunRms(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& skip, double alpha, double eps,
              int64_t n) {
  Tensor y = Empty(x.sizes(), x.dtype(), x.device());
  if (x.device().type == DeviceType::kMeta || x.numel() == 0) return y;
  const Tensor xc = Contiguous(x);
  DispatchFloat(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    auto p = [](const Tensor& t) { return t.defined() ? t.data<T>() : nullptr; };
    RmsRows<T>(xc.data<T>(), p(w), p(bias), p(skip), alpha, eps, y.data<T>(), x.numel() / n, n);
  });
  return y;
}

}  // namespace

Tensor RmsNorm(const Tensor& x, const Tensor& weight, const DimVector& normalized_shape, double epsilon) {
  OpScope scope("rms_norm");
  CheckCpuFloat(x);
  const int nd = normalized_shape.size();
  bool ok = nd >= 1 && nd <= x.dim();
  for (int i = 0; ok && i < nd; ++i) ok = x.sizes()[x.dim() - nd + i] == normalized_shape[i];
  OF_CHECK(ok) << "Given normalized_shape=" << ShapeStr(normalized_shape) << ", expected input with shape (*, "
               << ShapeStr(normalized_shape) << "), but got input of size " << ShapeStr(x.sizes());
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= normalized_shape[i];
  const Tensor w = Operand(weight, normalized_shape, x, "weight");
  return RunRms(x, w, Tensor(), Tensor(), 0.0, epsilon, n);
}

Tensor SkipRmsNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& skip, double epsilon,
                   double alpha) {
  OpScope scope("skip_rms_norm");
  CheckCpuFloat(x);
  OF_CHECK(x.dim() >= 2) << "expected an input with at least 2 dimensions, got shape " << ShapeStr(x.sizes());
  const int64_t n = x.sizes()[x.dim() - 1];
  const Tensor w = Operand(weight, DimVector{n}, x, "weight");
  const Tensor b = Operand(bias, DimVector{n}, x, "bias");
  const Tensor s = Operand(skip, x.sizes(), x, "skip");
  return RunRms(x, w, b, s, alpha, epsilon, n);
}

}  // namespace oneflow
