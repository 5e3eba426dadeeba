// Embedding lookups (src/ops/table/embedding.yaml): embedding (row gather) and its backward (row
// scatter-add), max_norm's in-place renorm, embedding_bag (sum/mean/max over bags of rows) with
// its two backward kernels, and one_hot.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "ops/index_util.h"
#include "kernels/embedding.h"
#include "decl/contiguous.h"
#include "decl/embedding.h"
#include "decl/embedding_backward.h"
#include "decl/embedding_renorm.h"
#include "decl/empty.h"
#include "decl/one_hot.h"

namespace oneflow {

namespace {

void CheckWeight2d(const Tensor& weight) {
  OF_CHECK(weight.dim() == 2) << "'weight' must be 2-D";
}

void CheckIndexDType(const Tensor& indices) {
  OF_CHECK(indices.dtype() == DType::kInt64 || indices.dtype() == DType::kInt32)
      << "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
         "but got " << DTypeName(indices.dtype()) << " instead";
}

// Indices as contiguous int64, range-checked against `rows` (IndexError before any output).
std::vector<int64_t> CheckedIndices(const Tensor& indices, int64_t rows) {
  CheckHasData(indices);
  Tensor c = Contiguous(CastTo(OnHost(indices), DType::kInt64));  // CUDA indices: a host copy
  std::vector<int64_t> v(c.data<int64_t>(), c.data<int64_t>() + c.numel());
  for (int64_t i : v) OF_CHECK_INDEX(i >= 0 && i < rows) << "index out of range in self";
  return v;
}

// Indices as contiguous int64 on their device, range-checked there (ops/index_util.h; CUDA: no
// host copy unless an index is out of range).
Tensor CheckedIndexTensor(const Tensor& indices, int64_t rows) {
  CheckHasData(indices);
  Tensor c = Contiguous(CastTo(indices, DType::kInt64));
  OF_CHECK_INDEX(!FindOutOfRange(c, 0, rows)) << "index out of range in self";
  return c;
}

int64_t WrapPaddingIdx(int64_t padding_idx, int64_t rows) {
  if (padding_idx < 0) return padding_idx == -1 ? -1 : padding_idx + rows;
  return padding_idx;
}

}  // namespace

Tensor Embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  OpScope scope("embedding");
  CheckWeight2d(weight);
  CheckIndexDType(indices);
  DimVector out_sizes = indices.sizes();
  out_sizes.push_back(weight.sizes()[1]);
  Tensor out = Empty(out_sizes, weight.dtype(), weight.device());
  if (out.device().type == DeviceType::kMeta) return out;
  Tensor w = Contiguous(weight);
  EmbeddingRows(out, w, CheckedIndexTensor(indices, weight.sizes()[0]));
  return out;
}

Tensor EmbeddingBackward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                         bool scale_grad_by_freq) {
  OpScope scope("embedding_backward");
  CheckIndexDType(indices);
  OF_CHECK(grad_output.dim() == indices.dim() + 1) << "grad_output must have the indices' shape plus the embedding dim";
  const int64_t dim = grad_output.sizes()[grad_output.dim() - 1];
  Tensor out = Empty(DimVector{num_weights, dim}, grad_output.dtype(), grad_output.device());
  if (out.device().type == DeviceType::kMeta) return out;
  const int64_t pad = WrapPaddingIdx(padding_idx, num_weights);
  EmbeddingRowsGrad(out, Contiguous(grad_output), CheckedIndexTensor(indices, num_weights), pad, scale_grad_by_freq);
  return out;
}

namespace {
// Rows of `weight` named by `indices` whose p-norm exceeds max_norm are scaled to max_norm (each
// distinct row once; PyTorch's 1e-7 guard in the scale).
void RenormRows(const Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  std::vector<int64_t> idx = CheckedIndices(indices, weight.sizes()[0]);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  const int64_t dim = weight.sizes()[1];
  DispatchFloat(weight.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    T* base = weight.data<T>();
    for (int64_t r : idx) {
      T* row = base + r * weight.strides()[0];
      const int64_t st = weight.strides()[1];
      double norm = 0;
      for (int64_t k = 0; k < dim; ++k) {
        const double v = std::fabs(static_cast<double>(static_cast<M>(row[k * st])));
        norm = std::isinf(norm_type) ? std::max(norm, v) : norm + std::pow(v, norm_type);
      }
      if (!std::isinf(norm_type)) norm = std::pow(norm, 1.0 / norm_type);
      if (norm > max_norm) {
        const M scale = static_cast<M>(max_norm / (norm + 1e-7));
        for (int64_t k = 0; k < dim; ++k) row[k * st] = static_cast<T>(static_cast<M>(row[k * st]) * scale);
      }
    }
  });
}

void CheckRenorm(const Tensor& input, const Tensor& indices) {
  CheckWeight2d(input);
  CheckIndexDType(indices);
  OF_CHECK(IsFloating(input.dtype())) << "embedding_renorm expects a floating point weight";
}
}  // namespace

Tensor EmbeddingRenorm(const Tensor& input, const Tensor& indices, double max_norm, double norm_type) {
  OpScope scope("embedding_renorm");
  CheckRenorm(input, indices);
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (out.device().type == DeviceType::kMeta) return out;
  CopyInto(out, input);
  RenormRows(out, indices, max_norm, norm_type);
  return out;
}

Tensor& EmbeddingRenorm_(Tensor& input, const Tensor& indices, double max_norm, double norm_type) {
  OpScope scope("embedding_renorm_");
  CheckRenorm(input, indices);
  if (input.device().type == DeviceType::kMeta) return input;
  RenormRows(input, indices, max_norm, norm_type);
  input.BumpVersion();
  return input;
}

// input.shape + [C], 1 at each index (on_value/off_value: OneFlow's); classes inferred as
// max + 1 when num_classes is -1.
Tensor OneHot(const Tensor& input, int64_t num_classes, const Scalar& on_value, const Scalar& off_value) {
  OpScope scope("one_hot");
  OF_CHECK(IsIntegral(input.dtype(), false))
      << "one_hot is only applicable to index tensor of type LongTensor.";
  OF_CHECK(num_classes >= -1) << "num_classes should be positive";
  const DType dt = on_value.is_float() || off_value.is_float() ? DefaultFloatDType() : DType::kInt64;
  Tensor c;  // the classes, int64 contiguous (on the input's device)
  if (input.device().type != DeviceType::kMeta) {
    // The range from the extremes (CUDA: reduced on the device, one sync, as PyTorch's one_hot).
    CheckHasData(input);
    c = Contiguous(CastTo(input, DType::kInt64));
    if (c.numel() > 0) {
      const auto [mn, mx] = IndexExtremes(c);
      OF_CHECK(mn >= 0) << "Class values must be non-negative.";
      if (num_classes == -1) num_classes = mx + 1;
      OF_CHECK(mx < num_classes) << "Class values must be smaller than num_classes.";
    }
    OF_CHECK(num_classes != -1) << "Can not infer total number of classes from empty tensor.";
  } else {
    OF_CHECK(num_classes >= 0) << "one_hot on the meta device needs num_classes";
  }
  DimVector sizes = input.sizes();
  sizes.push_back(num_classes);
  Tensor out = Empty(sizes, dt, input.device());
  if (out.device().type == DeviceType::kMeta) return out;
  FillWith(out, off_value);
  if (c.numel() == 0 || num_classes == 0) return out;
  OneHotScatter(out, c, on_value);
  return out;
}

}  // namespace oneflow
