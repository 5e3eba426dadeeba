// flow.tensor's fast path for Python data: nested lists / tuples of Python numbers read straight
// into the tensor's buffer.
//
// Note [Tensors from Python data]: `flow.tensor([1., 2.])` is among the commonest calls in user
// code, and going through numpy (np.array of the list, a float64 array, then a cast) cost about
// 10 us against PyTorch's 7. Here two walks over the nested sequence do it: the first checks
// that it is regular and finds the kind of its numbers (bool < int < float < complex, as PyTorch
// and numpy infer), the second writes each number into a tensor of the final dtype. Anything
// else (numpy scalars, tensors, ragged or too-large data, other objects) returns None, and the
// Python path (`_tensor.py`) handles it with its numpy conversion and its error messages, so the
// two paths cannot disagree on what they both accept. Numbers bound for a narrower type are
// checked as PyTorch checks them (CheckConvertible).
#include <cmath>
#include <complex>
#include <limits>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "decl/cast.h"
#include "decl/empty.h"

namespace oneflow {
namespace {

enum Kind : int { kNoNumber = -1, kBoolKind, kIntKind, kFloatKind, kComplexKind };

bool IsSeq(PyObject* o) { return PyList_CheckExact(o) || PyTuple_CheckExact(o); }

// The leaf's kind, or -2 when it is not a plain Python number (or an int beyond int64).
int LeafKind(PyObject* o) {
  if (PyBool_Check(o)) return kBoolKind;
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(o, &overflow);
    return overflow ? -2 : kIntKind;
  }
  if (PyFloat_CheckExact(o)) return kFloatKind;
  if (PyComplex_CheckExact(o)) return kComplexKind;
  return -2;
}

// Checks that `o` has the shape sizes[depth:] and folds its numbers' kinds into *kind.
bool Check(PyObject* o, const DimVector& sizes, size_t depth, int* kind) {
  if (depth == sizes.size()) {
    int k = LeafKind(o);
    if (k == -2) return false;
    *kind = std::max(*kind, k);
    return true;
  }
  if (!IsSeq(o) || PySequence_Fast_GET_SIZE(o) != sizes[depth]) return false;
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < sizes[depth]; ++i)
    if (!Check(items[i], sizes, depth + 1, kind)) return false;
  return true;
}

template <typename T>
T Number(PyObject* o) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    Py_complex c = PyComplex_AsCComplex(o);  // ints and floats too
    return T(c.real, c.imag);
  } else if constexpr (std::is_same_v<T, bool>) {
    return PyObject_IsTrue(o) == 1;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(PyLong_AsLongLong(o));  // bools and ints only (see Direct)
  } else {
    return static_cast<T>(PyFloat_AsDouble(o));   // bools, ints and floats
  }
}

template <typename T>
void Fill(PyObject* o, const DimVector& sizes, size_t depth, T*& out) {
  if (depth == sizes.size()) {
    *out++ = Number<T>(o);
    return;
  }
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < sizes[depth]; ++i) Fill(items[i], sizes, depth + 1, out);
}

int KindOf(DType t) {
  if (t == DType::kBool) return kBoolKind;
  if (IsComplex(t)) return kComplexKind;
  return IsFloating(t) ? kFloatKind : kIntKind;
}

// The dtype a nested sequence of numbers of this kind becomes without a dtype= argument.
DType Inferred(int kind) {
  switch (kind) {
    case kBoolKind: return DType::kBool;
    case kIntKind: return DType::kInt64;
    case kComplexKind: return ToComplexDType(DefaultFloatDType());
    default: return DefaultFloatDType();  // floats, and data without a number ([], [[], []])
  }
}

