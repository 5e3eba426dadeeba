// Kernel entries of the composite pixel shuffles (src/autograd/composite/resample.cpp).
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "decl/pixel_shuffle.h"
#include "decl/pixel_unshuffle.h"

namespace oneflow {

Tensor PixelShuffle(const Tensor& input, int64_t upscale_factor) {
  AutoGradMode no_grad(false);
  return functional::PixelShuffle(input, upscale_factor);
}

Tensor PixelUnshuffle(const Tensor& input, int64_t downscale_factor) {
  AutoGradMode no_grad(false);
  return functional::PixelUnshuffle(input, downscale_factor);
}

}  // namespace oneflow
