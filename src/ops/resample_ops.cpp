// interpolate and its backward (src/ops/table/resample.yaml). Every mode is separable: output
// position o along a spatial dim reads a few input positions with weights (nearest: 1, linear: 2,
// cubic: 4, area: its window), so the N-d resample is one pass per spatial dim, last dim first.
// A pass over a dim that is not the last one combines whole contiguous rows (vectorised axpy);
// the backward runs the transposed passes (scatter-adds) in the reverse order. Index and weight
// formulas follow PyTorch's kernels (UpSample.h), including their float arithmetic.
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/interpolate.h"
#include "decl/interpolate_backward.h"
#include "decl/mode.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

namespace oneflow {

namespace {

enum class Mode { kNearest, kNearestExact, kLinear, kCubic, kArea };

struct Setup {
  Mode mode;
  bool align_corners = false;
  DimVector in, out;                      // full shapes
  std::vector<std::optional<double>> scales;  // per spatial dim, the user's scale (if used)
  int spatial() const { return in.size() - 2; }
};

Setup MakeSetup(const DimVector& in, const std::optional<DimVector>& size,
                const std::optional<std::vector<double>>& scale_factor, const std::string& mode,
                const std::optional<bool>& align_corners, const std::optional<bool>& recompute_scale_factor,
                bool antialias) {
  Setup s;
  s.in = in;
  const int nd = in.size(), k = nd - 2;
  static const char* kModes = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact";
  if (mode == "nearest") s.mode = Mode::kNearest;
  else if (mode == "nearest-exact") s.mode = Mode::kNearestExact;
  else if (mode == "area") s.mode = Mode::kArea;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") s.mode = Mode::kLinear;
  else if (mode == "bicubic") s.mode = Mode::kCubic;
  else OF_THROW(kNotImplemented) << "Input Error: Only 3D, 4D and 5D input Tensors supported (got " << nd
                                 << "D) for the modes: " << kModes << " (got " << mode << ")";
  const bool interp = s.mode == Mode::kLinear || s.mode == Mode::kCubic;
  OF_CHECK_VALUE(!align_corners || interp)
      << "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear";
  s.align_corners = align_corners.value_or(false);
  OF_CHECK_KIND(nd >= 3 && nd <= 5, ErrorKind::kNotImplemented)
      << "Input Error: Only 3D, 4D and 5D input Tensors supported (got " << nd << "D) for the modes: " << kModes
      << " (got " << mode << ")";
  const int want = mode == "linear" ? 3 : mode == "bilinear" || mode == "bicubic" ? 4 : mode == "trilinear" ? 5 : nd;
  OF_CHECK_KIND(nd == want, ErrorKind::kNotImplemented)
      << "Got " << nd << "D input, but " << mode << " mode needs " << want << "D input";
  OF_CHECK_VALUE(!(size && scale_factor)) << "only one of size or scale_factor should be defined";
  OF_CHECK_VALUE(size || scale_factor) << "either size or scale_factor should be defined";
  OF_CHECK_VALUE(!(size && recompute_scale_factor.value_or(false)))
      << "recompute_scale_factor is not meaningful with an explicit size.";
  OF_CHECK_VALUE(!antialias || ((mode == "bilinear" || mode == "bicubic") && nd == 4))
      << "Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor as input";
  OF_CHECK_KIND(!antialias, ErrorKind::kNotImplemented) << "antialias=True is not supported yet";
  s.out = in;
  s.scales.assign(k, std::nullopt);
  if (size) {
    OF_CHECK_VALUE(static_cast<int>(size->size()) == k)
        << "Input and output must have the same number of spatial dimensions, but got input with spatial "
           "dimensions of " << ShapeStr(DimVector(in.begin() + 2, in.end())) << " and output size of "
        << ShapeStr(*size) << ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                               "in (o1, o2, ...,oK) format.";
    for (int d = 0; d < k; ++d) s.out[d + 2] = (*size)[d];
  } else {
    OF_CHECK_VALUE(static_cast<int>(scale_factor->size()) == k)
        << "Input and scale_factor must have the same number of spatial dimensions, but got input with "
           "spatial dimensions of " << ShapeStr(DimVector(in.begin() + 2, in.end())) << " and scale_factor of "
           "shape (" << scale_factor->size() << ",). Please provide input tensor in (N, C, d1, d2, ...,dK) "
           "format and scale_factor in (s1, s2, ...,sK) format.";
    // 'area' always works from a size; recompute_scale_factor drops the given scales.
    const bool recompute = recompute_scale_factor.value_or(false) || s.mode == Mode::kArea;
    for (int d = 0; d < k; ++d) {
      s.out[d + 2] = static_cast<int64_t>(std::floor(static_cast<double>(in[d + 2]) * (*scale_factor)[d]));
      if (!recompute) s.scales[d] = (*scale_factor)[d];
    }
  }
  bool ok = true;
  for (int d = 2; d < nd; ++d) ok &= in[d] > 0 && s.out[d] > 0;
  OF_CHECK(ok) << "Input and output sizes should be greater than 0, but got input "
               << ShapeStr(DimVector(in.begin() + 2, in.end())) << " output "
               << ShapeStr(DimVector(s.out.begin() + 2, s.out.end()));
  return s;
}

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
Taps<M> MakeTaps(const Setup& s, int d) {
  const int64_t in = s.in[d + 2], out = s.out[d + 2];
  const std::optional<double>& scale = s.scales[d];
  Taps<M> t;
  t.start.reserve(out + 1);
  for (int64_t o = 0; o < out; ++o) {
    t.start.push_back(t.src.size());
    switch (s.mode) {
      case Mode::kNearest:
      case Mode::kNearestExact: {
        const float sc = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                             : static_cast<float>(in) / static_cast<float>(out);
        const float pos = s.mode == Mode::kNearest ? static_cast<float>(o) * sc : (static_cast<float>(o) + 0.5f) * sc;
        int64_t i = static_cast<int64_t>(std::floor(pos));
        if (s.mode == Mode::kNearest && out == in) i = o;
        if (s.mode == Mode::kNearest && out == 2 * in) i = o >> 1;
        t.Add(std::min(i, in - 1), M(1));
        break;
      }
      case Mode::kLinear: {
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
      case Mode::kCubic: {
        const M sc = AreaScale<M>(in, out, s.align_corners, scale);
        const M real = s.align_corners ? sc * static_cast<M>(o) : sc * (static_cast<M>(o) + M(0.5)) - M(0.5);
        const int64_t i = static_cast<int64_t>(std::floor(real));
        const M x = real - static_cast<M>(i), a = M(-0.75);
        const M c[4] = {CubicConv2<M>(x + 1, a), CubicConv1<M>(x, a), CubicConv1<M>(1 - x, a),
                        CubicConv2<M>(2 - x, a)};
        for (int j = 0; j < 4; ++j) t.Add(std::min(std::max<int64_t>(i - 1 + j, 0), in - 1), c[j]);
        break;
      }
      case Mode::kArea: {
        const int64_t lo = (o * in) / out, hi = ((o + 1) * in + out - 1) / out;
        for (int64_t i = lo; i < hi; ++i) t.Add(i, M(1) / static_cast<M>(hi - lo));
        break;
      }
    }
  }
  t.start.push_back(t.src.size());
  return t;
}

// One forward pass along a dim: x [outer, n_in, inner] -> y [outer, n_out, inner].
template <typename In, typename Out, typename M>
void Pass(const In* x, Out* y, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner, const Taps<M>& t) {
  const int64_t work = outer * n_out;
  ParallelFor(0, work, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, inner * 4)), [&](int64_t b, int64_t e) {
    std::vector<M> acc(inner);
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / n_out, p = r % n_out;
      const In* xo = x + o * n_in * inner;
      Out* yr = y + r * inner;
      if (inner == 1) {
        M v = 0;
        for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) v += t.w[j] * static_cast<M>(xo[t.src[j]]);
        yr[0] = static_cast<Out>(v);
        continue;
      }
      std::fill(acc.begin(), acc.end(), M(0));
      for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) {
        const M w = t.w[j];
        const In* row = xo + t.src[j] * inner;
        for (int64_t k = 0; k < inner; ++k) acc[k] += w * static_cast<M>(row[k]);
      }
      for (int64_t k = 0; k < inner; ++k) yr[k] = static_cast<Out>(acc[k]);
    }
  });
}

