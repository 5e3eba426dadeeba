// Note [Global kind] and Note [Global fast path] (api/global.h): the kind test and the C++ path of
// a global op whose inputs already share the layout its elementwise rule gives the output.
#include "api/bind_registry.h"
#include "api/global.h"

#include <Python.h>
#include <structmember.h>

#include <cstring>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/convert.h"
#include "api/global_rules.h"
#include "autograd/grad_mode.h"
#include "graph/lazy.h"

namespace oneflow {

namespace {

// The slots of a global type (Python __slots__: member descriptors; GlobalParameter has its own).
struct GlobalType {
  PyTypeObject* type = nullptr;
  PyObject* local = nullptr;  // borrowed: the descriptors live in the type's __dict__
  PyObject* placement = nullptr;
  PyObject* sbp = nullptr;
  PyObject* shape = nullptr;
};

// Borrowed: everything registered lives in oneflow._oneflow_internal._global_state (a module
// attribute, so that the interpreter's teardown frees the Python types before nanobind checks for
// leaked ones: Note [Global arguments]'s reason).
GlobalType g_types[2];
int g_num_types = 0;
PyObject* g_module = nullptr;      // oneflow._oneflow_internal: the table ops' bindings
PyObject* g_tensor_type = nullptr;  // flow.Tensor
PyObject* g_fast_rule = nullptr;    // name -> dispatch.fast_rule's answer (Python, memoised here)
PyObject* g_wrap_same = nullptr;    // dispatch._wrap_same: outputs other than one tensor shaped as the inputs
PyObject* g_kind_str = nullptr;     // "_kind" (an sbp's), interned
PyObject* g_marker_str = nullptr;   // "_oneflow_global_": the other Python-level kinds (dispatch.register_kind)

const GlobalType* TypeOf(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  for (int i = 0; i < g_num_types; ++i)
    if (g_types[i].type == t) return &g_types[i];
  return nullptr;
}

nb::object Slot(PyObject* descr, PyObject* obj) {
  PyObject* v = Py_TYPE(descr)->tp_descr_get(descr, obj, reinterpret_cast<PyObject*>(Py_TYPE(obj)));
  if (!v) throw nb::python_error();
  return nb::steal(v);
}

void SetSlot(PyObject* descr, PyObject* obj, PyObject* value) {
  if (Py_TYPE(descr)->tp_descr_set(descr, obj, value) != 0) throw nb::python_error();
}

// How C++ may run op `name` (a table op, an in-place form, a Python operator or method name):
// asked of Python once per name (dispatch.fast_rule: sbp_table's lookup, defined there once).
// (dispatch.fast_rule's numbers; 5 / 6: the elementwise rules whose partial sums may stay partial,
// Note [Partial elementwise] in api/global_rules.h)
enum FastRule {
  kSlowRule = 0, kSameLayout = 1, kMatmul = 2, kReduceSum = 3, kTranspose = 4, kSumLayout = 5, kScaleLayout = 6,
  kReduceMean = 7, kSoftmax = 8, kLinear = 9, kBmm = 10
};
int FastRuleOf(const std::string& name) {
  static std::unordered_map<std::string, int> memo;
  auto it = memo.find(name);
  if (it != memo.end()) return it->second;
  int r = nb::cast<int>(nb::borrow(g_fast_rule)(nb::str(name.c_str())));
  memo.emplace(name, r);
  return r;
}
bool SameLayoutRule(int r) { return r == kSameLayout || r == kSumLayout || r == kScaleLayout; }
bool SameLayoutRule(const std::string& name) { return SameLayoutRule(FastRuleOf(name)); }
bool PartialRule(int r) { return r == kSumLayout || r == kScaleLayout; }
bool SignatureRule(int r) { return r > kSameLayout && !PartialRule(r); }  // Note [SBP rules in C++]

// The layout every global argument must share, from the first one met.
struct Layout {
  nb::object first;  // the first global argument
  nb::object local;  // its component
  nb::object placement, sbp, shape;
};

enum class Arg { kPlain, kGlobal, kSlow };

// One argument: a global tensor sharing `layout` (its component in *out), a value the op takes as
// it is, or kSlow (a local tensor, a container that may hold tensors, another Python-level kind, a
// global tensor laid out otherwise or as a partial sum: the dispatcher decides).
Arg Scan(PyObject* h, Layout& layout, nb::object* out) {
  if (const GlobalType* gt = TypeOf(h)) {
    if (!layout.first.is_valid()) {
      layout.first = nb::borrow(h);
      layout.placement = Slot(gt->placement, h);
      layout.sbp = Slot(gt->sbp, h);
      layout.shape = Slot(gt->shape, h);
      if (!PyTuple_Check(layout.sbp.ptr())) return Arg::kSlow;
      for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(layout.sbp.ptr()); i < n; ++i) {
        nb::object kind = nb::steal(PyObject_GetAttr(PyTuple_GET_ITEM(layout.sbp.ptr(), i), g_kind_str));
        if (!kind.is_valid()) throw nb::python_error();
        if (PyUnicode_CompareWithASCIIString(kind.ptr(), "P") == 0) return Arg::kSlow;  // partial sums
      }
      layout.local = Slot(gt->local, h);
      *out = layout.local;
      return Arg::kGlobal;
    }
    if (h == layout.first.ptr()) {
      *out = layout.local;
      return Arg::kGlobal;
    }
    auto same = [&](PyObject* descr, const nb::object& want) {
      nb::object v = Slot(descr, h);
      if (v.ptr() == want.ptr()) return true;
      int eq = PyObject_RichCompareBool(v.ptr(), want.ptr(), Py_EQ);
      if (eq < 0) throw nb::python_error();
      return eq == 1;
    };
    if (!same(gt->placement, layout.placement) || !same(gt->sbp, layout.sbp) || !same(gt->shape, layout.shape))
      return Arg::kSlow;
    *out = Slot(gt->local, h);
    return Arg::kGlobal;
  }
  if (h == Py_None || PyLong_CheckExact(h) || PyFloat_CheckExact(h) || PyBool_Check(h) || PyUnicode_CheckExact(h)) {
    *out = nb::borrow(h);
    return Arg::kPlain;
  }
  if (PyObject_TypeCheck(h, reinterpret_cast<PyTypeObject*>(g_tensor_type)) || PyTuple_Check(h) || PyList_Check(h) ||
      PyDict_Check(h))
    return Arg::kSlow;
  int marked = PyObject_HasAttr(h, g_marker_str);  // (a dtype, a complex number, ...: taken as they are)
  if (marked) return Arg::kSlow;
  *out = nb::borrow(h);
  return Arg::kPlain;
}

bool Ready() { return g_num_types > 0 && lazy::Active() == nullptr; }

// The op's result as a global tensor laid out as its inputs (in place: `self`, as it is).
nb::object WrapResult(nb::object result, const Layout& layout, PyObject* self) {
  if (self) return nb::borrow(self);
  if (IsTensor(result) && IsTensor(layout.local) &&
      ToTensor(result).sizes() == ToTensor(layout.local).sizes()) {
    const GlobalType& gt = g_types[0];  // (outputs are GlobalTensors, never parameters)
    nb::object g = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(gt.type)));
    SetSlot(gt.local, g.ptr(), result.ptr());
    SetSlot(gt.placement, g.ptr(), layout.placement.ptr());
    SetSlot(gt.sbp, g.ptr(), layout.sbp.ptr());
    SetSlot(gt.shape, g.ptr(), layout.shape.ptr());
    return g;
  }
  return nb::borrow(g_wrap_same)(result, layout.first);
}

