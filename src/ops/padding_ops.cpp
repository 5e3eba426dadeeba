// pad and its backward (src/ops/table/padding.yaml): the arguments checked and the plan made here
// (each padded dim's index map from output position to source position, -1: the constant), the
// loops in kernels/pad.h.
#include "core/checked.h"
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "kernels/pad.h"
#include "decl/complex.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/imag.h"
#include "decl/pad.h"
#include "decl/pad_backward.h"
#include "decl/real.h"

namespace oneflow {

namespace {

PadMode ParsePadMode(const std::string& mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "replicate") return PadMode::kReplicate;
  if (mode == "circular") return PadMode::kCircular;
  OF_THROW(kNotImplemented) << "Unrecognised padding mode " << mode;
}

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
  if (p.maps.empty()) {  // pad = (): a copy
    CopyInto(out, x);
    return out;
  }
  PadRows(x, out, p, fill);
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
  PadRowsBackward(g, out, p);
  return out;
}

}  // namespace oneflow
