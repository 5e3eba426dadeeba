// DLPack (https://dmlc.github.io/dlpack/latest/): zero-copy exchange of tensors with torch,
// numpy and other frameworks. Tensor.__dlpack__ exports a capsule holding a DLManagedTensor
// (or the versioned DLManagedTensorVersioned when the consumer asks for DLPack >= 1.0) that
// keeps our storage alive; _from_dlpack wraps a producer's memory in a Storage whose deleter
// calls the producer's deleter.
#include <cstring>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "autograd/node.h"

namespace oneflow {

namespace {

// The ABI-stable structs of dlpack.h (v1.0), written out from the specification.
enum DLDeviceTypeCode : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kReadOnlyFlag = 1;

DLDataType ToDL(DType t) {
  switch (t) {
    case DType::kBool:
      return {kDLBool, 8, 1};
    case DType::kInt8:
      return {kDLInt, 8, 1};
    case DType::kUInt8:
      return {kDLUInt, 8, 1};
    case DType::kInt16:
      return {kDLInt, 16, 1};
    case DType::kInt32:
      return {kDLInt, 32, 1};
    case DType::kInt64:
      return {kDLInt, 64, 1};
    case DType::kFloat16:
      return {kDLFloat, 16, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kFloat32:
      return {kDLFloat, 32, 1};
    case DType::kFloat64:
      return {kDLFloat, 64, 1};
    case DType::kComplex64:
      return {kDLComplex, 64, 1};
    case DType::kComplex128:
      return {kDLComplex, 128, 1};
  }
  OF_THROW(kType) << "to_dlpack: dtype " << DTypeName(t) << " has no DLPack code";
}

DType FromDL(DLDataType d) {
  OF_CHECK_TYPE(d.lanes == 1) << "from_dlpack: vector dtypes (lanes=" << d.lanes
                              << ") are not supported";
  if (d.code == kDLBool && d.bits == 8) return DType::kBool;
  if (d.code == kDLInt && d.bits == 8) return DType::kInt8;
  if (d.code == kDLUInt && d.bits == 8) return DType::kUInt8;
  if (d.code == kDLInt && d.bits == 16) return DType::kInt16;
  if (d.code == kDLInt && d.bits == 32) return DType::kInt32;
  if (d.code == kDLInt && d.bits == 64) return DType::kInt64;
  if (d.code == kDLFloat && d.bits == 16) return DType::kFloat16;
  if (d.code == kDLBfloat && d.bits == 16) return DType::kBFloat16;
  if (d.code == kDLFloat && d.bits == 32) return DType::kFloat32;
  if (d.code == kDLFloat && d.bits == 64) return DType::kFloat64;
  if (d.code == kDLComplex && d.bits == 64) return DType::kComplex64;
  if (d.code == kDLComplex && d.bits == 128) return DType::kComplex128;
  static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  OF_THROW(kType)
      << "from_dlpack: unsupported dtype " << (d.code < 7 ? codes[d.code] : "?") << int(d.bits)
      << " (oneflow has bool, int8, uint8, int32, int64, float16, bfloat16, float32, "
         "float64, complex64 and complex128)";
}

// What an exported capsule owns: the tensor (so its storage lives) and the shape/strides arrays.
struct ExportCtx {
  Tensor t;
  std::vector<int64_t> shape, strides;
};

void FillDLTensor(DLTensor& dl, ExportCtx* ctx) {
  const Tensor& t = ctx->t;
  dl.data = t.numel() ? static_cast<void*>(t.raw_ptr()) : t.storage()->data();
  dl.device = {kDLCPU, 0};
  dl.ndim = t.dim();
  dl.dtype = ToDL(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
}

ExportCtx* NewExportCtx(const Tensor& t) {
  CheckHasData(t);
  OF_CHECK(t.device().is_cpu())
      << "__dlpack__: only CPU tensors can be exported in this build, got " << t.device().str();
  auto* ctx = new ExportCtx{t, {}, {}};
  ctx->shape.assign(t.sizes().begin(), t.sizes().end());
  ctx->strides.assign(t.strides().begin(), t.strides().end());
  return ctx;
}

nb::object ToDLPack(const Tensor& t, bool versioned) {
  ExportCtx* ctx = NewExportCtx(t);
  PyObject* cap;
  if (versioned) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = {1, 0};
    m->manager_ctx = ctx;
    m->deleter = [](DLManagedTensorVersioned* self) {
      delete static_cast<ExportCtx*>(self->manager_ctx);
      delete self;
    };
    FillDLTensor(m->dl_tensor, ctx);
    // An unconsumed capsule (still named "dltensor_versioned") frees itself.
    cap = PyCapsule_New(m, "dltensor_versioned", [](PyObject* c) {
      if (PyCapsule_IsValid(c, "dltensor_versioned")) {
        auto* p =
            static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
        p->deleter(p);
      }
    });
  } else {
    auto* m = new DLManagedTensor{};
    m->manager_ctx = ctx;
    m->deleter = [](DLManagedTensor* self) {
      delete static_cast<ExportCtx*>(self->manager_ctx);
      delete self;
    };
    FillDLTensor(m->dl_tensor, ctx);
    cap = PyCapsule_New(m, "dltensor", [](PyObject* c) {
      if (PyCapsule_IsValid(c, "dltensor")) {
        auto* p = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
        p->deleter(p);
      }
    });
  }
  if (!cap) throw nb::python_error();
  return nb::steal(cap);
}

// The producer's tensor as ours: `release` is called (once) when our storage dies.
Tensor FromDLTensor(const DLTensor& dl, void (*release)(void*), void* owner) {
  OF_CHECK(dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost)
      << "from_dlpack: only CPU tensors can be imported in this build (DLPack device type "
      << dl.device.device_type << ")";
  const DType dt = FromDL(dl.dtype);
  OF_CHECK(dl.ndim >= 0 && dl.ndim <= kMaxDims)
      << "from_dlpack: unsupported number of dimensions " << dl.ndim;
  DimVector sizes, strides;
  for (int i = 0; i < dl.ndim; ++i) sizes.push_back(dl.shape[i]);
  if (dl.strides) {
    for (int i = 0; i < dl.ndim; ++i) strides.push_back(dl.strides[i]);
  } else {
    strides.resize(dl.ndim);
    int64_t s = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      strides[i] = s;
      s *= std::max<int64_t>(sizes[i], 1);
    }
  }
  int64_t extent = 1;
  for (int i = 0; i < dl.ndim; ++i) {
    OF_CHECK(strides[i] >= 0 || sizes[i] <= 1) << "from_dlpack: negative strides are not supported";
    if (sizes[i] == 0)
      extent = 0;
    else if (extent)
      extent += (sizes[i] - 1) * std::max<int64_t>(strides[i], 0);
  }
  char* data = static_cast<char*>(dl.data) + dl.byte_offset;
  struct Release {
    void (*fn)(void*);
    void* owner;
  };
  auto* rel = new Release{release, owner};
  auto storage = MakeIntrusive<Storage>(
      data, size_t(extent * ElementSize(dt)), Device(),
      [](void* ctx, void*, size_t) {
        auto* r = static_cast<Release*>(ctx);
        r->fn(r->owner);
        delete r;
      },
      rel);
  for (int i = 0; i < dl.ndim; ++i)
    if (sizes[i] <= 1) strides[i] = std::max<int64_t>(strides[i], 0);
  return Tensor(MakeIntrusive<TensorImpl>(std::move(storage), 0, sizes, strides, dt));
}

Tensor FromDLPack(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
    OF_CHECK(m->version.major == 1)
        << "from_dlpack: unsupported DLPack version " << m->version.major << "." << m->version.minor
        << " (oneflow reads 1.x)";
    OF_CHECK(!(m->flags & kReadOnlyFlag))
        << "from_dlpack: the producer marked this tensor read-only; oneflow tensors are writable, "
           "so import a copy instead";
    Tensor t = FromDLTensor(
        m->dl_tensor,
        [](void* p) {
          auto* mt = static_cast<DLManagedTensorVersioned*>(p);
          if (mt->deleter) mt->deleter(mt);
        },
        m);
    PyCapsule_SetName(c, "used_dltensor_versioned");
    return t;
  }
  OF_CHECK_TYPE(PyCapsule_IsValid(c, "dltensor"))
      << "from_dlpack: expected a DLPack capsule (named 'dltensor' or 'dltensor_versioned', not "
         "yet "
         "consumed) or an object with __dlpack__";
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
  Tensor t = FromDLTensor(
      m->dl_tensor,
      [](void* p) {
        auto* mt = static_cast<DLManagedTensor*>(p);
        if (mt->deleter) mt->deleter(mt);
      },
      m);
  PyCapsule_SetName(c, "used_dltensor");
  return t;
}

}  // namespace

