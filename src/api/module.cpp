// The extension module `oneflow._oneflow_internal` (exposed as flow._C): error translation,
// dtype and device objects, the Tensor class, then the generated and hand-written op bindings,
// then the binding files that registered themselves (Note [Binding registry], api/bind_registry.h).
#include <nanobind/ndarray.h>

#include <cstdlib>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "core/allocator.h"
#include "core/default_device.h"
#include "core/generator.h"
#include "core/parallel.h"
#include "kernels/dnnl/dnnl_weight_cache.h"
#include "ops/copy.h"
#include "decl/complex.h"
#include "decl/empty.h"

namespace oneflow {

void SetDTypeObject(DType t, nb::object o);

namespace {

struct DTypeObj {
  DType t;
};

// oneflow.linalg.LinAlgError (flow._C._LinAlgError), made in BindModule.
PyObject* g_linalg_error = nullptr;

void TranslateErrors() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind()) {
        case ErrorKind::kValue: type = PyExc_ValueError; break;
        case ErrorKind::kIndex: type = PyExc_IndexError; break;
        case ErrorKind::kType: type = PyExc_TypeError; break;
        case ErrorKind::kNotImplemented: type = PyExc_NotImplementedError; break;
        case ErrorKind::kLinAlg: type = g_linalg_error ? g_linalg_error : PyExc_RuntimeError; break;
        default: break;
      }
      PyErr_SetString(type, e.what());
    } catch (const std::bad_alloc&) {
      // Note [Foreign exceptions]: a C++ library's exception carries its own text ("std::bad_alloc",
      // "vector::_M_default_append"); the user gets PyTorch's kind (a RuntimeError for memory) and
      // the op that was running, never the C++ text.
      const char* op = OpScope::LastUnwound();
      PyErr_Format(PyExc_RuntimeError, "%s%scan't allocate memory: the call asked for more memory than is available",
                   op ? op : "", op ? "(): " : "");
    } catch (const std::length_error&) {
      const char* op = OpScope::LastUnwound();
      PyErr_Format(PyExc_RuntimeError, "%s%sa size is too large to be allocated", op ? op : "", op ? "(): " : "");
    }
  });
}

void BindDTypes(nb::module_& m) {
  nb::class_<DTypeObj>(m, "dtype")
      .def_prop_ro("is_floating_point", [](const DTypeObj& d) { return IsFloating(d.t); })
      .def_prop_ro("is_complex", [](const DTypeObj& d) { return IsComplex(d.t); })
      .def_prop_ro("is_signed", [](const DTypeObj& d) { return d.t != DType::kBool && d.t != DType::kUInt8; })
      .def_prop_ro("itemsize", [](const DTypeObj& d) { return ElementSize(d.t); })
      .def_prop_ro("name", [](const DTypeObj& d) { return std::string(DTypeName(d.t)); })
      .def("__repr__", [](const DTypeObj& d) { return std::string("oneflow.") + DTypeName(d.t); })
      .def("__hash__", [](const DTypeObj& d) { return static_cast<int>(d.t); })
      .def("__reduce__", [](const DTypeObj& d) { return std::string(DTypeName(d.t)); });
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    nb::object o = nb::cast(DTypeObj{t});
    SetDTypeObject(t, o);
    m.attr(DTypeName(t)) = o;
  }
  m.def("get_default_dtype", [] { return DTypeObject(DefaultFloatDType()); });
  m.def("set_default_dtype", [](nb::handle d) { SetDefaultFloatDType(ToDType(d)); });
  m.def("promote_types", [](nb::handle a, nb::handle b) { return DTypeObject(PromoteTypes(ToDType(a), ToDType(b))); });
}

std::vector<Device> g_device_stack;  // defaults to restore when `with flow.device(...)` blocks end

