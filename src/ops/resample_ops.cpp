// interpolate and its backward (src/ops/table/resample.yaml): the arguments checked into a
// ResampleSetup (modes, output size, scales, PyTorch's messages), the separable passes run by
// kernels/resample.h's kernel.
#include <cmath>
#include <vector>

#include "kernels/resample.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/interpolate.h"
#include "decl/interpolate_backward.h"
#include "decl/mode.h"

namespace oneflow {

namespace {

using Mode = ResampleMode;
using Setup = ResampleSetup;

Setup MakeSetup(const DimVector& in, const std::optional<DimVector>& size,
                const std::optional<std::vector<double>>& scale_factor, const std::string& mode,
                const std::optional<bool>& align_corners, const std::optional<bool>& recompute_scale_factor,
                bool antialias) {
  Setup s;
  s.in = in;
  const int nd = in.size(), k = nd - 2;
  static const char* kModes = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact";
  bool known_mode = true;
  if (mode == "nearest") s.mode = Mode::kNearest;
  else if (mode == "nearest-exact") s.mode = Mode::kNearestExact;
  else if (mode == "area") s.mode = Mode::kArea;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") s.mode = Mode::kLinear;
  else if (mode == "bicubic") s.mode = Mode::kCubic;
  else known_mode = false;
  // PyTorch's order of checks: align_corners against the mode, size / scale_factor, then the
  // input's rank and the mode itself (an unknown mode is its last error).
  const bool interp = s.mode == Mode::kLinear || s.mode == Mode::kCubic;
  OF_CHECK_VALUE(!align_corners || interp || !known_mode)
      << "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear";
  s.align_corners = align_corners.value_or(false);
  OF_CHECK_VALUE(!(size && scale_factor)) << "only one of size or scale_factor should be defined";
  OF_CHECK_VALUE(size || scale_factor) << "either size or scale_factor should be defined";
  OF_CHECK_KIND(known_mode && nd >= 3 && nd <= 5, ErrorKind::kNotImplemented)
      << "Input Error: Only 3D, 4D and 5D input Tensors supported (got " << nd << "D) for the modes: " << kModes
      << " (got " << mode << ")";
  const int want = mode == "linear" ? 3 : mode == "bilinear" || mode == "bicubic" ? 4 : mode == "trilinear" ? 5 : nd;
  OF_CHECK_KIND(nd == want, ErrorKind::kNotImplemented)
      << "Got " << nd << "D input, but " << mode << " mode needs " << want << "D input";
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
  ResampleInto(s, x, out, false);
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
  ResampleInto(s, g, out, true);
  return out;
}

}  // namespace oneflow
