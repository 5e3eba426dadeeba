// Python access to lazy tracing (src/graph/lazy.h), driven by python/oneflow/nn/graph/.
#include "api/convert.h"
#include <nanobind/stl/shared_ptr.h>

#include "graph/lazy.h"

namespace oneflow {

void BindGraph(nb::module_& m) {
  using lazy::Program;
  using lazy::Tracer;
  nb::class_<Program::Execution>(m, "_GraphExecution")
      .def("run", &Program::Execution::Run, "Runs to the next barrier (its id) or the end (-1).")
      .def("slot", [](const Program::Execution& e, int s) { return Wrap(e.Slot(s)); })
      .def("set_slot", [](Program::Execution& e, int s, nb::handle t) { e.SetSlot(s, ToTensor(t)); });
  nb::class_<Program>(m, "_GraphProgram")
      .def("describe", &Program::Describe)
      .def_prop_ro("num_nodes", [](const Program& p) { return p.nodes.size(); })
      .def("start", [](std::shared_ptr<Program> p, nb::handle inputs) {
        std::vector<Tensor> ts;
        for (nb::handle h : nb::borrow<nb::sequence>(inputs)) ts.push_back(ToTensor(h));
        return new Program::Execution(std::move(p), std::move(ts));
      }, nb::rv_policy::take_ownership);
  nb::class_<Tracer>(m, "_GraphTracer")
      .def("__init__", [](Tracer* self, nb::handle device) { new (self) Tracer(ToDevice(device)); })
      .def("begin", &Tracer::Begin)
      .def("end", &Tracer::End)
      .def("input", [](Tracer& t, nb::handle like) { return Wrap(t.Input(ToTensor(like))); })
      .def("slot_of", [](const Tracer& t, nb::handle x) { return IsTensor(x) ? t.SlotOf(ToTensor(x)) : -1; })
      .def("barrier", &Tracer::Barrier, "ins"_a = std::vector<int>{}, "outs"_a = std::vector<int>{})
      .def("add_slot", [](Tracer& t, nb::handle meta) { return t.AddSlot(ToTensor(meta)); })
      .def("pin", &Tracer::Pin)
      .def("finish", &Tracer::Finish);
  // The signature of a call whose arguments are all tensors (sizes, dtype, device, requires_grad)
  // as bytes, or None when one is not a tensor: nn.Graph's cache key on its fast path.
  m.def("_graph_key", [](nb::args args) -> nb::object {
    std::string key;
    for (nb::handle h : args) {
      if (!IsTensor(h)) return nb::none();
      const Tensor& t = ToTensor(h);
      int64_t head[4] = {t.dim(), static_cast<int64_t>(t.dtype()),
                         static_cast<int64_t>(t.device().type) * 1024 + t.device().index, t.requires_grad()};
      key.append(reinterpret_cast<const char*>(head), sizeof(head));
      key.append(reinterpret_cast<const char*>(t.sizes().data()), t.dim() * sizeof(int64_t));
    }
    return nb::bytes(key.data(), key.size());
  });
  m.def("_graph_tracing", [] { return lazy::Active() != nullptr; }, "A tracer records on this thread now.");
  m.def("_to_meta", [](nb::handle t) { return Wrap(ToMeta(ToTensor(t))); });
  m.def("_set_global_dispatcher", [m](nb::handle fn) { SetGlobalDispatcher(m, fn); },
        "The Python function that runs table ops on global tensors (Note [Global arguments]).");
  m.def("_is_lazy", [](nb::handle x) { return IsTensor(x) && lazy::IsLazy(ToTensor(x)); });
}

}  // namespace oneflow
