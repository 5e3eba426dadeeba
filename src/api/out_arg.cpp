// Note [out= arguments]: every function of the op table (flow.add, flow.sum, flow.zeros, ...; not
// the Tensor methods, not the in-place forms) takes PyTorch's keyword `out`. The result is
// computed as without it, then `out` receives it: its dtype must hold the result's (no float into
// an integer tensor: PyTorch's rule, CanCast), it must be on the result's device, nothing may
// need a gradient through it (PyTorch refuses autograd with out=), and when its shape differs it
// is resized first (with PyTorch's warning when it had elements). All checks come before anything
// is written. `out` itself is returned -- for an op with several results, a tuple of tensors,
// given back in the op's namedtuple type.
#include "api/convert.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/dtype.h"
#include "ops/promotion.h"

namespace oneflow {
namespace {

std::string Shape(const DimVector& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

void CheckInto(const Tensor& res, nb::handle out) {
  OF_CHECK_TYPE(IsTensor(out)) << "argument 'out' must be a Tensor, not " << nb::inst_name(out).c_str();
  const Tensor& o = ToTensor(out);
  OF_CHECK(CanCast(res.dtype(), o.dtype()))
      << "result type " << TorchTypeName(res.dtype()) << " can't be cast to the desired output type "
      << TorchTypeName(o.dtype());
  OF_CHECK(res.device() == o.device()) << "expected the out tensor on " << res.device().str()
                                       << ", got one on " << o.device().str();
}

void Into(nb::handle result, nb::handle out) {
  const Tensor& res = ToTensor(result);
  const Tensor& o = ToTensor(out);
  if (res.sizes() != o.sizes()) {
    if (o.numel() != 0) {
      std::string msg = "An output with one or more elements was resized since it had shape " + Shape(o.sizes()) +
                        ", which does not match the required output shape " + Shape(res.sizes()) + ".";
      if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw nb::python_error();
    }
    nb::list shape;
    for (int64_t d : res.sizes()) shape.append(d);
    out.attr("resize_")(nb::tuple(shape));
  }
  out.attr("copy_")(result);
}

}  // namespace

nb::object PopKwarg(const nb::kwargs& kwargs, const char* name) {
  PyObject* v = PyDict_GetItemString(kwargs.ptr(), name);
  if (!v) return nb::none();
  nb::object keep = nb::borrow(v);
  PyDict_DelItemString(kwargs.ptr(), name);
  return keep;
}

nb::object WithOut(const char* op, nb::object result, nb::handle out) {
  // Names `op` in every error below, once: a generated binding's scope already does (the same
  // name), a Python function's out= (flow._C._with_out) has none open.
  BindingScope scope(op);
  std::vector<nb::handle> results, outs;
  if (IsTensor(result)) {
    results.push_back(result);
    outs.push_back(out);
  } else {
    OF_CHECK_TYPE(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr()))
        << "argument 'out' must be a tuple of " << nb::len(result) << " Tensors, not "
        << nb::inst_name(out).c_str();
    OF_CHECK_TYPE(nb::len(out) == nb::len(result))
        << "argument 'out' must be a tuple of " << nb::len(result) << " Tensors, got " << nb::len(out);
    for (nb::handle r : result) results.push_back(r);
    for (nb::handle o : out) outs.push_back(o);
  }
  bool grad = false;
  for (size_t k = 0; k < results.size(); ++k) {
    CheckInto(ToTensor(results[k]), outs[k]);
    grad |= RequiresGrad(ToTensor(results[k])) || RequiresGrad(ToTensor(outs[k]));
  }
  OF_CHECK(!(grad && GradMode::is_enabled()))
      << "functions with out=... arguments don't support automatic differentiation, but one of the "
               "arguments requires grad.";
  for (size_t k = 0; k < results.size(); ++k) Into(results[k], outs[k]);
  if (IsTensor(result)) return nb::borrow(out);
  nb::list items;
  for (nb::handle o : outs) items.append(o);
  return PyTuple_Check(result.ptr()) && !PyTuple_CheckExact(result.ptr())
             ? nb::borrow(reinterpret_cast<PyObject*>(Py_TYPE(result.ptr())))(*nb::tuple(items))
             : nb::object(nb::tuple(items));
}

}  // namespace oneflow
