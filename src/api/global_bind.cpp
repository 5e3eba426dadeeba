// Note [Global kind] and Note [Global fast path] (api/global.h): the kind test and the C++ path of
// a global op whose inputs already share the layout its elementwise rule gives the output (the
// rules of Note [SBP rules in C++] and partial sums: global_fast.cpp).
#include "api/bind_registry.h"
#include "api/global.h"

#include <Python.h>
#include <structmember.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <span>
#include <string_view>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/convert.h"
#include "api/global_internal.h"
#include "api/sbp_table.h"
#include "graph/lazy.h"

namespace oneflow {

namespace global_internal {

// Borrowed: everything registered lives in oneflow._oneflow_internal._global_state (a module
// attribute, so that the interpreter's teardown frees the Python types before nanobind checks for
// leaked ones: Note [Global arguments]'s reason).
GlobalType g_types[2];
int g_num_types = 0;
PyObject* g_tensor_type = nullptr;
PyObject* g_marker_str = nullptr;
PyObject* g_module = nullptr;      // oneflow._oneflow_internal: the table ops' bindings
PyObject* g_wrap_same = nullptr;    // dispatch._wrap_same: outputs other than one tensor shaped as the inputs
PyObject* g_kind_str = nullptr;     // "_kind" (an sbp's), interned

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

}  // namespace global_internal

using namespace global_internal;

namespace {

const FastInfo kSlowInfo{};

// The op table's rows (api/sbp_table.h, sorted by name): binary search.
const SbpSignature* FindSignature(std::string_view op) {
  std::span<const SbpSignature> all = SbpSignatures();
  auto it = std::lower_bound(all.begin(), all.end(), op,
                             [](const SbpSignature& s, std::string_view o) { return std::string_view(s.op) < o; });
  return it != all.end() && std::string_view(it->op) == op ? &*it : nullptr;
}

const char* DunderOp(std::string_view name) {  // the op a Python operator runs, or nullptr
  std::span<const char* const[2]> all = SbpDunders();
  auto it = std::lower_bound(all.begin(), all.end(), name,
                             [](const char* const (&d)[2], std::string_view n) { return std::string_view(d[0]) < n; });
  return it != all.end() && std::string_view((*it)[0]) == name ? (*it)[1] : nullptr;
}

// How C++ may run an op of each rule of python/oneflow/_global/signatures.py (the rules not
// named here: always the dispatcher). The elementwise ones run on inputs of one layout
// (kSameLayout; those keeping partial sums partial by Note [Partial elementwise]: kSumLayout, a
// quotient kScaleLayout, a product kProductLayout); the others by Note [SBP rules in C++].
int RuleId(std::string_view rule) {
  static const std::unordered_map<std::string_view, int> ids = {
      {"pointwise", kSameLayout}, {"pointwise_sum", kSumLayout}, {"pointwise_scale", kScaleLayout},
      {"pointwise_product", kProductLayout}, {"matmul", kMatmul}, {"reduce_sum", kReduceSum},
      {"transpose", kTranspose}, {"reduce_mean", kReduceMean}, {"softmax", kSoftmax}, {"linear", kLinear},
      {"bmm", kBmm}, {"along_dim", kAlongDim}, {"reduce_dims", kReduceDims}, {"reduce_max", kReduceDims},
      {"reduce_min", kReduceDims}, {"reduce_max_index", kReduceDims}, {"reduce_min_index", kReduceDims},
      {"reduce_select", kReduceDims}, {"reshape", kReshape}, {"elementwise_loss", kLoss}};
  auto it = ids.find(rule);
  return it == ids.end() ? kSlowRule : it->second;
}

bool InplaceName(std::string_view n) {  // add_, __iadd__ (not __invert__)
  const bool dunder = n.size() > 4 && n.starts_with("__") && n.ends_with("__");
  return (!dunder && n.ends_with("_")) || (dunder && n.starts_with("__i") && n != "__invert__");
}

// FastRuleOf without the memo: op `name` (a table op or alias, an in-place form, a Python operator,
// a reflected one, a Tensor method) looked up in the op table's rows. A reflected operator (`3 * g`:
// g.__rmul__(3), the component's own __rX__ called) runs here when elementwise; a partial sum stays
// one only through a product (linear in either factor: `3 * p`), not through `3 / p` or `3 - p`.
FastInfo LookUp(std::string_view name) {
  FastInfo info;
  if (name.size() > 5 && name.starts_with("__r")) {
    std::string plain = "__" + std::string(name.substr(3));
    if (DunderOp(plain)) {
      const int r = LookUp(plain).rule;
      info.rule = r == kSameLayout || r == kSumLayout || r == kProductLayout ? r : r == kScaleLayout ? kSameLayout
                                                                                                    : kSlowRule;
      return info;
    }
  }
  std::string op(DunderOp(name) ? DunderOp(name) : name);
  const SbpSignature* sig = FindSignature(op);
  const bool trailing = op.ends_with("_") && !op.ends_with("__");
  if (!sig && trailing) sig = FindSignature(std::string_view(op).substr(0, op.size() - 1));
  if (!sig) return info;
  const int r = RuleId(sig->rule);
  if (SameLayoutRule(r)) {
    info.rule = r;
    return info;
  }
  if (InplaceName(name) || name.starts_with("__r")) return info;  // (a reflected one: its operands swapped)
  info.rule = r;
  if (DimRule(r)) {  // where the op's sig has its dim / keepdim (the dispatcher's _param reads the same)
    const SbpArg& dim = sig->dim;
    if (dim.name == nullptr || dim.varargs) {  // (no dim parameter, or a varargs one: flip(x, 0, 1))
      info.rule = kSlowRule;
      return info;
    }
    info.dims.dim_name = dim.name;
    info.dims.dim_pos = dim.pos;
    const std::string_view lit(dim.default_literal ? dim.default_literal : "None");
    int64_t v = 0;  // (an int default; None / a list / a bool: none C++ can place)
    const char* end = lit.data() + lit.size();
    if (auto [p, ec] = std::from_chars(lit.data(), end, v); ec == std::errc() && p == end) info.dims.dim_default = v;
    if (sig->keepdim.name) {
      info.dims.keep_name = sig->keepdim.name;
      info.dims.keep_pos = sig->keepdim.pos;
    }
  }
  return info;
}

const FastInfo& FastRuleOf(const std::string& name) {
  static std::unordered_map<std::string, FastInfo> memo;  // (node-based: references stay valid)
  auto it = memo.find(name);
  if (it != memo.end()) return it->second;
  return memo.emplace(name, LookUp(name)).first->second;
}

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
    return NewGlobal(result, layout.placement, layout.sbp, layout.shape);
  }
  return nb::borrow(g_wrap_same)(result, layout.first);
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
  const FastInfo& info = Ready() ? FastRuleOf(name) : kSlowInfo;
  const int rule = info.rule;
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
    if (std::optional<nb::object> r = RuleFast(info, call, invoke)) return std::move(*r);
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

// A factory's placement= / sbp= given (a `_like` factory on a global tensor: the dispatcher's
// _factory makes the logical tensor; on the components it would be the component's shape).
static bool PlacementGiven(const char* name, nb::handle v) {
  return !v.is_none() && (std::strcmp(name, "placement") == 0 || std::strcmp(name, "sbp") == 0);
}

std::optional<nb::object> GlobalFast(const char* op, bool inplace, std::initializer_list<const char*> names,
                                     std::initializer_list<nb::handle> values) {
  if (!Ready()) return std::nullopt;
  {
    auto v = values.begin();
    for (const char* n : names)
      if (PlacementGiven(n, *v++)) return std::nullopt;
  }
  const FastInfo& info = FastRuleOf(op);
  const int rule = info.rule;
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
    return RuleFast(info, call, invoke);
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
  if (kwargs.is_valid() && !kwargs.is_none())
    for (auto [k, v] : nb::borrow<nb::dict>(kwargs))
      if (PyUnicode_Check(k.ptr()) && PlacementGiven(PyUnicode_AsUTF8(k.ptr()), v)) return std::nullopt;
  const FastInfo& info = FastRuleOf(op);
  const int rule = info.rule;
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
  if (SignatureRule(rule) && !inplace) return read() ? RuleFast(info, call, invoke) : std::nullopt;
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
      [module](nb::handle tensor_type, nb::tuple types, nb::handle wrap_same) {
        // (kept as a module attribute: the borrowed pointers below live as long as it)
        nb::setattr(module, "_global_state", nb::make_tuple(tensor_type, types, wrap_same));
        g_module = module;
        g_tensor_type = tensor_type.ptr();
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
      "tensor_type"_a, "types"_a, "wrap_same"_a,
      "Registers the global tensor types (Note [Global kind]): flow.Tensor, (GlobalTensor, GlobalParameter) and "
      "dispatch._wrap_same. How C++ may run each op it reads from the op table's SBP signatures (api/sbp_table.h).");
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
        const FastInfo& info = Ready() ? FastRuleOf(name) : kSlowInfo;
        if (!SignatureRule(info.rule)) return nb::none();
        RuleCall call;
        for (nb::handle a : args) call.pos.push_back(a.ptr());
        std::optional<nb::object> r =
            RuleFast(info, call, [&](const std::vector<nb::object>& pos, const std::vector<nb::object>& kw) {
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