// PyTorch's checks on Python numbers bound for an integer dtype: a float must lie within the
// target's range (no NaN), an int too, except that unsigned targets take negative ints down to
// -max (they wrap: [-1] as uint8 is 255); complex numbers only go to complex or bool.
template <typename T>
void CheckRange(const Tensor& natural, int kind, DType want) {
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  bool ok = true;
  if (kind == kFloatKind) {
    const double* p = natural.data<double>();
    for (int64_t i = 0; ok && i < natural.numel(); ++i)
      ok = std::is_same_v<T, int64_t> ? p[i] >= -0x1p63 && p[i] < 0x1p63 : p[i] >= lo && p[i] <= hi;
  } else if (kind == kIntKind && !std::is_same_v<T, int64_t>) {
    const int64_t* p = natural.data<int64_t>();
    const int64_t low = std::is_unsigned_v<T> ? -static_cast<int64_t>(hi) : static_cast<int64_t>(lo);
    for (int64_t i = 0; ok && i < natural.numel(); ++i) ok = p[i] >= low && p[i] <= static_cast<int64_t>(hi);
  }
  OF_CHECK(ok) << "value cannot be converted to type " << DTypeName(want) << " without overflow";
}

void CheckConvertible(const Tensor& natural, int kind, DType want) {
  if (kind == kComplexKind)
    OF_CHECK_TYPE(IsComplex(want) || want == DType::kBool) << "must be real number, not complex";
  switch (want) {
    case DType::kInt8: CheckRange<int8_t>(natural, kind, want); break;
    case DType::kUInt8: CheckRange<uint8_t>(natural, kind, want); break;
    case DType::kInt16: CheckRange<int16_t>(natural, kind, want); break;
    case DType::kInt32: CheckRange<int32_t>(natural, kind, want); break;
    case DType::kInt64: CheckRange<int64_t>(natural, kind, want); break;
    default: break;
  }
}

nb::object FromData(nb::handle data, nb::handle dtype_obj) {
  PyObject* o = data.ptr();
  DimVector sizes;
  for (PyObject* p = o; IsSeq(p); p = PySequence_Fast_ITEMS(p)[0]) {
    if (sizes.size() == kMaxDims) return nb::none();
    sizes.push_back(PySequence_Fast_GET_SIZE(p));
    if (sizes.back() == 0) break;
  }
  // (An empty level, as in [] or [[], []], is where Check stops: such data has no number.)
  int kind = kNoNumber;
  if (!Check(o, sizes, 0, &kind)) return nb::none();
  DType want = dtype_obj.is_none() ? Inferred(kind) : ToDType(dtype_obj);
  // Written directly when the target holds the data's kind and is one of the types filled here;
  // else the Python numbers' own precision (bool, int64, float64, complex128), checked and cast.
  DType fill = kind == kIntKind ? DType::kInt64 : kind == kComplexKind ? DType::kComplex128
             : kind == kBoolKind ? DType::kBool : DType::kFloat64;
  if (KindOf(want) >= std::max(kind, int(kBoolKind)) &&
      (want == DType::kBool || want == DType::kInt64 || want == DType::kFloat32 ||
       want == DType::kFloat64 || IsComplex(want)))
    fill = want;
  Tensor t = Empty(sizes, fill);
  if (kind != kNoNumber) {
    switch (fill) {
      case DType::kBool: { bool* p = t.data<bool>(); Fill(o, sizes, 0, p); break; }
      case DType::kInt64: { int64_t* p = t.data<int64_t>(); Fill(o, sizes, 0, p); break; }
      case DType::kFloat32: { float* p = t.data<float>(); Fill(o, sizes, 0, p); break; }
      case DType::kFloat64: { double* p = t.data<double>(); Fill(o, sizes, 0, p); break; }
      case DType::kComplex64: { auto* p = t.data<std::complex<float>>(); Fill(o, sizes, 0, p); break; }
      default: { auto* p = t.data<std::complex<double>>(); Fill(o, sizes, 0, p); break; }
    }
  }
  if (fill == want) return Wrap(t);
  CheckConvertible(t, kind, want);
  return Wrap(functional::Cast(t, want));
}

}  // namespace

void BindTensorData(nb::module_& m) {
  m.def("_tensor_from_data", &FromData, "data"_a.none(), "dtype"_a.none() = nb::none(),
        "flow.tensor's fast path: nested lists / tuples of Python numbers -> a CPU tensor, or None "
        "for anything else (Note [Tensors from Python data])");
}
OF_BIND(80, BindTensorData);

}  // namespace oneflow
