// The SBP rules of the global ops a program runs most, in C++ (docs/global_tensors.md, "SBP
// signatures").
//
// Note [SBP rules in C++]: matmul / mm / bmm, linear, sum / mean, softmax, transpose and the partial
// sums of elementwise ops have their signatures decided here, once: the Python dispatcher's rules of
// those names (python/oneflow/_global/signatures.py) call these functions through _C._sbp_matmul /
// _sbp_bmm / _sbp_linear / _sbp_reduce / _sbp_softmax / _sbp_transpose / _sbp_stays_partial, and the
// C++ fast path (Note [Global fast path], api/global.h) uses them to run such an op on the
// components itself when its signature needs no boxing (a split batch times a broadcast weight, a
// sum or mean over a dim that is not the split one, a transpose of a split tensor, a sum of partial
// sums). A rule answers nullopt where none of its split / partial signatures fits: the rule's
// all-broadcast signature (every input made broadcast). On a mesh each axis takes the rule's 1-d
// signature on the shapes the axes before it leave (the dispatcher's _signature_nd, global_bind.cpp's
// RuleFast alike).
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
  bool normalised = false;         // a mean loss: each rank's sum over the loss's global normaliser
};

using Shape1 = std::vector<int64_t>;

// matmul / mm / bmm of a and b (any ranks >= 1, batch dims broadcast as torch.matmul's): a split of
// a's rows or of a batch dim -> split there (b broadcast, or split along the matching batch dim
// where it has one of the same size); a split of b's batch dim likewise; B x S(b's columns) ->
// split(-1); S(a's last) x S(b's contracted) -> P; P x B and B x P -> P. Failing those, a split of
// a's rows / batch or of b's batch / columns is kept and the other side boxed to fit.
std::optional<SbpSig> MatmulRule(Sbp1 a, const Shape1& a_shape, Sbp1 b, const Shape1& b_shape);
// bmm: MatmulRule on two 3-d inputs (nullopt otherwise).
std::optional<SbpSig> BmmRule(Sbp1 a, const Shape1& a_shape, Sbp1 b, const Shape1& b_shape);
// F.linear(x, weight[, bias]), y = x weight^T + bias; targets [x, weight(, bias)]: split rows
// (weight and bias broadcast); x broadcast x weight split(0) -> split(-1) (bias split(0)); x
// split(-1) x weight split(1) -> P (the bias a partial sum: its value on the first rank).
std::optional<SbpSig> LinearRule(Sbp1 x, const Shape1& x_shape, Sbp1 w, const Shape1& w_shape, bool bias);
// softmax / log_softmax / softmin along `dim` (nullopt: the op's implicit one): a split off dim kept.
std::optional<SbpSig> SoftmaxRule(Sbp1 s, const Shape1& shape, std::optional<int64_t> dim);
// Note [Partial elementwise]: whether an elementwise op keeps partial sums partial. `sum` (add,
// sub, neg, positive with every operand a global tensor: a number or local operand added on each
// rank would count once per addend): every input partial. `scale` (mul, div linear in their first
// argument: no rounding mode, the first not repeated): the first input partial, the others
// broadcast. `sbps`: the inputs' SBPs on one mesh axis, the first argument first.
enum class Partial { kNone, kSum, kScale };
bool StaysPartial(Partial how, const std::vector<Sbp1>& sbps);
// sum (mean: `mean`) over `dims` (nullopt: every dim; negative ones counted from the end):
// over the split dim a partial sum (a mean's local mean rescaled: mean_dims); over the other dims
// the split kept; a partial-sum input stays one for sum, is reduced first for mean.
std::optional<SbpSig> ReduceRule(bool mean, Sbp1 s, const Shape1& shape, std::optional<std::vector<int64_t>> dims,
                                 bool keepdim);
// reshape / view of a tensor of logical `shape` laid out as `s` (over `ranks` ranks) to `target`
// (one -1 resolved here): a split whose slices stay contiguous blocks of one output dim -- the dims
// before it multiply to the dims before that one, and it is the split dim alone or leading a merge
// of the next dims, then only when its size divides evenly over the ranks -- becomes a split there,
// each component reshaped with that dim `factor` times its split size; a partial sum stays one
// (reshape is linear: each addend reshaped); broadcast stays. nullopt: the split lands nowhere (the
// rule's broadcast signature) or the sizes do not match (the local op's error).
struct ReshapeSig {
  Sbp1 out;
  Shape1 target;        // the logical output shape
  int64_t factor = 1;   // a split output: its local size along out.dim is the input's split size times this
};
std::optional<ReshapeSig> ReshapeRule(Sbp1 s, const Shape1& shape, Shape1 target, int64_t ranks);

// The losses' signature (the elementwise, class and row losses of rules_nn._loss): the input
// split(0); every other tensor input with the batch's size along dim 0 split(0) with it (a broadcast
// one sliced), the others (class weights) broadcast; reduction 'none' -> split(0), 'mean' ->
// partial_sum of each rank's sum over the global normaliser (`normalised`), any other ('sum') ->
// partial_sum. nullopt: the input is not split(0) (the rule's broadcast signature).
enum class Reduction { kNone, kSum, kMean };
std::optional<SbpSig> LossRule(const std::vector<Sbp1>& sbps, const std::vector<Shape1>& shapes, Reduction r);

// A oneflow.sbp value's, and the value of one (Python objects: the callers hold the GIL).
Sbp1 SbpOf(nb::handle s);
nb::object SbpObject(Sbp1 s);

// transpose(d0, d1): a split dim follows the swap; broadcast and partial stay.
std::optional<SbpSig> TransposeRule(Sbp1 s, const Shape1& shape, int64_t d0, int64_t d1);

}  // namespace oneflow
