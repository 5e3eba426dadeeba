// Argument-kind tests for overloaded flow._C functions (Note [OneFlow's signatures], arg_fits.h).
#include "api/arg_fits.h"

namespace oneflow {

// A global tensor or another Python-level kind: Note [Kind test]'s type comparison (convert.h).
bool IsGlobalTensor(nb::handle h) { return IsKind(h); }

bool FitsTensor(nb::handle h) { return IsTensor(h) || IsGlobalTensor(h); }

bool FitsInt(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return false;
  if (PyLong_Check(o)) return true;
  if (IsTensor(h)) {
    const Tensor& t = ToTensor(h);
    return t.numel() == 1 && !IsFloating(t.dtype());
  }
  return PyIndex_Check(o) && !IsGlobalTensor(h);
}

bool FitsNumber(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) return true;
  if (IsTensor(h)) return ToTensor(h).numel() == 1;
  return PyNumber_Check(o) && !PySequence_Check(o) && !IsGlobalTensor(h);
}

// ToBool takes any object's truth value; only what no form could mean as a flag is refused
// (numpy's bool_ and one-element tensors are flags).
bool FitsBool(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyLong_Check(o)) return true;  // bool too
  if (IsTensor(h)) return ToTensor(h).numel() == 1;
  return !PyUnicode_Check(o) && !PySequence_Check(o) && !PyDict_Check(o) && !IsGlobalTensor(h);
}

bool FitsIntList(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyLong_Check(o)) return !PyBool_Check(o);
  if (!(PyTuple_Check(o) || PyList_Check(o))) {
    if (IsTensor(h) || PyUnicode_Check(o) || !PySequence_Check(o) || IsGlobalTensor(h)) return false;
  }
  for (nb::handle x : nb::borrow<nb::sequence>(h))
    if (!FitsInt(x)) return false;
  return true;
}

bool FitsTensorList(nb::handle h) {
  PyObject* o = h.ptr();
  if (!(PyList_Check(o) || PyTuple_Check(o))) return false;
  for (nb::handle x : nb::borrow<nb::sequence>(h))
    if (!FitsTensor(x)) return false;
  return true;
}

bool FitsStr(nb::handle h) { return PyUnicode_Check(h.ptr()); }

}  // namespace oneflow
