// im2col (nn.functional.unfold) and col2im (nn.functional.fold), src/ops/table/resample.yaml:
// sliding kh x kw blocks of a [N, C, H, W] input as the columns of [N, C*kh*kw, L], and the
// adjoint that adds the columns back into place. 3-D inputs are unbatched.
#include <vector>

#include "core/parallel.h"
#include "kernels/fold.h"
#include "ops/copy.h"
#include "decl/col2im.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/im2col.h"

namespace oneflow {

namespace {

using Geometry = FoldGeometry;

// A 1- or 2-element int list as a pair (PyTorch's _pair).
std::pair<int64_t, int64_t> Pair(const DimVector& v, const char* what) {
  OF_CHECK(v.size() == 1 || v.size() == 2) << what << " must be an int or a pair of ints, got " << ShapeStr(v);
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

Geometry MakeGeometry(int64_t H, int64_t W, const DimVector& kernel_size, const DimVector& dilation,
                      const DimVector& padding, const DimVector& stride) {
  Geometry g;
  std::tie(g.kh, g.kw) = Pair(kernel_size, "kernel_size");
  std::tie(g.dh, g.dw) = Pair(dilation, "dilation");
  std::tie(g.ph, g.pw) = Pair(padding, "padding");
  std::tie(g.sh, g.sw) = Pair(stride, "stride");
  OF_CHECK(g.kh > 0 && g.kw > 0) << "kernel size should be greater than zero, but got kernel_height: " << g.kh
                                 << " kernel_width: " << g.kw;
  OF_CHECK(g.dh > 0 && g.dw > 0) << "dilation should be greater than zero, but got dilation_height: " << g.dh
                                 << " dilation_width: " << g.dw;
  OF_CHECK(g.ph >= 0 && g.pw >= 0) << "padding should be non-negative, but got pad_height: " << g.ph
                                   << " pad_width: " << g.pw;
  OF_CHECK(g.sh > 0 && g.sw > 0) << "stride should be greater than zero, but got stride_height: " << g.sh
                                 << " stride_width: " << g.sw;
  g.H = H;
  g.W = W;
  g.oh = (H + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  g.ow = (W + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  OF_CHECK(g.oh >= 1 && g.ow >= 1 && H + 2 * g.ph >= g.dh * (g.kh - 1) + 1 && W + 2 * g.pw >= g.dw * (g.kw - 1) + 1)
      << "Given input with spatial size (" << H << ", " << W << "), kernel_size=(" << g.kh << ", " << g.kw
      << "), dilation=(" << g.dh << ", " << g.dw << "), padding=(" << g.ph << ", " << g.pw
      << "), calculated shape of the array of sliding blocks as (" << g.oh << ", " << g.ow
      << "), but its components must be at least one.";
  return g;
}

}  // namespace

Tensor Im2col(const Tensor& input, const DimVector& kernel_size, const DimVector& dilation, const DimVector& padding,
              const DimVector& stride) {
  OpScope scope("im2col");
  OF_CHECK(input.dim() == 3 || input.dim() == 4)
      << "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions, but got: "
      << ShapeStr(input.sizes());
  const bool batched = input.dim() == 4;
  const int64_t N = batched ? input.sizes()[0] : 1, C = input.sizes()[input.dim() - 3];
  const Geometry g = MakeGeometry(input.sizes()[input.dim() - 2], input.sizes()[input.dim() - 1], kernel_size,
                                  dilation, padding, stride);
  DimVector out_sizes{C * g.kh * g.kw, g.oh * g.ow};
  if (batched) out_sizes.insert(0, N);
  Tensor out = Empty(out_sizes, input.dtype(), input.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor x = Contiguous(input);
  UnfoldColumns(x, out, N, C, g);
  return out;
}

Tensor Col2im(const Tensor& input, const DimVector& output_size, const DimVector& kernel_size,
              const DimVector& dilation, const DimVector& padding, const DimVector& stride) {
  OpScope scope("col2im");
  OF_CHECK(input.dim() == 2 || input.dim() == 3)
      << "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions, but got: "
      << ShapeStr(input.sizes());
  const auto [H, W] = Pair(output_size, "output_size");
  const bool batched = input.dim() == 3;
  const int64_t N = batched ? input.sizes()[0] : 1;
  const int64_t rows = input.sizes()[input.dim() - 2], cols = input.sizes()[input.dim() - 1];
  const Geometry g = MakeGeometry(H, W, kernel_size, dilation, padding, stride);
  OF_CHECK(rows % (g.kh * g.kw) == 0)
      << "Expected size of input's dimension " << (batched ? 1 : 0)
      << " to be divisible by the product of kernel_size, but got input.size(" << (batched ? 1 : 0) << ")=" << rows
      << " and kernel_size=(" << g.kh << ", " << g.kw << ")";
  OF_CHECK(cols == g.oh * g.ow)
      << "Given output_size=(" << H << ", " << W << "), kernel_size=(" << g.kh << ", " << g.kw << "), dilation=("
      << g.dh << ", " << g.dw << "), padding=(" << g.ph << ", " << g.pw << "), stride=(" << g.sh << ", " << g.sw
      << "), expected size of input's dimension " << (batched ? 2 : 1) << " to match the calculated number of "
      << "sliding blocks " << g.oh << " * " << g.ow << " = " << g.oh * g.ow << ", but got input.size("
      << (batched ? 2 : 1) << ")=" << cols << ".";
  const int64_t C = rows / (g.kh * g.kw);
  DimVector out_sizes{C, H, W};
  if (batched) out_sizes.insert(0, N);
  Tensor out = Empty(out_sizes, input.dtype(), input.device());
  if (out.device().type == DeviceType::kMeta) return out;
  FoldColumns(Contiguous(input), out, N, C, g);
  return out;
}

}  // namespace oneflow
