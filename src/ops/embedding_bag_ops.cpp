// embedding_bag (src/ops/table/embedding.yaml): bags of rows reduced by sum / mean / max, given
// as a 1-D index list cut by offsets (nn.functional turns 2-D inputs into that form). Entries
// equal to padding_idx are skipped (and not counted by 'mean'); an empty bag gives zeros.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "kernels/embedding_bag.h"
#include "decl/contiguous.h"
#include "decl/embedding_bag.h"
#include "decl/embedding_bag_backward.h"
#include "decl/embedding_bag_per_sample_weights_backward.h"
#include "decl/empty.h"

namespace oneflow {

namespace {

BagMode ParseMode(const std::string& mode) {
  if (mode == "sum") return BagMode::kSum;
  if (mode == "mean") return BagMode::kMean;
  if (mode == "max") return BagMode::kMax;
  OF_THROW(kValue) << "mode has to be one of sum, mean or max";
}

// Shapes (meta inference) and, with data, the index/offset values.
EmbeddingBags Prepare(const Tensor& weight, const Tensor& indices, const Tensor& offsets, const std::string& mode,
             const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx, bool with_data) {
  EmbeddingBags b;
  b.mode = ParseMode(mode);
  OF_CHECK(weight.dim() == 2) << "'weight' must be 2-D";
  OF_CHECK(indices.dim() == 1) << "input has to be a 1D or 2D Tensor, but got Tensor of dimension " << indices.dim();
  OF_CHECK(offsets.dim() == 1) << "offsets has to be a 1D Tensor, but got Tensor of dimension " << offsets.dim();
  OF_CHECK(!IsFloating(indices.dtype()) && !IsFloating(offsets.dtype()))
      << "embedding_bag expects integer indices and offsets";
  b.rows = weight.sizes()[0];
  b.dim = weight.sizes()[1];
  b.count = offsets.numel() - (include_last_offset ? 1 : 0);
  OF_CHECK(b.count >= 0) << "include_last_offset: number of offsets should be at least 1";
  if (per_sample_weights.defined()) {
    OF_CHECK(b.mode == BagMode::kSum) << "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                         "supported for mode='sum' (got mode='" << mode << "'). Please open a feature "
                                         "request on GitHub.";
    OF_CHECK(per_sample_weights.sizes() == indices.sizes())
        << "embedding_bag: If per_sample_weights (" << ShapeStr(per_sample_weights.sizes())
        << ") is not None, then it must have the same shape as the input (" << ShapeStr(indices.sizes()) << ")";
  }
  b.pad = padding_idx < -1 ? padding_idx + b.rows : padding_idx;
  if (!with_data) return b;
  CheckHasData(indices);
  CheckHasData(offsets);
  // (CUDA indices: a host copy, range-checked here; the CUDA kernels get tables made from it.)
  Tensor ic = Contiguous(OnHost(CastTo(indices, DType::kInt64))), oc = Contiguous(OnHost(CastTo(offsets, DType::kInt64)));
  b.idx.assign(ic.data<int64_t>(), ic.data<int64_t>() + ic.numel());
  for (int64_t i : b.idx) OF_CHECK(i >= 0 && i < b.rows) << "index out of range in self";
  b.start.assign(oc.data<int64_t>(), oc.data<int64_t>() + b.count);
  if (b.count > 0) {
    OF_CHECK(b.start[0] == 0) << "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                                 "from position 0. However, got " << b.start[0];
  }
  const int64_t end = include_last_offset && offsets.numel() > 0 ? oc.data<int64_t>()[b.count]
                                                                 : static_cast<int64_t>(b.idx.size());
  b.start.push_back(std::min<int64_t>(end, b.idx.size()));
  for (int64_t k = 0; k < b.count; ++k) {
    OF_CHECK(b.start[k] <= b.start[k + 1] && b.start[k + 1] <= static_cast<int64_t>(b.idx.size()))
        << "offsets have to be a non-decreasing sequence not larger than the number of indices, got "
        << b.start[k] << " then " << b.start[k + 1];
  }
  return b;
}

std::vector<double> SampleWeights(const Tensor& per_sample_weights, size_t n) {
  std::vector<double> v(n, 1.0);
  if (!per_sample_weights.defined()) return v;
  Tensor c = Contiguous(OnHost(CastTo(per_sample_weights, DType::kFloat64)));
  std::copy(c.data<double>(), c.data<double>() + n, v.begin());
  return v;
}

}  // namespace

Tensor EmbeddingBag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, const std::string& mode,
                    const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx,
                    bool scale_grad_by_freq) {
  OpScope scope("embedding_bag");
  const bool meta = weight.device().type == DeviceType::kMeta;
  EmbeddingBags b = Prepare(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, !meta);
  Tensor out = Empty(DimVector{b.count, b.dim}, weight.dtype(), weight.device());
  if (meta) return out;
  Tensor w = Contiguous(weight);
  b.psw = SampleWeights(per_sample_weights, b.idx.size());
  EmbeddingBagForwardRows(w, b, out);
  return out;
}

Tensor EmbeddingBagBackward(const Tensor& grad_output, const Tensor& weight, const Tensor& indices,
                            const Tensor& offsets, const std::string& mode, const Tensor& per_sample_weights,
                            bool include_last_offset, int64_t padding_idx, bool scale_grad_by_freq) {
  OpScope scope("embedding_bag_backward");
  const bool meta = weight.device().type == DeviceType::kMeta;
  EmbeddingBags b = Prepare(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, !meta);
  OF_CHECK(grad_output.sizes() == (DimVector{b.count, b.dim}))
      << "grad_output of shape " << ShapeStr(grad_output.sizes()) << " for " << b.count << " bags of dim " << b.dim;
  Tensor out = Empty(weight.sizes(), grad_output.dtype(), weight.device());
  if (meta) return out;
  Tensor w = Contiguous(weight);
  Tensor g = Contiguous(CastTo(grad_output, DType::kFloat64));
  b.psw = SampleWeights(per_sample_weights, b.idx.size());
  const Tensor acc = Empty(weight.sizes(), DType::kFloat64, out.device());  // accumulated in double, then cast
  EmbeddingBagWeightGrad(g, w, b, scale_grad_by_freq, acc);
  CopyInto(out, acc);
  return out;
}

Tensor EmbeddingBagPerSampleWeightsBackward(const Tensor& grad_output, const Tensor& weight, const Tensor& indices,
                                            const Tensor& offsets, const std::string& mode, bool include_last_offset,
                                            int64_t padding_idx) {
  OpScope scope("embedding_bag_per_sample_weights_backward");
  const bool meta = weight.device().type == DeviceType::kMeta;
  EmbeddingBags b = Prepare(weight, indices, offsets, mode, Tensor(), include_last_offset, padding_idx, !meta);
  OF_CHECK(b.mode == BagMode::kSum) << "embedding_bag_backward: per_sample_weights only supported for mode='sum'";
  Tensor out = Empty(indices.sizes(), grad_output.dtype(), weight.device());
  if (meta) return out;
  Tensor w = Contiguous(CastTo(weight, DType::kFloat64));
  Tensor g = Contiguous(CastTo(grad_output, DType::kFloat64));
  b.psw.assign(b.idx.size(), 1.0);
  const Tensor acc = Empty(indices.sizes(), DType::kFloat64, out.device());
  EmbeddingBagSampleWeightGrad(g, w, b, acc);
  CopyInto(out, acc);
  return out;
}

}  // namespace oneflow