// The transposed pass: gy [outer, n_out, inner] scattered into gx [outer, n_in, inner] (zeroed).
template <typename In, typename Out, typename M>
void PassT(const In* gy, Out* gx, int64_t outer, int64_t n_in, int64_t n_out, int64_t inner, const Taps<M>& t) {
  ParallelFor(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n_out * inner * 2)),
              [&](int64_t b, int64_t e) {
    std::vector<M> acc(n_in * inner);
    for (int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), M(0));
      const In* go = gy + o * n_out * inner;
      for (int64_t p = 0; p < n_out; ++p) {
        const In* grow = go + p * inner;
        for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) {
          M* arow = acc.data() + t.src[j] * inner;
          const M w = t.w[j];
          for (int64_t k = 0; k < inner; ++k) arow[k] += w * static_cast<M>(grow[k]);
        }
      }
      Out* xo = gx + o * n_in * inner;
      for (int64_t k = 0; k < n_in * inner; ++k) xo[k] = static_cast<Out>(acc[k]);
    }
  });
}

// Geometry of the pass along spatial dim d of a tensor whose dims after 1 have sizes `cur`.
void PassGeom(const DimVector& cur, int d, int64_t* outer, int64_t* inner) {
  *outer = cur[0] * cur[1];
  *inner = 1;
  for (int j = 2; j < d + 2; ++j) *outer *= cur[j];
  for (int j = d + 3; j < cur.size(); ++j) *inner *= cur[j];
}

