// Pooling entries (src/ops/table/pool.yaml): shape inference and PyTorch's checks, then the plane
// kernels of kernels/pool.h. Inputs are (N, C, *spatial) or unbatched (C, *spatial); every
// leading dim just multiplies the planes. float16/bfloat16 compute in float32 (a max is exact, an
// average rounds once, as in PyTorch).
#include <cstdint>
#include <sstream>

#include "kernels/pool.h"
#include "ops/copy.h"
#include "ops/index_util.h"
#include "decl/adaptive_avg_pool1d.h"
#include "decl/adaptive_avg_pool2d.h"
#include "decl/adaptive_avg_pool3d.h"
#include "decl/adaptive_avg_pool_grad.h"
#include "decl/adaptive_max_pool1d.h"
#include "decl/adaptive_max_pool2d.h"
#include "decl/adaptive_max_pool3d.h"
#include "decl/avg_pool1d.h"
#include "decl/avg_pool2d.h"
#include "decl/avg_pool3d.h"
#include "decl/avg_pool_grad.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/expand.h"
#include "decl/max_pool1d.h"
#include "decl/max_pool2d.h"
#include "decl/max_pool3d.h"
#include "decl/max_pool_gather.h"
#include "decl/max_pool_grad.h"
#include "decl/max_unpool1d.h"
#include "decl/max_unpool2d.h"
#include "decl/max_unpool3d.h"