void BindDevice(nb::module_& m) {
  nb::class_<Device>(m, "device")
      .def("__init__", [](Device* self, nb::handle spec, nb::handle index) {
        // A tensor is no device (PyTorch and OneFlow refuse it; x.device is the tensor's).
        OF_CHECK_TYPE(!IsTensor(spec)) << "device(): expected a oneflow.device, a string or an int, got Tensor";
        Device d = ToDevice(spec);
        if (!index.is_none()) {
          OF_CHECK_TYPE(PyLong_Check(index.ptr()) && !PyBool_Check(index.ptr()))
              << "device(): argument 'index' must be int, not " << nb::inst_name(index).c_str();
          OF_CHECK(d.index < 0 || nb::isinstance<Device>(spec) == false)
              << "device string must not include an index when index is given";
          // the index of a cuda device given as an int (ToDevice's checks: >= 0, fits an int)
          d.index = ToDevice(index).index;
        }
        new (self) Device(d);
      }, "type"_a, "index"_a = nb::none())
      .def_prop_ro("type", [](const Device& d) {
        return d.type == DeviceType::kCPU ? "cpu" : d.type == DeviceType::kMeta ? "meta" : "cuda";
      })
      .def_prop_ro("index", [](const Device& d) { return d.index < 0 ? 0 : d.index; })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        std::string t = d.type == DeviceType::kCPU ? "cpu" : d.type == DeviceType::kMeta ? "meta" : "cuda";
        return "device(type='" + t + "', index=" + std::to_string(d.index < 0 ? 0 : d.index) + ")";
      })
      .def("__eq__", [](const Device& a, nb::handle b) {
        if (!nb::isinstance<Device>(b) && !nb::isinstance<nb::str>(b)) return false;
        Device o = ToDevice(b);
        return a.type == o.type && (a.index < 0 ? 0 : a.index) == (o.index < 0 ? 0 : o.index);
      })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      // `with flow.device(...)`: the factories' default device inside (core/default_device.h).
      .def("__enter__", [](const Device& d) {
        g_device_stack.push_back(DefaultFactoryDevice());
        SetDefaultFactoryDevice(d);
        return d;
      })
      .def("__exit__", [](const Device&, nb::args) {
        if (!g_device_stack.empty()) {
          SetDefaultFactoryDevice(g_device_stack.back());
          g_device_stack.pop_back();
        }
        return false;
      });
  m.def("_get_default_device", [] { return DefaultFactoryDevice(); });
  m.def("_set_default_device", [](const Device& d) { SetDefaultFactoryDevice(d); });
  m.def("_cuda_available", &CudaAvailable);
  m.def("_cuda_device_count", &CudaDeviceCount);
}

nb::dlpack::dtype DlDType(DType t) {
  using C = nb::dlpack::dtype_code;
  auto mk = [](C c, int bits) { return nb::dlpack::dtype{static_cast<uint8_t>(c), static_cast<uint8_t>(bits), 1}; };
  switch (t) {
    case DType::kBool: return mk(C::Bool, 8);
    case DType::kInt8: return mk(C::Int, 8);
    case DType::kUInt8: return mk(C::UInt, 8);
    case DType::kInt16: return mk(C::Int, 16);
    case DType::kInt32: return mk(C::Int, 32);
    case DType::kInt64: return mk(C::Int, 64);
    case DType::kFloat16: return mk(C::Float, 16);
    case DType::kFloat32: return mk(C::Float, 32);
    case DType::kFloat64: return mk(C::Float, 64);
    case DType::kComplex64: return mk(C::Complex, 64);
    case DType::kComplex128: return mk(C::Complex, 128);
    default: break;
  }
  OF_THROW(kType) << "Got unsupported ScalarType " << DTypeName(t) << " for numpy()";
}

DType FromDl(nb::dlpack::dtype d) {
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(d.code);
  if (code == C::Bool) return DType::kBool;
  if (code == C::Int && d.bits == 8) return DType::kInt8;
  if (code == C::UInt && d.bits == 8) return DType::kUInt8;
  if (code == C::Int && d.bits == 16) return DType::kInt16;
  if (code == C::Int && d.bits == 32) return DType::kInt32;
  if (code == C::Int && d.bits == 64) return DType::kInt64;
  if (code == C::Float && d.bits == 16) return DType::kFloat16;
  if (code == C::Float && d.bits == 32) return DType::kFloat32;
  if (code == C::Float && d.bits == 64) return DType::kFloat64;
  if (code == C::Complex && d.bits == 64) return DType::kComplex64;
  if (code == C::Complex && d.bits == 128) return DType::kComplex128;
  OF_THROW(kType) << "can't convert np.ndarray of this type (code " << int(d.code) << ", "
                  << int(d.bits) << " bits). The only supported types are: float64, float32, "
                                    "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.";
}

