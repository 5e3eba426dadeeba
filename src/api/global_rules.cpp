// Note [SBP rules in C++] (api/global_rules.h): the rules (their bindings: global_rules_bind.cpp).
#include "api/global_rules.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "api/convert.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace oneflow {

namespace {
constexpr Sbp1 kB{'B', -1};
constexpr Sbp1 kP{'P', -1};
Sbp1 S(int64_t d) { return {'S', d}; }
int64_t Wrap(int64_t d, int64_t n) { return n ? ((d % n) + n) % n : 0; }  // Python's d % n

SbpSig Sig(std::vector<Sbp1> targets, Sbp1 out, int64_t length = -1) {
  SbpSig s;
  s.targets = std::move(targets);
  s.out = out;
  s.length = length;
  return s;
}
}  // namespace

std::optional<SbpSig> MatmulRule(Sbp1 a, const Shape1& a_shape, Sbp1 b, const Shape1& b_shape) {
  const int64_t na = static_cast<int64_t>(a_shape.size()), nb_ = static_cast<int64_t>(b_shape.size());
  if (na < 1 || nb_ < 1) return std::nullopt;
  const bool partial = (a.kind == 'P' && b.kind == 'B') || (a.kind == 'B' && b.kind == 'P');
  const int64_t kb = nb_ >= 2 ? nb_ - 2 : 0;  // b's contracted dim
  if (a == S(na - 1) && b == S(kb)) return Sig({a, b}, kP);
  if (partial) return Sig({a, b}, kP);
  if (na == 1 && nb_ == 1) return std::nullopt;  // (a dot product: its only split is the contracted one)
  // the output's rank, and where a's dim i / b's dim j (not contracted) land in it (torch.matmul:
  // a vector side gains a dim of 1 that is then dropped; batch dims align right)
  const int64_t out_nd = na == 1 ? nb_ - 1 : nb_ == 1 ? na - 1 : std::max(na, nb_);
  auto a_out = [&](int64_t i) { return nb_ == 1 ? i : i + out_nd - na; };
  auto b_out = [&](int64_t j) { return na == 1 ? (j == nb_ - 1 ? nb_ - 2 : j) : j + out_nd - nb_; };
  // The other side's layout for a split of one side's dim i (`na_` / `as`: that side; `nb2` / `bs`
  // the other): split along its matching batch dim where it has one of the same size -- even of
  // size 1: on a mesh axis a dim of 1 may be a slice of a longer one, and bmm does not broadcast --,
  // broadcast where it has none or one of size 1 (broadcast along it); nullopt where this side's
  // dim is 1 and the other's is not (the split would hold the broadcast dim on one rank only).
  auto partner = [](int64_t i, int64_t na_, const Shape1& as, int64_t nb2, const Shape1& bs) -> std::optional<Sbp1> {
    if (i >= na_ - 2 || nb2 < 3) return kB;  // (a row / column dim, or no batch dims over there)
    int64_t j = i - na_ + nb2;
    if (j < 0) return kB;
    if (as[i] == bs[j]) return S(j);
    if (bs[j] == 1) return kB;
    return std::nullopt;
  };
  const bool a_free = a.kind == 'S' && a.dim < na - 1 && na >= 2;  // a's rows or batch
  const bool b_batch = b.kind == 'S' && b.dim < nb_ - 2;
  const bool b_cols = b.kind == 'S' && nb_ >= 2 && b.dim == nb_ - 1;
  std::optional<Sbp1> for_a = a_free ? partner(a.dim, na, a_shape, nb_, b_shape) : std::nullopt;
  std::optional<Sbp1> for_b = b_batch ? partner(b.dim, nb_, b_shape, na, a_shape) : std::nullopt;
  if (for_a && b == *for_a) return Sig({a, b}, S(a_out(a.dim)), a_shape[a.dim]);
  if (for_b && a == *for_b) return Sig({a, b}, S(b_out(b.dim)), b_shape[b.dim]);
  if (b_cols && a.kind == 'B') return Sig({a, b}, S(b_out(b.dim)), b_shape[b.dim]);
  // failing those: one side's split kept, the other boxed to fit it
  if (for_a) return Sig({a, *for_a}, S(a_out(a.dim)), a_shape[a.dim]);
  if (for_b) return Sig({*for_b, b}, S(b_out(b.dim)), b_shape[b.dim]);
  if (b_cols) return Sig({kB, b}, S(b_out(b.dim)), b_shape[b.dim]);
  return std::nullopt;
}

