// flow.Generator, flow.default_generator and the seeding functions (core/generator.h).
#include <cstring>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "core/auto_generator.h"
#include "core/philox.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/empty.h"

namespace oneflow {

namespace {

struct PyGenerator {
  GeneratorPtr g;
};

// PyTorch takes any int in [-2^63, 2^64) as a seed; negative ones wrap to 64 bits.
uint64_t ToSeed(nb::handle h) {
  OF_CHECK_TYPE(PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr()))
      << "manual_seed expected an int seed, got " << nb::inst_name(h).c_str();
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    long long s = PyLong_AsLongLong(i.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      OF_THROW(kValue) << "Overflow when unpacking long long: a seed must be in [-2^63, 2^64)";
    }
    u = static_cast<unsigned long long>(s);
  }
  return u;
}

nb::object StateTensor(const Generator& g) {
  const std::vector<uint8_t> s = g.GetState();
  Tensor t = Empty(DimVector{int64_t(s.size())}, DType::kUInt8);
  std::memcpy(t.raw_data(), s.data(), s.size());
  return Wrap(t);
}

void SetState(Generator& g, nb::handle state) {
  OF_CHECK_TYPE(IsTensor(state) && ToTensor(state).dtype() == DType::kUInt8)
      << "RNG state must be a oneflow.ByteTensor (a uint8 tensor)";
  CheckHasData(ToTensor(state));
  Tensor t = Contiguous(ToTensor(state));
  OF_CHECK(t.device().is_cpu()) << "RNG state must be a CPU tensor";
  g.SetState(reinterpret_cast<const uint8_t*>(t.raw_data()), t.numel());
}

// flow.Generator(device): "auto" is upstream OneFlow's generator for any device (Note [Auto
// generator] in core/generator.h); it keeps its state on the host as a CPU generator does.
GeneratorPtr MakeGenerator(nb::handle device) {
  if (nb::isinstance<nb::str>(device) && nb::cast<std::string>(device) == "auto")
    return MakeAutoGenerator();
  const Device d = ToDevice(device);
  CheckDeviceUsable(d);
  OF_CHECK(d.type != DeviceType::kMeta) << "Generator: the meta device has no generator";
  return MakeIntrusive<Generator>(d);
}

// The device string a generator is made from again (pickle, clone_state).
std::string DeviceString(const Generator& g) { return IsAutoGenerator(g) ? "auto" : g.device().str(); }

GeneratorPtr CopyOf(const Generator& g) {
  GeneratorPtr c = IsAutoGenerator(g) ? MakeAutoGenerator() : MakeIntrusive<Generator>(g.device());
  const std::vector<uint8_t> st = g.GetState();
  c->SetState(st.data(), int64_t(st.size()));
  return c;
}

}  // namespace

GeneratorPtr ToGenerator(nb::handle h) {
  if (h.is_none()) return GeneratorPtr();
  if (nb::isinstance<PyGenerator>(h)) return nb::cast<PyGenerator&>(h).g;
  OF_THROW(kType) << "expected a oneflow.Generator for generator=, got "
                  << nb::inst_name(h).c_str();
}

nb::object WrapGenerator(const GeneratorPtr& g) {
  if (!g) return nb::none();
  // The default generator's Python object is flow.default_generator (python/oneflow/_random.py).
  if (g == DefaultGeneratorPtr(Device()))
    return nb::module_::import_("oneflow").attr("default_generator");
  return nb::cast(PyGenerator{g});
}

