// Detection ops (src/ops/table/vision.yaml) with torchvision's semantics, which OneFlow's kernels
// and flowvision's detection code follow: greedy non-maximum suppression, and RoIAlign (Mask R-CNN)
// with its adjoint. CPU kernels; CUDA tensors run them through the host fallback.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/nms.h"
#include "decl/nms_mask.h"
#include "decl/roi_align.h"
#include "decl/roi_align_grad.h"

namespace oneflow {

namespace {

// Boxes are computed in their own dtype (float32 or float64) so that borderline IoUs decide as
// torchvision's kernel does; half precision is not a dtype these kernels (or torchvision's CPU
// ones) take.
template <typename F>
void DispatchBoxDType(DType t, const char* what, F&& f) {
  if (t == DType::kFloat32) return f(float{});
  if (t == DType::kFloat64) return f(double{});
  OF_CHECK(false) << "expected " << what << " of dtype float32 or float64, got " << DTypeName(t);
}

void CheckBoxes(const Tensor& boxes, const char* what) {
  OF_CHECK(boxes.dim() == 2 && boxes.sizes()[1] == 4)
      << "expected " << what << " of shape (N, 4) [x1, y1, x2, y2], got " << ShapeStr(boxes.sizes());
}

// Intersection over union of [x1, y1, x2, y2] boxes a and b, as torchvision computes it (a
// degenerate pair gives 0/0 = NaN, which suppresses nothing).
template <typename T>
T IoU(const T* a, const T* b) {
  const T w = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), T(0));
  const T h = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), T(0));
  const T inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

// Greedy suppression over boxes visited in `order`: keep[i] (of the position in order) is 1 when
// no kept earlier box overlaps box order[i] by more than iou_threshold. At most keep_n kept when
// keep_n > 0.
template <typename T>
std::vector<int8_t> GreedyKeep(const T* boxes, const std::vector<int64_t>& order, double iou_threshold,
                               int64_t keep_n) {
  const int64_t n = static_cast<int64_t>(order.size());
  std::vector<int8_t> keep(n, 1);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    if (keep_n > 0 && kept == keep_n) {
      std::fill(keep.begin() + i, keep.end(), int8_t(0));
      break;
    }
    ++kept;
    const T* a = boxes + order[i] * 4;
    for (int64_t j = i + 1; j < n; ++j)
      if (keep[j] && IoU(a, boxes + order[j] * 4) > static_cast<T>(iou_threshold)) keep[j] = 0;
  }
  return keep;
}

}  // namespace

Tensor Nms(const Tensor& boxes, const Tensor& scores, double iou_threshold) {
  OpScope scope("nms");
  CheckBoxes(boxes, "boxes");
  OF_CHECK(scores.dim() == 1 && scores.sizes()[0] == boxes.sizes()[0])
      << "expected scores of shape (" << boxes.sizes()[0] << ",) matching boxes, got " << ShapeStr(scores.sizes());
  OF_CHECK(boxes.dtype() == scores.dtype())
      << "expected boxes and scores of one dtype, got " << DTypeName(boxes.dtype()) << " and "
      << DTypeName(scores.dtype());
  CheckSameDevice(boxes, scores);
  const int64_t n = boxes.sizes()[0];
  std::vector<int64_t> kept;
  DispatchBoxDType(boxes.dtype(), "boxes", [&](auto tag) {
    using T = decltype(tag);
    const Tensor b = Contiguous(boxes), s = Contiguous(scores);
    const T* bp = b.data<T>();
    const T* sp = s.data<T>();
    // Decreasing score; a stable sort keeps equal scores in index order (deterministic).
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), int64_t(0));
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sp[i] > sp[j]; });
    const std::vector<int8_t> keep = GreedyKeep(bp, order, iou_threshold, 0);
    for (int64_t i = 0; i < n; ++i)
      if (keep[i]) kept.push_back(order[i]);
  });
  Tensor out = Empty(DimVector{static_cast<int64_t>(kept.size())}, DType::kInt64, Device{});
  std::copy(kept.begin(), kept.end(), out.data<int64_t>());
  return MovedTo(out, boxes.device());
}

