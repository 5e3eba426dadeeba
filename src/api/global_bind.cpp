// Note [Global kind] and Note [Global fast path] (api/global.h): the kind test and the C++ path of
// a global op whose inputs already share the layout its elementwise rule gives the output.
#include "api/bind_registry.h"
#include "api/global.h"

#include <Python.h>
#include <structmember.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/convert.h"
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
PyObject* g_same_layout = nullptr;  // name -> whether the op's rule is elementwise (Python, memoised here)
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

// Whether op `name` (a table op, an in-place form, a Python operator or method name) has an
// elementwise rule: asked of Python once per name (sbp_table's lookup, defined there once).
bool SameLayoutRule(const std::string& name) {
  static std::unordered_map<std::string, bool> memo;
  auto it = memo.find(name);
  if (it != memo.end()) return it->second;
  nb::object r = nb::borrow(g_same_layout)(nb::str(name.c_str()));
  bool same = nb::cast<bool>(r);
  memo.emplace(name, same);
  return same;
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

// A method of a global tensor (Tensor.<name> and the Python operators), bound by install_routes.
PyObject* g_routes = nullptr;  // name -> the dispatcher's Python method (module attribute _global_routes)

nb::object GlobalMethod(const std::string& name, PyObject* name_str, bool inplace, nb::handle self, nb::args args,
                        nb::kwargs kwargs) {
  if (Ready() && SameLayoutRule(name)) {
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

std::optional<nb::object> GlobalFast(const char* op, bool inplace, std::initializer_list<const char*> names,
                                     std::initializer_list<nb::handle> values) {
  if (!Ready() || !SameLayoutRule(op)) return std::nullopt;
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
  if (!Ready() || !SameLayoutRule(op)) return std::nullopt;
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
      [module](nb::handle tensor_type, nb::tuple types, nb::handle same_layout, nb::handle wrap_same) {
        // (kept as a module attribute: the borrowed pointers below live as long as it)
        nb::setattr(module, "_global_state", nb::make_tuple(tensor_type, types, same_layout, wrap_same));
        g_module = module;
        g_tensor_type = tensor_type.ptr();
        g_same_layout = same_layout.ptr();
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
        }
      },
      "tensor_type"_a, "types"_a, "same_layout"_a, "wrap_same"_a,
      "Registers the global tensor types (Note [Global kind]): flow.Tensor, (GlobalTensor, GlobalParameter), "
      "op name -> whether its SBP rule is elementwise, and dispatch._wrap_same.");
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
  m.def("_is_global", [](nb::handle x) { return IsGlobal(x); }, "Note [Global kind]'s test.");
}
OF_BIND(140, BindGlobal);

}  // namespace oneflow
