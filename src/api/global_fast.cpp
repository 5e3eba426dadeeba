// Note [Global fast path] (api/global.h) for the rules of Note [SBP rules in C++] and Note [Partial
// elementwise] (api/global_rules.h): the ops whose signature, the dispatcher's own, boxes nothing run
// on the components here (global_bind.cpp's bindings and methods call in).
#include <Python.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/convert.h"
#include "api/global_internal.h"
#include "api/global_rules.h"
#include "autograd/grad_mode.h"

namespace oneflow::global_internal {

PyObject* RuleCall::Find(size_t i, std::initializer_list<const char*> names) const {
  for (const auto& [k, v] : kw)
    for (const char* n : names)
      if (std::strcmp(k, n) == 0) return v;
  return i < pos.size() ? pos[i] : nullptr;
}

namespace {

struct RuleInput {
  PyObject* g;
  std::vector<Sbp1> sbps;  // one per mesh axis
  Shape1 shape;            // logical
  nb::object local;
};

bool IntsOrInt(PyObject* h, std::vector<int64_t>* out) {
  if (PyLong_CheckExact(h)) {
    out->push_back(PyLong_AsLongLong(h));
    return true;
  }
  if (!PyTuple_Check(h) && !PyList_Check(h)) return false;
  nb::object seq = nb::borrow(h);
  for (nb::handle x : nb::borrow<nb::sequence>(seq)) {
    if (!PyLong_CheckExact(x.ptr())) return false;
    out->push_back(PyLong_AsLongLong(x.ptr()));
  }
  return true;
}

bool PlainNumber(PyObject* h) { return PyLong_CheckExact(h) || PyFloat_CheckExact(h) || PyBool_Check(h); }

// The global arguments of a call (each once, in order) with their components; `pos` / `kw` the
// call's values with each global tensor replaced by its component. Read: false where the call is
// not the fast path's (a local tensor, a container holding more than ints, another Python-level
// kind, two placements, SBPs of different lengths).
struct Globals {
  std::vector<RuleInput> ins;
  nb::object placement;
  std::vector<nb::object> pos, kw;

  bool Read(const RuleCall& call) {
    pos.resize(call.pos.size());
    for (size_t i = 0; i < pos.size(); ++i)
      if (!LocalOf(call.pos[i], &pos[i])) return false;
    kw.resize(call.kw.size());
    for (size_t i = 0; i < kw.size(); ++i)
      if (!LocalOf(call.kw[i].second, &kw[i])) return false;
    return !ins.empty();
  }
  const RuleInput* Of(PyObject* h) const {
    for (const RuleInput& in : ins)
      if (in.g == h) return &in;
    return nullptr;
  }

 private:
  bool LocalOf(PyObject* h, nb::object* out) {
    if (const GlobalType* gt = TypeOf(h)) {
      if (const RuleInput* in = Of(h)) {
        *out = in->local;
        return true;
      }
      nb::object sbp = Slot(gt->sbp, h);
      if (!PyTuple_Check(sbp.ptr()) || PyTuple_GET_SIZE(sbp.ptr()) == 0) return false;
      nb::object pl = Slot(gt->placement, h);
      if (!placement.is_valid()) {
        placement = pl;
      } else if (pl.ptr() != placement.ptr()) {
        int eq = PyObject_RichCompareBool(pl.ptr(), placement.ptr(), Py_EQ);
        if (eq < 0) throw nb::python_error();
        if (eq != 1) return false;
      }
      RuleInput in{h, {}, {}, Slot(gt->local, h)};
      for (nb::handle s : nb::borrow<nb::tuple>(sbp)) in.sbps.push_back(SbpOf(s));
      if (!ins.empty() && in.sbps.size() != ins[0].sbps.size()) return false;
      for (nb::handle d : nb::borrow<nb::tuple>(Slot(gt->shape, h))) in.shape.push_back(nb::cast<int64_t>(d));
      *out = in.local;
      ins.push_back(std::move(in));
      return true;
    }
    if (h == Py_None || PyLong_CheckExact(h) || PyFloat_CheckExact(h) || PyBool_Check(h) || PyUnicode_CheckExact(h)) {
      *out = nb::borrow(h);
      return true;
    }
    if (PyObject_TypeCheck(h, reinterpret_cast<PyTypeObject*>(g_tensor_type)) || PyDict_Check(h)) return false;
    if (PyTuple_Check(h) || PyList_Check(h)) {  // (dims: ints only)
      std::vector<int64_t> ints;
      if (!IntsOrInt(h, &ints)) return false;
      *out = nb::borrow(h);
      return true;
    }
    if (PyObject_HasAttr(h, g_marker_str)) return false;
    *out = nb::borrow(h);  // (a dtype)
    return true;
  }
};

bool NeedsGrad(const nb::object& local) {
  return GradMode::is_enabled() && IsTensor(local) && ToTensor(local).requires_grad();
}

template <typename Ints>
nb::object TupleOf(const Ints& v) {
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(v.size())));
  Py_ssize_t i = 0;
  for (int64_t x : v) PyTuple_SET_ITEM(t.ptr(), i++, PyLong_FromLongLong(x));
  return t;
}