// Note [Global fast path] for the rules of Note [SBP rules in C++] (matmul / bmm, linear, sum / mean,
// softmax, transpose): the op's arguments -- positional ones, then keyword ones -- with every global
// tensor replaced by its component, where all of them are global tensors of one placement and
// everything else is a plain value; the rule's signature -- on a mesh one per axis, each from the
// 1-d rule on the shapes the axes before it leave, as the dispatcher's _signature_nd -- must keep
// every input as it is (no boxing) and must not use a broadcast input that needs a gradient for a
// split or partial output (the dispatcher's BroadcastUse sums that gradient over the ranks).
struct RuleCall {
  std::vector<PyObject*> pos;                        // borrowed
  std::vector<std::pair<const char*, PyObject*>> kw;  // borrowed
  PyObject* Find(size_t i, std::initializer_list<const char*> names) const {
    for (const auto& [k, v] : kw)
      for (const char* n : names)
        if (std::strcmp(k, n) == 0) return v;
    return i < pos.size() ? pos[i] : nullptr;
  }
};

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

// The global arguments of a call (each once, in order) with their components: `locals` the call's
// values with each global tensor replaced. false: not the fast path's (a local tensor, a container
// holding more than ints, another Python-level kind, two placements).
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

// A new GlobalTensor: component `local`, `placement`, n-d `sbp` (a tuple), logical `shape` (a tuple).
nb::object NewGlobal(const nb::object& local, const nb::object& placement, const nb::object& sbp,
                     const nb::object& shape) {
  const GlobalType& gt = g_types[0];  // (outputs are GlobalTensors, never parameters)
  nb::object g = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(gt.type)));
  SetSlot(gt.local, g.ptr(), local.ptr());
  SetSlot(gt.placement, g.ptr(), placement.ptr());
  SetSlot(gt.sbp, g.ptr(), sbp.ptr());
  SetSlot(gt.shape, g.ptr(), shape.ptr());
  return g;
}