// Zero-copy view of a CPU tensor as a numpy array; the array keeps the storage alive.
nb::object ToNumpy(const Tensor& t) {
  CheckHasData(t);
  OF_CHECK_TYPE(t.device().is_cpu()) << "can't convert " << t.device().str()
                                << " device type tensor to numpy. Use Tensor.cpu() first.";
  nb::dlpack::dtype dt = DlDType(t.dtype());
  size_t shape[kMaxDims];
  int64_t strides[kMaxDims];
  for (int i = 0; i < t.dim(); ++i) { shape[i] = t.sizes()[i]; strides[i] = t.strides()[i]; }
  nb::capsule owner(new Tensor(t), [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  nb::ndarray<nb::numpy> arr(t.numel() ? t.raw_data() : static_cast<void*>(t.storage()->data()),
                             t.dim(), shape, owner, strides, dt);
  return nb::cast(arr, nb::rv_policy::reference);
}

void ReleasePyObject(void* ctx, void*, size_t) {
  nb::gil_scoped_acquire g;
  Py_DECREF(static_cast<PyObject*>(ctx));
}

// Shares the array's memory (flow.from_numpy).
template <typename Arr>
Tensor FromNumpyArray(nb::handle h, const Arr& arr, void* data);

Tensor FromNumpy(nb::handle h) {
  nb::ndarray<nb::device::cpu> arr;
  if (nb::try_cast(h, arr)) return FromNumpyArray(h, arr, arr.data());
  // A read-only array (np.frombuffer, a broadcast view) is shared as PyTorch shares it, with its
  // warning: writing through the tensor would write memory numpy promised not to change.
  nb::ndarray<nb::ro, nb::device::cpu> ro;
  OF_CHECK_TYPE(nb::try_cast(h, ro)) << "from_numpy: expected a numpy array, got "
                                      << nb::type_name(h.type()).c_str();
  if (PyErr_WarnEx(PyExc_UserWarning,
                   "from_numpy: the array is not writable; the tensor shares its memory, so do not write "
                   "to the tensor (copy the array first if you need to)", 1) < 0)
    throw nb::python_error();
  return FromNumpyArray(h, ro, const_cast<void*>(ro.data()));
}

template <typename Arr>
Tensor FromNumpyArray(nb::handle h, const Arr& arr, void* data) {
  DType dt = FromDl(arr.dtype());
  DimVector sizes, strides;
  int64_t extent = 1;
  for (size_t i = 0; i < arr.ndim(); ++i) {
    sizes.push_back(arr.shape(i));
    strides.push_back(arr.stride(i));
    OF_CHECK_VALUE(arr.stride(i) >= 0)
        << "At least one stride in the given numpy array is negative, and tensors with negative "
           "strides are not currently supported. (You can probably work around this by making a "
           "copy of your array with array.copy().)";
    if (arr.shape(i) == 0) extent = 0;
    else if (extent) extent += (arr.shape(i) - 1) * arr.stride(i);
  }
  Py_INCREF(h.ptr());
  auto storage = MakeIntrusive<Storage>(data, static_cast<size_t>(extent * ElementSize(dt)),
                                        Device(), &ReleasePyObject, h.ptr());
  return Tensor(MakeIntrusive<TensorImpl>(std::move(storage), 0, sizes, strides, dt));
}

// Tensor.view(dtype): the same bytes read as another dtype, as PyTorch's; with a different
// element size the last dimension (stride 1) grows or shrinks by the ratio. Like PyTorch's it is
// not differentiable: the result does not require grad.
Tensor ViewAsDType(const Tensor& t, DType to) {
  const DType from = t.dtype();
  const int64_t a = ElementSize(from), b = ElementSize(to);
  DimVector sizes = t.sizes(), strides = t.strides();
  int64_t offset = t.offset();
  if (a != b) {
    const std::string what = std::string(" to view ") + TorchTypeName(from) + " as " + TorchTypeName(to) +
                             " (different element sizes)";
    OF_CHECK(t.dim() > 0) << "self.dim() cannot be 0" << what;
    const int n = t.dim();
    const int64_t r = b > a ? b / a : a / b;
    if (b > a)
      OF_CHECK(sizes[n - 1] % r == 0) << "self.size(-1) must be divisible by " << r << what << ", but got " << sizes[n - 1];
    OF_CHECK(strides[n - 1] == 1) << "self.stride(-1) must be 1" << what << ", but got " << strides[n - 1];
    if (b > a) {
      OF_CHECK(offset % r == 0) << "self.storage_offset() must be divisible by " << r << what << ", but got " << offset;
      for (int i = 0; i < n - 1; ++i)
        OF_CHECK(strides[i] % r == 0) << "self.stride(" << i << ") must be divisible by " << r << what << ", but got " << strides[i];
      sizes[n - 1] /= r, offset /= r;
      for (int i = 0; i < n - 1; ++i) strides[i] /= r;
    } else {
      sizes[n - 1] *= r, offset *= r;
      for (int i = 0; i < n - 1; ++i) strides[i] *= r;
    }
  }
  return Tensor(MakeIntrusive<TensorImpl>(t.impl()->storage_, offset, sizes, strides, to));
}

nb::object ScalarToPy(const Scalar& s) {
  if (s.is_bool()) return nb::bool_(s.ToInt() != 0);
  if (s.is_int()) return nb::int_(s.ToInt());
  if (s.is_complex()) return nb::steal(PyComplex_FromDoubles(s.ToComplex().real(), s.ToComplex().imag()));
  return nb::float_(s.ToDouble());
}

}  // namespace

void BindTensorClass(nb::module_& m, nb::class_<PyTensor>& cls) {
  cls.def_prop_ro("dtype", [](const PyTensor& t) { return DTypeObject(t.dtype()); })
      .def_prop_ro("device", [](const PyTensor& t) { return t.device(); })
      .def_prop_ro("_shape", [](const PyTensor& t) {
        nb::list l;
        for (int64_t s : t.sizes()) l.append(s);
        return nb::tuple(l);
      })
      .def_prop_ro("ndim", [](const PyTensor& t) { return t.dim(); })
      .def("dim", [](const PyTensor& t) { return t.dim(); })
      .def("numel", [](const PyTensor& t) { return t.numel(); })
      .def("nelement", [](const PyTensor& t) { return t.numel(); })
      .def("element_size", [](const PyTensor& t) { return t.element_size(); })
      .def("is_contiguous", [](const PyTensor& t) { return t.is_contiguous(); })
      .def("pin_memory", [](nb::handle self) { return IsPinned(ToTensor(self)) ? nb::borrow(self) : Wrap(PinnedCopy(ToTensor(self))); })
      .def("is_pinned", [](const PyTensor& t) { return IsPinned(t); })
      .def("storage_offset", [](const PyTensor& t) { return t.offset(); })
      .def("data_ptr", [](const PyTensor& t) { return reinterpret_cast<uintptr_t>(t.raw_ptr()); })
      .def("_stride", [](const PyTensor& t) {
        nb::list l;
        for (int64_t s : t.strides()) l.append(s);
        return nb::tuple(l);
      })
      .def_prop_ro("_version", [](const PyTensor& t) { return t.storage()->version(); })
      .def_prop_ro("is_cuda", [](const PyTensor& t) { return t.device().type == DeviceType::kCUDA; })
      .def_prop_ro("is_meta", [](const PyTensor& t) { return t.device().type == DeviceType::kMeta; })
      .def("numpy", [](const PyTensor& t) { return ToNumpy(t); })
      .def("item", [](const PyTensor& t) { return ScalarToPy(ItemOf(t)); })
      .def("_is_same", [](const PyTensor& a, const PyTensor& b) { return a.is_same(b); })
      .def("_shares_storage", [](const PyTensor& a, const PyTensor& b) { return a.storage() == b.storage(); });
  // Registered before the generated view(*shape) (BindGeneratedOps runs later), so nanobind tries
  // it first; it takes only a dtype argument, and anything else goes on to the shape overload.
  cls.def("view", [](const PyTensor& t, const DTypeObj& dtype) { return Wrap(ViewAsDType(t, dtype.t)); },
          "dtype"_a);
  m.def("from_numpy", [](nb::handle a) {
    // A NumPy array only, as PyTorch and OneFlow: any DLPack object (a Tensor too) converted.
    static nb::handle ndarray = nb::object(nb::module_::import_("numpy").attr("ndarray")).release();
    OF_CHECK_TYPE(PyObject_IsInstance(a.ptr(), ndarray.ptr()) == 1)
        << "from_numpy(): expected np.ndarray (got " << nb::inst_name(a).c_str() << ")";
    return Wrap(FromNumpy(a));
  });
  m.def("_empty_strided", [](nb::handle size, nb::handle stride, nb::handle dtype) {
    DimVector sz = ToIntList(size), st = ToIntList(stride);
    int64_t extent = 1;
    for (int i = 0; i < sz.size(); ++i) extent += (sz[i] - 1) * st[i];
    Tensor base = Empty(DimVector{extent}, ToDType(dtype));
    Tensor t = MakeView(base, sz, st, 0);
    t.impl()->view_base_.Reset();  // the flat base is private: t owns its memory
    return Wrap(t);
  });
  m.def("set_num_threads", &SetNumThreads);
  m.def("get_num_threads", &GetNumThreads);
  m.def("_empty_cache", &CpuEmptyCache);
  m.def("_cached_bytes", &CpuCachedBytes);
  // Note [Resident cap] (core/allocator.cpp): the large blocks' accounting, for tests and benchmarks.
  m.def("_cpu_allocator_stats", [] {
    const CpuAllocStats s = CpuAllocatorStats();
    nb::dict d;
    d["cached"] = s.cached, d["live_large"] = s.live_large, d["peak_live_large"] = s.peak_live_large;
    d["free_resident"] = s.free_resident, d["given_back"] = s.given_back;
    return d;
  });
  // Note [Weight cache] (kernels/dnnl/dnnl_common.h): its state for tests, a clear, a byte limit.
  m.def("_dnnl_weight_cache_stats", [] {
    const dnnl_glue::WeightCacheStats s = dnnl_glue::GetWeightCacheStats();
    nb::dict d;
    d["records"] = s.records, d["copies"] = s.copies, d["bytes"] = s.bytes, d["hits"] = s.hits;
    return d;
  });
  m.def("_dnnl_weight_cache_clear", &dnnl_glue::ClearWeightCache);
  m.def("_dnnl_weight_cache_limit", &dnnl_glue::SetWeightCacheLimit, "bytes"_a);
  m.def("_op_table", [] {
    nb::list l;
    for (const OpExposure& e : GeneratedOpTable()) {
      nb::list al;
      for (const char* a : e.aliases) al.append(a);
      nb::list also;
      for (const char* a : e.also) also.append(a);
      l.append(nb::make_tuple(e.name, e.flow, e.method, e.functional, e.inplace, al, also));
    }
    return l;
  });
}

}  // namespace oneflow