Tensor NmsMask(const Tensor& x, double iou_threshold, int64_t keep_n) {
  OpScope scope("nms");
  CheckBoxes(x, "boxes");
  const int64_t n = x.sizes()[0];
  Tensor out = Empty(DimVector{n}, DType::kInt8, Device{});
  DispatchBoxDType(x.dtype(), "boxes", [&](auto tag) {
    using T = decltype(tag);
    const Tensor b = Contiguous(x);
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), int64_t(0));  // already sorted by the caller
    const std::vector<int8_t> keep = GreedyKeep(b.data<T>(), order, iou_threshold, keep_n);
    std::copy(keep.begin(), keep.end(), out.data<int8_t>());
  });
  return MovedTo(out, x.device());
}

namespace {

// One RoI's sampling geometry, torchvision's RoIAlign: the box scaled to the feature map (shifted
// by half a pixel when aligned), split into pooled_h x pooled_w bins, each sampled on a grid_h x
// grid_w grid of bilinear points whose mean is the bin's value.
template <typename T>
struct RoiGeometry {
  int64_t batch;
  T start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
  T count;
};

template <typename T>
RoiGeometry<T> MakeRoiGeometry(const T* roi, int64_t N, double spatial_scale, int64_t pooled_h,
                               int64_t pooled_w, int64_t sampling_ratio, bool aligned) {
  for (int i = 0; i < 5; ++i)
    OF_CHECK(std::isfinite(static_cast<double>(roi[i]))) << "expected finite rois, got " << roi[i];
  RoiGeometry<T> g;
  OF_CHECK(roi[0] >= 0 && roi[0] < N && roi[0] == std::floor(roi[0]))
      << "rois[:, 0] must be a batch index in [0, " << N << "), got " << roi[0];
  g.batch = static_cast<int64_t>(roi[0]);
  const T scale = static_cast<T>(spatial_scale), offset = aligned ? T(0.5) : T(0);
  g.start_w = roi[1] * scale - offset;
  g.start_h = roi[2] * scale - offset;
  T roi_w = roi[3] * scale - offset - g.start_w;
  T roi_h = roi[4] * scale - offset - g.start_h;
  if (!aligned) {  // the legacy form forces malformed RoIs to 1x1
    roi_w = std::max(roi_w, T(1));
    roi_h = std::max(roi_h, T(1));
  }
  g.bin_h = roi_h / static_cast<T>(pooled_h);
  g.bin_w = roi_w / static_cast<T>(pooled_w);
  // Adaptive sampling: ceil(roi size / pooled size) points (0 for an empty aligned RoI).
  // (An inverted aligned RoI gives a negative count: no points, as torchvision's empty loops.)
  const double gh = std::max(0.0, sampling_ratio > 0 ? double(sampling_ratio) : std::ceil(double(roi_h / T(pooled_h))));
  const double gw = std::max(0.0, sampling_ratio > 0 ? double(sampling_ratio) : std::ceil(double(roi_w / T(pooled_w))));
  // A bound on the work per bin (a hostile sampling_ratio or RoI would otherwise spin for hours):
  // 4M points is a 2048 x 2048 grid, far above any real use (a 28 x 28 mask head over a 1000-pixel
  // mask samples 36 x 36).
  OF_CHECK(gh * gw <= double(int64_t(1) << 22))
      << "a RoI of " << roi_h << " x " << roi_w << " feature-map pixels with sampling_ratio " << sampling_ratio
      << " needs " << gh << " x " << gw << " sampling points per bin, more than 4194304";
  g.grid_h = static_cast<int64_t>(gh);
  g.grid_w = static_cast<int64_t>(gw);
  g.count = static_cast<T>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
  return g;
}

// The four taps and weights of bilinear sampling at (y, x) on an H x W plane; false when the point
// lies more than a pixel outside (it then contributes zero), as torchvision's bilinear_interpolate.
template <typename T>
bool BilinearTaps(T y, T x, int64_t H, int64_t W, int64_t idx[4], T w[4]) {
  if (y < T(-1) || y > T(H) || x < T(-1) || x > T(W)) return false;
  y = std::max(y, T(0));
  x = std::max(x, T(0));
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= H - 1) {
    y_high = y_low = H - 1;
    y = T(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= W - 1) {
    x_high = x_low = W - 1;
    x = T(x_low);
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - T(y_low), lx = x - T(x_low), hy = T(1) - ly, hx = T(1) - lx;
  idx[0] = y_low * W + x_low;
  idx[1] = y_low * W + x_high;
  idx[2] = y_high * W + x_low;
  idx[3] = y_high * W + x_high;
  w[0] = hy * hx;
  w[1] = hy * lx;
  w[2] = ly * hx;
  w[3] = ly * lx;
  return true;
}

// Calls f(bin index ph * pooled_w + pw, tap indices, tap weights) for every sampling point of one
// RoI that lies on the plane (the bin's value is the sum over its points / count).
template <typename T, typename F>
void ForEachSample(const RoiGeometry<T>& g, int64_t pooled_h, int64_t pooled_w, int64_t H, int64_t W, const F& f) {
  int64_t idx[4];
  T w[4];
  for (int64_t ph = 0; ph < pooled_h; ++ph)
    for (int64_t pw = 0; pw < pooled_w; ++pw)
      for (int64_t iy = 0; iy < g.grid_h; ++iy) {
        const T y = g.start_h + T(ph) * g.bin_h + (T(iy) + T(0.5)) * g.bin_h / T(g.grid_h);
        for (int64_t ix = 0; ix < g.grid_w; ++ix) {
          const T x = g.start_w + T(pw) * g.bin_w + (T(ix) + T(0.5)) * g.bin_w / T(g.grid_w);
          if (!BilinearTaps(y, x, H, W, idx, w)) continue;
          f(ph * pooled_w + pw, idx, w);
        }
      }
}

// One sampling point's bin, taps and weights: computed once per RoI and reused for every channel
// (the geometry does not depend on the channel).
template <typename T>
struct RoiSample {
  int64_t bin;
  int64_t idx[4];
  T w[4];
};

template <typename T>
void CollectSamples(const RoiGeometry<T>& g, int64_t pooled_h, int64_t pooled_w, int64_t H, int64_t W,
                    std::vector<RoiSample<T>>& out) {
  out.clear();
  ForEachSample(g, pooled_h, pooled_w, H, W, [&](int64_t bin, const int64_t* idx, const T* w) {
    RoiSample<T> s;
    s.bin = bin;
    for (int t = 0; t < 4; ++t) {
      s.idx[t] = idx[t];
      s.w[t] = w[t];
    }
    out.push_back(s);
  });
}

struct RoiAlignArgs {
  int64_t N, C, H, W, K;
};

RoiAlignArgs CheckRoiAlign(const DimVector& x_sizes, const Tensor& rois, DType x_dtype, int64_t pooled_h,
                           int64_t pooled_w) {
  // Upstream OneFlow's checks and words (torchvision's op; PyTorch has none to follow).
  OF_CHECK(x_sizes.size() == 4) << "The dimension of x tensor must be equal to 4, but got " << x_sizes.size()
                                << " (the input is (N, C, H, W), got " << ShapeStr(x_sizes) << ")";
  OF_CHECK(rois.dim() == 2) << "The dimension of rois tensor must be equal to 2, but got " << rois.dim()
                            << " (rois are (K, 5) [batch_index, x1, y1, x2, y2], got " << ShapeStr(rois.sizes()) << ")";
  OF_CHECK(rois.sizes()[1] == 5) << "The size of rois tensor must be equal to 5 at dimension 1, but got "
                                 << rois.sizes()[1] << " (rois are (K, 5) [batch_index, x1, y1, x2, y2])";
  OF_CHECK(rois.dtype() == x_dtype) << "expected rois of the input's dtype " << DTypeName(x_dtype) << ", got "
                                    << DTypeName(rois.dtype());
  OF_CHECK(pooled_h > 0 && pooled_w > 0)
      << "pooled_h and pooled_w must be positive, got " << pooled_h << " and " << pooled_w;
  return {x_sizes[0], x_sizes[1], x_sizes[2], x_sizes[3], rois.sizes()[0]};
}

}  // namespace

Tensor RoiAlign(const Tensor& x, const Tensor& rois, double spatial_scale, int64_t pooled_h, int64_t pooled_w,
                int64_t sampling_ratio, bool aligned) {
  OpScope scope("roi_align");
  const RoiAlignArgs a = CheckRoiAlign(x.sizes(), rois, x.dtype(), pooled_h, pooled_w);
  CheckSameDevice(x, rois);
  Tensor out = Empty(DimVector{a.K, a.C, pooled_h, pooled_w}, x.dtype(), x.device());
  DispatchBoxDType(x.dtype(), "input", [&](auto tag) {
    using T = decltype(tag);
    const Tensor xc = Contiguous(x), rc = Contiguous(rois);
    const T* xp = xc.data<T>();
    const T* rp = rc.data<T>();
    T* op = out.data<T>();
    std::fill(op, op + out.numel(), T(0));
    if (a.K == 0 || a.C == 0) return;
    std::vector<RoiGeometry<T>> geo;
    geo.reserve(a.K);
    for (int64_t k = 0; k < a.K; ++k)
      geo.push_back(MakeRoiGeometry(rp + k * 5, a.N, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned));
    OF_CHECK(a.H > 0 && a.W > 0) << "expected a non-empty input plane, got " << ShapeStr(x.sizes());
    const int64_t plane = a.H * a.W, bins = pooled_h * pooled_w;
    // One task per RoI: its samples once, then every channel's bins (its own output rows).
    ParallelFor(0, a.K, 1, [&](int64_t b, int64_t e) {
      std::vector<RoiSample<T>> samples;
      for (int64_t k = b; k < e; ++k) {
        const RoiGeometry<T>& g = geo[k];
        CollectSamples(g, pooled_h, pooled_w, a.H, a.W, samples);
        for (int64_t c = 0; c < a.C; ++c) {
          const T* src = xp + (g.batch * a.C + c) * plane;
          T* dst = op + (k * a.C + c) * bins;
          for (const RoiSample<T>& sm : samples)
            dst[sm.bin] += sm.w[0] * src[sm.idx[0]] + sm.w[1] * src[sm.idx[1]] + sm.w[2] * src[sm.idx[2]] +
                           sm.w[3] * src[sm.idx[3]];
          for (int64_t i = 0; i < bins; ++i) dst[i] /= g.count;
        }
      }
    });
  });
  return out;
}

Tensor RoiAlignGrad(const Tensor& dy, const Tensor& rois, const DimVector& input_sizes, double spatial_scale,
                    int64_t pooled_h, int64_t pooled_w, int64_t sampling_ratio, bool aligned) {
  OpScope scope("roi_align_grad");
  const RoiAlignArgs a = CheckRoiAlign(input_sizes, rois, dy.dtype(), pooled_h, pooled_w);
  OF_CHECK(dy.sizes() == DimVector({a.K, a.C, pooled_h, pooled_w}))
      << "expected dy of shape " << ShapeStr(DimVector({a.K, a.C, pooled_h, pooled_w})) << ", got "
      << ShapeStr(dy.sizes());
  CheckSameDevice(dy, rois);
  Tensor out = Empty(input_sizes, dy.dtype(), dy.device());
  DispatchBoxDType(dy.dtype(), "dy", [&](auto tag) {
    using T = decltype(tag);
    const Tensor gc = Contiguous(dy), rc = Contiguous(rois);
    const T* gp = gc.data<T>();
    const T* rp = rc.data<T>();
    T* op = out.data<T>();
    std::fill(op, op + out.numel(), T(0));
    if (a.K == 0 || a.C == 0) return;
    std::vector<RoiGeometry<T>> geo;
    geo.reserve(a.K);
    for (int64_t k = 0; k < a.K; ++k)
      geo.push_back(MakeRoiGeometry(rp + k * 5, a.N, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned));
    OF_CHECK(a.H > 0 && a.W > 0) << "expected a non-empty input plane, got " << ShapeStr(input_sizes);
    const int64_t plane = a.H * a.W, bins = pooled_h * pooled_w;
    // RoIs in order (deterministic sums), each one's samples computed once; its channels in
    // parallel: RoIs of one image overlap, but one channel's plane is written by one thread only.
    std::vector<RoiSample<T>> samples;
    for (int64_t k = 0; k < a.K; ++k) {
      const RoiGeometry<T>& g = geo[k];
      CollectSamples(g, pooled_h, pooled_w, a.H, a.W, samples);
      if (samples.empty()) continue;
      const int64_t grain = std::max<int64_t>(1, kGrainSize / static_cast<int64_t>(4 * samples.size()));
      ParallelFor(0, a.C, grain, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          T* dst = op + (g.batch * a.C + c) * plane;
          const T* src = gp + (k * a.C + c) * bins;
          for (const RoiSample<T>& sm : samples) {
            const T gv = src[sm.bin];
            for (int t = 0; t < 4; ++t) dst[sm.idx[t]] += gv * sm.w[t] / g.count;
          }
        }
      });
    }
  });
  return out;
}

}  // namespace oneflow
