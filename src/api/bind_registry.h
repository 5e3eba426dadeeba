// Note [Binding registry]: how flow._C is assembled. module.cpp makes the module's types (dtype,
// device, the Tensor class) and binds the Tensor class's own methods and the op entries in a
// fixed order (hand-written overloads registered before the generated ones win). Every other
// binding file registers its Bind function here, at load, with OF_BIND(rank, Function), and the
// module init runs them in rank order (then by name): a file added to the module (src/api, or
// src/cuda for the CUDA-only ones, which only a CUDA build compiles) binds itself, and no list
// names it. The rank keeps the order in which the bindings were run before the registry; a
// binding that defines nothing another one defines may take any rank.
#pragma once
#include <nanobind/nanobind.h>

#include <string>
#include <vector>

namespace oneflow {

class PyTensor;

namespace bind {

using TensorClass = nanobind::class_<PyTensor>;
using Binder = void (*)(nanobind::module_& m, TensorClass& cls);

struct Registrar {
  Registrar(int rank, const char* name, Binder fn);
};

// Runs the registered bindings on the module, in order (module init: once).
void RunAll(nanobind::module_& m, TensorClass& cls);

// The registered bindings' names, in the order they run (tests/test_binding_registry.py).
std::vector<std::string> Names();

// The two forms of a Bind function: (module) or (module, the Tensor class).
inline void Call(void (*fn)(nanobind::module_&), nanobind::module_& m, TensorClass&) { fn(m); }
inline void Call(void (*fn)(nanobind::module_&, TensorClass&), nanobind::module_& m, TensorClass& cls) {
  fn(m, cls);
}
inline void Call(void (*fn)(TensorClass&), nanobind::module_&, TensorClass& cls) { fn(cls); }

}  // namespace bind
}  // namespace oneflow

// Registers `fn` (a function of this file, declared before the macro) as one binding of flow._C.
#define OF_BIND(rank, fn)                                                                              \
  static const ::oneflow::bind::Registrar of_bind_registrar_##fn(                                      \
      rank, #fn, [](nanobind::module_& m, ::oneflow::bind::TensorClass& cls) { ::oneflow::bind::Call(fn, m, cls); })