// The mesh's axis sizes (a 1-d placement: its rank count is not needed).
std::vector<int64_t> Hierarchy(const nb::object& placement) {
  static PyObject* attr = PyUnicode_InternFromString("_hierarchy");
  nb::object h = nb::steal(PyObject_GetAttr(placement.ptr(), attr));
  if (!h.is_valid()) throw nb::python_error();
  std::vector<int64_t> out;
  for (nb::handle n : nb::borrow<nb::sequence>(h)) out.push_back(nb::cast<int64_t>(n));
  return out;
}

// A result of a dim rule wrapped: every tensor in it (one, or the tuple / namedtuple / list of a
// split, a max with indices, a sort) a global tensor laid out as `sbp`, its logical size along each
// split dim of `out_dims` the input's along the matching `in_dims`; anything else as it is.
nb::object WrapDims(const nb::object& r, const nb::object& placement, const nb::object& sbp,
                    const std::vector<std::pair<int64_t, int64_t>>& dims, const Shape1& in_shape) {
  if (IsTensor(r)) {
    const Tensor& t = ToTensor(r);
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    for (auto [in, out] : dims)
      if (out < static_cast<int64_t>(shape.size())) shape[out] = in_shape[in];
    return NewGlobal(r, placement, sbp, TupleOf(shape));
  }
  if (!PyTuple_Check(r.ptr()) && !PyList_Check(r.ptr())) return r;
  nb::list items;
  for (nb::handle x : nb::borrow<nb::sequence>(r)) items.append(WrapDims(nb::borrow(x), placement, sbp, dims, in_shape));
  if (PyList_Check(r.ptr())) return items;
  nb::object tup = nb::steal(PyList_AsTuple(items.ptr()));
  if (PyTuple_CheckExact(r.ptr())) return tup;
  PyObject* made = PyObject_Call(reinterpret_cast<PyObject*>(Py_TYPE(r.ptr())), tup.ptr(), nullptr);  // (a namedtuple)
  if (!made) throw nb::python_error();
  return nb::steal(made);
}

