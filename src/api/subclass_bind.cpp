// Python subclasses of oneflow.Tensor (nn.Parameter): `_C._make_subclass(cls, data, requires_grad)`
// as PyTorch's Tensor._make_subclass. The new object is a detached alias of `data` (same storage,
// no history, a leaf) living in an instance of `cls`. Because it becomes the tensor's one Python
// wrapper (Note [One Python object per tensor] in convert.h), ops that return this very tensor
// (p.add_(1), p.requires_grad_()) give back the subclass object without further support.
#include "api/bind_registry.h"
#include "api/convert.h"
#include "autograd/functional.h"
#include "autograd/node.h"
#include "decl/view.h"

namespace oneflow {

void BindSubclass(nb::module_& m, nb::class_<PyTensor>& cls) {
  nb::handle tensor_type = cls;
  m.def("_make_subclass", [tensor_type](nb::handle sub, nb::handle data, bool requires_grad) {
    OF_CHECK_TYPE(PyType_Check(sub.ptr()) &&
                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(sub.ptr()),
                                   reinterpret_cast<PyTypeObject*>(tensor_type.ptr())))
        << "_make_subclass(): cls must be a subclass of oneflow.Tensor, got "
        << nb::str(nb::repr(sub)).c_str();
    Tensor t = functional::Detach(ToTensor(data));
    OF_CHECK(!requires_grad || IsDifferentiableType(t.dtype()))
        << "Only Tensors of floating point dtype can require gradients";
    t.impl()->requires_grad_ = requires_grad;
    nb::object o = nb::inst_alloc(sub);
    AdoptInto(o, std::move(t));  // a fresh impl: o becomes its Python wrapper
    nb::inst_mark_ready(o);
    return o;
  }, "cls"_a, "data"_a, "requires_grad"_a = false);
  // Tensor.as_subclass(cls): an instance of cls sharing self's data and staying on its autograd
  // graph (a view of the whole tensor, PyTorch's alias).
  m.def("_as_subclass", [tensor_type](nb::handle self, nb::handle sub) {
    OF_CHECK_TYPE(PyType_Check(sub.ptr()) &&
                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(sub.ptr()),
                                   reinterpret_cast<PyTypeObject*>(tensor_type.ptr())))
        << "as_subclass(): cls must be a subclass of oneflow.Tensor, got " << nb::str(nb::repr(sub)).c_str();
    const Tensor& t = ToTensor(self);
    Tensor v = functional::View(t, t.sizes());
    nb::object o = nb::inst_alloc(sub);
    AdoptInto(o, std::move(v));
    nb::inst_mark_ready(o);
    return o;
  }, "self"_a, "cls"_a);
}
OF_BIND(150, BindSubclass);

}  // namespace oneflow
