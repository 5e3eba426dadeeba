// The SBP rules of the global ops a program runs most, in C++ (docs/global_tensors.md, "SBP
// signatures").
//
// Note [SBP rules in C++]: matmul / mm, sum and transpose have their signatures decided here, once:
// the Python dispatcher's rules of those names (python/oneflow/_global/signatures.py) call these
// functions through _C._sbp_matmul / _sbp_reduce / _sbp_transpose, and the C++ fast path (Note
// [Global fast path], api/global.h) uses them to run such an op on the components itself when its
// signature needs no boxing (a split batch times a broadcast weight, a sum over a dim that is not
// the split one, a transpose of a split tensor). A rule answers nullopt where none of its split /
// partial signatures fits: the rule's all-broadcast signature (every input made broadcast).
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace nb = nanobind;

namespace oneflow {

// One mesh axis's SBP: 'S' (split along dim), 'B' (broadcast) or 'P' (partial sum).
struct Sbp1 {
  char kind = 'B';
  int64_t dim = -1;
  bool operator==(const Sbp1& o) const { return kind == o.kind && (kind != 'S' || dim == o.dim); }
  bool operator!=(const Sbp1& o) const { return !(*this == o); }
};

struct SbpSig {
  std::vector<Sbp1> targets;   // one per input, in the order given: the layout it is boxed to
  Sbp1 out;
  int64_t length = -1;         // a split output's logical size along its split dim
  std::vector<int64_t> mean_dims;  // a mean made partial: the dims whose local mean is rescaled
};

using Shape1 = std::vector<int64_t>;

// matmul / mm of a (any rank >= 1) and b (a matrix): S(row) x B -> S(row); B x S(1) -> S(-1);
// S(-1) x S(0) -> P; P x B and B x P -> P; S(row) x anything -> the other made broadcast.
std::optional<SbpSig> MatmulRule(Sbp1 a, const Shape1& a_shape, Sbp1 b, const Shape1& b_shape);
// sum (mean: `mean`) over `dims` (nullopt: every dim; negative ones counted from the end):
// over the split dim a partial sum (a mean's local mean rescaled: mean_dims); over the other dims
// the split kept; a partial-sum input stays one for sum, is reduced first for mean.
std::optional<SbpSig> ReduceRule(bool mean, Sbp1 s, const Shape1& shape, std::optional<std::vector<int64_t>> dims,
                                 bool keepdim);
// A oneflow.sbp value's, and the value of one (Python objects: the callers hold the GIL).
Sbp1 SbpOf(nb::handle s);
nb::object SbpObject(Sbp1 s);

// transpose(d0, d1): a split dim follows the swap; broadcast and partial stay.
std::optional<SbpSig> TransposeRule(Sbp1 s, const Shape1& shape, int64_t d0, int64_t d1);

}  // namespace oneflow
