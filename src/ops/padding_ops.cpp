// pad and its backward (src/ops/table/padding.yaml). Each padded dim gets an index map from
// output position to source position (-1: the constant); a row of the output is then a fill, a
// block copy and a fill (constant), or a gather through the last dim's map. The backward scatters
// (adds) the gradient through the same maps, one outer plane per task.
#include "core/checked.h"
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "decl/complex.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/imag.h"
#include "decl/pad.h"
#include "decl/pad_backward.h"
#include "decl/real.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

namespace oneflow {

namespace {

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

PadMode ParsePadMode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "replicate") return PadMode::kReplicate;
  if (mode == "circular") return PadMode::kCircular;
  OF_THROW(kNotImplemented) << "Unrecognised padding mode " << mode;
}

struct PadPlan {
  PadMode mode;
  DimVector in, out;
  int first = 0;  // first padded dim
  std::vector<std::vector<int64_t>> maps;  // per padded dim: output position -> source (-1: fill)
};

// pad = (left_last, right_last, left_second_last, ...), PyTorch's order.
PadPlan MakePlan(const DimVector& in, const DimVector& pad, const std::string& mode_name) {
  PadPlan p;
  p.mode = ParsePadMode(mode_name);
  p.in = in;
  OF_CHECK(pad.size() % 2 == 0) << "Padding length must be divisible by 2";
  const int k = pad.size() / 2, nd = in.size();
  OF_CHECK(k <= nd) << "Padding length should be less than or equal to two times the input dimension but got "
                       "padding length " << pad.size() << " and input of dimension " << nd;
  if (p.mode != PadMode::kConstant) {
    OF_CHECK_KIND(k >= 1 && k <= 3 && (nd == k + 1 || nd == k + 2), ErrorKind::kNotImplemented)
        << "Padding size " << pad.size() << " is not supported for " << nd << "D input tensor.\n"
        << "Supported combinations for non-constant padding:\n"
           "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
           "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
           "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)";
  }
  p.first = nd - k;
  p.out = in;
  for (int j = 0; j < k; ++j) {
    const int d = nd - 1 - j;
    const int64_t l = pad[2 * j], r = pad[2 * j + 1], n = in[d];
    if (p.mode == PadMode::kReflect) {
      OF_CHECK(l < n && r < n) << "Argument #4: Padding size should be less than the corresponding input dimension, "
                                  "but got: padding (" << l << ", " << r << ") at dimension " << d << " of input "
                               << ShapeStr(in);
    } else if (p.mode == PadMode::kReplicate) {
      OF_CHECK(n > 0) << "Expected a non-empty input dimension " << d << " for replicate padding, but got input "
                      << ShapeStr(in);
    } else if (p.mode == PadMode::kCircular) {
      OF_CHECK(l <= n && r <= n) << "Padding value causes wrapping around more than once.";
    }
    const int64_t size = CheckedAdd(CheckedAdd(n, l, "the padded size"), r, "the padded size");
    OF_CHECK(size >= 0) << "The input size " << n << ", plus negative padding " << l << " and " << r
                        << " resulted in a negative output size, which is invalid. Check dimension " << d
                        << " of your input.";
    p.out[d] = size;
  }
  NumelOf(p.out);  // checked: an overflowing output fails here, before its index maps are made
  p.maps.resize(k);
  for (int j = 0; j < k; ++j) {
    const int d = p.first + j;
    const int64_t l = pad[2 * (nd - 1 - d)], r = pad[2 * (nd - 1 - d) + 1], n = in[d];
    // circular wraps within what negative pads leave of the dim (PyTorch: crop, then wrap).
    const int64_t lo = std::max<int64_t>(0, -l), period = n - lo - std::max<int64_t>(0, -r);
    std::vector<int64_t>& m = p.maps[j];
    m.resize(p.out[d]);
    for (int64_t o = 0; o < p.out[d]; ++o) {
      int64_t i = o - l;
      switch (p.mode) {
        case PadMode::kConstant: i = (i >= 0 && i < n) ? i : -1; break;
        case PadMode::kReflect:
          if (i < 0) i = -i;
          if (i >= n) i = 2 * (n - 1) - i;
          break;
        case PadMode::kReplicate: i = i < 0 ? 0 : (i >= n ? n - 1 : i); break;
        case PadMode::kCircular:
          i = period > 0 ? lo + (((i - lo) % period) + period) % period : -1;
          break;
      }
      m[o] = i;
    }
  }
  return p;
}

// Calls f(out_row_offset, in_row_offset or -1) for every output row (all dims but the last) of
// the outer plane `plane`; element offsets, contiguous layouts.
template <typename F>
void ForEachRow(const PadPlan& p, int64_t plane, const F& f) {
  const int nd = p.out.size();
  int64_t rows = 1;
  for (int d = p.first; d < nd - 1; ++d) rows *= p.out[d];
  const int64_t out_plane = NumelOf(p.out) / std::max<int64_t>(1, NumelOf(DimVector(p.out.begin(), p.out.begin() + p.first))),
                in_plane = NumelOf(DimVector(p.in.begin() + p.first, p.in.end()));
  DimVector idx(std::max(0, nd - 1 - p.first), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t src = plane * in_plane, dst = plane * out_plane, in_stride = p.in[nd - 1], out_stride = p.out[nd - 1];
    bool fill = false;
    for (int k = idx.size() - 1; k >= 0; --k) {
      const int d = p.first + k;
      const int64_t s = p.maps[k][idx[k]];
      if (s < 0) fill = true;
      src += s * in_stride;
      dst += idx[k] * out_stride;
      in_stride *= p.in[d];
      out_stride *= p.out[d];
    }
    f(dst, fill ? -1 : src);
    for (int k = idx.size() - 1; k >= 0; --k) {
      if (++idx[k] < p.out[p.first + k]) break;
      idx[k] = 0;
    }
  }
}

