// The value-dependent ops of the op table and which of their outputs' dims the values decide
// (Note [Dynamic shapes], dynamic_shapes.h): a rule table keyed by op.
#include "graph/dynamic_shapes.h"

#include <algorithm>
#include <unordered_map>

namespace oneflow::lazy {

namespace {

using When = bool (*)(const std::vector<Value>& a);
using Dims = std::vector<uint64_t> (*)(const std::vector<Value>& a, const std::vector<Tensor>& outs);

struct Rule {
  When when;  // this call's output size depends on values
  Dims dims;  // per output: the dims they decide
};

uint64_t Bit(int64_t d) { return d >= 0 && d < 64 ? uint64_t{1} << d : 0; }

uint64_t Every(const Tensor& t) { return t.dim() >= 64 ? ~uint64_t{0} : Bit(t.dim()) - 1; }

// A real tensor argument (not a Python number converted for a TensorLike parameter).
bool IsTensor(const Value& v) {
  const auto* t = std::get_if<Tensor>(&v);
  return t && t->defined() && !t->is_wrapped_number();
}

bool Always(const std::vector<Value>&) { return true; }

// `dim` argument k of an output of rank `rank` (wrapped), or -1 when it is None.
int64_t DimArg(const std::vector<Value>& a, size_t k, int64_t rank) {
  if (k >= a.size() || !std::holds_alternative<int64_t>(a[k])) return -1;
  const int64_t d = std::get<int64_t>(a[k]);
  return d < 0 ? d + rank : d;
}

bool Flag(const std::vector<Value>& a, size_t k) {
  return k < a.size() && std::holds_alternative<bool>(a[k]) && std::get<bool>(a[k]);
}

// nonzero / argwhere ([count, ndim]), masked_select and bincount (1-D): the first dim.
std::vector<uint64_t> FirstDim(const std::vector<Value>&, const std::vector<Tensor>& outs) {
  return {outs.at(0).dim() > 0 ? Bit(0) : 0};
}

// unique(input, sorted, return_inverse, return_counts, dim) and unique_consecutive(input,
// return_inverse, return_counts, dim): the distinct values along `dim` (or of the flattened
// input) and their counts; the inverse indices have the input's sizes.
template <size_t kCounts, size_t kDim>
std::vector<uint64_t> UniqueDims(const std::vector<Value>& a, const std::vector<Tensor>& outs) {
  const int64_t d = DimArg(a, kDim, outs.at(0).dim());
  return {Bit(d < 0 ? 0 : d), 0, Flag(a, kCounts) ? Bit(0) : 0};
}

// repeat_interleave(input, repeats, dim, output_size): a tensor of repeats and no output_size.
bool RepeatsTensor(const std::vector<Value>& a) {
  return a.size() > 3 && IsTensor(a[1]) && std::holds_alternative<std::monostate>(a[3]);
}

std::vector<uint64_t> RepeatDims(const std::vector<Value>& a, const std::vector<Tensor>& outs) {
  const int64_t d = DimArg(a, 2, outs.at(0).dim());
  return {Bit(d < 0 ? 0 : d)};
}

// one_hot(input, num_classes=-1, ...): the largest index + 1 classes.
bool NoNumClasses(const std::vector<Value>& a) {
  return a.size() > 1 && std::holds_alternative<int64_t>(a[1]) && std::get<int64_t>(a[1]) == -1;
}

std::vector<uint64_t> LastDim(const std::vector<Value>&, const std::vector<Tensor>& outs) {
  return {Bit(outs.at(0).dim() - 1)};
}

// linalg_lstsq -> (solution, residuals, rank, singular_values): the residuals are returned only
// when A has full rank (and m > n), a fact of the values.
std::vector<uint64_t> LstsqDims(const std::vector<Value>&, const std::vector<Tensor>& outs) {
  return {0, outs.size() > 1 && outs[1].defined() ? Every(outs[1]) : 0, 0, 0};
}

const std::unordered_map<std::string_view, Rule>& Rules() {
  static const std::unordered_map<std::string_view, Rule> rules = {
      {"nonzero", {&Always, &FirstDim}},
      {"argwhere", {&Always, &FirstDim}},
      {"masked_select", {&Always, &FirstDim}},
      {"bincount", {&Always, &FirstDim}},
      {"unique", {&Always, &UniqueDims<3, 4>}},
      {"unique_consecutive", {&Always, &UniqueDims<2, 3>}},
      {"repeat_interleave", {&RepeatsTensor, &RepeatDims}},
      {"one_hot", {&NoNumClasses, &LastDim}},
      {"linalg_lstsq", {&Always, &LstsqDims}},
  };
  return rules;
}

}  // namespace

bool IsValueDependent(std::string_view op, const std::vector<Value>& args) {
  auto it = Rules().find(op);
  return it != Rules().end() && it->second.when(args);
}

std::vector<uint64_t> DynamicDims(std::string_view op, const std::vector<Value>& args,
                                  const std::vector<Tensor>& outs) {
  if (!IsValueDependent(op, args) || outs.empty()) return {};
  std::vector<uint64_t> dims = Rules().at(op).dims(args, outs);
  dims.resize(outs.size(), 0);
  for (size_t k = 0; k < outs.size(); ++k)
    if (!outs[k].defined()) dims[k] = 0;
    else dims[k] &= Every(outs[k]);
  return dims;
}

uint64_t InheritedDims(const Tensor& out, const std::vector<int64_t>& sizes, const std::vector<DimVector>& fixed) {
  if (!out.defined() || out.dim() == 0) return 0;
  uint64_t m = 0;
  for (int64_t d = 0; d < out.dim(); ++d)
    if (std::find(sizes.begin(), sizes.end(), out.sizes()[d]) != sizes.end()) m |= Bit(d);
  if (m) return m;
  return std::find(fixed.begin(), fixed.end(), out.sizes()) != fixed.end() ? 0 : Every(out);
}

}  // namespace oneflow::lazy
