#include "api/convert.h"
#include "api/int_list_strict.h"

#include "api/global.h"

#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "api/arg_names.h"

namespace oneflow {

namespace {
PyTypeObject* tensor_type = nullptr;
PyObject* dtype_objs[kNumDTypes];  // borrowed: the module attributes own them
}  // namespace

void RegisterTensorType(nb::handle type) { tensor_type = reinterpret_cast<PyTypeObject*>(type.ptr()); }

nb::object Wrap(Tensor t) {
  if (!t.defined()) return nb::none();
  TensorImpl* impl = t.impl();
  if (impl->pyobj_) return nb::borrow(static_cast<PyObject*>(impl->pyobj_));
  nb::object o = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(tensor_type)));
  PyTensor* p = nb::inst_ptr<PyTensor>(o);
  new (p) PyTensor(std::move(t));
  p->owner_ = o.ptr();
  impl->pyobj_ = o.ptr();
  nb::inst_mark_ready(o);
  return o;
}

void AdoptInto(nb::handle self, Tensor t) {
  PyTensor* p = nb::inst_ptr<PyTensor>(self);
  new (p) PyTensor(std::move(t));
  p->owner_ = self.ptr();
  if (!p->impl()->pyobj_) p->impl()->pyobj_ = self.ptr();
}

nb::object WrapList(const std::vector<Tensor>& ts) {
  nb::list l;
  for (const Tensor& t : ts) l.append(Wrap(t));
  return nb::tuple(l);
}

nb::object WrapNamed(const char* op, std::initializer_list<const char*> fields, const std::vector<Tensor>& ts) {
  // One namedtuple type per op, made on first use and kept in oneflow._oneflow_internal.return_types.
  // A strong reference that is never dropped: no decref after the interpreter has finalised.
  static nb::handle types = nb::object(nb::module_::import_("oneflow._oneflow_internal").attr("return_types")).release();
  nb::object cls = nb::getattr(types, op, nb::none());
  if (cls.is_none()) {
    nb::list names;
    for (const char* f : fields) names.append(nb::str(f));
    cls = nb::module_::import_("collections").attr("namedtuple")(op, names, "module"_a = "oneflow.return_types");
    nb::setattr(types, op, cls);
  }
  nb::list items;
  for (const Tensor& t : ts) items.append(Wrap(t));
  return cls(*nb::tuple(items));
}

// An instance of a Python subclass is a tensor once constructed (nn.Parameter's are, through
// _make_subclass). One that never was -- a global tensor (Note [Global arguments]), or a subclass
// whose __init__ did not call the base's -- holds no C++ tensor and is not one.
bool IsTensor(nb::handle h) {
  PyTypeObject* t = Py_TYPE(h.ptr());
  return t == tensor_type || (PyType_IsSubtype(t, tensor_type) && nb::inst_ready(h));
}

namespace {
// The dispatcher lives as an attribute of the extension module (not a reference held here): it
// refers to GlobalTensor, a subclass of Tensor, and the interpreter's teardown must free both
// before nanobind checks for leaked types.
PyObject* dispatcher_module = nullptr;  // borrowed: the module outlives every call
nb::object Dispatcher() {
  return dispatcher_module ? nb::getattr(dispatcher_module, "_global_dispatcher", nb::none()) : nb::none();
}
// Note [Argument names] (core/error.h): the argument a generated binding is converting, or null
// (a hand-written binding, an entry's own conversion).
const CurrentArg* NamedArg() {
  return !OpScope::Current() && BindingScope::Current() && current_arg.name ? &current_arg : nullptr;
}
// " (position 2)"; nothing for a keyword-only argument (position 0), as PyTorch words it.
std::string Position(const CurrentArg& a) {
  return a.position > 0 ? " (position " + std::to_string(a.position) + ")" : std::string();
}
}  // namespace

// A conversion's TypeError. `type` is PyTorch's name of the expected kind (its parser's "must be
// Tensor, not str"), `plain` the phrase for a caller without a named argument ("a Tensor").
void ThrowArgType(const char* type, const char* plain, nb::handle h, const char* got) {
  std::string g = got ? std::string(got) : std::string(nb::inst_name(h).c_str());  // a type name: a repr may itself fail
  if (const CurrentArg* a = NamedArg())
    OF_THROW(kType) << "argument '" << a->name << "'" << Position(*a) << " must be " << type << ", not " << g;
  OF_THROW(kType) << "expected " << plain << ", got " << g;
  __builtin_unreachable();
}

