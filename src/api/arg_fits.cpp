// Argument-kind tests for overloaded flow._C functions (Note [OneFlow's signatures], arg_fits.h).
#include "api/arg_fits.h"

namespace oneflow {

bool FitsTensor(nb::handle h) {
  return IsTensor(h) || PyObject_HasAttrString(h.ptr(), "_oneflow_global_");
}

bool FitsInt(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return false;
  if (IsTensor(h)) {
    const Tensor& t = ToTensor(h);
    return t.numel() == 1 && !IsFloating(t.dtype());
  }
  return !FitsTensor(h) && (PyLong_Check(o) || PyIndex_Check(o));
}

bool FitsNumber(nb::handle h) {
  PyObject* o = h.ptr();
  if (IsTensor(h)) return ToTensor(h).numel() == 1;
  return !FitsTensor(h) && (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) || PyNumber_Check(o)) &&
         !PySequence_Check(o);
}

// ToBool takes any object's truth value; only what no form could mean as a flag is refused
// (numpy's bool_ and one-element tensors are flags).
bool FitsBool(nb::handle h) {
  PyObject* o = h.ptr();
  if (IsTensor(h)) return ToTensor(h).numel() == 1;
  return !FitsTensor(h) && !PyUnicode_Check(o) && !PySequence_Check(o) && !PyDict_Check(o);
}

bool FitsIntList(nb::handle h) {
  PyObject* o = h.ptr();
  if (FitsTensor(h) || PyUnicode_Check(o)) return false;
  if (PyLong_Check(o)) return !PyBool_Check(o);
  if (!PySequence_Check(o)) return false;
  for (nb::handle x : nb::borrow<nb::sequence>(h))
    if (!FitsInt(x)) return false;
  return true;
}

bool FitsTensorList(nb::handle h) {
  PyObject* o = h.ptr();
  if (FitsTensor(h) || !(PyList_Check(o) || PyTuple_Check(o))) return false;
  for (nb::handle x : nb::borrow<nb::sequence>(h))
    if (!FitsTensor(x)) return false;
  return true;
}

bool FitsStr(nb::handle h) { return PyUnicode_Check(h.ptr()); }

}  // namespace oneflow
