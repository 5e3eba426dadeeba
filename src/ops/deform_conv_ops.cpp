// Deformable convolution (src/ops/table/vision.yaml) with torchvision's semantics: the deformable
// im2col (each kernel tap samples the input bilinearly at its offset position, times the
// modulation mask), its adjoint for input, offset and mask, and deform_conv2d composed of it and
// a grouped matmul (so weight and bias differentiate through the table's matmul and add).
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/deform_conv2d.h"
#include "decl/deform_im2col.h"
#include "decl/deform_im2col_backward.h"
#include "decl/empty.h"
#include "decl/matmul.h"
#include "decl/reshape.h"

namespace oneflow {

namespace {

struct DeformGeometry {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, Ho, Wo, og;
  bool use_mask;
};

// Size d of t, -1 past its dims (for messages about a tensor whose dims are wrong).
int64_t DimAt(const Tensor& t, int d) { return d < t.dim() ? t.sizes()[d] : -1; }

std::pair<int64_t, int64_t> PairOf(const DimVector& v, const char* what) {
  OF_CHECK(v.size() == 2) << what << " must be a pair of ints, got " << ShapeStr(v);
  return {v[0], v[1]};
}

DeformGeometry CheckDeform(const Tensor& input, const Tensor& offset, const Tensor& mask, const DimVector& kernel_size,
                           const DimVector& stride, const DimVector& padding, const DimVector& dilation,
                           int64_t offset_groups, bool use_mask) {
  DeformGeometry g;
  OF_CHECK(input.dim() == 4) << "expected input of shape (N, C, H, W), got " << ShapeStr(input.sizes());
  g.N = input.sizes()[0];
  g.C = input.sizes()[1];
  g.H = input.sizes()[2];
  g.W = input.sizes()[3];
  std::tie(g.kh, g.kw) = PairOf(kernel_size, "kernel_size");
  std::tie(g.sh, g.sw) = PairOf(stride, "stride");
  std::tie(g.ph, g.pw) = PairOf(padding, "padding");
  std::tie(g.dh, g.dw) = PairOf(dilation, "dilation");
  OF_CHECK(g.kh > 0 && g.kw > 0) << "kernel size must be positive, got " << g.kh << " x " << g.kw;
  // Note [Upstream's words] (src/autograd/meta.cpp): upstream OneFlow's checks (its exceptions tests
  // assert them) in its order, its text in brackets after ours.
  OF_CHECK(g.sh > 0 && g.sw > 0) << "stride must be positive, got " << g.sh << ", " << g.sw
                                 << " [OneFlow: The stride must be greater than 0,but got " << g.sw << " and " << g.sh
                                 << "]";
  OF_CHECK(g.ph >= 0 && g.pw >= 0) << "padding must be non-negative, got " << g.ph << ", " << g.pw
                                   << " [OneFlow: The pad must be greater than or equal to 0,but got " << g.pw
                                   << " and " << g.ph << "]";
  OF_CHECK(g.dh > 0 && g.dw > 0) << "dilation must be positive, got " << g.dh << ", " << g.dw
                                 << " [OneFlow: The dilation must be greater than 0,but got " << g.dh << " and "
                                 << g.dw << "]";
  OF_CHECK(offset_groups > 0 && g.C % offset_groups == 0)
      << "offset_groups must be positive and divide the " << g.C << " input channels, got " << offset_groups;
  g.og = offset_groups;
  g.Ho = (g.H + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  g.Wo = (g.W + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  OF_CHECK(offset.dim() == 4) << "expected offset to be a 4-D tensor, got shape " << ShapeStr(offset.sizes());
  const DimVector want_offset{g.N, 2 * g.og * g.kh * g.kw, g.Ho, g.Wo};
  const std::string offset_words = "expected offset of shape " + ShapeStr(want_offset) + ", got " +
                                   ShapeStr(offset.sizes());
  OF_CHECK(offset.sizes()[1] == want_offset[1]) << offset_words << " [OneFlow: offset.shape[1] is not valid: got: "
                                                << offset.sizes()[1] << " ,expected: " << want_offset[1] << "]";
  const DimVector want_mask{g.N, g.og * g.kh * g.kw, g.Ho, g.Wo};
  const std::string mask_words = use_mask ? "expected mask of shape " + ShapeStr(want_mask) + ", got " +
                                                ShapeStr(mask.sizes()) : "";
  if (use_mask) {
    OF_CHECK(mask.dim() == 4 && mask.sizes()[1] == want_mask[1])
        << mask_words << " [OneFlow: mask.shape[1] is not valid: got: " << DimAt(mask, 1)
        << " expected: " << want_mask[1] << "]";
  }
  OF_CHECK(offset.sizes()[0] == g.N) << offset_words << " [OneFlow: invalid batch size of offset:got: "
                                     << offset.sizes()[0] << " ,expected: " << g.N << "]";
  OF_CHECK(g.Ho > 0 && g.Wo > 0 && g.H + 2 * g.ph >= g.dh * (g.kh - 1) + 1 && g.W + 2 * g.pw >= g.dw * (g.kw - 1) + 1)
      << "the output would be empty: input " << ShapeStr(input.sizes()) << ", kernel " << g.kh << " x " << g.kw
      << " [OneFlow: Calculated output size too small - out_h: " << g.Ho << " ,out_w: " << g.Wo << "]";
  OF_CHECK(offset.sizes() == want_offset)
      << offset_words << " [OneFlow: invalid offset output dims: got ( " << DimAt(offset, 2) << ", "
      << DimAt(offset, 3) << "),expected: (" << g.Ho << ", " << g.Wo << ")]";
  OF_CHECK(offset.dtype() == input.dtype()) << "expected offset of the input's dtype " << DTypeName(input.dtype())
                                            << ", got " << DTypeName(offset.dtype());
  g.use_mask = use_mask;
  if (use_mask) {
    OF_CHECK(mask.sizes() == want_mask)
        << mask_words << " [OneFlow: invalid mask output dims: got ( " << DimAt(mask, 2) << ", " << DimAt(mask, 3)
        << "),expected: (" << g.Ho << ", " << g.Wo << ")]";
    OF_CHECK(mask.dtype() == input.dtype()) << "expected mask of the input's dtype " << DTypeName(input.dtype())
                                            << ", got " << DTypeName(mask.dtype());
    CheckSameDevice(input, mask);
  }
  CheckSameDevice(input, offset);
  return g;
}

template <typename F>
void DispatchDeformDType(DType t, F&& f) {
  if (t == DType::kFloat32) return f(float{});
  if (t == DType::kFloat64) return f(double{});
  OF_CHECK(false) << "expected input of dtype float32 or float64, got " << DTypeName(t);
}

// One sampling point (batch n, offset group, kernel tap, output position l): torchvision's
// deformable bilinear sampling, zero beyond a pixel outside the plane and zero-valued corners
// outside it. The point is the same for every channel of the offset group, so it is computed once
// and applied to each (idx -1: a corner off the plane).
template <typename T>
struct DeformSample {
  bool valid;
  int64_t idx[4];
  T lh, lw, m;
  int64_t iy, ix, im;  // the offset-y / offset-x / mask elements it came from
};

// Calls f(tap, l, sample) for every sampling point of batch n and offset group grp, in
// torchvision's layout: offset channel grp*2*kh*kw + 2*(i*kw + j) holds dy, the next dx.
template <typename T, typename F>
void ForEachDeformSample(const DeformGeometry& g, const T* off, const T* msk, int64_t n, int64_t grp, int64_t tap,
                         const F& f) {
  const int64_t L = g.Ho * g.Wo, K = g.kh * g.kw, i = tap / g.kw, j = tap % g.kw;
  const int64_t oy = ((n * g.og + grp) * 2 * K + 2 * tap) * L, ox = oy + L;
  const int64_t mi = ((n * g.og + grp) * K + tap) * L;
  DeformSample<T> s{};
  for (int64_t y = 0; y < g.Ho; ++y)
    for (int64_t x = 0; x < g.Wo; ++x) {
      const int64_t l = y * g.Wo + x;
      const T h = T(y * g.sh - g.ph + i * g.dh) + off[oy + l];
      const T w = T(x * g.sw - g.pw + j * g.dw) + off[ox + l];
      s.iy = oy + l;
      s.ix = ox + l;
      s.im = mi + l;
      s.m = g.use_mask ? msk[mi + l] : T(1);
      s.valid = h > T(-1) && h < T(g.H) && w > T(-1) && w < T(g.W);
      s.lh = s.lw = T(0);
      if (s.valid) {
        const int64_t hl = static_cast<int64_t>(std::floor(h)), wl = static_cast<int64_t>(std::floor(w));
        s.lh = h - T(hl);
        s.lw = w - T(wl);
        const int64_t hs[4] = {hl, hl, hl + 1, hl + 1}, ws[4] = {wl, wl + 1, wl, wl + 1};
        for (int t = 0; t < 4; ++t)
          s.idx[t] = hs[t] >= 0 && hs[t] < g.H && ws[t] >= 0 && ws[t] < g.W ? hs[t] * g.W + ws[t] : -1;
      }
      f(l, s);
    }
}

// The four corner values of a sample on one channel's plane.
template <typename T>
void Corners(const T* img, const DeformSample<T>& s, T v[4]) {
  for (int t = 0; t < 4; ++t) v[t] = s.idx[t] >= 0 ? img[s.idx[t]] : T(0);
}

}  // namespace

Tensor DeformIm2col(const Tensor& input, const Tensor& offset, const Tensor& mask, const DimVector& kernel_size,
                    const DimVector& stride, const DimVector& padding, const DimVector& dilation, int64_t offset_groups,
                    bool use_mask) {
  OpScope scope("deform_conv2d");
  const DeformGeometry g =
      CheckDeform(input, offset, mask, kernel_size, stride, padding, dilation, offset_groups, use_mask);
  const int64_t K = g.kh * g.kw, L = g.Ho * g.Wo;
  Tensor out = Empty(DimVector{g.N, g.C * K, L}, input.dtype(), input.device());
  DispatchDeformDType(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor xc = Contiguous(input), oc = Contiguous(offset), mc = use_mask ? Contiguous(mask) : Tensor();
    const T* xp = xc.data<T>();
    const T* op = oc.data<T>();
    const T* mp = use_mask ? mc.data<T>() : nullptr;
    T* cols = out.data<T>();
    const int64_t cpg = g.C / g.og;
    // One task per (batch, offset group, tap): its samples once, applied to each channel of the
    // group (rows c*K + tap: disjoint between tasks).
    ParallelFor(0, g.N * g.og * K, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t n = t / (g.og * K), grp = t / K % g.og, tap = t % K;
        T* dst = cols + n * g.C * K * L;
        ForEachDeformSample(g, op, mp, n, grp, tap, [&](int64_t l, const DeformSample<T>& sm) {
          const T hh = T(1) - sm.lh, hw = T(1) - sm.lw;
          const T w[4] = {hh * hw, hh * sm.lw, sm.lh * hw, sm.lh * sm.lw};
          for (int64_t c = grp * cpg; c < (grp + 1) * cpg; ++c) {
            T val = T(0);
            if (sm.valid) {
              T v[4];
              Corners(xp + (n * g.C + c) * g.H * g.W, sm, v);
              val = w[0] * v[0] + w[1] * v[1] + w[2] * v[2] + w[3] * v[3];
            }
            dst[(c * K + tap) * L + l] = sm.m * val;
          }
        });
      }
    });
  });
  return out;
}

