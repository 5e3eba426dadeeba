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
  int64_t na = static_cast<int64_t>(a_shape.size());
  if (na < 1 || b_shape.size() != 2) return std::nullopt;
  bool a_row = a.kind == 'S' && a.dim < na - 1;  // a split of a's rows (or of its batch dims)
  if (a_row && b.kind == 'B') return Sig({a, b}, S(a.dim), a_shape[a.dim]);
  if (a.kind == 'B' && b == S(1)) return Sig({a, b}, S(na - 1), b_shape[1]);
  if (a == S(na - 1) && b == S(0)) return Sig({a, b}, kP);
  if ((a.kind == 'P' && b.kind == 'B') || (a.kind == 'B' && b.kind == 'P')) return Sig({a, b}, kP);
  if (a_row) return Sig({a, kB}, S(a.dim), a_shape[a.dim]);
  return std::nullopt;
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

}  // namespace oneflow