std::optional<SbpSig> BmmRule(Sbp1 a, const Shape1& a_shape, Sbp1 b, const Shape1& b_shape) {
  if (a_shape.size() != 3 || b_shape.size() != 3) return std::nullopt;
  return MatmulRule(a, a_shape, b, b_shape);
}

std::optional<SbpSig> LinearRule(Sbp1 x, const Shape1& x_shape, Sbp1 w, const Shape1& w_shape, bool bias) {
  const int64_t nx = static_cast<int64_t>(x_shape.size());
  auto sig = [&](Sbp1 tw, Sbp1 tb, Sbp1 out, int64_t length) {
    std::vector<Sbp1> t{x, tw};
    if (bias) t.push_back(tb);
    return Sig(std::move(t), out, length);
  };
  if (nx < 1) return std::nullopt;
  if (x.kind == 'S' && x.dim < nx - 1) return sig(kB, kB, x, x_shape[x.dim]);
  if (w_shape.size() != 2) return std::nullopt;  // (a vector weight: its only dim is contracted)
  if (x.kind == 'B' && w == S(0)) return sig(w, S(0), S(nx - 1), w_shape[0]);
  if (x == S(nx - 1) && w == S(1)) return sig(w, kP, kP, -1);
  return std::nullopt;
}

std::optional<SbpSig> SoftmaxRule(Sbp1 s, const Shape1& shape, std::optional<int64_t> dim) {
  int64_t nd = static_cast<int64_t>(shape.size());
  if (s.kind != 'S' || !dim || nd == 0 || Wrap(*dim, nd) == s.dim) return std::nullopt;
  return Sig({s}, s, shape[s.dim]);
}

bool StaysPartial(Partial how, const std::vector<Sbp1>& sbps) {
  if (sbps.empty()) return false;
  if (how == Partial::kSum)
    return std::all_of(sbps.begin(), sbps.end(), [](Sbp1 s) { return s.kind == 'P'; });
  if (how == Partial::kScale)
    return sbps[0].kind == 'P' && std::all_of(sbps.begin() + 1, sbps.end(), [](Sbp1 s) { return s.kind == 'B'; });
  return false;
}

std::optional<SbpSig> ReduceRule(bool mean, Sbp1 s, const Shape1& shape, std::optional<std::vector<int64_t>> dims,
                                 bool keepdim) {
  int64_t nd = static_cast<int64_t>(shape.size());
  if (s.kind == 'B') return Sig({s}, kB);
  if (s.kind == 'P') return mean ? Sig({kB}, kB) : Sig({s}, kP);
  std::vector<int64_t> ds;
  if (dims) {
    for (int64_t d : *dims) ds.push_back(Wrap(d, std::max<int64_t>(nd, 1)));
  } else {
    for (int64_t d = 0; d < nd; ++d) ds.push_back(d);
  }
  if (std::find(ds.begin(), ds.end(), s.dim) != ds.end()) {
    SbpSig sig = Sig({s}, kP);
    if (mean) sig.mean_dims = ds;
    return sig;
  }
  int64_t out = keepdim ? s.dim : s.dim - std::count_if(ds.begin(), ds.end(), [&](int64_t d) { return d < s.dim; });
  return Sig({s}, S(out), shape[s.dim]);
}

std::optional<SbpSig> TransposeRule(Sbp1 s, const Shape1& shape, int64_t d0, int64_t d1) {
  int64_t nd = static_cast<int64_t>(shape.size());
  if (s.kind != 'S') return Sig({s}, s);
  d0 = Wrap(d0, nd);
  d1 = Wrap(d1, nd);
  int64_t d = s.dim == d0 ? d1 : s.dim == d1 ? d0 : s.dim;
  return Sig({s}, S(d), shape[s.dim]);
}

