// What Python sees of a tensor's storage (`Tensor.untyped_storage()`, `storage()`, `_base`) and
// shared memory (`Tensor.share_memory_`, `is_shared`).
//
// Note [Shared memory]: share_memory_ moves a CPU storage's bytes into an anonymous shared
// mapping (mmap MAP_SHARED), in place: every tensor on the storage follows, and processes forked
// afterwards (multiprocessing's default start method on Linux, `oneflow.multiprocessing`) see
// each other's writes, which is what Hogwild-style training (`model.share_memory()`) and shared
// optimizer states rely on. PyTorch backs it with named shared memory, so that a tensor sent
// through a multiprocessing queue arrives as a view of the same memory; here a pickled tensor
// travels by value. CUDA tensors are left as they are (as PyTorch: a no-op).
#include <sys/mman.h>

#include <cstring>

#include "api/bind_registry.h"
#include "api/convert.h"

namespace oneflow {
namespace {

void Unmap(void*, void* data, size_t nbytes) { munmap(data, nbytes ? nbytes : 1); }

bool IsShared(const Tensor& t) { return t.storage()->deleter() == &Unmap; }

void ShareMemory(const Tensor& t) {
  Storage* s = t.storage();
  if (t.device().type != DeviceType::kCPU || IsShared(t) || !s->data()) return;
  const size_t n = s->nbytes();
  void* p = mmap(nullptr, n ? n : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  OF_CHECK(p != MAP_FAILED) << "share_memory_(): could not map " << n << " bytes of shared memory: "
                            << std::strerror(errno);
  std::memcpy(p, s->data(), n);
  s->Replace(p, &Unmap, nullptr);
}

}  // namespace

void BindStorage(nb::class_<PyTensor>& cls) {
  cls.def("share_memory_", [](nb::handle self) { ShareMemory(ToTensor(self)); return nb::borrow(self); },
          "Moves the storage into shared memory (Note [Shared memory]); a no-op for CUDA tensors")
      .def("is_shared", [](const PyTensor& t) { return IsShared(t) || t.device().type == DeviceType::kCUDA; })
      .def("_storage_ptr", [](const PyTensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data()); })
      .def("_storage_nbytes", [](const PyTensor& t) { return t.storage()->nbytes(); })
      .def("_is_view", [](const PyTensor& t) { return bool(t.impl()->view_base_); })
      .def_prop_ro("_base", [](const PyTensor& t) -> nb::object {
        // The tensor a view's memory layout came from (its root), or None, as PyTorch's `_base`.
        if (!t.impl()->view_base_) return nb::none();
        return Wrap(Tensor(t.impl()->view_base_));
      });
}
OF_BIND(90, BindStorage);

}  // namespace oneflow