namespace {
[[noreturn]] void ThrowNotTensor(nb::handle h, const char* type, const char* plain) {
  if (dispatcher_module && (IsGlobal(h) || PyObject_HasAttrString(h.ptr(), "_oneflow_global_"))) throw GlobalArgument();
  ThrowArgType(type, plain, h);
}
// A list argument whose element `i` is of the wrong kind: PyTorch's "must be tuple of ints, but
// found element of type str at pos 0" (positions from 0, as PyTorch's).
[[noreturn]] void ThrowBadElement(const char* type, const char* plain, nb::handle x, size_t i) {
  if (const CurrentArg* a = NamedArg())
    OF_THROW(kType) << "argument '" << a->name << "'" << Position(*a) << " must be " << type
                    << ", but found element of type " << nb::inst_name(x).c_str() << " at pos " << i;
  OF_THROW(kType) << "expected " << plain << ", got an element of type " << nb::inst_name(x).c_str() << " at position " << i;
  __builtin_unreachable();
}
}  // namespace

void SetGlobalDispatcher(nb::handle module, nb::handle fn) {
  nb::setattr(module, "_global_dispatcher", fn);
  dispatcher_module = module.ptr();
}

nb::object GlobalCall(const char* op, bool inplace, std::initializer_list<const char*> names,
                      std::initializer_list<nb::handle> values) {
  if (std::optional<nb::object> r = GlobalFast(op, inplace, names, values)) return std::move(*r);  // Note [Global fast path]
  nb::object dispatcher = Dispatcher();
  OF_CHECK_TYPE(!dispatcher.is_none()) << op << "(): placement= / sbp= need the oneflow package (global tensors)";
  nb::dict kwargs;
  auto v = values.begin();
  for (const char* n : names) {
    nb::handle h = *v++;
    if (!(h.is_none() && std::strcmp(n, "out") == 0)) kwargs[n] = h;  // (out= only when given)
  }
  return dispatcher(op, inplace, nb::tuple(), kwargs);
}

nb::object GlobalCallVar(const char* op, bool inplace, nb::handle args, nb::handle kwargs) {
  if (std::optional<nb::object> r = GlobalFastVar(op, inplace, args, kwargs)) return std::move(*r);
  return Dispatcher()(op, inplace, args, kwargs);
}

const Tensor& ToTensor(nb::handle h) {
  if (!IsTensor(h)) ThrowNotTensor(h, "Tensor", "a Tensor");
  return *nb::inst_ptr<PyTensor>(h);
}

Tensor& ToTensorMut(nb::handle h) { return const_cast<Tensor&>(ToTensor(h)); }

namespace {
// A number-like's __index__ / __float__, whose errors (a global tensor's item() on a tensor of
// several elements, say) propagate as the Python exception they are.
Py_ssize_t AsIndex(PyObject* o) {
  Py_ssize_t v = PyNumber_AsSsize_t(o, nullptr);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}
int64_t AsInt64(PyObject* o) {
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    OF_THROW(kRuntime) << "Overflow when unpacking long";
  }
  return v;
}
double AsDouble(PyObject* o) {
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return v;
}
}  // namespace