// Note [Dim rules on the fast path]: an op along some dims that keeps the others (along_dim: split,
// chunk, cumsum, sort, narrow, ...) or a reduction that is no sum (reduce_dims and kin: max / min
// with indices, amax, argmax, var, median, ...) on ONE global input whose every mesh axis is
// broadcast or split along a dim the op does not touch: each process runs the op on its component
// and the outputs keep the split (moved down past the removed dims of a reduction without keepdim),
// their logical size there the input's -- the dispatcher's _along_dim / _reduce_dims signatures,
// which box nothing for these inputs. The dims are read where the op's sig has them
// (api/sbp_table.h, read by FastRuleOf: DimArgs); a dim of None (every dim: a partial max, Note [Partial max with
// indices]), a split dim among the op's, partial sums, other tensor arguments: the dispatcher's.
std::optional<nb::object> DimFast(int rule, const DimArgs& da, const Globals& gl, const RuleCall& call,
                                  const Invoke& invoke) {
  const std::vector<RuleInput>& ins = gl.ins;
  if (ins.size() != 1 || call.Find(0, {"input", "self", "x"}) != ins[0].g) return std::nullopt;
  const size_t npos = static_cast<size_t>(-1);
  PyObject* d = call.Find(da.dim_pos < 0 ? npos : static_cast<size_t>(da.dim_pos), {da.dim_name.c_str()});
  std::vector<int64_t> dims;
  if (!d) {
    if (!da.dim_default) return std::nullopt;
    dims.push_back(*da.dim_default);
  } else if (d == Py_None || !IntsOrInt(d, &dims) || dims.empty()) {
    return std::nullopt;
  }
  // (a varargs dims parameter given several positional dims: FastRuleOf leaves those ops to the dispatcher)
  bool keep = false;
  if (rule == kReduceDims && !da.keep_name.empty()) {
    PyObject* k = call.Find(da.keep_pos < 0 ? npos : static_cast<size_t>(da.keep_pos), {da.keep_name.c_str()});
    if (k && k != Py_None) {
      int t = PyObject_IsTrue(k);
      if (t < 0) throw nb::python_error();
      keep = t == 1;
    }
  }
  const int64_t nd = static_cast<int64_t>(ins[0].shape.size());
  for (int64_t& x : dims) x = ((x % std::max<int64_t>(nd, 1)) + std::max<int64_t>(nd, 1)) % std::max<int64_t>(nd, 1);
  std::vector<std::pair<int64_t, int64_t>> moved;  // (input split dim, output split dim)
  nb::object sbp = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(ins[0].sbps.size())));
  Py_ssize_t k = 0;
  for (Sbp1 s : ins[0].sbps) {
    Sbp1 out = s;
    if (s.kind == 'P') return std::nullopt;
    if (s.kind == 'S') {
      if (std::find(dims.begin(), dims.end(), s.dim) != dims.end()) return std::nullopt;
      if (rule == kReduceDims && !keep)
        out.dim = s.dim - std::count_if(dims.begin(), dims.end(), [&](int64_t x) { return x < s.dim; });
      moved.emplace_back(s.dim, out.dim);
    }
    PyTuple_SET_ITEM(sbp.ptr(), k++, SbpObject(out).release().ptr());
  }
  nb::object result = invoke(gl.pos, gl.kw);
  return WrapDims(result, gl.placement, sbp, moved, ins[0].shape);
}