template <typename T>
void Resample(const Setup& s, const Tensor& x, const Tensor& y, bool backward) {
  using M = OpMath<T>;
  const int k = s.spatial();
  // The shape evolves pass by pass (forward: last dim first; backward: the reverse).
  DimVector cur = backward ? s.out : s.in;
  std::vector<M> buf[2];
  const T* src_t = x.data<T>();
  const M* src_m = nullptr;
  for (int step = 0; step < k; ++step) {
    const int d = backward ? step : k - 1 - step;
    const Taps<M> t = MakeTaps<M>(s, d);
    const int64_t n_from = cur[d + 2], n_to = backward ? s.in[d + 2] : s.out[d + 2];
    int64_t outer, inner;
    PassGeom(cur, d, &outer, &inner);
    const bool last = step == k - 1;
    std::vector<M>& dst = buf[step % 2];
    if (!last) dst.assign(outer * n_to * inner, M(0));
    auto run = [&](auto* out_ptr) {
      if (src_m == nullptr) {
        backward ? PassT(src_t, out_ptr, outer, n_to, n_from, inner, t) : Pass(src_t, out_ptr, outer, n_from, n_to, inner, t);
      } else {
        backward ? PassT(src_m, out_ptr, outer, n_to, n_from, inner, t) : Pass(src_m, out_ptr, outer, n_from, n_to, inner, t);
      }
    };
    if (last) run(y.data<T>()); else run(dst.data());
    cur[d + 2] = n_to;
    src_m = dst.data();
  }
}

#ifdef ONEFLOW_WITH_CUDA
// The backward's taps: input position i reads the output positions p whose taps read i, with
// their weights, in increasing p (the order PassT adds them in).
template <typename M>
Taps<M> Transposed(const Taps<M>& t, int64_t n_in) {
  std::vector<int64_t> count(n_in + 1, 0);
  for (int64_t i : t.src) ++count[i + 1];
  Taps<M> r;
  r.start.assign(n_in + 1, 0);
  for (int64_t i = 0; i < n_in; ++i) r.start[i + 1] = r.start[i] + count[i + 1];
  r.src.resize(t.src.size());
  r.w.resize(t.w.size());
  std::vector<int64_t> at(r.start.begin(), r.start.end() - 1);
  for (size_t p = 0; p + 1 < t.start.size(); ++p)
    for (int64_t j = t.start[p]; j < t.start[p + 1]; ++j) {
      r.src[at[t.src[j]]] = static_cast<int64_t>(p);
      r.w[at[t.src[j]]++] = t.w[j];
    }
  return r;
}