bool TryTensorLike(nb::handle h, Tensor* out) {
  PyObject* o = h.ptr();
  if (IsTensor(h)) { *out = *nb::inst_ptr<PyTensor>(h); return true; }
  // A numpy array operand is a tensor of its values, as PyTorch's `t + ndarray` (and upstream
  // OneFlow's) reads it: a full operand in type promotion, not a wrapped number. Before the
  // number-likes below: an array has __index__, which raised "only integer scalar arrays ...".
  if (std::string_view(Py_TYPE(o)->tp_name) == "numpy.ndarray") {
    nb::object arr = nb::borrow(h);
    if (!nb::cast<bool>(arr.attr("flags").attr("writeable"))) arr = arr.attr("copy")();  // (no read-only warning)
    // flow.from_numpy's conversion (src/api/module.cpp), through the module: rare, not the hot path.
    nb::object t = nb::module_::import_("oneflow._oneflow_internal").attr("from_numpy")(arr);
    *out = ToTensor(t);
    return true;
  }
  if (PyBool_Check(o)) { *out = WrappedNumber(Scalar(o == Py_True)); return true; }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) OF_THROW(kRuntime) << "Overflow when unpacking long";
    *out = WrappedNumber(Scalar(static_cast<int64_t>(v)));
    return true;
  }
  if (PyFloat_Check(o)) { *out = WrappedNumber(Scalar(PyFloat_AS_DOUBLE(o))); return true; }
  if (PyComplex_Check(o)) {
    *out = WrappedNumber(Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o))));
    return true;
  }
  // numpy scalars and other number-likes (not a global tensor, whose __index__ / __float__ would
  // gather it: it goes to the dispatcher, Note [Global arguments])
  if (PyType_IsSubtype(Py_TYPE(o), tensor_type)) return false;
  if (PyIndex_Check(o)) { *out = WrappedNumber(Scalar(static_cast<int64_t>(AsIndex(o)))); return true; }
  if (PyNumber_Check(o) && !nb::hasattr(h, "__float__") && nb::hasattr(h, "__complex__")) {
    Py_complex c = PyComplex_AsCComplex(o);  // numpy complex scalars
    *out = WrappedNumber(Scalar(std::complex<double>(c.real, c.imag)));
    return true;
  }
  if (PyNumber_Check(o) && nb::hasattr(h, "__float__")) {
    *out = WrappedNumber(Scalar(AsDouble(o)));
    return true;
  }
  return false;
}

Tensor ToTensorLike(nb::handle h) {
  Tensor t;
  if (!TryTensorLike(h, &t)) ThrowNotTensor(h, "Tensor or Number", "a Tensor or a number");
  return t;
}

Scalar ToScalar(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) return Scalar(AsInt64(o));
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o))
    return Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  if (IsTensor(h)) return ItemOf(ToTensor(h));
  // A global one-element tensor (a Python subclass, Note [Global arguments]) is its logical value,
  // as OneFlow's `flow.full(shape, global_scalar, placement=, sbp=)` reads it; not its __index__,
  // which refuses a floating value.
  if (PyType_IsSubtype(Py_TYPE(o), tensor_type)) return ToScalar(h.attr("item")());
  if (PyIndex_Check(o)) return Scalar(static_cast<int64_t>(AsIndex(o)));
  if (PyNumber_Check(o)) return Scalar(AsDouble(o));
  ThrowArgType("Number", "a number", h);
}

int64_t ToInt(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyLong_Check(o) && !PyBool_Check(o)) return AsInt64(o);
  if (IsTensor(h)) {
    const Tensor& t = ToTensor(h);
    if (t.numel() != 1 || IsFloating(t.dtype()) || IsComplex(t.dtype())) ThrowArgType("int", "an int", h, "a Tensor");
    return ItemOf(t).ToInt();
  }
  if (PyIndex_Check(o) && !PyBool_Check(o)) return AsIndex(o);
  ThrowArgType("int", "an int", h);
}

double ToDouble(nb::handle h) {
  // A complex number is no float (PyTorch: "argument 'p' must be float, not complex"); taking its
  // real part made `dropout(x, 1j)` or `celu(x, 1j)` silently compute with the real part. A
  // tensor stands for a float only with one element (upstream's scalar-tensor rule): one of
  // several is the wrong type of argument, as in PyTorch (`bernoulli(x, probs)`), not a value error.
  if (IsTensor(h) && ToTensor(h).numel() != 1) ThrowArgType("float", "a real number", h, "a Tensor");
  const Scalar v = ToScalar(h);
  if (v.is_complex()) ThrowArgType("float", "a real number", h);
  return v.ToDouble();
}

