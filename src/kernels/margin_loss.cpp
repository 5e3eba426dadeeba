// CPU kernels of the margin losses (kernels/margin_loss.h): one row after another, in float64.
#include "kernels/margin_loss.h"

#include <algorithm>

namespace oneflow {

namespace {

void MultiMarginRowsCpu(const Tensor& x, const Tensor& t, const Tensor& w, int64_t p, double margin,
                        const Tensor& loss) {
  const int64_t rows = loss.numel(), classes = rows == 0 ? 0 : x.numel() / rows;
  const double* xs = x.data<double>();
  const int64_t* ts = t.data<int64_t>();
  const double* ws = w.defined() ? w.data<double>() : nullptr;
  double* out = loss.data<double>();
  for (int64_t i = 0; i < rows; ++i) {
    const double* xr = xs + i * classes;
    const int64_t y = ts[i];
    const double wy = ws ? ws[y] : 1.0;
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) {
      if (c == y) continue;
      const double z = margin - xr[y] + xr[c];
      if (z > 0) sum += (p == 1 ? z : z * z) * wy;
    }
    out[i] = sum / static_cast<double>(classes);
  }
}

void MultiMarginGradCpu(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& s, int64_t p,
                        double margin, const Tensor& gx) {
  const int64_t rows = s.numel(), classes = rows == 0 ? 0 : x.numel() / rows;
  const double* xs = x.data<double>();
  const int64_t* ts = t.data<int64_t>();
  const double* ws = w.defined() ? w.data<double>() : nullptr;
  const double* ss = s.data<double>();
  double* gs = gx.data<double>();
  std::fill(gs, gs + rows * classes, 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    const double* xr = xs + i * classes;
    double* g = gs + i * classes;
    const int64_t y = ts[i];
    const double wy = ws ? ws[y] : 1.0;
    for (int64_t c = 0; c < classes; ++c) {
      if (c == y) continue;
      const double z = margin - xr[y] + xr[c];
      if (z <= 0) continue;
      const double d = (p == 1 ? 1.0 : 2 * z) * wy * ss[i] / static_cast<double>(classes);
      g[c] += d;
      g[y] -= d;
    }
  }
}

// Calls f(j, i, z) for every (target j, non-target i) pair of row `row` with z = 1 - x_j + x_i;
// `is_target` is the row's scratch.
template <typename F>
void ForEachPair(const double* x, const int64_t* t, uint8_t* is_target, int64_t classes, const F& f) {
  std::fill(is_target, is_target + classes, uint8_t{0});
  int64_t n = 0;
  while (n < classes && t[n] >= 0) is_target[t[n++]] = 1;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < classes; ++i)
      if (!is_target[i]) f(t[k], i, 1.0 - x[t[k]] + x[i]);
}

void MultilabelMarginRowsCpu(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& loss) {
  const int64_t rows = loss.numel(), classes = rows == 0 ? 0 : x.numel() / rows;
  const double* xs = x.data<double>();
  const int64_t* ts = t.data<int64_t>();
  uint8_t* ms = mark.data<uint8_t>();
  double* out = loss.data<double>();
  for (int64_t row = 0; row < rows; ++row) {
    double sum = 0;
    ForEachPair(xs + row * classes, ts + row * classes, ms + row * classes, classes,
                [&](int64_t, int64_t, double z) { sum += z > 0 ? z : 0.0; });
    out[row] = sum / static_cast<double>(classes);
  }
}

void MultilabelMarginGradCpu(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& s,
                             const Tensor& gx) {
  const int64_t rows = s.numel(), classes = rows == 0 ? 0 : x.numel() / rows;
  const double* xs = x.data<double>();
  const int64_t* ts = t.data<int64_t>();
  uint8_t* ms = mark.data<uint8_t>();
  const double* ss = s.data<double>();
  double* gs = gx.data<double>();
  std::fill(gs, gs + rows * classes, 0.0);
  for (int64_t row = 0; row < rows; ++row) {
    double* g = gs + row * classes;
    const double d = ss[row] / static_cast<double>(classes);
    ForEachPair(xs + row * classes, ts + row * classes, ms + row * classes, classes,
                [&](int64_t j, int64_t i, double z) {
                  if (z > 0) {
                    g[i] += d;
                    g[j] -= d;
                  }
                });
  }
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::MultiMarginRowsKernel>(DeviceType::kCPU, &MultiMarginRowsCpu);
  kernels::RegisterKernel<kernels::MultiMarginGradKernel>(DeviceType::kCPU, &MultiMarginGradCpu);
  kernels::RegisterKernel<kernels::MultilabelMarginRowsKernel>(DeviceType::kCPU, &MultilabelMarginRowsCpu);
  kernels::RegisterKernel<kernels::MultilabelMarginGradKernel>(DeviceType::kCPU, &MultilabelMarginGradCpu);
  return true;
}();

}  // namespace

void MultiMarginRows(const Tensor& x, const Tensor& t, const Tensor& w, int64_t p, double margin, const Tensor& loss) {
  kernels::CallKernel<kernels::MultiMarginRowsKernel>(loss.device(), x, t, w, p, margin, loss);
}
void MultiMarginGrad(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& s, int64_t p, double margin,
                     const Tensor& gx) {
  kernels::CallKernel<kernels::MultiMarginGradKernel>(gx.device(), x, t, w, s, p, margin, gx);
}
void MultilabelMarginRows(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& loss) {
  kernels::CallKernel<kernels::MultilabelMarginRowsKernel>(loss.device(), x, t, mark, loss);
}
void MultilabelMarginGrad(const Tensor& x, const Tensor& t, const Tensor& mark, const Tensor& s, const Tensor& gx) {
  kernels::CallKernel<kernels::MultilabelMarginGradKernel>(gx.device(), x, t, mark, s, gx);
}

}  // namespace oneflow
