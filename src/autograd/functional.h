// The differentiable op entries (namespace oneflow::functional): what the Python bindings call,
// and what backward formulas are written with (docs/architecture.md §2). Generated ones come from the op table;
// the ones below are hand-written (ops whose signature the generator can't express).
#pragma once
#include <tuple>
#include <vector>

#include "ops/manual_ops.h"
#include "decl/unbind.h"

namespace oneflow::functional {

std::vector<Tensor> SplitWithSizes(const Tensor& input, const std::vector<int64_t>& sizes, int64_t dim);
std::vector<Tensor> SplitBySize(const Tensor& input, int64_t split_size, int64_t dim);
Tensor MaxAll(const Tensor& input);
Tensor MinAll(const Tensor& input);
std::tuple<Tensor, Tensor> MaxDim(const Tensor& input, int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor> MinDim(const Tensor& input, int64_t dim, bool keepdim);
Tensor SliceView(const Tensor& input, int64_t dim, int64_t start, int64_t stop, int64_t step);
Tensor SelectView(const Tensor& input, int64_t dim, int64_t index);
Tensor IndexGather(const Tensor& input, const std::vector<Tensor>& indices);
std::vector<Tensor> Unbind(const Tensor& input, int64_t dim);
void CopyFrom_(const Tensor& self, const Tensor& src);  // Tensor.copy_ / fill_ / zero_

// A tensor sharing t's memory, outside any graph (Tensor.detach).
Tensor Detach(const Tensor& t);

}  // namespace oneflow::functional