bool ToBool(nb::handle h) {
  // OneFlow's binding rule for a bool parameter (python_arg.cpp, kBOOL): a bool, an int (NumPy's
  // too) or a one-element integer / bool tensor. A str, a float, a list or None is refused, not
  // read for its truth value (PyTorch refuses all but bool; issue 39's comparison with it).
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return o == Py_True;
  if (IsTensor(h)) {
    const Tensor& t = ToTensor(h);
    if (t.numel() != 1 || IsFloating(t.dtype()) || IsComplex(t.dtype())) {
      const std::string got = "a Tensor of " + std::to_string(t.numel()) + " element(s) of dtype " + DTypeName(t.dtype());
      ThrowArgType("bool", "a bool", h, got.c_str());
    }
    return ItemOf(t).ToInt() != 0;
  }
  const std::string_view type_name = Py_TYPE(o)->tp_name;
  if (PyLong_Check(o) || PyIndex_Check(o) || type_name.starts_with("numpy.bool")) {
    int r = PyObject_IsTrue(o);
    if (r < 0) throw nb::python_error();
    return r;
  }
  ThrowArgType("bool", "a bool", h);
}

namespace {
// An int or a sequence of ints into V (DimVector: a shape; std::vector: any length).
template <typename V> V IntSequence(nb::handle h) {
  V v;
  if (PyLong_Check(h.ptr()) || IsTensor(h)) {
    v.push_back(ToInt(h));
    return v;
  }
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr())) ThrowArgType("tuple of ints", "a sequence of ints", h);
  size_t i = 0;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) {
    PyObject* o = x.ptr();
    if (PyBool_Check(o) || !(PyLong_Check(o) || IsTensor(x) || PyIndex_Check(o)))
      ThrowBadElement("tuple of ints", "a sequence of ints", x, i);
    v.push_back(ToInt(x));
    ++i;
  }
  return v;
}
}  // namespace

DimVector ToIntList(nb::handle h) { return IntSequence<DimVector>(h); }
DimVector ToIntListStrict(nb::handle h) {
  // IntSequence reads one int (or a one-element tensor) as a list of it: OneFlow's `Int64List[1]`.
  if (PyLong_Check(h.ptr()) || IsTensor(h) || (PyIndex_Check(h.ptr()) && !PySequence_Check(h.ptr())))
    ThrowArgType("tuple of ints", "a sequence of ints", h);
  return IntSequence<DimVector>(h);
}
std::vector<int64_t> ToInt64Vector(nb::handle h) { return IntSequence<std::vector<int64_t>>(h); }

void CheckSameIntForm(const char* a, nb::handle ha, const char* b, nb::handle hb) {
  auto one_int = [](nb::handle h) {
    return PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PySequence_Check(h.ptr()) && !IsTensor(h));
  };
  auto sequence = [](nb::handle h) {
    return PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) && !IsTensor(h);
  };
  if ((one_int(ha) && sequence(hb)) || (sequence(ha) && one_int(hb)))
    OF_THROW(kType) << "received an invalid combination of arguments - got (" << Py_TYPE(ha.ptr())->tp_name << ", "
                    << Py_TYPE(hb.ptr())->tp_name << "): '" << a << "' and '" << b
                    << "' are both ints or both tuples of ints";
}

std::vector<double> ToDoubleList(nb::handle h) {
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr())) return {ToDouble(h)};
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr())) ThrowArgType("tuple of floats", "a sequence of numbers", h);
  std::vector<double> v;
  size_t i = 0;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) {
    if (!(PyNumber_Check(x.ptr()) || IsTensor(x)) || PyComplex_Check(x.ptr()))
      ThrowBadElement("tuple of floats", "a sequence of numbers", x, i);
    v.push_back(ToDouble(x));
    ++i;
  }
  return v;
}

Tensor OptTensor(nb::handle h) { return h.is_none() ? Tensor() : ToTensor(h); }

nb::handle PosArg(const nb::args& args, size_t i, const nb::kwargs& kwargs, const char* name) {
  if (i < args.size()) return args[i];
  if (PyObject* v = PyDict_GetItemString(kwargs.ptr(), name)) return v;
  OF_THROW(kType) << "missing 1 required positional argument: '" << name << "'";
}