std::tuple<Tensor, Tensor, Tensor> DeformIm2colBackward(const Tensor& dcols, const Tensor& input, const Tensor& offset,
                                                        const Tensor& mask, const DimVector& kernel_size,
                                                        const DimVector& stride, const DimVector& padding,
                                                        const DimVector& dilation, int64_t offset_groups,
                                                        bool use_mask) {
  OpScope scope("deform_conv2d");
  const DeformGeometry g =
      CheckDeform(input, offset, mask, kernel_size, stride, padding, dilation, offset_groups, use_mask);
  const int64_t K = g.kh * g.kw, L = g.Ho * g.Wo;
  OF_CHECK(dcols.sizes() == DimVector({g.N, g.C * K, L}) && dcols.dtype() == input.dtype())
      << "expected columns' gradient of shape " << ShapeStr(DimVector({g.N, g.C * K, L})) << ", got "
      << ShapeStr(dcols.sizes());
  Tensor gi = Empty(input.sizes(), input.dtype(), input.device());
  Tensor go = Empty(offset.sizes(), offset.dtype(), offset.device());
  Tensor gm = Empty(mask.sizes(), mask.dtype(), mask.device());
  DispatchDeformDType(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor xc = Contiguous(input), oc = Contiguous(offset), dc = Contiguous(dcols);
    const Tensor mc = use_mask ? Contiguous(mask) : Tensor();
    const T* xp = xc.data<T>();
    const T* op = oc.data<T>();
    const T* mp = use_mask ? mc.data<T>() : nullptr;
    const T* dp = dc.data<T>();
    T* gip = gi.data<T>();
    T* gop = go.data<T>();
    T* gmp = gm.data<T>();
    std::fill(gip, gip + gi.numel(), T(0));
    std::fill(gop, gop + go.numel(), T(0));
    std::fill(gmp, gmp + gm.numel(), T(0));
    const int64_t cpg = g.C / g.og;
    // One task per batch element: its input planes, offsets and mask are its own (no races); the
    // channels of an offset group add into the same offset / mask elements in order.
    ParallelFor(0, g.N, 1, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n)
        for (int64_t grp = 0; grp < g.og; ++grp)
          for (int64_t tap = 0; tap < K; ++tap)
            ForEachDeformSample(g, op, mp, n, grp, tap, [&](int64_t l, const DeformSample<T>& sm) {
              if (!sm.valid) return;
              const T hh = T(1) - sm.lh, hw = T(1) - sm.lw, lh = sm.lh, lw = sm.lw;
              const T w[4] = {hh * hw, hh * lw, lh * hw, lh * lw};
              for (int64_t c = grp * cpg; c < (grp + 1) * cpg; ++c) {
                const T* img = xp + (n * g.C + c) * g.H * g.W;
                T* gimg = gip + (n * g.C + c) * g.H * g.W;
                const T d = dp[(n * g.C * K + c * K + tap) * L + l];
                T v[4];
                Corners(img, sm, v);
                for (int t = 0; t < 4; ++t)
                  if (sm.idx[t] >= 0) gimg[sm.idx[t]] += sm.m * d * w[t];
                gop[sm.iy] += sm.m * d * (-hw * v[0] - lw * v[1] + hw * v[2] + lw * v[3]);
                gop[sm.ix] += sm.m * d * (-hh * v[0] + hh * v[1] - lh * v[2] + lh * v[3]);
                if (use_mask) gmp[sm.im] += d * (w[0] * v[0] + w[1] * v[1] + w[2] * v[2] + w[3] * v[3]);
              }
            });
    });
  });
  return {gi, go, gm};
}