void BindRandom(nb::module_& m) {
  nb::class_<PyGenerator>(m, "Generator",
                          "A random generator (Philox4x32-10: state = seed + offset).")
      .def(
          "__init__",
          [](PyGenerator* self, nb::handle device) { new (self) PyGenerator{MakeGenerator(device)}; },
          "device"_a = "cpu")
      .def(
          "manual_seed",
          [](nb::handle self, nb::handle seed) {
            nb::cast<PyGenerator&>(self).g->ManualSeed(ToSeed(seed));
            return nb::borrow(self);
          },
          "seed"_a)
      .def("seed", [](PyGenerator& s) { return s.g->Seed(); })
      .def("initial_seed", [](PyGenerator& s) { return s.g->InitialSeed(); })
      .def("get_state", [](PyGenerator& s) { return StateTensor(*s.g); })
      .def(
          "set_state",
          [](nb::handle self, nb::handle state) {
            SetState(*nb::cast<PyGenerator&>(self).g, state);
            return nb::borrow(self);
          },
          "new_state"_a)
      // Counter blocks consumed since the last seeding (PyTorch's Philox get_offset).
      .def("get_offset", [](PyGenerator& s) { return s.g->offset(); })
      // An "auto" generator answers "auto" (upstream's device name for it): it has no one device.
      .def_prop_ro("device",
                   [](PyGenerator& s) -> nb::object {
                     return IsAutoGenerator(*s.g) ? nb::str("auto") : nb::cast(s.g->device());
                   })
      // A new generator with this one's seed and offset (copy.deepcopy and pickle go through
      // the state the same way).
      .def("clone_state", [](PyGenerator& s) { return PyGenerator{CopyOf(*s.g)}; })
      .def("__getstate__",
           [](PyGenerator& s) {
             const std::vector<uint8_t> st = s.g->GetState();
             return nb::make_tuple(DeviceString(*s.g),
                                   nb::bytes(reinterpret_cast<const char*>(st.data()), st.size()));
           })
      .def("__setstate__",
           [](PyGenerator& self, const nb::tuple& t) {
             const std::string d = nb::cast<std::string>(t[0]);
             new (&self) PyGenerator{d == "auto" ? MakeAutoGenerator()
                                                 : MakeIntrusive<Generator>(Device::Parse(d))};
             nb::bytes b = nb::cast<nb::bytes>(t[1]);
             self.g->SetState(reinterpret_cast<const uint8_t*>(b.c_str()), int64_t(b.size()));
           })
      .def("__eq__",
           [](PyGenerator& a, nb::handle b) {
             return nb::isinstance<PyGenerator>(b) && nb::cast<PyGenerator&>(b).g == a.g;
           })
      .def("__hash__", [](PyGenerator& s) { return reinterpret_cast<intptr_t>(s.g.get()); });

  // A new Python object of the default CPU generator (python/oneflow/_random.py keeps one as
  // flow.default_generator; a module attribute made here would outlive the interpreter).
  m.def("_default_generator", [] { return nb::cast(PyGenerator{DefaultGeneratorPtr(Device())}); });
  // flow.cuda's seeding (python/oneflow/cuda): the default generators of the CUDA devices. Bound in
  // every build; without a device they raise CheckDeviceUsable's error (oneflow.cuda checks
  // is_available() first).
  auto cuda_gen = [](nb::handle d) -> Generator& {
    return DefaultGenerator(Device{DeviceType::kCUDA, d.is_none() ? 0 : nb::cast<int>(d)});
  };
  m.def("_cuda_manual_seed", [cuda_gen](nb::handle seed) { cuda_gen(nb::none()).ManualSeed(ToSeed(seed)); });
  m.def("_cuda_manual_seed_all", [cuda_gen](nb::handle seed) {
    for (int i = 0; i < CudaDeviceCount(); ++i) cuda_gen(nb::int_(i)).ManualSeed(ToSeed(seed));
  });
  m.def("_cuda_seed", [cuda_gen] { return cuda_gen(nb::none()).Seed(); });
  m.def("_cuda_seed_all", [cuda_gen] {
    const uint64_t s = cuda_gen(nb::none()).Seed();
    for (int i = 1; i < CudaDeviceCount(); ++i) cuda_gen(nb::int_(i)).ManualSeed(s);
  });
  m.def("_cuda_initial_seed", [cuda_gen] { return cuda_gen(nb::none()).InitialSeed(); });
  m.def("_cuda_get_rng_state", [cuda_gen](nb::handle d) { return StateTensor(cuda_gen(d)); }, "device"_a.none());
  m.def("_cuda_set_rng_state", [cuda_gen](nb::handle state, nb::handle d) { SetState(cuda_gen(d), state); },
        "state"_a, "device"_a.none());
  m.def("manual_seed", [](nb::handle seed) { ManualSeedAll(ToSeed(seed)); }, "seed"_a);
  m.def("initial_seed", [] { return DefaultGenerator(Device()).InitialSeed(); });
  m.def("seed", [] { return DefaultGenerator(Device()).Seed(); });
  m.def("get_rng_state", [] { return StateTensor(DefaultGenerator(Device())); });
  m.def(
      "set_rng_state", [](nb::handle state) { SetState(DefaultGenerator(Device()), state); },
      "new_state"_a);
  // Philox4x32-10 of one counter block under a key (known-answer tests of the generator).
  m.def("_philox4x32", [](uint64_t lo, uint64_t hi, uint64_t key) {
    uint32_t w[4];
    PhiloxFill(key, lo, hi, 1, w);
    return nb::make_tuple(w[0], w[1], w[2], w[3]);
  });
}
OF_BIND(40, BindRandom);

}  // namespace oneflow
