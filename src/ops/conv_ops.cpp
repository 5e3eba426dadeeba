// Convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d and conv_weight_grad (the weight gradient,
// an op of its own so that its derivatives stay in the table). Meta inference checks what
// PyTorch's ConvParams/check_shape_forward check, with its messages; the kernels are
// kernels/conv.h. float16/bfloat16 compute in float32 (oneDNN has no half kernels for AVX2
// CPUs) and round once at the end.
#include <sstream>

#include "kernels/conv.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/complex.h"
#include "decl/contiguous.h"
#include "decl/conv1d.h"
#include "decl/conv2d.h"
#include "decl/conv3d.h"
#include "decl/conv_transpose1d.h"
#include "decl/conv_transpose2d.h"
#include "decl/conv_transpose3d.h"
#include "decl/conv_weight_grad.h"
#include "decl/empty.h"
#include "decl/imag.h"
#include "decl/real.h"
#include "decl/reshape.h"

namespace oneflow {

namespace {

std::string Joined(const int64_t* v, int n, const char* sep) {
  std::ostringstream s;
  for (int i = 0; i < n; ++i) s << (i ? sep : "") << v[i];
  return s.str();
}

// PyTorch's expand_param_if_needed: one value for every spatial dim, or exactly k of them.
void ExpandParam(const DimVector& v, int k, const char* name, int64_t* out) {
  OF_CHECK(v.size() == 1 || v.size() == k)
      << "expected " << name << " to be a single integer value or a list of " << k
      << " values to match the convolution dimensions, but got " << name << "=" << ShapeStr(v);
  for (int d = 0; d < k; ++d) out[d] = v[v.size() == 1 ? 0 : d];
}

// Spatial parameters of one call, in the order of the tensor's dims.
struct Params {
  int k = 0;
  int64_t stride[3], pad[3], dil[3], out_pad[3] = {0, 0, 0};
};

const char* kDimNames[3][3] = {{"width"}, {"height", "width"}, {"depth", "height", "width"}};

DType ComputeDType(DType dt) {
  return dt == DType::kFloat16 || dt == DType::kBFloat16 ? DType::kFloat32 : dt;
}

// The input as a batched tensor: unbatched inputs (one dim less) get a leading 1.
Tensor Batched(const Tensor& t, bool batched) {
  if (batched) return t;
  DimVector s = t.sizes(), st = t.strides();
  s.insert(0, 1);
  st.insert(0, t.numel() == 0 ? 1 : t.strides()[0] * t.sizes()[0]);
  return MakeView(t, s, st, t.offset());
}

bool CheckInputRank(const Tensor& input, int k, const char* name) {
  OF_CHECK(input.dim() == k + 1 || input.dim() == k + 2)
      << "Expected " << k + 1 << "D (unbatched) or " << k + 2 << "D (batched) input to " << name
      << ", but got input of size: " << ShapeStr(input.sizes());
  return input.dim() == k + 2;
}

void CheckWeightRank(const Tensor& x, const Tensor& weight, int k) {
  OF_CHECK(weight.dim() >= 3) << "weight should have at least three dimensions";
  OF_CHECK(weight.dim() == k + 2)
      << "Expected " << weight.dim() << "-dimensional input for " << weight.dim() << "-dimensional weight "
      << ShapeStr(weight.sizes()) << ", but got " << x.dim() << "-dimensional input of size "
      << ShapeStr(x.sizes()) << " instead";
}

void CheckDTypes(const Tensor& input, const Tensor& weight, const Tensor& bias, const char* name) {
  CheckSameDevice(input, weight);
  OF_CHECK(input.dtype() == weight.dtype())
      << "Input type (" << DTypeName(input.dtype()) << ") and weight type (" << DTypeName(weight.dtype())
      << ") should be the same";
  if (bias.defined()) {
    CheckSameDevice(input, bias);
    OF_CHECK(input.dtype() == bias.dtype()) << "Input type (" << DTypeName(input.dtype()) << ") and bias type ("
                                            << DTypeName(bias.dtype()) << ") should be the same";
  }
  OF_CHECK(input.dtype() != DType::kBool) << "\"" << name << "\" not implemented for 'Bool'";
}

Params MakeParams(int k, const DimVector& stride, const DimVector& padding, const DimVector& dilation,
                  const DimVector* output_padding) {
  Params p;
  p.k = k;
  ExpandParam(stride, k, "stride", p.stride);
  ExpandParam(padding, k, "padding", p.pad);
  ExpandParam(dilation, k, "dilation", p.dil);
  if (output_padding) ExpandParam(*output_padding, k, "output_padding", p.out_pad);
  for (int d = 0; d < k; ++d) {
    OF_CHECK(p.stride[d] > 0) << "non-positive stride is not supported";
    OF_CHECK(p.pad[d] >= 0) << "negative padding is not supported";
    OF_CHECK(p.out_pad[d] >= 0) << "negative output_padding is not supported";
    OF_CHECK(p.dil[d] > 0) << "non-positive dilation is not supported";
  }
  return p;
}

void CheckGroups(const Tensor& weight, int64_t groups) {
  OF_CHECK(groups > 0) << "non-positive groups is not supported";
  OF_CHECK(weight.sizes()[0] >= groups)
      << "Given groups=" << groups << ", expected weight to be at least " << groups
      << " at dimension 0, but got weight of size " << ShapeStr(weight.sizes()) << " instead";
  OF_CHECK(weight.sizes()[0] % groups == 0)
      << "Given groups=" << groups << ", expected weight to be divisible by " << groups
      << " at dimension 0, but got weight of size " << ShapeStr(weight.sizes()) << " instead";
}

void CheckBias(const Tensor& bias, const Tensor& weight, int64_t channels, bool transposed) {
  if (!bias.defined()) return;
  OF_CHECK(bias.dim() == 1 && bias.sizes()[0] == channels)
      << "Given " << (transposed ? "transposed=1, " : "") << "weight of size " << ShapeStr(weight.sizes())
      << ", expected bias to be 1-dimensional with " << channels << " elements, but got bias of size "
      << ShapeStr(bias.sizes()) << " instead";
}

// Geometry with the spatial dims right-aligned in the 3 slots (kernels/conv.h).
ConvGeom MakeGeom(const Params& p, int64_t n, int64_t cx, int64_t cy, int64_t groups, const int64_t* xs,
                  const int64_t* ys, const int64_t* ks) {
  ConvGeom g;
  g.k = p.k;
  g.n = n, g.cx = cx, g.cy = cy, g.groups = groups;
  for (int d = 0; d < p.k; ++d) {
    const int s = 3 - p.k + d;
    g.xs[s] = xs[d], g.ys[s] = ys[d], g.ks[s] = ks[d];
    g.stride[s] = p.stride[d], g.pad[s] = p.pad[d], g.dil[s] = p.dil[d];
  }
  return g;
}

// Contiguous, in the compute dtype.
Tensor Prepared(const Tensor& t) {
  if (!t.defined()) return t;
  return Contiguous(CastTo(t, ComputeDType(t.dtype())));
}

// The result (batched shape out_shape; returned without the batch dim for unbatched inputs, as
// a tensor of its own, not a view) computed by `run` into a batched tensor of the compute dtype.
template <typename F>
Tensor RunInto(const DimVector& out_shape, const Tensor& like, bool batched, F&& run) {
  const DType cd = ComputeDType(like.dtype());
  DimVector shape = out_shape;
  if (!batched) shape.erase(0);
  Tensor out = Empty(shape, like.dtype(), like.device());
  if (like.device().type == DeviceType::kMeta) return out;
  Tensor work = cd == like.dtype() ? Batched(out, batched) : Empty(out_shape, cd, like.device());
  run(work);
  if (cd != like.dtype()) CopyInto(out, MakeView(work, shape, ContiguousStrides(shape), work.offset()));
  return out;
}

// Note [Complex convolutions]: each op here is bilinear in its two tensor operands (input and
// weight; input and grad_output for the weight gradient), so with u = a + ib and v = c + id
//   op(u, v) = (op(a, c) - op(b, d)) + i (op(a, d) + op(b, c)):
// four real ops on the parts, on the real kernels (oneDNN, cuDNN, im2col + gemm). PyTorch takes
// Gauss's three (the imaginary part as op(a + b, c + d) - op(a, c) - op(b, d)), which cancels
// when the parts differ much in size; the fourth op keeps each part as accurate as a real
// convolution. A complex bias (linear) adds its parts to the two results. The gradients need
// nothing more: the table's formulas conjugate the other operand (src/ops/table/conv.yaml).
template <typename Op>
Tensor ComplexBilinear(const Tensor& u, const Tensor& v, const Tensor& bias, Op&& op) {
  const Tensor a = Real(u), b = Imag(u), c = Real(v), d = Imag(v);
  Tensor re = op(a, c, bias.defined() ? Real(bias) : Tensor());
  Add_(re, op(b, d, Tensor()), Scalar(-1));
  Tensor im = op(a, d, bias.defined() ? Imag(bias) : Tensor());
  Add_(im, op(b, c, Tensor()), Scalar(1));
  return Complex(re, im);
}

Tensor Conv(int k, const char* name, const Tensor& input, const Tensor& weight, const Tensor& bias,
            const DimVector& stride, const DimVector& padding, const DimVector& dilation, int64_t groups) {
  const bool batched = CheckInputRank(input, k, name);
  const Tensor x = Batched(input, batched);
  CheckWeightRank(x, weight, k);
  const Params p = MakeParams(k, stride, padding, dilation, nullptr);
  CheckDTypes(input, weight, bias, name);
  if (IsComplex(input.dtype()))
    return ComplexBilinear(input, weight, bias, [&](const Tensor& x_part, const Tensor& w_part, const Tensor& b_part) {
      return Conv(k, name, x_part, w_part, b_part, stride, padding, dilation, groups);
    });
  CheckGroups(weight, groups);
  const int64_t cin = weight.sizes()[1] * groups;
  OF_CHECK(x.sizes()[1] == cin)
      << "Given groups=" << groups << ", weight of size " << ShapeStr(weight.sizes()) << ", expected input"
      << ShapeStr(x.sizes()) << " to have " << cin << " channels, but got " << x.sizes()[1] << " channels instead";
  CheckBias(bias, weight, weight.sizes()[0], false);
  int64_t padded[3], keff[3], xs[3], ys[3], ks[3];
  bool fits = true;
  for (int d = 0; d < k; ++d) {
    xs[d] = x.sizes()[2 + d];
    ks[d] = weight.sizes()[2 + d];
    padded[d] = xs[d] + 2 * p.pad[d];
    keff[d] = p.dil[d] * (ks[d] - 1) + 1;
    fits = fits && padded[d] >= keff[d];
  }
  OF_CHECK(fits) << "Calculated padded input size per channel: (" << Joined(padded, k, " x ") << "). Kernel size: ("
                 << Joined(keff, k, " x ") << "). Kernel size can't be greater than actual input size";
  DimVector out_shape{x.sizes()[0], weight.sizes()[0]};
  for (int d = 0; d < k; ++d) {
    ys[d] = (padded[d] - keff[d]) / p.stride[d] + 1;
    out_shape.push_back(ys[d]);
  }
  return RunInto(out_shape, input, batched, [&](const Tensor& y) {
    const ConvGeom g = MakeGeom(p, x.sizes()[0], cin, weight.sizes()[0], groups, xs, ys, ks);
    ConvForward(g, Prepared(x), Prepared(weight), Prepared(bias), y);
  });
}

Tensor ConvTranspose(int k, const char* name, const Tensor& input, const Tensor& weight, const Tensor& bias,
                     const DimVector& stride, const DimVector& padding, const DimVector& output_padding,
                     int64_t groups, const DimVector& dilation) {
  const bool batched = CheckInputRank(input, k, name);
  const Tensor y = Batched(input, batched);
  CheckWeightRank(y, weight, k);
  const Params p = MakeParams(k, stride, padding, dilation, &output_padding);
  CheckDTypes(input, weight, bias, name);
  if (IsComplex(input.dtype()))
    return ComplexBilinear(input, weight, bias, [&](const Tensor& y_part, const Tensor& w_part, const Tensor& b_part) {
      return ConvTranspose(k, name, y_part, w_part, b_part, stride, padding, output_padding, groups, dilation);
    });
  bool op_ok = true;
  for (int d = 0; d < k; ++d) op_ok = op_ok && (p.out_pad[d] < p.stride[d] || p.out_pad[d] < p.dil[d]);
  if (!op_ok) {
    std::ostringstream s;
    for (const char* what : {"output_padding", "stride", "dilation"})
      for (int d = 0; d < k; ++d) {
        const int64_t* v = what[0] == 'o' ? p.out_pad : what[0] == 's' ? p.stride : p.dil;
        s << (s.tellp() ? " " : "") << what << "_" << kDimNames[k - 1][d] << ": " << v[d];
      }
    OF_THROW(kRuntime) << "output padding must be smaller than either stride or dilation, but got " << s.str();
  }
  CheckGroups(weight, groups);
  OF_CHECK(y.sizes()[1] == weight.sizes()[0])
      << "Given transposed=1, weight of size " << ShapeStr(weight.sizes()) << ", expected input"
      << ShapeStr(y.sizes()) << " to have " << weight.sizes()[0] << " channels, but got " << y.sizes()[1]
      << " channels instead";
  const int64_t cout = weight.sizes()[1] * groups;
  CheckBias(bias, weight, cout, true);
  int64_t xs[3], ys[3], ks[3];
  bool positive = true, non_negative = true;
  for (int d = 0; d < k; ++d) {
    ys[d] = y.sizes()[2 + d];
    ks[d] = weight.sizes()[2 + d];
    xs[d] = (ys[d] - 1) * p.stride[d] - 2 * p.pad[d] + p.dil[d] * (ks[d] - 1) + p.out_pad[d] + 1;
    positive = positive && xs[d] > 0;
    non_negative = non_negative && xs[d] >= 0;
  }
  // An empty batch may give empty output sizes (PyTorch checks nothing more for it).
  OF_CHECK(positive || (y.sizes()[0] == 0 && non_negative)) << "Given input size per channel: (" << Joined(ys, k, " x ")
                     << "). Calculated output size per channel: (" << Joined(xs, k, " x ")
                     << "). Output size is too small";
  DimVector out_shape{y.sizes()[0], cout};
  for (int d = 0; d < k; ++d) out_shape.push_back(xs[d]);
  return RunInto(out_shape, input, batched, [&](const Tensor& x) {
    const ConvGeom g = MakeGeom(p, y.sizes()[0], cout, weight.sizes()[0], groups, xs, ys, ks);
    ConvBackwardData(g, Prepared(y), Prepared(weight), x);
    if (!bias.defined() || x.numel() == 0) return;
    if (x.device().type == DeviceType::kCUDA) {  // (AddChannelBias walks host memory)
      DimVector channel(x.dim(), 1);
      channel[1] = x.sizes()[1];
      Tensor xo = x;
      Add_(xo, Reshape(Prepared(bias), channel), Scalar(1));
      return;
    }
    AddChannelBias(x, Prepared(bias));
  });
}

}  // namespace

Tensor Conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const DimVector& stride,
              const DimVector& padding, const DimVector& dilation, int64_t groups) {
  OpScope scope("conv1d");
  return Conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups);
}