template <typename Ints>
nb::object TupleOf(const Ints& v) {
  nb::object t = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(v.size())));
  Py_ssize_t i = 0;
  for (int64_t x : v) PyTuple_SET_ITEM(t.ptr(), i++, PyLong_FromLongLong(x));
  return t;
}

PyObject* OpFunction(const char* op);

// The mesh's axis sizes (a 1-d placement: its rank count is not needed).
std::vector<int64_t> Hierarchy(const nb::object& placement) {
  static PyObject* attr = PyUnicode_InternFromString("_hierarchy");
  nb::object h = nb::steal(PyObject_GetAttr(placement.ptr(), attr));
  if (!h.is_valid()) throw nb::python_error();
  std::vector<int64_t> out;
  for (nb::handle n : nb::borrow<nb::sequence>(h)) out.push_back(nb::cast<int64_t>(n));
  return out;
}

// The op run by `invoke(positional locals, keyword locals)` and wrapped, or nullopt (the dispatcher's turn).
template <typename Invoke>
std::optional<nb::object> RuleFast(int rule, const RuleCall& call, Invoke&& invoke) {
  Globals gl;
  if (!gl.Read(call)) return std::nullopt;
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
template <typename Invoke>
std::optional<nb::object> PartialFast(int rule, bool inplace, const RuleCall& call, Invoke&& invoke) {
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

// Calls `callable` (or method `name` of pos[0]) with the locals.
nb::object CallLocals(PyObject* callable, PyObject* method_name, const std::vector<nb::object>& pos,
                      const RuleCall& call, const std::vector<nb::object>& kw) {
  nb::object args = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(pos.size()) - (method_name ? 1 : 0)));
  for (size_t i = method_name ? 1 : 0, j = 0; i < pos.size(); ++i, ++j)
    PyTuple_SET_ITEM(args.ptr(), j, nb::object(pos[i]).release().ptr());
  nb::dict kwargs;
  for (size_t i = 0; i < kw.size(); ++i) kwargs[call.kw[i].first] = kw[i];
  nb::object fn = method_name ? nb::steal(PyObject_GetAttr(pos[0].ptr(), method_name)) : nb::borrow(callable);
  if (!fn.is_valid()) throw nb::python_error();
  PyObject* r = PyObject_Call(fn.ptr(), args.ptr(), kwargs.ptr());
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

// A method of a global tensor (Tensor.<name> and the Python operators), bound by install_routes.
PyObject* g_routes = nullptr;  // name -> the dispatcher's Python method (module attribute _global_routes)

nb::object GlobalMethod(const std::string& name, PyObject* name_str, bool inplace, nb::handle self, nb::args args,
                        nb::kwargs kwargs) {
  const int rule = Ready() ? FastRuleOf(name) : kSlowRule;
  RuleCall call;  // (self first, for the rule and partial paths)
  if (SignatureRule(rule) || PartialRule(rule)) {
    call.pos.push_back(self.ptr());
    for (nb::handle a : args) call.pos.push_back(a.ptr());
    for (auto [k, v] : kwargs) call.kw.emplace_back(PyUnicode_AsUTF8(k.ptr()), v.ptr());
  }
  auto invoke = [&](const std::vector<nb::object>& pos, const std::vector<nb::object>& kw) {
    if (kw.empty()) {  // (the common case: one vectorcall)
      std::vector<PyObject*> argv(pos.size());
      for (size_t i = 0; i < pos.size(); ++i) argv[i] = pos[i].ptr();
      PyObject* r = PyObject_VectorcallMethod(name_str, argv.data(), argv.size() | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                              nullptr);
      if (!r) throw nb::python_error();
      return nb::steal(r);
    }
    return CallLocals(nullptr, name_str, pos, call, kw);
  };
  if (SignatureRule(rule))
    if (std::optional<nb::object> r = RuleFast(rule, call, invoke)) return std::move(*r);
  if (SameLayoutRule(rule)) {
    Layout layout;
    nb::object self_local;
    bool fast = Scan(self.ptr(), layout, &self_local) == Arg::kGlobal;
    size_t n = nb::len(args);
    std::vector<nb::object> locals(n);
    for (size_t i = 0; fast && i < n; ++i) fast = Scan(args[i].ptr(), layout, &locals[i]) != Arg::kSlow;
    nb::dict kw;
    for (auto [k, v] : kwargs) {
      if (!fast) break;
      nb::object loc;
      fast = Scan(v.ptr(), layout, &loc) != Arg::kSlow;
      kw[k] = loc;
    }
    if (fast) {
      std::vector<PyObject*> argv(n + 1);
      argv[0] = self_local.ptr();
      for (size_t i = 0; i < n; ++i) argv[i + 1] = locals[i].ptr();
      PyObject* r;
      if (kw.size() == 0) {
        r = PyObject_VectorcallMethod(name_str, argv.data(), (n + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
      } else {
        nb::object meth = nb::steal(PyObject_GetAttr(self_local.ptr(), name_str));
        if (!meth.is_valid()) throw nb::python_error();
        nb::object rest = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(n)));
        for (size_t i = 0; i < n; ++i) PyTuple_SET_ITEM(rest.ptr(), i, locals[i].inc_ref().ptr());
        r = PyObject_Call(meth.ptr(), rest.ptr(), kw.ptr());
      }
      if (!r) throw nb::python_error();
      return WrapResult(nb::steal(r), layout, inplace ? self.ptr() : nullptr);
    }
  }
  if (PartialRule(rule))
    if (std::optional<nb::object> r = PartialFast(rule, inplace, call, invoke)) return std::move(*r);
  nb::object all = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(nb::len(args)) + 1));
  PyTuple_SET_ITEM(all.ptr(), 0, nb::borrow(self).release().ptr());
  for (size_t i = 0, n = nb::len(args); i < n; ++i)
    PyTuple_SET_ITEM(all.ptr(), i + 1, nb::borrow(args[i]).release().ptr());
  PyObject* fallback = PyDict_GetItemWithError(g_routes, name_str);
  if (!fallback) {
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_AttributeError, name_str);
    throw nb::python_error();
  }
  PyObject* r = PyObject_Call(fallback, all.ptr(), kwargs.ptr());
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

