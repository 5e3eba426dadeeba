// Python <-> C++ conversions shared by the generated and hand-written bindings.
// Note [One Python object per tensor]: TensorImpl::pyobj_ points at the live Python wrapper, so
// returning the same tensor twice (x.add_(1) is x, x.grad is x.grad) gives the same object.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <optional>
#include <tuple>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace oneflow {

// The C++ object inside every Python `oneflow.Tensor`.
class PyTensor : public Tensor {
 public:
  explicit PyTensor(Tensor t) : Tensor(std::move(t)) {}
  ~PyTensor() {
    if (defined() && impl()->pyobj_ == owner_) impl()->pyobj_ = nullptr;
  }
  void* owner_ = nullptr;
};

struct OpExposure {
  const char* name;
  bool flow, method, functional, inplace;
  std::vector<const char*> aliases;
  std::vector<const char*> also;  // further public names: "linalg.norm", "nn.functional.softmax"
};

nb::object Wrap(Tensor t);
nb::object WrapList(const std::vector<Tensor>& ts);
inline nb::object Wrap(const std::vector<Tensor>& ts) { return WrapList(ts); }
// Named outputs (`-> (Tensor values, Tensor indices)`): a namedtuple `oneflow.return_types.<op>`.
nb::object WrapNamed(const char* op, std::initializer_list<const char*> fields, const std::vector<Tensor>& ts);
template <typename... Ts>
nb::object WrapNamed(const char* op, std::initializer_list<const char*> fields, const std::tuple<Ts...>& t) {
  return WrapNamed(op, fields, std::apply([](const auto&... x) { return std::vector<Tensor>{x...}; }, t));
}
void RegisterTensorType(nb::handle type);
// Adopts a C++ tensor into an already-allocated Python instance (Tensor.__init__).
void AdoptInto(nb::handle self, Tensor t);

// Note [Global arguments]: a global tensor (python/oneflow/_global) is an instance of a Python
// subclass of Tensor that holds no C++ tensor (Note [A global tensor is a Tensor] there), so
// IsTensor says no. The generated bindings find one by Note [Kind test] below and hand the call,
// by op name and Python arguments, to GlobalCall (Note [Global fast path] in api/global.h, else the
// Python dispatcher, which infers the SBP signature, boxes and runs the op on the local
// components). A conversion that meets one all the same -- inside a Tensor[] list, or in a
// hand-written binding -- throws GlobalArgument (never on the eager path: only where a conversion
// already failed), which the bindings taking a list catch; elsewhere it reaches Python as a
// RuntimeError naming the global argument.
struct GlobalArgument : std::exception {
  const char* what() const noexcept override {
    return "expected a local Tensor, got a global tensor (this call has no global form: "
           "use .to_local() or oneflow's table ops)";
  }
};
// Note [Kind test]: a generated binding first asks whether one of its tensor arguments is of a
// Python-level kind (a global tensor, GlobalTensor / GlobalParameter; a job function's
// MicroBatches: the types registered by _C._register_kind) and, if so, hands the call on as it is
// (GlobalCall / GlobalCallVar) without converting anything. The test is a comparison of each
// argument's type with the registered ones -- a local tensor's call pays a few compares -- where
// letting the conversion find out cost a C++ exception per global op. Only a global tensor inside
// a Tensor[] list is still met by the conversion (GlobalArgument, caught by the bindings taking one).
inline PyTypeObject* kind_types[8];
inline int kind_count = 0;
inline bool IsKind(nb::handle h) {
  PyTypeObject* t = Py_TYPE(h.ptr());
  for (int i = 0; i < kind_count; ++i)
    if (kind_types[i] == t) return true;
  return false;
}
inline bool AnyKind(std::initializer_list<nb::handle> hs) {
  for (nb::handle h : hs)
    if (IsKind(h)) return true;
  return false;
}
// (*args, **kwargs) bindings: any positional or keyword argument of a registered kind, or a
// placement= / sbp= keyword (a factory making a global tensor).
bool AnyKindVar(nb::handle args, nb::handle kwargs);
void RegisterKind(nb::handle type);

// The Python dispatcher's answer to op `op` called with (names[i] = values[i]) or (args, kwargs).
nb::object GlobalCall(const char* op, bool inplace, std::initializer_list<const char*> names,
                      std::initializer_list<nb::handle> values);
nb::object GlobalCallVar(const char* op, bool inplace, nb::handle args, nb::handle kwargs);
void SetGlobalDispatcher(nb::handle module, nb::handle fn);

bool IsTensor(nb::handle h);
const Tensor& ToTensor(nb::handle h);
Tensor& ToTensorMut(nb::handle h);
bool TryTensorLike(nb::handle h, Tensor* out);  // tensors and Python bool/int/float
Tensor ToTensorLike(nb::handle h);
Scalar ToScalar(nb::handle h);
int64_t ToInt(nb::handle h);
double ToDouble(nb::handle h);
bool ToBool(nb::handle h);
DimVector ToIntList(nb::handle h);
std::vector<int64_t> ToInt64Vector(nb::handle h);  // any length (ToIntList holds a shape: <= kMaxDims)
std::vector<double> ToDoubleList(nb::handle h);  // a number or a sequence of numbers
Tensor OptTensor(nb::handle h);                   // None -> undefined tensor
DType ToDType(nb::handle h);
Device ToDevice(nb::handle h);
std::vector<Tensor> ToTensorList(nb::handle h);
std::string ToString(nb::handle h);
GeneratorPtr ToGenerator(nb::handle h);           // None -> null (the default generator)
nb::object WrapGenerator(const GeneratorPtr& g);  // the flow.Generator object of g
nb::object DTypeObject(DType t);

template <typename F>
auto Optional(nb::handle h, F f) -> std::optional<std::decay_t<decltype(f(h))>> {
  if (h.is_none()) return std::nullopt;
  return f(h);
}

// For `int[]...` parameters: f(2, 3), f((2, 3)), f([2, 3]) or f(name=(2, 3)).
// args[i], else kwargs[name], else a TypeError "missing 1 required positional argument".
nb::handle PosArg(const nb::args& args, size_t i, const nb::kwargs& kwargs, const char* name);
DimVector VarargsIntList(const nb::args& args, size_t from, const nb::kwargs& kwargs, const char* name);
nb::handle KwArg(const nb::kwargs& kwargs, const char* name, nb::handle dflt);
// kwargs[name] removed from kwargs (None when absent).
nb::object PopKwarg(const nb::kwargs& kwargs, const char* name);
// Note [out= arguments] (api/out_arg.cpp): `result` copied into `out`, which is returned.
nb::object WithOut(const char* op, nb::object result, nb::handle out);
void CheckKwargs(const nb::kwargs& kwargs, std::initializer_list<const char*> names, const char* op);

std::vector<OpExposure> GeneratedOpTable();
void BindGeneratedOps(nb::module_& m, nb::class_<PyTensor>& cls);
void BindManualOps(nb::module_& m, nb::class_<PyTensor>& cls);
void BindTensorClass(nb::module_& m, nb::class_<PyTensor>& cls);
// (the other binding files register themselves: Note [Binding registry], api/bind_registry.h)
// The Tensor type's garbage-collector slots (Note [Hooks and the garbage collector], autograd_bind.cpp).
int TensorGcTraverse(PyObject* self, visitproc visit, void* arg);
int TensorGcClear(PyObject* self);

}  // namespace oneflow
