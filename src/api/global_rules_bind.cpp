// Note [SBP rules in C++] (api/global_rules.h): the rules bound for the Python dispatcher's
// signatures.py, which calls them so that each rule is defined once.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "api/global_rules.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace oneflow {

// The bindings: SBPs as oneflow.sbp values, shapes as tuples; a signature as (targets, out,
// length or None[, mean dims or None]) or None.
namespace {
Sbp1 FromPy(nb::handle s) { return SbpOf(s); }
nb::object ToPy(Sbp1 s) { return SbpObject(s); }

nb::object SigToPy(const std::optional<SbpSig>& sig, bool with_mean) {
  if (!sig) return nb::none();
  nb::list targets;
  for (Sbp1 t : sig->targets) targets.append(ToPy(t));
  nb::object length = sig->length < 0 ? nb::none() : nb::object(nb::int_(sig->length));
  if (!with_mean) return nb::make_tuple(nb::tuple(targets), ToPy(sig->out), length);
  nb::object mean = sig->mean_dims.empty() ? nb::none() : nb::cast(sig->mean_dims);
  return nb::make_tuple(nb::tuple(targets), ToPy(sig->out), length, mean);
}
}  // namespace

void BindGlobalRules(nb::module_& m) {
  m.def(
      "_sbp_matmul",
      [](nb::handle a, Shape1 a_shape, nb::handle b, Shape1 b_shape) {
        return SigToPy(MatmulRule(FromPy(a), a_shape, FromPy(b), b_shape), false);
      },
      "a"_a, "a_shape"_a, "b"_a, "b_shape"_a, "Note [SBP rules in C++]: matmul's signature.");
  m.def(
      "_sbp_bmm",
      [](nb::handle a, Shape1 a_shape, nb::handle b, Shape1 b_shape) {
        return SigToPy(BmmRule(FromPy(a), a_shape, FromPy(b), b_shape), false);
      },
      "a"_a, "a_shape"_a, "b"_a, "b_shape"_a, "Note [SBP rules in C++]: bmm's signature.");
  m.def(
      "_sbp_linear",
      [](nb::handle x, Shape1 x_shape, nb::handle w, Shape1 w_shape, bool bias) {
        return SigToPy(LinearRule(FromPy(x), x_shape, FromPy(w), w_shape, bias), false);
      },
      "x"_a, "x_shape"_a, "weight"_a, "weight_shape"_a, "bias"_a,
      "Note [SBP rules in C++]: F.linear's signature (targets: x, weight[, bias]).");
  m.def(
      "_sbp_softmax",
      [](nb::handle s, Shape1 shape, std::optional<int64_t> dim) {
        return SigToPy(SoftmaxRule(FromPy(s), shape, dim), false);
      },
      "sbp"_a, "shape"_a, "dim"_a.none(), "Note [SBP rules in C++]: softmax's signature.");
  m.def(
      "_sbp_stays_partial",
      [](const std::string& how, nb::list sbps) {
        std::vector<Sbp1> v;
        for (nb::handle s : sbps) v.push_back(FromPy(s));
        return StaysPartial(how == "sum" ? Partial::kSum : how == "scale" ? Partial::kScale : Partial::kNone, v);
      },
      "how"_a, "sbps"_a,
      "Note [Partial elementwise]: whether an elementwise op ('sum' / 'scale') keeps these SBPs' partial sums.");
  m.def(
      "_sbp_reduce",
      [](bool mean, nb::handle s, Shape1 shape, std::optional<std::vector<int64_t>> dims, bool keepdim) {
        return SigToPy(ReduceRule(mean, FromPy(s), shape, std::move(dims), keepdim), true);
      },
      "mean"_a, "sbp"_a, "shape"_a, "dims"_a.none(), "keepdim"_a, "Note [SBP rules in C++]: sum's / mean's signature.");
  m.def(
      "_sbp_transpose",
      [](nb::handle s, Shape1 shape, int64_t d0, int64_t d1) {
        return SigToPy(TransposeRule(FromPy(s), shape, d0, d1), false);
      },
      "sbp"_a, "shape"_a, "dim0"_a, "dim1"_a, "Note [SBP rules in C++]: transpose's signature.");
  m.def(
      "_sbp_loss",
      [](nb::list sbps, std::vector<Shape1> shapes, const std::string& reduction) -> nb::object {
        std::vector<Sbp1> v;
        for (nb::handle s : sbps) v.push_back(FromPy(s));
        const Reduction r = reduction == "none" ? Reduction::kNone : reduction == "mean" ? Reduction::kMean : Reduction::kSum;
        return SigToPy(LossRule(v, shapes, r), false);
      },
      "sbps"_a, "shapes"_a, "reduction"_a,
      "Note [SBP rules in C++]: a loss's signature (targets: its tensor inputs in order; a 'mean' loss's partial "
      "sum is each rank's sum over the global normaliser).");
  m.def(
      "_sbp_reshape",
      [](nb::handle s, Shape1 shape, Shape1 target, int64_t ranks) -> nb::object {
        std::optional<ReshapeSig> sig = ReshapeRule(FromPy(s), shape, std::move(target), ranks);
        if (!sig) return nb::none();
        return nb::make_tuple(ToPy(sig->out), nb::tuple(nb::cast(sig->target)), sig->factor);
      },
      "sbp"_a, "shape"_a, "target"_a, "ranks"_a,
      "Note [SBP rules in C++]: reshape's / view's signature: (output sbp, logical target shape, local factor of a "
      "split output) or None.");
}

OF_BIND(141, BindGlobalRules);

}  // namespace oneflow