// reshape / view (ReshapeRule, api/global_rules.h) on a 1-d placement (the rule is not per axis: on
// a mesh the dispatcher runs it broadcast): the target read as the dispatcher's rules_shape.reshape
// reads it (shape= / size=, one sequence, or the positional ints), each component reshaped to its
// part of it -- a split output's dim the component's split size times the rule's factor.
std::optional<nb::object> ReshapeFast(const Globals& gl, const RuleCall& call, const Invoke& invoke) {
  if (gl.ins.size() != 1 || gl.ins[0].sbps.size() != 1 || gl.ins[0].shape.empty()) return std::nullopt;
  const RuleInput& in = gl.ins[0];
  if (call.Find(0, {"input", "self", "x"}) != in.g) return std::nullopt;
  PyObject* given = nullptr;
  for (const auto& [k, v] : call.kw) {
    if (std::strcmp(k, "shape") == 0 || std::strcmp(k, "size") == 0) {
      given = v;
    } else if (std::strcmp(k, "input") != 0 && std::strcmp(k, "self") != 0) {
      return std::nullopt;
    }
  }
  Shape1 target;
  if (given) {
    if (call.pos.size() > 1 || !IntsOrInt(given, &target)) return std::nullopt;
  } else if (call.pos.size() == 2 && (PyTuple_Check(call.pos[1]) || PyList_Check(call.pos[1]))) {
    if (!IntsOrInt(call.pos[1], &target)) return std::nullopt;
  } else {
    for (size_t i = 1; i < call.pos.size(); ++i)
      if (!IntsOrInt(call.pos[i], &target) || PyTuple_Check(call.pos[i]) || PyList_Check(call.pos[i])) return std::nullopt;
  }
  const std::vector<int64_t> hierarchy = Hierarchy(gl.placement);
  if (hierarchy.size() != 1) return std::nullopt;
  std::optional<ReshapeSig> sig = ReshapeRule(in.sbps[0], in.shape, target, hierarchy[0]);
  if (!sig) return std::nullopt;
  Shape1 local = sig->target;
  if (sig->out.kind == 'S') local[sig->out.dim] = ToTensor(in.local).sizes()[in.sbps[0].dim] * sig->factor;
  nb::object result = invoke({in.local, TupleOf(local)}, {});
  if (!IsTensor(result)) return std::nullopt;  // (not met: reshape gives one tensor)
  nb::object sbp = nb::steal(PyTuple_New(1));
  PyTuple_SET_ITEM(sbp.ptr(), 0, SbpObject(sig->out).release().ptr());
  return NewGlobal(result, gl.placement, sbp, TupleOf(sig->target));
}

// An elementwise loss (LossRule, api/global_rules.h) on a 1-d placement: input and target split(0)
// as they are (nothing to box), no broadcast input needing its gradient summed; 'none' keeps the
// split, 'sum' is a partial sum, 'mean' each rank's sum over the input's global element count (the
// dispatcher's rules_nn.elementwise_loss: reduction='sum' locally, then divided). The reduction is
// read as the dispatcher reads it: a keyword (the bindings pass every argument by name).
std::optional<nb::object> LossFast(const Globals& gl, const RuleCall& call, const Invoke& invoke) {
  const std::vector<RuleInput>& ins = gl.ins;
  if (ins[0].sbps.size() != 1 || call.Find(0, {"input", "self", "x", "input1"}) != ins[0].g) return std::nullopt;
  size_t at = call.kw.size();
  for (size_t i = 0; i < call.kw.size(); ++i)
    if (std::strcmp(call.kw[i].first, "reduction") == 0) at = i;
  if (at == call.kw.size() || !PyUnicode_Check(call.kw[at].second)) return std::nullopt;
  const char* how = PyUnicode_AsUTF8(call.kw[at].second);
  if (!how) throw nb::python_error();
  const Reduction r = std::strcmp(how, "none") == 0 ? Reduction::kNone
                      : std::strcmp(how, "mean") == 0 ? Reduction::kMean : Reduction::kSum;
  std::vector<Sbp1> sbps;
  std::vector<Shape1> shapes;
  for (const RuleInput& in : ins) {
    sbps.push_back(in.sbps[0]);
    shapes.push_back(in.shape);
  }
  std::optional<SbpSig> sig = LossRule(sbps, shapes, r);
  if (!sig) return std::nullopt;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (sig->targets[i] != sbps[i]) return std::nullopt;  // (boxing: the dispatcher's)
    if (sbps[i].kind == 'B' && NeedsGrad(ins[i].local)) return std::nullopt;
  }
  std::vector<nb::object> kw = gl.kw;
  if (r == Reduction::kMean) kw[at] = nb::str("sum");
  nb::object result = invoke(gl.pos, kw);
  if (!IsTensor(result)) return std::nullopt;  // (not met: these losses give one tensor)
  if (r == Reduction::kMean) {
    double n = 1;
    for (int64_t d : ins[0].shape) n *= static_cast<double>(d);
    nb::object count = nb::steal(PyFloat_FromDouble(n));
    PyObject* q = PyNumber_TrueDivide(result.ptr(), count.ptr());
    if (!q) throw nb::python_error();
    result = nb::steal(q);
  }
  std::vector<int64_t> shape(ToTensor(result).sizes().begin(), ToTensor(result).sizes().end());
  if (sig->out.kind == 'S' && !shape.empty()) shape[0] = sig->length;
  nb::object sbp = nb::steal(PyTuple_New(1));
  PyTuple_SET_ITEM(sbp.ptr(), 0, SbpObject(sig->out).release().ptr());
  return NewGlobal(result, gl.placement, sbp, TupleOf(shape));
}

}  // namespace