namespace functional {

Tensor DeformConv2d(const Tensor& input, const Tensor& weight, const Tensor& offset, const Tensor& mask,
                    const Tensor& bias, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                    int64_t dilation_h, int64_t dilation_w, int64_t groups, int64_t offset_groups, bool use_mask) {
  OpScope scope("deform_conv2d");
  OF_CHECK(input.dim() == 4) << "expected input of shape (N, C, H, W), got " << ShapeStr(input.sizes());
  OF_CHECK(weight.dim() == 4) << "expected weight of shape (C_out, C_in / groups, kh, kw), got "
                              << ShapeStr(weight.sizes());
  OF_CHECK(weight.dtype() == input.dtype()) << "expected weight of the input's dtype " << DTypeName(input.dtype())
                                            << ", got " << DTypeName(weight.dtype());
  const int64_t C = input.sizes()[1], Cout = weight.sizes()[0];
  OF_CHECK(groups > 0 && C % groups == 0 && Cout % groups == 0 && weight.sizes()[1] * groups == C)
      << "groups=" << groups << " must divide the " << C << " input and " << Cout
      << " output channels, with weight.size(1) * groups == input channels; weight " << ShapeStr(weight.sizes());
  if (bias.defined()) {
    OF_CHECK(bias.dim() == 1 && bias.sizes()[0] == Cout)
        << "expected bias of shape (" << Cout << ",), got " << ShapeStr(bias.sizes());
  }
  const int64_t kh = weight.sizes()[2], kw = weight.sizes()[3];
  Tensor cols = functional::DeformIm2col(input, offset, mask, DimVector{kh, kw}, DimVector{stride_h, stride_w},
                             DimVector{pad_h, pad_w}, DimVector{dilation_h, dilation_w}, offset_groups, use_mask);
  const int64_t N = input.sizes()[0], L = cols.sizes()[2], Kg = C / groups * kh * kw;
  const int64_t Ho = offset.sizes()[2], Wo = offset.sizes()[3];
  // (g, Cout/g, Kg) @ (N, g, Kg, L) -> (N, g, Cout/g, L)
  Tensor out = functional::Matmul(functional::Reshape(weight, DimVector{groups, Cout / groups, Kg}),
                                  functional::Reshape(cols, DimVector{N, groups, Kg, L}));
  out = functional::Reshape(out, DimVector{N, Cout, Ho, Wo});
  if (bias.defined()) out = functional::Add(out, functional::Reshape(bias, DimVector{1, Cout, 1, 1}), Scalar(1));
  return out;
}

}  // namespace functional

}  // namespace oneflow