PyObject* OpFunction(const char* op) {
  static std::unordered_map<std::string, PyObject*> fns;  // borrowed: module attributes
  auto it = fns.find(op);
  if (it != fns.end()) return it->second;
  PyObject* f = PyObject_GetAttrString(g_module, op);
  if (!f) throw nb::python_error();
  Py_DECREF(f);  // (the module keeps it)
  fns.emplace(op, f);
  return f;
}

std::optional<nb::object> CallOp(const char* op, bool inplace, const Layout& layout, nb::handle args,
                                 nb::handle kwargs, PyObject* self) {
  PyObject* r = PyObject_Call(OpFunction(op), args.ptr(), kwargs.ptr());
  if (!r) throw nb::python_error();
  return WrapResult(nb::steal(r), layout, inplace ? self : nullptr);
}

}  // namespace

bool IsGlobal(nb::handle h) { return TypeOf(h.ptr()) != nullptr; }

void RegisterKind(nb::handle type) {
  OF_CHECK_TYPE(PyType_Check(type.ptr())) << "_register_kind: expected a type";
  auto* t = reinterpret_cast<PyTypeObject*>(type.ptr());
  for (int i = 0; i < kind_count; ++i)
    if (kind_types[i] == t) return;
  OF_CHECK_TYPE(kind_count < static_cast<int>(std::size(kind_types))) << "_register_kind: too many kinds";
  kind_types[kind_count++] = t;
}