// Note [Global fast path] for the rules of Note [SBP rules in C++] (matmul / bmm, linear, sum / mean,
// softmax, transpose): the op's arguments -- positional ones, then keyword ones -- with every global
// tensor replaced by its component, where all of them are global tensors of one placement and
// everything else is a plain value; the rule's signature -- on a mesh one per axis, each from the
// 1-d rule on the shapes the axes before it leave, as the dispatcher's _signature_nd -- must keep
// every input as it is (no boxing) and must not use a broadcast input that needs a gradient for a
// split or partial output (the dispatcher's BroadcastUse sums that gradient over the ranks).
std::optional<nb::object> RuleFast(const FastInfo& info, const RuleCall& call, const Invoke& invoke) {
  const int rule = info.rule;
  Globals gl;
  if (!gl.Read(call)) return std::nullopt;
  if (DimRule(rule)) return DimFast(rule, info.dims, gl, call, invoke);
  if (rule == kReshape) return ReshapeFast(gl, call, invoke);
  if (rule == kLoss) return LossFast(gl, call, invoke);
  const std::vector<RuleInput>& ins = gl.ins;

  // the arguments the rule reads, as the dispatcher's rules read them (signatures.py)
  std::optional<std::vector<int64_t>> dims;
  bool keep = false, bias = false;
  std::optional<int64_t> dim;
  int64_t d0 = 0, d1 = 0;
  if (rule == kMatmul || rule == kBmm) {
    if (call.pos.size() + call.kw.size() != 2) return std::nullopt;  // (input, other: nothing else)
  } else if (rule == kLinear) {  // (input, weight[, bias])
    PyObject* b = call.Find(2, {"bias"});
    bias = b && b != Py_None;
    if (call.pos.size() + call.kw.size() > 3 || ins.size() != 2u + bias || call.Find(0, {"input"}) != ins[0].g ||
        call.Find(1, {"weight"}) != ins[1].g || (bias && b != ins[2].g))
      return std::nullopt;
  } else {
    if (ins.size() != 1 || call.Find(0, {"input", "self", "x"}) != ins[0].g) return std::nullopt;
    if (rule == kReduceSum || rule == kReduceMean) {
      if (call.pos.size() > 3) return std::nullopt;  // (sum(x, 0, 1): the dispatcher's)
      PyObject* d = call.Find(1, {"dim", "axis"});
      PyObject* k = call.Find(2, {"keepdim", "keepdims"});
      if (d && d != Py_None) {
        dims.emplace();
        if (!IntsOrInt(d, &*dims)) return std::nullopt;
      }
      int t = k && k != Py_None ? PyObject_IsTrue(k) : 0;
      if (t < 0) throw nb::python_error();
      keep = t == 1;
    } else if (rule == kTranspose) {
      PyObject* a = call.Find(1, {"dim0", "axis0"});
      PyObject* b = call.Find(2, {"dim1", "axis1"});
      if (!a || !b || !PyLong_CheckExact(a) || !PyLong_CheckExact(b) || call.pos.size() > 3) return std::nullopt;
      if (ins[0].shape.empty()) return std::nullopt;
      d0 = PyLong_AsLongLong(a);
      d1 = PyLong_AsLongLong(b);
    } else if (rule == kSoftmax) {
      if (call.pos.size() > 3) return std::nullopt;
      PyObject* d = call.Find(1, {"dim"});
      if (d && d != Py_None) {
        if (!PyLong_CheckExact(d)) return std::nullopt;
        dim = PyLong_AsLongLong(d);
      }
    } else {
      return std::nullopt;
    }
  }
  auto signature = [&](const std::vector<Sbp1>& s, const std::vector<Shape1>& sh) -> std::optional<SbpSig> {
    switch (rule) {
      case kMatmul: return ins.size() == 2 ? MatmulRule(s[0], sh[0], s[1], sh[1]) : std::nullopt;
      case kBmm: return ins.size() == 2 ? BmmRule(s[0], sh[0], s[1], sh[1]) : std::nullopt;
      case kLinear: return LinearRule(s[0], sh[0], s[1], sh[1], bias);
      case kReduceSum:
      case kReduceMean: return ReduceRule(rule == kReduceMean, s[0], sh[0], dims, keep);
      case kTranspose: return TransposeRule(s[0], sh[0], d0, d1);
      default: return SoftmaxRule(s[0], sh[0], dim);
    }
  };

  // one signature per mesh axis, on the shapes the axes before it leave (the first process's:
  // the dispatcher's runtime.levels(..., 0), so every process decides alike)
  const size_t nd = ins[0].sbps.size();
  const std::vector<int64_t> hierarchy = nd > 1 ? Hierarchy(gl.placement) : std::vector<int64_t>{};
  if (nd > 1 && hierarchy.size() != nd) return std::nullopt;
  std::vector<Shape1> shapes;
  for (const RuleInput& in : ins) shapes.push_back(in.shape);
  std::vector<Sbp1> outs(nd);
  std::vector<int64_t> lengths(nd, -1), mean_dims;
  std::vector<Sbp1> s(ins.size());
  for (size_t k = 0; k < nd; ++k) {
    for (size_t i = 0; i < ins.size(); ++i) s[i] = ins[i].sbps[k];
    std::optional<SbpSig> sig = signature(s, shapes);
    outs[k] = sig ? sig->out : Sbp1{'B', -1};
    for (size_t i = 0; i < ins.size(); ++i) {
      Sbp1 target = sig ? sig->targets[i] : Sbp1{'B', -1};
      if (target != s[i]) return std::nullopt;  // (boxing: the dispatcher's)
      if (outs[k].kind != 'B' && s[i].kind == 'B' && NeedsGrad(ins[i].local)) return std::nullopt;
    }
    if (sig) {
      lengths[k] = sig->length;
      if (!sig->mean_dims.empty()) mean_dims = sig->mean_dims;
    }
    for (size_t i = 0; k + 1 < nd && i < ins.size(); ++i)
      if (s[i].kind == 'S') shapes[i][s[i].dim] = (shapes[i][s[i].dim] + hierarchy[k] - 1) / hierarchy[k];
  }
  nb::object result = invoke(gl.pos, gl.kw);
  if (!IsTensor(result)) return std::nullopt;  // (not met: these ops give one tensor)
  if (!mean_dims.empty()) {
    // the local mean of a split dim, rescaled to the share of the global mean it is (the
    // dispatcher's run(), where a rank holding none of the dim makes its NaN a 0)
    const Tensor& x = ToTensor(ins[0].local);
    int64_t n_local = 1, n_global = 1;
    for (int64_t d : mean_dims) {
      n_local *= x.sizes()[d];
      n_global *= ins[0].shape[d];
    }
    PyObject* r = nullptr;
    if (n_local == 0 && n_global) {
      r = PyObject_CallFunction(OpFunction("nan_to_num"), "Od", result.ptr(), 0.0);
    } else if (n_global) {
      nb::object ratio = nb::steal(PyFloat_FromDouble(static_cast<double>(n_local) / static_cast<double>(n_global)));
      r = PyNumber_Multiply(result.ptr(), ratio.ptr());
    }
    if (n_global) {
      if (!r) throw nb::python_error();
      result = nb::steal(r);
    }
  }
  const Tensor& t = ToTensor(result);
  std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  for (size_t k = nd; k-- > 0;)  // (the outermost split of a dim decides its logical size)
    if (outs[k].kind == 'S' && lengths[k] >= 0 && outs[k].dim < static_cast<int64_t>(shape.size()))
      shape[outs[k].dim] = lengths[k];
  nb::object sbp = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(nd)));
  for (size_t k = 0; k < nd; ++k) PyTuple_SET_ITEM(sbp.ptr(), k, SbpObject(outs[k]).release().ptr());
  return NewGlobal(result, gl.placement, sbp, TupleOf(shape));
}