Sbp1 SbpOf(nb::handle s) {
  static PyObject* kind_str = PyUnicode_InternFromString("_kind");
  static PyObject* dim_str = PyUnicode_InternFromString("_dim");
  nb::object kind = nb::steal(PyObject_GetAttr(s.ptr(), kind_str));
  if (!kind.is_valid()) throw nb::python_error();
  const char* k = PyUnicode_AsUTF8(kind.ptr());
  if (!k) throw nb::python_error();
  if (k[0] != 'S') return {k[0], -1};
  nb::object dim = nb::steal(PyObject_GetAttr(s.ptr(), dim_str));
  if (!dim.is_valid()) throw nb::python_error();
  return {'S', nb::cast<int64_t>(dim)};
}

nb::object SbpObject(Sbp1 s) {
  // (references held for the process's life, never released: a static nb::object would be
  // destroyed after the interpreter)
  static PyObject* mod = nb::module_::import_("oneflow.sbp").release().ptr();
  static PyObject* b = nb::getattr(mod, "broadcast").release().ptr();
  static PyObject* p = nb::getattr(mod, "partial_sum").release().ptr();
  static PyObject* splits[16] = {};
  if (s.kind == 'B') return nb::borrow(b);
  if (s.kind == 'P') return nb::borrow(p);
  if (s.dim >= 0 && s.dim < 16) {
    if (!splits[s.dim]) splits[s.dim] = nb::handle(mod).attr("split")(s.dim).release().ptr();
    return nb::borrow(splits[s.dim]);
  }
  return nb::handle(mod).attr("split")(s.dim);
}

std::optional<ReshapeSig> ReshapeRule(Sbp1 s, const Shape1& shape, Shape1 target, int64_t ranks) {
  int64_t total = 1, known = 1;
  for (int64_t d : shape) total *= d;
  int64_t unknown = -1;
  for (size_t j = 0; j < target.size(); ++j) {
    if (target[j] == -1) {
      if (unknown >= 0) return std::nullopt;
      unknown = static_cast<int64_t>(j);
    } else if (target[j] < 0) {
      return std::nullopt;
    } else {
      known *= target[j];
    }
  }
  if (unknown >= 0) {
    if (known == 0) return std::nullopt;
    target[unknown] = total / known;
  }
  int64_t product = 1;
  for (int64_t n : target) product *= n;
  if (product != total) return std::nullopt;
  if (s.kind != 'S') return ReshapeSig{s, std::move(target), 1};
  const int64_t d = s.dim;
  if (d < 0 || d >= static_cast<int64_t>(shape.size()) || shape[d] == 0) return std::nullopt;
  int64_t before = 1;
  for (int64_t i = 0; i < d; ++i) before *= shape[i];
  int64_t acc = 1;
  for (size_t j = 0; j < target.size(); ++j) {
    const int64_t n = target[j];
    if (acc == before && n % shape[d] == 0) {
      const int64_t m = n / shape[d];
      // the input dims after d must fill the factor m exactly
      int64_t rest = 1;
      for (size_t e = d + 1; rest < m && e < shape.size(); ++e) rest *= shape[e];
      if (rest == m && (m == 1 || shape[d] % ranks == 0))
        return ReshapeSig{S(static_cast<int64_t>(j)), std::move(target), m};
      return std::nullopt;
    }
    acc *= n;
    if (acc > before) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<SbpSig> LossRule(const std::vector<Sbp1>& sbps, const std::vector<Shape1>& shapes, Reduction r) {
  if (sbps.empty() || sbps[0] != S(0) || shapes[0].empty()) return std::nullopt;
  SbpSig sig;
  sig.targets.push_back(S(0));
  for (size_t i = 1; i < sbps.size(); ++i)
    sig.targets.push_back(!shapes[i].empty() && shapes[i][0] == shapes[0][0] ? S(0) : kB);
  if (r == Reduction::kNone) {
    sig.out = S(0);
    sig.length = shapes[0][0];
  } else {
    sig.out = kP;
    sig.normalised = r == Reduction::kMean;
  }
  return sig;
}

}  // namespace oneflow