bool AnyKindVar(nb::handle args, nb::handle kwargs) {
  static PyObject* placement = PyUnicode_InternFromString("placement");
  static PyObject* sbp = PyUnicode_InternFromString("sbp");
  PyObject* a = args.ptr();
  for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(a); i < n; ++i)
    if (IsKind(PyTuple_GET_ITEM(a, i))) return true;
  PyObject* kw = kwargs.ptr();
  if (!kw || kw == Py_None || PyDict_GET_SIZE(kw) == 0) return false;
  // (a factory's placement= / sbp=, even None: a keyword its table form does not take, Note [Global arguments])
  if (PyDict_Contains(kw, placement) == 1 || PyDict_Contains(kw, sbp) == 1) return true;
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(kw, &pos, &k, &v))
    if (IsKind(v)) return true;
  return false;
}

static std::optional<nb::object> SameLayoutCall(const char* op, bool inplace, std::initializer_list<const char*> names,
                                                std::initializer_list<nb::handle> values);
static std::optional<nb::object> SameLayoutCallVar(const char* op, bool inplace, nb::handle args, nb::handle kwargs);

std::optional<nb::object> GlobalFast(const char* op, bool inplace, std::initializer_list<const char*> names,
                                     std::initializer_list<nb::handle> values) {
  if (!Ready()) return std::nullopt;
  const int rule = FastRuleOf(op);
  // (by keyword: the binding's parameter names)
  auto keywords = [&](RuleCall* call) {
    auto v = values.begin();
    for (const char* n : names) {
      nb::handle h = *v++;
      if (std::strcmp(n, "out") == 0 && !h.is_none()) return false;  // (Note [out= arguments])
      if (!h.is_none() || std::strcmp(n, "out") != 0) call->kw.emplace_back(n, h.ptr());
    }
    return true;
  };
  RuleCall call;
  auto invoke = [&](const std::vector<nb::object>& pos, const std::vector<nb::object>& kw) {
    return CallLocals(OpFunction(op), nullptr, pos, call, kw);
  };
  if (SignatureRule(rule) && !inplace) {
    if (!keywords(&call)) return std::nullopt;
    // (defaults None dropped for matmul's count of its arguments)
    std::erase_if(call.kw, [&](const auto& kv) { return kv.second == Py_None && (rule == kMatmul || rule == kBmm); });
    return RuleFast(rule, call, invoke);
  }
  if (!SameLayoutRule(rule)) return std::nullopt;
  if (std::optional<nb::object> r = SameLayoutCall(op, inplace, names, values)) return r;
  if (!PartialRule(rule) || !keywords(&call)) return std::nullopt;
  return PartialFast(rule, inplace, call, invoke);
}