// Note [Partial elementwise] (api/global_rules.h) on the fast path: an add / sub / neg of partial
// sums of one layout, or a mul / div of a partial sum (the first argument) by broadcast tensors and
// numbers, keeps the first input's layout without boxing. The arguments the dispatcher's
// _constant / _scales read (signatures.py) are read here alike: for a sum every operand a global
// tensor (alpha aside), for a scale no rounding mode and the first not repeated; a broadcast
// factor needing its gradient (BroadcastUse) is the dispatcher's.
std::optional<nb::object> PartialFast(int rule, bool inplace, const RuleCall& call, const Invoke& invoke) {
  PyObject* first = call.Find(0, {"input", "self", "x"});
  if (!first || !TypeOf(first)) return std::nullopt;
  Globals gl;
  if (!gl.Read(call) || gl.ins[0].g != first) return std::nullopt;
  const bool sum = rule == kSumLayout;
  auto plain_ok = [&](const char* name, PyObject* v) {
    if (v == Py_None) return true;
    if (name && std::strcmp(name, "out") == 0) return false;  // (Note [out= arguments]: the dispatcher's)
    if (name && std::strcmp(name, "rounding_mode") == 0) return false;
    if (sum) return name && std::strcmp(name, "alpha") == 0 && PlainNumber(v);  // (a constant: every rank adds it)
    return PlainNumber(v);
  };
  for (PyObject* v : call.pos)
    if (!TypeOf(v) && !plain_ok(nullptr, v)) return std::nullopt;
  for (const auto& [k, v] : call.kw)
    if (!TypeOf(v) && !plain_ok(k, v)) return std::nullopt;
  if (!sum) {
    size_t uses = 0;  // (p * p squares the sum: not linear in it)
    for (PyObject* v : call.pos) uses += v == first;
    for (const auto& kv : call.kw) uses += kv.second == first;
    if (uses != 1) return std::nullopt;
  }
  const RuleInput& in0 = gl.ins[0];
  bool any_partial = false;
  std::vector<Sbp1> s(gl.ins.size());
  for (size_t k = 0; k < in0.sbps.size(); ++k) {
    for (size_t i = 0; i < gl.ins.size(); ++i) s[i] = gl.ins[i].sbps[k];
    if (s[0].kind == 'P') {
      if (!StaysPartial(sum ? Partial::kSum : Partial::kScale, s)) return std::nullopt;
      any_partial = true;
    } else if (sum ? std::any_of(s.begin(), s.end(), [&](Sbp1 x) { return x != s[0]; })
                   : std::any_of(s.begin(), s.end(), [](Sbp1 x) { return x.kind != 'B'; })) {
      return std::nullopt;  // (a sum: every axis one layout; a scale: the other axes broadcast)
    }
  }
  if (!any_partial) return std::nullopt;
  for (size_t i = 1; i < gl.ins.size(); ++i) {
    if (sum ? gl.ins[i].shape != in0.shape : NeedsGrad(gl.ins[i].local)) return std::nullopt;
  }
  nb::object result = invoke(gl.pos, gl.kw);
  if (inplace) return nb::borrow(first);
  if (!IsTensor(result)) return std::nullopt;
  // (a sum: the inputs' shape, split axes included; a scale: no split axis, the component's shape)
  nb::object shape = sum ? Slot(TypeOf(first)->shape, first) : TupleOf(ToTensor(result).sizes());
  return NewGlobal(result, gl.placement, Slot(TypeOf(first)->sbp, first), shape);
}

}  // namespace oneflow::global_internal