NB_MODULE(_oneflow_internal, m) {
  using namespace oneflow;
  // nanobind's report of objects still alive at exit is a developer's diagnostic: on with
  // ONEFLOW_LEAK_WARNINGS=1 (the test suite sets it), silent for users. What stays alive at exit
  // is what a script still held (Note [Hooks and the garbage collector]): nothing leaks while it
  // runs.
  nb::set_leak_warnings(std::getenv("ONEFLOW_LEAK_WARNINGS") != nullptr);
  // (a module attribute holds the reference for the interpreter's lifetime)
  g_linalg_error = PyErr_NewException("oneflow._C._LinAlgError", PyExc_RuntimeError, nullptr);
  m.attr("_LinAlgError") = nb::handle(g_linalg_error);
  TranslateErrors();
  BindDTypes(m);
  BindDevice(m);
  static PyType_Slot tensor_slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&TensorGcTraverse)},
                                       {Py_tp_clear, reinterpret_cast<void*>(&TensorGcClear)},
                                       {0, nullptr}};
  nb::class_<PyTensor> cls(m, "Tensor", nb::dynamic_attr(), nb::type_slots(tensor_slots));
  RegisterTensorType(cls);
  BindTensorClass(m, cls);
  BindGeneratedOps(m, cls);
  BindManualOps(m, cls);
  m.def_submodule("return_types", "namedtuple types of ops with several named outputs");
  m.def("_bindings", [] { return bind::Names(); });  // (tests/test_binding_registry.py)
  bind::RunAll(m, cls);  // every other binding file (Note [Binding registry])
}
