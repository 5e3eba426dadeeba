// Entries of ops whose Python signature is overloaded beyond the generator's types (`Any` in
// the op table); api/manual_bind.cpp parses their arguments and calls these.
#pragma once
#include <tuple>
#include <vector>

#include "core/tensor.h"

namespace oneflow {

std::vector<Tensor> SplitWithSizes(const Tensor& input, const std::vector<int64_t>& sizes, int64_t dim);
std::vector<Tensor> SplitBySize(const Tensor& input, int64_t split_size, int64_t dim);
// max(x) / min(x): 0-d result; max(x, dim, keepdim): (values, indices).
Tensor MaxAll(const Tensor& input);
Tensor MinAll(const Tensor& input);
std::tuple<Tensor, Tensor> MaxDim(const Tensor& input, int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor> MinDim(const Tensor& input, int64_t dim, bool keepdim);

// Indexing primitives used by Tensor.__getitem__/__setitem__ (python/oneflow/_indexing.py).
Tensor SliceView(const Tensor& input, int64_t dim, int64_t start, int64_t stop, int64_t step);
Tensor SelectView(const Tensor& input, int64_t dim, int64_t index);
// Advanced indexing: `indices[k]` (undefined = full slice) index dim k; PyTorch's placement rule
// for the result dims; bool masks stand for their nonzero() columns. Writing is the table op
// index_put_ (src/ops/index_ops.cpp).
Tensor IndexGather(const Tensor& input, const std::vector<Tensor>& indices);
void CopyFrom(const Tensor& self, const Tensor& src);  // Tensor.copy_ semantics incl. checks

}  // namespace oneflow
