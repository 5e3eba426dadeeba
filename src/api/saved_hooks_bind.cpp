// autograd.graph.saved_tensors_hooks' C++ side (Note [Saved tensor hooks] in autograd/node.h):
// the Python pack / unpack callables behind the core's SavedTensorHooks interface. Both hooks run
// with grad mode off, so the ops inside them record nothing (and save nothing: no recursion).
#include "api/bind_registry.h"
#include "api/convert.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace oneflow {
namespace {

struct PyPacked final : PackedTensor {
  nb::object value, unpack;
  ~PyPacked() override {
    nb::gil_scoped_acquire gil;  // a graph may be freed wherever its last owner lets go
    value.reset();
    unpack.reset();
  }
  Tensor Unpack() const override {
    nb::gil_scoped_acquire gil;
    AutoGradMode no_grad(false);
    nb::object r = unpack(value);
    OF_CHECK_TYPE(IsTensor(r)) << "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                               << Py_TYPE(r.ptr())->tp_name;
    return ToTensor(r);
  }
};

struct PyHooks final : SavedTensorHooks {
  nb::object pack, unpack;
  PyHooks(nb::object p, nb::object u) : pack(std::move(p)), unpack(std::move(u)) {}
  ~PyHooks() override {
    nb::gil_scoped_acquire gil;
    pack.reset();
    unpack.reset();
  }
  std::shared_ptr<PackedTensor> Pack(const Tensor& t) override {
    nb::gil_scoped_acquire gil;
    AutoGradMode no_grad(false);
    auto p = std::make_shared<PyPacked>();
    p->value = pack(Wrap(t));
    p->unpack = unpack;
    return p;
  }
};

}  // namespace

void BindSavedTensorHooks(nb::module_& m) {
  m.def("_push_saved_tensors_hooks", [](nb::object pack, nb::object unpack) {
    PushSavedTensorHooks(std::make_shared<PyHooks>(std::move(pack), std::move(unpack)));
  });
  m.def("_pop_saved_tensors_hooks", [] { PopSavedTensorHooks(); });
}
OF_BIND(110, BindSavedTensorHooks);

}  // namespace oneflow