#ifdef ONEFLOW_WITH_CUDA
// The maps of every padded dim, in order, in one int64 tensor on `device` (the CUDA kernels).
Tensor MapsOn(const PadPlan& p, const Device& device) {
  int64_t n = 0;
  for (const auto& m : p.maps) n += m.size();
  Tensor t = Empty(DimVector{n}, DType::kInt64);
  int64_t* d = t.data<int64_t>();
  for (const auto& m : p.maps) d = std::copy(m.begin(), m.end(), d);
  return MovedTo(t, device);
}
#endif

int64_t Planes(const PadPlan& p) { return NumelOf(DimVector(p.in.begin(), p.in.begin() + p.first)); }

}  // namespace

Tensor Pad(const Tensor& input, const DimVector& pad, const std::string& mode, std::optional<Scalar> value) {
  OpScope scope("pad");
  OF_CHECK(!value || mode == "constant") << "Padding mode \"" << mode << "\" doesn't take in value argument";
  PadPlan p = MakePlan(input.sizes(), pad, mode);
  if (IsComplex(input.dtype())) {
    // Complex: both parts padded as real tensors (the fill's parts with them) and rejoined.
    const std::complex<double> v = value ? value->ToComplex() : std::complex<double>(0.0);
    const std::optional<Scalar> re = value ? std::optional<Scalar>(Scalar(v.real())) : std::nullopt;
    const std::optional<Scalar> im = value ? std::optional<Scalar>(Scalar(v.imag())) : std::nullopt;
    return Complex(Pad(Real(input), pad, mode, re), Pad(Imag(input), pad, mode, im));
  }
  Tensor out = Empty(p.out, input.dtype(), input.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor x = Contiguous(input);
  const Scalar fill = value.value_or(Scalar(0));
  const std::vector<int64_t>& last = p.maps.empty() ? std::vector<int64_t>() : p.maps.back();
  const int64_t w_out = p.out.empty() ? 1 : p.out.back();
  if (p.maps.empty()) {  // pad = (): a copy
    CopyInto(out, x);
    return out;
  }
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    DispatchAll(input.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      const T v = fill.To<T>();
      cuda::PadForward(x, out, p.first, MapsOn(p, out.device()), &v);
    });
    return out;
  }
#endif
  DispatchAll(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T v = fill.To<T>();
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    // For constant mode, the last dim's copied span: [lo, hi) of the output from lo - left.
    int64_t lo = 0, hi = 0;
    if (p.mode == PadMode::kConstant) {
      while (lo < w_out && last[lo] < 0) ++lo;
      hi = lo;
      while (hi < w_out && last[hi] >= 0) ++hi;
    }
    const int64_t planes = Planes(p);
    ParallelFor(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, out.numel() / std::max<int64_t>(1, planes))),
                [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        ForEachRow(p, plane, [&](int64_t dst, int64_t src) {
          T* o = op + dst;
          if (src < 0) {
            for (int64_t k = 0; k < w_out; ++k) o[k] = v;
          } else if (p.mode == PadMode::kConstant) {
            for (int64_t k = 0; k < lo; ++k) o[k] = v;
            if (hi > lo) std::memcpy(static_cast<void*>(o + lo), xp + src + last[lo], (hi - lo) * sizeof(T));
            for (int64_t k = hi; k < w_out; ++k) o[k] = v;
          } else {
            const T* s = xp + src;
            for (int64_t k = 0; k < w_out; ++k) o[k] = s[last[k]];
          }
        });
      }
    });
  });
  return out;
}

Tensor PadBackward(const Tensor& grad_output, const DimVector& input_sizes, const DimVector& pad,
                   const std::string& mode) {
  OpScope scope("pad_backward");
  PadPlan p = MakePlan(input_sizes, pad, mode);
  OF_CHECK(grad_output.sizes() == p.out) << "grad_output of shape " << ShapeStr(grad_output.sizes())
                                         << " for a padded shape " << ShapeStr(p.out);
  if (IsComplex(grad_output.dtype()))  // the adjoint is real-linear: each part on its own
    return Complex(PadBackward(Real(grad_output), input_sizes, pad, mode),
                   PadBackward(Imag(grad_output), input_sizes, pad, mode));
  Tensor out = Empty(input_sizes, grad_output.dtype(), grad_output.device());
  if (out.device().type == DeviceType::kMeta) return out;
  FillWith(out, Scalar(0));
  if (out.numel() == 0 || grad_output.numel() == 0) return out;
  if (p.maps.empty()) {
    CopyInto(out, grad_output);
    return out;
  }
  Tensor g = Contiguous(grad_output);
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    OF_CHECK_TYPE(out.dtype() != DType::kBool) << "not supported for bool tensors";  // as the CPU
    cuda::PadBackward(g, out, p.first, MapsOn(p, out.device()));
    return out;
  }
#endif
  const std::vector<int64_t>& last = p.maps.back();
  const int64_t w_out = p.out.back();
  DispatchNumber(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    const int64_t planes = Planes(p);
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.numel() / planes));
    ParallelFor(0, planes, grain, [&](int64_t b, int64_t e) {
      for (int64_t plane = b; plane < e; ++plane) {
        ForEachRow(p, plane, [&](int64_t dst, int64_t src) {
          if (src < 0) return;
          const T* gr = gp + dst;
          T* o = op + src;
          for (int64_t k = 0; k < w_out; ++k) {
            if (last[k] < 0) continue;
            o[last[k]] = static_cast<T>(static_cast<M>(o[last[k]]) + static_cast<M>(gr[k]));
          }
        });
      }
    });
  });
  return out;
}

}  // namespace oneflow