// A host vector as a 1-d tensor on `device`.
template <typename V>
Tensor Uploaded(const std::vector<V>& v, DType dt, const Device& device) {
  Tensor t = Empty(DimVector{static_cast<int64_t>(v.size())}, dt);
  std::copy(v.begin(), v.end(), t.data<V>());
  return MovedTo(t, device);
}

// Resample's passes on the device: the taps (transposed for the backward) made on the host,
// the intermediate shapes in the math type, the last pass into y.
template <typename T>
void ResampleOnDevice(const Setup& s, const Tensor& x, const Tensor& y, bool backward) {
  using M = OpMath<T>;
  const DType md = std::is_same_v<M, double> ? DType::kFloat64 : DType::kFloat32;
  const int k = s.spatial();
  DimVector cur = backward ? s.out : s.in;
  Tensor src = x;
  for (int step = 0; step < k; ++step) {
    const int d = backward ? step : k - 1 - step;
    Taps<M> t = MakeTaps<M>(s, d);
    if (backward) t = Transposed(t, s.in[d + 2]);
    const int64_t n_from = cur[d + 2], n_to = backward ? s.in[d + 2] : s.out[d + 2];
    int64_t outer, inner;
    PassGeom(cur, d, &outer, &inner);
    cur[d + 2] = n_to;
    const Tensor dst = step == k - 1 ? y : Empty(cur, md, y.device());
    cuda::ResamplePass(src, dst, outer, n_from, n_to, inner, Uploaded(t.start, DType::kInt64, y.device()),
                       Uploaded(t.src, DType::kInt64, y.device()), Uploaded(t.w, md, y.device()));
    src = dst;
  }
}
#endif

// The passes on the device the tensors are on.
template <typename T>
void RunResample(const Setup& s, const Tensor& x, const Tensor& y, bool backward) {
#ifdef ONEFLOW_WITH_CUDA
  if (y.device().type == DeviceType::kCUDA) return ResampleOnDevice<T>(s, x, y, backward);
#endif
  Resample<T>(s, x, y, backward);
}

}  // namespace

Tensor Interpolate(const Tensor& input, std::optional<DimVector> size,
                   std::optional<std::vector<double>> scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor, bool antialias) {
  OpScope scope("interpolate");
  const Setup s = MakeSetup(input.sizes(), size, scale_factor, mode, align_corners, recompute_scale_factor, antialias);
  OF_CHECK(IsFloating(input.dtype())) << "interpolate expects a floating point input, got " << DTypeName(input.dtype());
  Tensor out = Empty(s.out, input.dtype(), input.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor x = Contiguous(input);
  DispatchFloat(x.dtype(), [&](auto tag) { RunResample<typename std::decay_t<decltype(tag)>::type>(s, x, out, false); });
  return out;
}

Tensor InterpolateBackward(const Tensor& grad_output, const DimVector& input_sizes, std::optional<DimVector> size,
                           std::optional<std::vector<double>> scale_factor, const std::string& mode,
                           std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
                           bool antialias) {
  OpScope scope("interpolate_backward");
  const Setup s = MakeSetup(input_sizes, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias);
  OF_CHECK(grad_output.sizes() == s.out) << "grad_output of shape " << ShapeStr(grad_output.sizes())
                                         << " where " << ShapeStr(s.out) << " was expected";
  OF_CHECK(IsFloating(grad_output.dtype())) << "interpolate_backward expects a floating point gradient";
  Tensor out = Empty(input_sizes, grad_output.dtype(), grad_output.device());
  if (out.device().type == DeviceType::kMeta) return out;
  if (out.numel() == 0 || grad_output.numel() == 0) {
    FillWith(out, Scalar(0));
    return out;
  }
  Tensor g = Contiguous(grad_output);
  DispatchFloat(g.dtype(), [&](auto tag) { RunResample<typename std::decay_t<decltype(tag)>::type>(s, g, out, true); });
  return out;
}

}  // namespace oneflow
