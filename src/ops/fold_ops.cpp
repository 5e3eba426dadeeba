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
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/ops.h"
#endif

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

// Calls f(col_index, image_index or -1 for padding) for every element of one channel's columns.
template <typename F>
void ForEachTap(const Geometry& g, int64_t c, const F& f) {
  const int64_t L = g.oh * g.ow;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t row = (c * g.kh + i) * g.kw + j;
      for (int64_t by = 0; by < g.oh; ++by) {
        const int64_t y = by * g.sh - g.ph + i * g.dh;
        for (int64_t bx = 0; bx < g.ow; ++bx) {
          const int64_t x = bx * g.sw - g.pw + j * g.dw;
          const bool inside = y >= 0 && y < g.H && x >= 0 && x < g.W;
          f(row * L + by * g.ow + bx, inside ? (c * g.H + y) * g.W + x : -1);
        }
      }
    }
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
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    cuda::Im2col(x, out, N, C, g);
    return out;
  }
#endif
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int64_t in_n = C * g.H * g.W, out_n = C * g.kh * g.kw * g.oh * g.ow;
    ParallelFor(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, out_n / std::max<int64_t>(1, C))),
                [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / C, c = nc % C;
        ForEachTap(g, c, [&](int64_t col, int64_t img) {
          op[n * out_n + col] = img < 0 ? static_cast<T>(0) : xp[n * in_n + img];
        });
      }
    });
  });
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
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {  // every element gathered: no zero fill needed
    OF_CHECK_TYPE(input.dtype() != DType::kBool) << "not supported for bool tensors";  // as the CPU
    cuda::Col2im(Contiguous(input), out, N, C, g);
    return out;
  }
#endif
  FillWith(out, Scalar(0));
  if (out.numel() == 0 || input.numel() == 0) return out;
  Tensor x = Contiguous(input);
  DispatchNumber(x.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int64_t in_n = rows * cols, out_n = C * H * W;
    ParallelFor(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, in_n / std::max<int64_t>(1, C))),
                [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / C, c = nc % C;
        ForEachTap(g, c, [&](int64_t col, int64_t img) {
          if (img >= 0) op[n * out_n + img] = static_cast<T>(static_cast<M>(op[n * out_n + img]) + static_cast<M>(xp[n * in_n + col]));
        });
      }
    });
  });
  return out;
}

}  // namespace oneflow