Tensor Conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const DimVector& stride,
              const DimVector& padding, const DimVector& dilation, int64_t groups) {
  OpScope scope("conv2d");
  return Conv(2, "conv2d", input, weight, bias, stride, padding, dilation, groups);
}

Tensor Conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const DimVector& stride,
              const DimVector& padding, const DimVector& dilation, int64_t groups) {
  OpScope scope("conv3d");
  return Conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups);
}

Tensor ConvTranspose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const DimVector& stride,
                       const DimVector& padding, const DimVector& output_padding, int64_t groups,
                       const DimVector& dilation) {
  OpScope scope("conv_transpose1d");
  return ConvTranspose(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups, dilation);
}

Tensor ConvTranspose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const DimVector& stride,
                       const DimVector& padding, const DimVector& output_padding, int64_t groups,
                       const DimVector& dilation) {
  OpScope scope("conv_transpose2d");
  return ConvTranspose(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups, dilation);
}

Tensor ConvTranspose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const DimVector& stride,
                       const DimVector& padding, const DimVector& output_padding, int64_t groups,
                       const DimVector& dilation) {
  OpScope scope("conv_transpose3d");
  return ConvTranspose(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups, dilation);
}

Tensor ConvWeightGrad(const Tensor& input, const Tensor& grad_output, const DimVector& weight_size,
                      const DimVector& stride, const DimVector& padding, const DimVector& dilation, int64_t groups) {
  OpScope scope("conv_weight_grad");
  const int k = weight_size.size() - 2;
  OF_CHECK(k >= 1 && k <= 3) << "weight_size must have 3 to 5 entries, got " << ShapeStr(weight_size);
  const bool batched = CheckInputRank(input, k, "conv_weight_grad");
  OF_CHECK(grad_output.dim() == input.dim())
      << "grad_output of size " << ShapeStr(grad_output.sizes()) << " does not match input of size "
      << ShapeStr(input.sizes());
  const Tensor x = Batched(input, batched), dy = Batched(grad_output, batched);
  const Params p = MakeParams(k, stride, padding, dilation, nullptr);
  CheckDTypes(x, dy, Tensor(), "conv_weight_grad");
  if (IsComplex(x.dtype()))
    return ComplexBilinear(input, grad_output, Tensor(), [&](const Tensor& x_part, const Tensor& dy_part, const Tensor&) {
      return ConvWeightGrad(x_part, dy_part, weight_size, stride, padding, dilation, groups);
    });
  OF_CHECK(groups > 0 && weight_size[0] % groups == 0 && x.sizes()[1] == weight_size[1] * groups &&
           dy.sizes()[1] == weight_size[0] && dy.sizes()[0] == x.sizes()[0])
      << "weight of size " << ShapeStr(weight_size) << " with groups=" << groups << " does not relate input "
      << ShapeStr(x.sizes()) << " and grad_output " << ShapeStr(dy.sizes());
  int64_t xs[3], ys[3], ks[3];
  for (int d = 0; d < k; ++d) {
    xs[d] = x.sizes()[2 + d];
    ks[d] = weight_size[2 + d];
    ys[d] = dy.sizes()[2 + d];
    // At most the convolution's output size: a transposed convolution with output_padding has
    // input rows (its output) that no window reaches.
    const int64_t most = (xs[d] + 2 * p.pad[d] - p.dil[d] * (ks[d] - 1) - 1) / p.stride[d] + 1;
    OF_CHECK(ys[d] >= 1 && ys[d] <= most) << "grad_output of size " << ShapeStr(dy.sizes())
                                          << " does not fit the convolution of input " << ShapeStr(x.sizes());
  }
  const DType cd = ComputeDType(x.dtype());
  Tensor dw = Empty(weight_size, x.dtype(), x.device());
  if (x.device().type == DeviceType::kMeta) return dw;
  Tensor work = cd == x.dtype() ? dw : Empty(weight_size, cd, x.device());
  const ConvGeom g = MakeGeom(p, x.sizes()[0], x.sizes()[1], dy.sizes()[1], groups, xs, ys, ks);
  ConvBackwardWeight(g, Prepared(x), Prepared(dy), work);
  if (!work.is_same(dw)) CopyInto(dw, work);
  return dw;
}

}  // namespace oneflow