// GlobalFast's same-layout path (Note [Global fast path]).
static std::optional<nb::object> SameLayoutCall(const char* op, bool inplace, std::initializer_list<const char*> names,
                                         std::initializer_list<nb::handle> values) {
  Layout layout;
  nb::dict kwargs;
  PyObject* self = nullptr;
  auto v = values.begin();
  for (const char* n : names) {
    nb::handle h = *v++;
    if (std::strcmp(n, "out") == 0) {
      if (!h.is_none()) return std::nullopt;  // (out=: the dispatcher's, Note [out= arguments])
      continue;
    }
    nb::object loc;
    Arg a = Scan(h.ptr(), layout, &loc);
    if (a == Arg::kSlow) return std::nullopt;
    if (!self) self = h.ptr();
    kwargs[n] = loc;
  }
  if (!layout.first.is_valid()) return std::nullopt;
  if (inplace && !TypeOf(self)) return std::nullopt;
  return CallOp(op, inplace, layout, nb::tuple(), kwargs, self);
}

std::optional<nb::object> GlobalFastVar(const char* op, bool inplace, nb::handle args, nb::handle kwargs) {
  if (!Ready()) return std::nullopt;
  const int rule = FastRuleOf(op);
  RuleCall call;
  auto read = [&] {
    for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(args.ptr()); i < n; ++i) call.pos.push_back(PyTuple_GET_ITEM(args.ptr(), i));
    if (kwargs.is_valid() && !kwargs.is_none())
      for (auto [k, v] : nb::borrow<nb::dict>(kwargs)) {
        if (PyUnicode_CompareWithASCIIString(k.ptr(), "out") == 0) return false;
        call.kw.emplace_back(PyUnicode_AsUTF8(k.ptr()), v.ptr());
      }
    return true;
  };
  auto invoke = [&](const std::vector<nb::object>& pos, const std::vector<nb::object>& kw) {
    return CallLocals(OpFunction(op), nullptr, pos, call, kw);
  };
  if (SignatureRule(rule) && !inplace) return read() ? RuleFast(rule, call, invoke) : std::nullopt;
  if (!SameLayoutRule(rule)) return std::nullopt;
  if (std::optional<nb::object> r = SameLayoutCallVar(op, inplace, args, kwargs)) return r;
  if (!PartialRule(rule) || !read()) return std::nullopt;
  return PartialFast(rule, inplace, call, invoke);
}

// GlobalFastVar's same-layout path (Note [Global fast path]).
static std::optional<nb::object> SameLayoutCallVar(const char* op, bool inplace, nb::handle args, nb::handle kwargs) {
  Layout layout;
  Py_ssize_t n = PyTuple_GET_SIZE(args.ptr());
  nb::object locals = nb::steal(PyTuple_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    nb::object loc;
    if (Scan(PyTuple_GET_ITEM(args.ptr(), i), layout, &loc) == Arg::kSlow) return std::nullopt;
    PyTuple_SET_ITEM(locals.ptr(), i, loc.release().ptr());
  }
  nb::dict kw;
  if (kwargs.is_valid() && !kwargs.is_none()) {
    for (auto [k, v] : nb::borrow<nb::dict>(kwargs)) {
      if (PyUnicode_Check(k.ptr()) && PyUnicode_CompareWithASCIIString(k.ptr(), "out") == 0) return std::nullopt;
      nb::object loc;
      if (Scan(v.ptr(), layout, &loc) == Arg::kSlow) return std::nullopt;
      kw[k] = loc;
    }
  }
  if (!layout.first.is_valid()) return std::nullopt;
  PyObject* self = n ? PyTuple_GET_ITEM(args.ptr(), 0) : nullptr;
  if (inplace && (!self || !TypeOf(self))) return std::nullopt;
  return CallOp(op, inplace, layout, locals, kw, self);
}