void BindDLPack(nb::module_& m, nb::class_<PyTensor>& cls) {
  cls.def(
      "__dlpack__",
      [](const PyTensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device,
         nb::handle copy) {
        // PyTorch's rule: the consumer would hold the values without the graph (torch.from_dlpack,
        // np.from_dlpack and ours raise the same); to_dlpack, the explicit export, stays allowed
        if (RequiresGrad(t))
          throw nb::buffer_error("Can't export tensors that require gradient, use tensor.detach()");
        OF_CHECK(stream.is_none() || t.device().is_cpu())
            << "__dlpack__: stream must be None for CPU tensors";
        OF_CHECK_TYPE(!(!copy.is_none() && nb::cast<bool>(copy)))
            << "__dlpack__: copy=True is not supported (the export is zero-copy)";
        bool versioned = false;
        if (!max_version.is_none()) {
          nb::tuple v = nb::borrow<nb::tuple>(max_version);
          versioned = v.size() >= 1 && nb::cast<int>(v[0]) >= 1;
        }
        if (!dl_device.is_none()) {
          nb::tuple d = nb::borrow<nb::tuple>(dl_device);
          OF_CHECK(nb::cast<int>(d[0]) == kDLCPU)
              << "__dlpack__: can only export to the CPU device";
        }
        return ToDLPack(t, versioned);
      },
      nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(),
      "dl_device"_a = nb::none(), "copy"_a = nb::none());
  cls.def("__dlpack_device__", [](const PyTensor& t) {
    OF_CHECK(t.device().is_cpu() || t.device().type == DeviceType::kCUDA)
        << "__dlpack_device__: a " << t.device().str() << " tensor has no DLPack device";
    return nb::make_tuple(t.device().is_cpu() ? int(kDLCPU) : int(kDLCUDA),
                          t.device().is_cpu() ? 0 : t.device().index);
  });
  m.def("_to_dlpack", [](nb::handle t) { return ToDLPack(ToTensor(t), false); });
  m.def("_from_dlpack", [](nb::handle capsule) { return Wrap(FromDLPack(capsule)); });
}
OF_BIND(70, BindDLPack);

}  // namespace oneflow