DimVector VarargsIntList(const nb::args& args, size_t from, const nb::kwargs& kwargs, const char* name) {
  const size_t n = args.size();
  if (n <= from) {  // < : the leading tensor came by keyword
    if (kwargs.contains(name)) return ToIntList(kwargs[name]);
    return DimVector();
  }
  if (n == from + 1 && !PyLong_Check(args[from].ptr())) return ToIntList(args[from]);
  DimVector v;
  for (size_t i = from; i < n; ++i) v.push_back(ToInt(args[i]));
  return v;
}

nb::handle KwArg(const nb::kwargs& kwargs, const char* name, nb::handle dflt) {
  PyObject* v = PyDict_GetItemString(kwargs.ptr(), name);
  return v ? nb::handle(v) : dflt;
}

void CheckKwargs(const nb::kwargs& kwargs, std::initializer_list<const char*> names, const char* op) {
  for (auto item : kwargs) {
    std::string k = nb::cast<std::string>(item.first);
    bool ok = false;
    for (const char* n : names) ok |= k == n;
    // A factory given placement= / sbp= makes a global tensor (Note [Global arguments]).
    if (!ok && dispatcher_module && (k == "placement" || k == "sbp")) throw GlobalArgument();
    // Under a BindingScope (the generated bindings) the error's prefix already names the op.
    OF_CHECK_TYPE(ok) << (OpScope::Current() || BindingScope::Current() ? "" : std::string(op) + "() ") << "got an unexpected keyword argument '" << k << "'";
  }
}

void SetDTypeObject(DType t, nb::object o) { dtype_objs[static_cast<int>(t)] = o.ptr(); }
nb::object DTypeObject(DType t) { return nb::borrow(dtype_objs[static_cast<int>(t)]); }

DType ToDType(nb::handle h) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_objs[i] == h.ptr()) return static_cast<DType>(i);
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DefaultFloatDType();
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyComplex_Type)) return ToComplexDType(DefaultFloatDType());
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::kInt64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::kBool;
  ThrowArgType("oneflow.dtype", "a oneflow.dtype", h);
}

namespace {
int CheckedDeviceIndex(nb::handle h) {
  // Checked before the narrowing to int: -1 and 2**32 were cuda:0, as PyTorch refuses them.
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  OF_CHECK(overflow >= 0 && v >= 0) << "Device index must not be negative";
  OF_CHECK(overflow == 0 && v <= std::numeric_limits<int>::max())
      << "device index " << nb::str(h).c_str() << " is out of range";
  return static_cast<int>(v);
}
}  // namespace

Device ToDevice(nb::handle h) {
  if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
  if (nb::isinstance<nb::str>(h)) return Device::Parse(nb::cast<std::string>(h));
  // A bool is an int to Python, not a device to PyTorch (True was cuda:1).
  if (PyBool_Check(h.ptr())) ThrowArgType("oneflow.device", "a oneflow.device, a string or an int", h);
  if (PyLong_Check(h.ptr())) {  // device=0 means cuda:0, as in PyTorch
    Device d;
    d.type = DeviceType::kCUDA;
    d.index = CheckedDeviceIndex(h);
    return d;
  }
  ThrowArgType("oneflow.device", "a oneflow.device or a string", h);
}

std::vector<Tensor> ToTensorList(nb::handle h) {
  if (!PySequence_Check(h.ptr()) || IsTensor(h) || PyUnicode_Check(h.ptr()))
    ThrowArgType("tuple of Tensors", "a sequence of Tensors", h);
  std::vector<Tensor> v;
  size_t i = 0;
  for (nb::handle x : nb::borrow<nb::sequence>(h)) {
    if (!IsTensor(x)) {
      if (dispatcher_module && PyObject_HasAttrString(x.ptr(), "_oneflow_global_")) throw GlobalArgument();
      ThrowBadElement("tuple of Tensors", "a sequence of Tensors", x, i);
    }
    v.push_back(ToTensor(x));
    ++i;
  }
  return v;
}

std::string ToString(nb::handle h) {
  // Checked here: nb::cast's failure is a bare std::bad_cast without the op or the argument.
  if (!PyUnicode_Check(h.ptr())) ThrowArgType("str", "a string", h);
  return nb::cast<std::string>(h);
}

}  // namespace oneflow
