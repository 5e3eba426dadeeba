// Differentiable entries of pixel_shuffle / pixel_unshuffle (`backward: manual` in
// src/ops/table/resample.yaml): reshape, permute, reshape - their gradients come from the views.
#include "autograd/formulas.h"
#include "core/checked.h"
#include "decl/permute.h"
#include "decl/pixel_shuffle.h"
#include "decl/pixel_unshuffle.h"
#include "decl/reshape.h"

namespace oneflow::functional {

namespace {
void CheckShuffle(const Tensor& input, int64_t factor, const char* op, const char* what) {
  OF_CHECK(input.dim() >= 3) << op << " expects input to have at least 3 dimensions, but got input with "
                             << input.dim() << " dimension(s)";
  OF_CHECK(factor > 0) << op << " expects a positive " << what << ", but got " << factor;
}

DimVector Batch(const Tensor& input) { return DimVector(input.sizes().begin(), input.sizes().end() - 3); }

DimVector With(DimVector head, std::initializer_list<int64_t> tail) {
  for (int64_t v : tail) head.push_back(v);
  return head;
}

// The permutation of the last `k` dims by `perm`, leading dims kept.
DimVector Perm(int lead, std::initializer_list<int64_t> perm) {
  DimVector p;
  for (int d = 0; d < lead; ++d) p.push_back(d);
  for (int64_t v : perm) p.push_back(lead + v);
  return p;
}
}  // namespace

// [*, C r^2, H, W] -> [*, C, H r, W r]
Tensor PixelShuffle(const Tensor& input, int64_t upscale_factor) {
  OpScope scope("pixel_shuffle");
  CheckShuffle(input, upscale_factor, "pixel_shuffle", "upscale_factor");
  const int64_t r = upscale_factor, c = input.size(-3), h = input.size(-2), w = input.size(-1);
  const int64_t r2 = CheckedMul(r, r, "upscale factor is too large, (upscale_factor)^2", ErrorKind::kValue);
  OF_CHECK(c % r2 == 0) << "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                                "square of upscale_factor, but input.size(-3)=" << c << " is not divisible by "
                             << r2;
  const DimVector b = Batch(input);
  const int lead = b.size();
  Tensor x = functional::Reshape(input, With(b, {c / r2, r, r, h, w}));
  x = functional::Permute(x, Perm(lead, {0, 3, 1, 4, 2}));
  return functional::Reshape(x, With(b, {c / r2, h * r, w * r}));
}

// [*, C, H r, W r] -> [*, C r^2, H, W]
Tensor PixelUnshuffle(const Tensor& input, int64_t downscale_factor) {
  OpScope scope("pixel_unshuffle");
  CheckShuffle(input, downscale_factor, "pixel_unshuffle", "downscale_factor");
  const int64_t r = downscale_factor, c = input.size(-3), h = input.size(-2), w = input.size(-1);
  OF_CHECK(h % r == 0) << "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)="
                       << h << " is not divisible by " << r;
  OF_CHECK(w % r == 0) << "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)="
                       << w << " is not divisible by " << r;
  const DimVector b = Batch(input);
  const int lead = b.size();
  Tensor x = functional::Reshape(input, With(b, {c, h / r, r, w / r, r}));
  x = functional::Permute(x, Perm(lead, {0, 2, 4, 1, 3}));
  const int64_t c_out = CheckedMul(CheckedMul(c, r, "the output's channels"), r, "the output's channels");
  return functional::Reshape(x, With(b, {c_out, h / r, w / r}));
}

}  // namespace oneflow::functional
