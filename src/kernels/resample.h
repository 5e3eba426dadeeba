// interpolate's separable resampling (ops/resample_ops.cpp checks the arguments and makes the
// setup): output position o along a spatial dim reads a few input positions with weights
// (nearest: 1, linear: 2, cubic: 4, area: its window), so the N-d resample is one pass per
// spatial dim, last dim first; the backward runs the transposed passes in the reverse order. The
// taps are made on the host (MakeTaps, PyTorch's UpSample.h formulas and float arithmetic) by
// every device's kernel: CPU in kernels/resample.cpp, CUDA in cuda/resample_passes.cpp (Note
// [Kernel registry]).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

enum class ResampleMode { kNearest, kNearestExact, kLinear, kCubic, kArea };

struct ResampleSetup {
  ResampleMode mode;
  bool align_corners = false;
  DimVector in, out;                      // full shapes
  std::vector<std::optional<double>> scales;  // per spatial dim, the user's scale (if used)
  int spatial() const { return in.size() - 2; }
};

// Output position o reads src[start[o] .. start[o + 1]) with weights w (CSR layout).
template <typename M>
struct Taps {
  std::vector<int64_t> start, src;
  std::vector<M> w;
  void Add(int64_t i, M wt) {
    src.push_back(i);
    w.push_back(wt);
  }
};

template <typename M>
M AreaScale(int64_t in, int64_t out, bool align_corners, const std::optional<double>& scale) {
  if (align_corners) return out > 1 ? static_cast<M>(in - 1) / static_cast<M>(out - 1) : M(0);
  return scale && *scale > 0 ? static_cast<M>(1.0 / *scale) : static_cast<M>(in) / static_cast<M>(out);
}

template <typename M>
M CubicConv1(M x, M a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
template <typename M>
M CubicConv2(M x, M a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

template <typename M>
Taps<M> MakeTaps(const ResampleSetup& s, int d) {
  const int64_t in = s.in[d + 2], out = s.out[d + 2];
  const std::optional<double>& scale = s.scales[d];
  Taps<M> t;
  t.start.reserve(out + 1);
  for (int64_t o = 0; o < out; ++o) {
    t.start.push_back(t.src.size());
    switch (s.mode) {
      case ResampleMode::kNearest:
      case ResampleMode::kNearestExact: {
        const float sc = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                             : static_cast<float>(in) / static_cast<float>(out);
        const float pos = s.mode == ResampleMode::kNearest ? static_cast<float>(o) * sc : (static_cast<float>(o) + 0.5f) * sc;
        int64_t i = static_cast<int64_t>(std::floor(pos));
        if (s.mode == ResampleMode::kNearest && out == in) i = o;
        if (s.mode == ResampleMode::kNearest && out == 2 * in) i = o >> 1;
        t.Add(std::min(i, in - 1), M(1));
        break;
      }
      case ResampleMode::kLinear: {
        const M sc = AreaScale<M>(in, out, s.align_corners, scale);
        M real = s.align_corners ? sc * static_cast<M>(o) : sc * (static_cast<M>(o) + M(0.5)) - M(0.5);
        if (real < 0) real = 0;
        const int64_t i0 = static_cast<int64_t>(real);
        const int64_t off = i0 < in - 1 ? 1 : 0;
        M l1 = real - static_cast<M>(i0);
        l1 = l1 < 0 ? M(0) : (l1 > 1 ? M(1) : l1);
        t.Add(i0, M(1) - l1);
        t.Add(i0 + off, l1);
        break;
      }
      case ResampleMode::kCubic: {
        const M sc = AreaScale<M>(in, out, s.align_corners, scale);
        const M real = s.align_corners ? sc * static_cast<M>(o) : sc * (static_cast<M>(o) + M(0.5)) - M(0.5);
        const int64_t i = static_cast<int64_t>(std::floor(real));
        const M x = real - static_cast<M>(i), a = M(-0.75);
        const M c[4] = {CubicConv2<M>(x + 1, a), CubicConv1<M>(x, a), CubicConv1<M>(1 - x, a),
                        CubicConv2<M>(2 - x, a)};
        for (int j = 0; j < 4; ++j) t.Add(std::min(std::max<int64_t>(i - 1 + j, 0), in - 1), c[j]);
        break;
      }
      case ResampleMode::kArea: {
        const int64_t lo = (o * in) / out, hi = ((o + 1) * in + out - 1) / out;
        for (int64_t i = lo; i < hi; ++i) t.Add(i, M(1) / static_cast<M>(hi - lo));
        break;
      }
    }
  }
  t.start.push_back(t.src.size());
  return t;
}

// Geometry of the pass along spatial dim d of a tensor whose dims after 1 have sizes `cur`.
inline void PassGeom(const DimVector& cur, int d, int64_t* outer, int64_t* inner) {
  *outer = cur[0] * cur[1];
  *inner = 1;
  for (int j = 2; j < d + 2; ++j) *outer *= cur[j];
  for (int j = d + 3; j < cur.size(); ++j) *inner *= cur[j];
}

// y = the resample of x (forward) or the gradient gx = y of gy = x (backward); x and y
// contiguous floating tensors of one dtype, the shapes s.in and s.out (backward: the reverse).
void ResampleInto(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward);

namespace kernels {
struct ResampleKernel {
  static constexpr const char* kName = "interpolate";
  using Fn = void (*)(const ResampleSetup& s, const Tensor& x, const Tensor& y, bool backward);
  using Writes = KernelWrites<2>;
};
}  // namespace kernels

}  // namespace oneflow