void BindGlobal(nb::module_& m) {
  PyObject* module = m.ptr();
  m.def(
      "_register_global_kind",
      [module](nb::handle tensor_type, nb::tuple types, nb::handle fast_rule, nb::handle wrap_same) {
        // (kept as a module attribute: the borrowed pointers below live as long as it)
        nb::setattr(module, "_global_state", nb::make_tuple(tensor_type, types, fast_rule, wrap_same));
        g_module = module;
        g_tensor_type = tensor_type.ptr();
        g_fast_rule = fast_rule.ptr();
        g_wrap_same = wrap_same.ptr();
        g_kind_str = PyUnicode_InternFromString("_kind");
        g_marker_str = PyUnicode_InternFromString("_oneflow_global_");
        OF_CHECK_TYPE(nb::len(types) <= 2) << "_register_global_kind: at most two global types";
        g_num_types = 0;
        for (nb::handle t : types) {
          GlobalType gt;
          gt.type = reinterpret_cast<PyTypeObject*>(t.ptr());
          PyObject* dict = gt.type->tp_dict;
          gt.local = PyDict_GetItemString(dict, "_local");
          gt.placement = PyDict_GetItemString(dict, "_placement");
          gt.sbp = PyDict_GetItemString(dict, "_sbp");
          gt.shape = PyDict_GetItemString(dict, "_shape");
          OF_CHECK_TYPE(gt.local && gt.placement && gt.sbp && gt.shape)
              << "_register_global_kind: " << gt.type->tp_name << " lacks the slots _local / _placement / _sbp / _shape";
          g_types[g_num_types++] = gt;
          RegisterKind(t);
        }
      },
      "tensor_type"_a, "types"_a, "fast_rule"_a, "wrap_same"_a,
      "Registers the global tensor types (Note [Global kind]): flow.Tensor, (GlobalTensor, GlobalParameter), "
      "dispatch.fast_rule (op name -> how C++ may run it) and dispatch._wrap_same.");
  // The fallbacks live in a module attribute, not in the C++ functions: a capture would make a cycle
  // (GlobalTensor -> method -> Python function -> its module -> GlobalTensor) that the garbage
  // collector cannot see through, and the types would leak at exit.
  nb::dict routes;
  nb::setattr(m, "_global_routes", routes);
  g_routes = routes.ptr();
  m.def(
      "_global_method",
      [](std::string name, bool inplace, nb::object fallback) {
        nb::object name_str = nb::steal(PyUnicode_InternFromString(name.c_str()));
        PyDict_SetItem(g_routes, name_str.ptr(), fallback.ptr());
        return nb::cpp_function(
            [name, name_str, inplace](nb::handle self, nb::args args, nb::kwargs kwargs) {
              return GlobalMethod(name, name_str.ptr(), inplace, self, args, kwargs);
            },
            // (no nb::scope: nanobind would look the name up there and refuse the Python route it replaces)
            nb::name(name.c_str()), nb::is_method());
      },
      "name"_a, "inplace"_a, "fallback"_a,
      "A method of global tensors run by Note [Global fast path] where it applies, else by `fallback` (the "
      "dispatcher's Python method).");
  m.def(
      "_global_fast_call",
      [](const char* name, nb::handle fn, nb::args args) -> nb::object {
        const int rule = Ready() ? FastRuleOf(name) : kSlowRule;
        if (!SignatureRule(rule)) return nb::none();
        RuleCall call;
        for (nb::handle a : args) call.pos.push_back(a.ptr());
        std::optional<nb::object> r =
            RuleFast(rule, call, [&](const std::vector<nb::object>& pos, const std::vector<nb::object>& kw) {
              return CallLocals(fn.ptr(), nullptr, pos, call, kw);
            });
        return r ? std::move(*r) : nb::none();
      },
      "Note [Global fast path] for a Python-level function of a rule of Note [SBP rules in C++] (F.linear): "
      "fn(*args) run on the components where its signature boxes nothing, as a global tensor; else None.");
  m.def("_register_kind", [](nb::handle type) { RegisterKind(type); }, "type"_a,
        "Note [Kind test]: the bindings hand a call with an instance of `type` among its tensor arguments to "
        "the dispatcher (oneflow._global.dispatch.register_kind's kinds).");
  m.def("_is_global", [](nb::handle x) { return IsGlobal(x); }, "Note [Global kind]'s test.");
}
OF_BIND(140, BindGlobal);

}  // namespace oneflow