namespace oneflow {

namespace {

DType ComputeDType(DType dt) {
  return dt == DType::kFloat16 || dt == DType::kBFloat16 ? DType::kFloat32 : dt;
}

Tensor Prepared(const Tensor& t) { return Contiguous(CastTo(t, ComputeDType(t.dtype()))); }

std::string Joined(const int64_t* v, int n, const char* sep) {
  std::ostringstream s;
  for (int i = 0; i < n; ++i) s << (i ? sep : "") << v[i];
  return s.str();
}

const char* kTupleWord[4] = {"", "one int", "two ints", "three ints"};

void Expand(const DimVector& v, int k, const char* op, const char* what, const char* omitted, int64_t* out) {
  OF_CHECK(v.size() == 1 || v.size() == k)
      << op << ": " << what << " must " << omitted << "be a single int, or a tuple of " << kTupleWord[k];
  for (int d = 0; d < k; ++d) out[d] = v[v.size() == 1 ? 0 : d];
}

void CheckDType(const Tensor& input, const char* op, bool ints_ok) {
  const DType dt = input.dtype();
  OF_CHECK(dt != DType::kBool && (ints_ok || IsFloating(dt)))
      << "\"" << op << "\" not implemented for '" << DTypeName(dt) << "'";
}

// Averages take int64 as their only integer dtype, as PyTorch's (whose kernels have no narrower
// integer average): the same call succeeds or fails the same way in both. Complex inputs pass on
// to the refusal every pooling op shares ("avg_pool2d(): not implemented for 'ComplexFloat'").
void CheckAvgDType(const Tensor& input, const char* op) {
  const DType dt = input.dtype();
  OF_CHECK(IsFloating(dt) || IsComplex(dt) || dt == DType::kInt64) << "\"" << op << "\" not implemented for '" << DTypeName(dt) << "'";
}

// Rank k+1 (unbatched) or k+2; the dims pooled over and the channel dim must be non-empty.
void CheckInput(const Tensor& input, int k, const char* op) {
  const int r = input.dim();
  OF_CHECK(r == k + 1 || r == k + 2) << "Expected " << k + 1 << "D or " << k + 2 << "D (batch mode) tensor for "
                                     << op << "'s input, but got input of size " << ShapeStr(input.sizes());
  for (int d = r - k - 1; d < r; ++d)
    OF_CHECK(input.sizes()[d] > 0) << "Expected input to have non-zero size for non-batch dimensions, but input has "
                                      "sizes " << ShapeStr(input.sizes()) << " with dimension " << d << " being empty";
}

// PyTorch's pooling_output_shape.
int64_t PooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Geometry of a windowed pool; the spatial dims go right-aligned into the kernel's 3 slots.
struct Windowed {
  PoolGeom g;
  DimVector out_shape;
};

Windowed WindowedGeom(const Tensor& input, int k, const char* op, const DimVector& kernel_size,
                      const std::optional<DimVector>& stride, const DimVector& padding, const DimVector* dilation,
                      bool ceil_mode) {
  CheckInput(input, k, op);
  int64_t ks[3], st[3], pd[3], dl[3] = {1, 1, 1};
  Expand(kernel_size, k, op, "kernel_size", "either ", ks);
  if (!stride || stride->empty()) std::copy(ks, ks + k, st);
  else Expand(*stride, k, op, "stride", "either be omitted, ", st);
  Expand(padding, k, op, "padding", "either ", pd);
  if (dilation) Expand(*dilation, k, op, "dilation", "be either ", dl);
  for (int d = 0; d < k; ++d) {
    OF_CHECK(ks[d] > 0) << "kernel size should be greater than zero, but got kernel_size=(" << Joined(ks, k, ", ") << ")";
    OF_CHECK(st[d] > 0) << "stride should be greater than zero, but got stride=(" << Joined(st, k, ", ") << ")";
    OF_CHECK(dl[d] > 0) << "dilation should be greater than zero, but got dilation=(" << Joined(dl, k, ", ") << ")";
    OF_CHECK(pd[d] >= 0) << "pad must be non-negative, but got pad=(" << Joined(pd, k, ", ") << ")";
    OF_CHECK(pd[d] <= ((ks[d] - 1) * dl[d] + 1) / 2)
        << "pad should be at most half of effective kernel size, but got pad=" << pd[d] << ", kernel_size=" << ks[d]
        << " and dilation=" << dl[d];
  }
  const int r = input.dim();
  Windowed w;
  w.g.planes = 1;
  for (int d = 0; d < r - k; ++d) w.g.planes *= input.sizes()[d];
  int64_t ins[3], outs[3];
  bool positive = true;
  for (int d = 0; d < k; ++d) {
    ins[d] = input.sizes()[r - k + d];
    outs[d] = PooledSize(ins[d], ks[d], pd[d], st[d], dl[d], ceil_mode);
    positive = positive && outs[d] >= 1;
    const int s = 3 - k + d;
    w.g.in[s] = ins[d], w.g.out[s] = outs[d], w.g.kernel[s] = ks[d], w.g.stride[s] = st[d], w.g.pad[s] = pd[d];
    w.g.dil[s] = dl[d];
  }
  OF_CHECK(positive) << "Given input size: (" << input.sizes()[r - k - 1] << "x" << Joined(ins, k, "x")
                     << "). Calculated output size: (" << input.sizes()[r - k - 1] << "x" << Joined(outs, k, "x")
                     << "). Output size is too small";
  w.out_shape = DimVector(input.sizes().begin(), input.sizes().end() - k);
  for (int d = 0; d < k; ++d) w.out_shape.push_back(outs[d]);
  return w;
}

// The adaptive pools' geometry: output sizes given, windows derived by the kernel.
Windowed AdaptiveGeom(const Tensor& input, int k, const char* op, const DimVector& output_size) {
  const int r = input.dim();
  OF_CHECK(r == k + 1 || r == k + 2) << "Expected " << k + 1 << "D or " << k + 2
                                     << "D tensor, but got " << ShapeStr(input.sizes());
  for (int d = r - k; d < r; ++d)
    OF_CHECK(input.sizes()[d] > 0) << "Expected input to have non-zero size for non-batch dimensions, "
                                   << "but input has sizes " << ShapeStr(input.sizes()) << " with dimension " << d
                                   << " being empty";
  OF_CHECK(output_size.size() == k) << "output_size must be " << k;
  for (int d = 0; d < k; ++d)
    OF_CHECK(output_size[d] >= 0) << op << ": elements of output_size must be greater than or equal to 0 but "
                                  << "received " << ShapeStr(output_size);
  Windowed w;
  w.g.planes = 1;
  for (int d = 0; d < r - k; ++d) w.g.planes *= input.sizes()[d];
  for (int d = 0; d < k; ++d) {
    w.g.in[3 - k + d] = input.sizes()[r - k + d];
    w.g.out[3 - k + d] = output_size[d];
  }
  w.out_shape = DimVector(input.sizes().begin(), input.sizes().end() - k);
  for (int d = 0; d < k; ++d) w.out_shape.push_back(output_size[d]);
  return w;
}

// An output of `like`'s dtype computed by `run` into a contiguous tensor of the compute dtype.
template <typename F>
Tensor Computed(const DimVector& shape, const Tensor& like, F&& run) {
  Tensor out = Empty(shape, like.dtype(), like.device());
  if (like.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const DType cd = ComputeDType(like.dtype());
  Tensor work = cd == like.dtype() ? out : Empty(shape, cd, like.device());
  run(work);
  if (!work.is_same(out)) CopyInto(out, work);
  return out;
}

std::tuple<Tensor, Tensor> MaxPool(const Tensor& input, int k, const char* op, const DimVector& kernel_size,
                                   const std::optional<DimVector>& stride, const DimVector& padding,
                                   const DimVector& dilation, bool ceil_mode) {
  CheckDType(input, op, true);
  const Windowed w = WindowedGeom(input, k, op, kernel_size, stride, padding, &dilation, ceil_mode);
  Tensor indices = Empty(w.out_shape, DType::kInt64, input.device());
  Tensor out = Computed(w.out_shape, input, [&](const Tensor& y) { MaxPoolForward(w.g, Prepared(input), y, indices); });
  return {out, indices};
}

std::optional<int64_t> Divisor(std::optional<int64_t> d) {
  // OneFlow spells "no override" as 0 (its modules' default); PyTorch as None.
  if (d && *d == 0) return std::nullopt;
  return d;
}

Tensor AvgPool(const Tensor& input, int k, const char* op, const DimVector& kernel_size,
               const std::optional<DimVector>& stride, const DimVector& padding, bool ceil_mode,
               bool count_include_pad, std::optional<int64_t> divisor_override) {
  CheckAvgDType(input, op);
  // PyTorch's average pools take their window as 32-bit ints and refuse larger values; a stride
  // of 2**62 was one output per window here, where PyTorch raises.
  const auto check_int = [](const DimVector& v, const char* what) {
    for (int64_t x : v)
      OF_CHECK(x >= INT32_MIN && x <= INT32_MAX)
          << "value cannot be converted to type int without overflow (" << what << " " << x << ")";
  };
  check_int(kernel_size, "kernel_size");
  if (stride) check_int(*stride, "stride");
  check_int(padding, "padding");
  const Windowed w = WindowedGeom(input, k, op, kernel_size, stride, padding, nullptr, ceil_mode);
  const auto div = Divisor(divisor_override);
  return Computed(w.out_shape, input, [&](const Tensor& y) {
    AvgPoolForward(w.g, count_include_pad, div, Prepared(input), y);
  });
}

Tensor AdaptiveAvg(const Tensor& input, int k, const char* op, const DimVector& output_size) {
  CheckDType(input, op, false);
  const Windowed w = AdaptiveGeom(input, k, op, output_size);
  return Computed(w.out_shape, input, [&](const Tensor& y) { AdaptiveAvgPoolForward(w.g, Prepared(input), y); });
}

std::tuple<Tensor, Tensor> AdaptiveMax(const Tensor& input, int k, const char* op, const DimVector& output_size) {
  CheckDType(input, op, false);
  const Windowed w = AdaptiveGeom(input, k, op, output_size);
  Tensor indices = Empty(w.out_shape, DType::kInt64, input.device());
  Tensor out = Computed(w.out_shape, input, [&](const Tensor& y) {
    AdaptiveMaxPoolForward(w.g, Prepared(input), y, indices);
  });
  return {out, indices};
}

// Geometry of an index move between full planes (spatial sizes `full`) and pooled planes (the
// trailing k dims of `pooled`, whose leading dims count the planes).
PoolGeom IndexGeom(const DimVector& pooled, const int64_t* full, int k) {
  PoolGeom g;
  g.planes = 1;
  const int r = pooled.size();
  for (int d = 0; d < r - k; ++d) g.planes *= pooled[d];
  for (int d = 0; d < k; ++d) {
    g.in[3 - k + d] = full[d];
    g.out[3 - k + d] = pooled[r - k + d];
  }
  return g;
}

void CheckIndices(const Tensor& indices, const Tensor& like, const char* what) {
  OF_CHECK(indices.dtype() == DType::kInt64) << "elements in indices should be type int64 but got: "
                                             << DTypeName(indices.dtype());
  OF_CHECK(indices.sizes() == like.sizes()) << "Expected shape of indices to be same as that of the " << what
                                            << " tensor (" << ShapeStr(like.sizes())
                                            << ") but got indices tensor with shape: " << ShapeStr(indices.sizes());
  CheckSameDevice(indices, like);
}

// Every index within its plane (data-dependent: checked after meta inference, before writing).
Tensor ValidIndices(const Tensor& indices, int64_t plane, const int64_t* full, int k) {
  Tensor c = Contiguous(indices);
  if (auto bad = FindOutOfRange(c, 0, plane))  // CUDA indices: their extremes on the device
    OF_THROW(kRuntime) << "Found an invalid max index: " << *bad << " (output volumes are of size "
                       << Joined(full, k, "x") << ")";
  return c;
}

Tensor MaxUnpool(const Tensor& input, const Tensor& indices, const DimVector& output_size, int k, const char* op) {
  CheckDType(input, op, true);
  const int r = input.dim();
  OF_CHECK(r == k + 1 || r == k + 2) << "Expected " << k + 1 << "D or " << k + 2
                                     << "D tensor, but got " << ShapeStr(input.sizes());
  CheckIndices(indices, input, "input");
  OF_CHECK(output_size.size() == k) << "There should be exactly " << k << " elements in output_size, but got "
                                    << output_size.size() << " elements.";
  int64_t full[3];
  int64_t plane = 1;
  for (int d = 0; d < k; ++d) {
    OF_CHECK(output_size[d] >= 0) << "output_size must be non-negative, got " << ShapeStr(output_size);
    full[d] = output_size[d];
    plane *= full[d];
  }
  DimVector shape(input.sizes().begin(), input.sizes().end() - k);
  for (int d = 0; d < k; ++d) shape.push_back(full[d]);
  const PoolGeom g = IndexGeom(input.sizes(), full, k);
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta) return out;
  Tensor idx = ValidIndices(indices, plane, full, k);
  if (out.numel() == 0) return out;
  const DType cd = ComputeDType(input.dtype());
  Tensor work = cd == input.dtype() ? out : Empty(shape, cd, input.device());
  PoolScatter(g, Prepared(input), idx, work);
  if (!work.is_same(out)) CopyInto(out, work);
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> MaxPool1d(const Tensor& input, const DimVector& kernel_size,
                                      std::optional<DimVector> stride, const DimVector& padding,
                                      const DimVector& dilation, bool ceil_mode) {
  OpScope scope("max_pool1d");
  return MaxPool(input, 1, "max_pool1d", kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool1d(const Tensor& input, const DimVector& output_size) {
  OpScope scope("adaptive_max_pool1d");
  return AdaptiveMax(input, 1, "adaptive_max_pool1d", output_size);
}

Tensor AdaptiveAvgPool1d(const Tensor& input, const DimVector& output_size) {
  OpScope scope("adaptive_avg_pool1d");
  return AdaptiveAvg(input, 1, "adaptive_avg_pool1d", output_size);
}

Tensor MaxUnpool1d(const Tensor& input, const Tensor& indices, const DimVector& output_size) {
  OpScope scope("max_unpool1d");
  return MaxUnpool(input, indices, output_size, 1, "max_unpool1d");
}

std::tuple<Tensor, Tensor> MaxPool2d(const Tensor& input, const DimVector& kernel_size,
                                      std::optional<DimVector> stride, const DimVector& padding,
                                      const DimVector& dilation, bool ceil_mode) {
  OpScope scope("max_pool2d");
  return MaxPool(input, 2, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool2d(const Tensor& input, const DimVector& output_size) {
  OpScope scope("adaptive_max_pool2d");
  return AdaptiveMax(input, 2, "adaptive_max_pool2d", output_size);
}

Tensor AdaptiveAvgPool2d(const Tensor& input, const DimVector& output_size) {
  OpScope scope("adaptive_avg_pool2d");
  return AdaptiveAvg(input, 2, "adaptive_avg_pool2d", output_size);
}

Tensor MaxUnpool2d(const Tensor& input, const Tensor& indices, const DimVector& output_size) {
  OpScope scope("max_unpool2d");
  return MaxUnpool(input, indices, output_size, 2, "max_unpool2d");
}

std::tuple<Tensor, Tensor> MaxPool3d(const Tensor& input, const DimVector& kernel_size,
                                      std::optional<DimVector> stride, const DimVector& padding,
                                      const DimVector& dilation, bool ceil_mode) {
  OpScope scope("max_pool3d");
  return MaxPool(input, 3, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> AdaptiveMaxPool3d(const Tensor& input, const DimVector& output_size) {
  OpScope scope("adaptive_max_pool3d");
  return AdaptiveMax(input, 3, "adaptive_max_pool3d", output_size);
}

Tensor AdaptiveAvgPool3d(const Tensor& input, const DimVector& output_size) {
  OpScope scope("adaptive_avg_pool3d");
  return AdaptiveAvg(input, 3, "adaptive_avg_pool3d", output_size);
}

Tensor MaxUnpool3d(const Tensor& input, const Tensor& indices, const DimVector& output_size) {
  OpScope scope("max_unpool3d");
  return MaxUnpool(input, indices, output_size, 3, "max_unpool3d");
}

Tensor AvgPool1d(const Tensor& input, const DimVector& kernel_size, std::optional<DimVector> stride,
                 const DimVector& padding, bool ceil_mode, bool count_include_pad) {
  OpScope scope("avg_pool1d");
  return AvgPool(input, 1, "avg_pool1d", kernel_size, stride, padding, ceil_mode, count_include_pad, std::nullopt);
}

Tensor AvgPool2d(const Tensor& input, const DimVector& kernel_size, std::optional<DimVector> stride,
                 const DimVector& padding, bool ceil_mode, bool count_include_pad,
                 std::optional<int64_t> divisor_override) {
  OpScope scope("avg_pool2d");
  return AvgPool(input, 2, "avg_pool2d", kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override);
}

Tensor AvgPool3d(const Tensor& input, const DimVector& kernel_size, std::optional<DimVector> stride,
                 const DimVector& padding, bool ceil_mode, bool count_include_pad,
                 std::optional<int64_t> divisor_override) {
  OpScope scope("avg_pool3d");
  return AvgPool(input, 3, "avg_pool3d", kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override);
}

// The spatial sizes a gradient op's result takes from the pool's input (the trailing k dims);
// grad_output and input have the same dims in front of them.
static DimVector SpatialSizes(const Tensor& input, const Tensor& grad_output, int64_t k) {
  OF_CHECK(k >= 1 && k <= 3 && input.dim() > k && grad_output.dim() == input.dim())
      << "spatial_dims=" << k << " does not fit input " << ShapeStr(input.sizes()) << " and grad_output "
      << ShapeStr(grad_output.sizes());
  return DimVector(input.sizes().end() - k, input.sizes().end());
}

Tensor MaxPoolGrad(const Tensor& grad_output, const Tensor& indices, const Tensor& input, int64_t spatial_dims) {
  OpScope scope("max_pool_grad");
  const int k = spatial_dims;
  const DimVector input_size = SpatialSizes(input, grad_output, k);
  OF_CHECK(IsFloating(grad_output.dtype())) << "expected a floating point grad_output, got "
                                            << DTypeName(grad_output.dtype());
  CheckIndices(indices, grad_output, "grad_output");
  const PoolGeom g = IndexGeom(grad_output.sizes(), input_size.data(), k);
  DimVector shape(grad_output.sizes().begin(), grad_output.sizes().end() - k);
  for (int64_t s : input_size) shape.push_back(s);
  if (grad_output.device().type == DeviceType::kMeta) return Empty(shape, grad_output.dtype(), grad_output.device());
  Tensor idx = ValidIndices(indices, g.InPlane(), input_size.data(), k);
  return Computed(shape, grad_output, [&](const Tensor& dx) { PoolScatterAdd(g, Prepared(grad_output), idx, dx); });
}

Tensor MaxPoolGather(const Tensor& input, const Tensor& indices, int64_t spatial_dims) {
  OpScope scope("max_pool_gather");
  const int k = spatial_dims;
  OF_CHECK(k >= 1 && k <= 3 && input.dim() > k && indices.dim() == input.dim())
      << "spatial_dims=" << k << " does not fit input " << ShapeStr(input.sizes()) << " and indices "
      << ShapeStr(indices.sizes());
  OF_CHECK(indices.dtype() == DType::kInt64) << "elements in indices should be type int64 but got: "
                                             << DTypeName(indices.dtype());
  for (int d = 0; d < input.dim() - k; ++d)
    OF_CHECK(indices.sizes()[d] == input.sizes()[d]) << "indices " << ShapeStr(indices.sizes())
                                                     << " and input " << ShapeStr(input.sizes())
                                                     << " differ outside the spatial dims";
  CheckDType(input, "max_pool_gather", true);
  const int64_t* full = input.sizes().end() - k;
  const PoolGeom g = IndexGeom(indices.sizes(), full, k);
  if (input.device().type == DeviceType::kMeta) return Empty(indices.sizes(), input.dtype(), input.device());
  Tensor idx = ValidIndices(indices, g.InPlane(), full, k);
  return Computed(indices.sizes(), input, [&](const Tensor& y) { PoolGather(g, Prepared(input), idx, y); });
}

Tensor AvgPoolGrad(const Tensor& grad_output, const Tensor& input, const DimVector& kernel_size,
                   const DimVector& stride, const DimVector& padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
  OpScope scope("avg_pool_grad");
  const int k = kernel_size.size();
  OF_CHECK(stride.size() == k && padding.size() == k)
      << "avg_pool_grad takes one parameter per spatial dim, got kernel_size " << ShapeStr(kernel_size)
      << ", stride " << ShapeStr(stride) << " and padding " << ShapeStr(padding);
  const DimVector input_size = SpatialSizes(input, grad_output, k);
  OF_CHECK(IsFloating(grad_output.dtype())) << "expected a floating point grad_output, got "
                                            << DTypeName(grad_output.dtype());
  DimVector shape(grad_output.sizes().begin(), grad_output.sizes().end() - k);
  for (int64_t s : input_size) shape.push_back(s);
  // The forward geometry, recomputed from the input shape; it must give grad_output's shape.
  const Tensor probe = Empty(shape, grad_output.dtype(), Device{DeviceType::kMeta});
  const Windowed w = WindowedGeom(probe, k, "avg_pool_grad", kernel_size, stride, padding, nullptr, ceil_mode);
  OF_CHECK(w.out_shape == grad_output.sizes()) << "grad_output of size " << ShapeStr(grad_output.sizes())
                                               << " does not match the pooled size " << ShapeStr(w.out_shape);
  const auto div = Divisor(divisor_override);
  return Computed(shape, grad_output, [&](const Tensor& dx) {
    AvgPoolBackward(w.g, count_include_pad, div, Prepared(grad_output), dx);
  });
}

Tensor AdaptiveAvgPoolGrad(const Tensor& grad_output, const Tensor& input, int64_t spatial_dims) {
  OpScope scope("adaptive_avg_pool_grad");
  const int k = spatial_dims;
  const DimVector input_size = SpatialSizes(input, grad_output, k);
  OF_CHECK(IsFloating(grad_output.dtype())) << "expected a floating point grad_output, got "
                                            << DTypeName(grad_output.dtype());
  const PoolGeom g = IndexGeom(grad_output.sizes(), input_size.data(), k);
  DimVector shape(grad_output.sizes().begin(), grad_output.sizes().end() - k);
  for (int64_t s : input_size) shape.push_back(s);
  return Computed(shape, grad_output, [&](const Tensor& dx) {
    AdaptiveAvgPoolBackward(g, Prepared(grad_output), dx);
  });
}

}  // namespace oneflow
