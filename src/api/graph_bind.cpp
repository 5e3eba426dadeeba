// Python access to lazy tracing (src/graph/lazy.h), driven by python/oneflow/nn/graph/.
#include "api/bind_registry.h"
#include "api/convert.h"
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>

#include <cstring>

#include "core/allocator.h"
#include "graph/free_writes.h"
#include "graph/lazy.h"
#include "graph/memory_plan.h"
#include "graph/passes.h"
#include "graph/serialize.h"

namespace oneflow {

namespace {

// lazy::SetLocationHook: the file and line of the innermost Python frame outside the oneflow
// package (the user's code calling the op; a module's forward when the op is in it). Walks a few
// frames per recorded op, only while a graph traces.
std::string UserLocation() {
  static const std::string package = [] {
    std::string f = nb::cast<std::string>(nb::module_::import_("oneflow").attr("__file__"));
    return f.substr(0, f.rfind('/') + 1);
  }();
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  std::string out;
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    PyObject* name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
    const char* file = name ? PyUnicode_AsUTF8(name) : nullptr;
    if (file && std::strncmp(file, package.data(), package.size()) != 0) {
      out = std::string(file) + ":" + std::to_string(PyFrame_GetLineNumber(f));
    }
    if (!file) PyErr_Clear();
    Py_XDECREF(name);
    Py_DECREF(code);
    if (!out.empty()) break;
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return out;
}

}  // namespace

void BindGraph(nb::module_& m) {
  lazy::SetLocationHook(&UserLocation);
  using lazy::Program;
  using lazy::Tracer;
  nb::class_<Program::Execution>(m, "_GraphExecution")
      .def("run", &Program::Execution::Run, "Runs to the next barrier (its id) or the end (-1).")
      .def("slot", [](const Program::Execution& e, int s) { return Wrap(e.Slot(s)); })
      .def("set_slot", [](Program::Execution& e, int s, nb::handle t) { e.SetSlot(s, ToTensor(t)); });
  nb::class_<Program>(m, "_GraphProgram")
      .def("describe", &Program::Describe)
      .def_rw("run_grad", &Program::run_grad, "Nodes run with grad mode on (a Python backward step needs it).")
      .def_prop_ro("num_nodes", [](const Program& p) { return p.nodes.size(); })
      .def("nodes", [](const Program& p) {
        std::vector<std::pair<std::string, std::string>> out;
        for (const lazy::Node& n : p.nodes) out.emplace_back(n.scope, p.NodeText(n));
        return out;
      }, "(module scope, text) of each node.")
      .def("reads", [](const Program& p) {
        std::vector<std::vector<int>> out;
        for (const lazy::Node& n : p.nodes) {
          std::vector<int> slots;
          for (const lazy::SlotRef& r : n.refs) slots.push_back(r.slot);
          out.push_back(std::move(slots));
        }
        return out;
      }, "The slots each node reads (a Python step's: its inputs); the QAT pass of job functions "
         "counts a blob's consumers with it (python/oneflow/_legacy/qat.py).")
      .def_prop_ro("pinned", [](const Program& p) { return p.pinned; },
                   "Slots kept to the end: outputs, watched blobs, a Python step's arguments.")
      .def("optimize", [](Program& p, bool simplify, bool fold, bool cse, bool dce, bool fuse, bool add_to_output,
                          bool fuse_pointwise, bool grad, bool drop_grad_writes) {
        lazy::PassStats st =
            lazy::Optimize(p, {simplify, fold, cse, dce, fuse, add_to_output, fuse_pointwise, grad, drop_grad_writes});
        return std::vector<std::pair<std::string, int>>{
            {"simplified", st.simplified}, {"folded", st.folded}, {"merged", st.merged}, {"removed", st.removed},
            {"fused", st.fused}, {"pointwise", st.pointwise}, {"absorbed", st.absorbed}, {"dropped", st.dropped}};
      }, "simplify"_a, "fold"_a, "cse"_a, "dce"_a, "fuse"_a = true, "add_to_output"_a = true, "fuse_pointwise"_a = true,
         "grad"_a = false, "drop_grad_writes"_a = true, "Runs the passes (src/graph/passes.h); their counts.")
      .def("copy_free_writes", [](Program& p, nb::handle state, nb::handle returned, bool training) {
        auto tensors = [](nb::handle seq) {
          std::vector<Tensor> ts;
          for (nb::handle h : nb::borrow<nb::sequence>(seq)) ts.push_back(IsTensor(h) ? ToTensor(h) : Tensor());
          return ts;
        };
        return lazy::CopyFreeWrites(p, tensors(state), tensors(returned), training);
      }, "state"_a, "returned"_a, "training"_a,
         "Note [Writes to free tensors] (src/graph/free_writes.h): per returned captured tensor, the slot "
         "of its per-call copy or -1.")
      .def("memory_plan", [](const Program& p) {
        lazy::MemoryPlan plan = lazy::PlanMemory(p);
        nb::dict d;
        d["arena_bytes"] = plan.arena_bytes;
        d["total_bytes"] = plan.total_bytes;
        nb::list blocks;
        for (const lazy::MemoryBlock& b : plan.blocks) blocks.append(nb::make_tuple(b.slot, b.bytes, b.offset, b.first, b.last));
        d["blocks"] = blocks;
        return d;
      }, "The arena plan of the intermediates (src/graph/memory_plan.h): blocks (slot, bytes, offset, first, last).")
      .def("place_in_arena", [](Program& p) { lazy::PlaceInArena(p); },
           "Plans the step's arena (memory_plan.h PlaceInArena): the executor then offers each planned "
           "node's kernel its output's bytes in it.")
      .def_prop_ro("arena_bytes", [](const Program& p) {
        auto plan = lazy::ArenaPlanOf(&p);
        return plan ? plan->bytes : int64_t(0);
      })
      .def("arena_outputs", [](const Program& p) {
        auto plan = lazy::ArenaPlanOf(&p);
        std::vector<std::pair<int64_t, int64_t>> out = plan ? plan->outputs : std::vector<std::pair<int64_t, int64_t>>{};
        out.resize(p.nodes.size(), {-1, 0});
        return out;
      }, "Per node: (offset, bytes) of its output in the arena, or (-1, 0).")
      .def("save", [](const Program& p) {
        lazy::SavedProgram s = lazy::SaveProgram(p);
        nb::list tensors;
        for (const Tensor& t : s.tensors) tensors.append(Wrap(t));
        return nb::make_tuple(nb::bytes(s.bytes.data(), s.bytes.size()), tensors, s.names);
      }, "(bytes, tensors, names): the program without tensor data, the tensors it holds, their "
         "parameter/buffer names or '' (Note [Saved programs], src/graph/serialize.h).")
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
      .def("output", &Tracer::Output)
      .def("set_scope", &Tracer::SetScope)
      .def_prop_ro("scope", &Tracer::scope)
      .def("name", [](Tracer& t, nb::handle x, std::string name) {
        if (IsTensor(x)) t.Name(ToTensor(x), std::move(name));
      })
      .def("backward", [](Tracer& t, nb::handle loss, nb::handle seed) -> nb::object {
        // Note [Backward nodes]: None when the backward became nodes, else why it cannot.
        std::string why;
        if (t.Backward(ToTensor(loss), ToTensor(seed), &why)) return nb::none();
        return nb::str(why.c_str());
      })
      .def("set_autograd", &Tracer::SetAutograd)
      .def("scalar_input", [](Tracer& t, const std::string& param, nb::handle value) { t.ScalarInput(param, ToTensor(value)); },
           "Note [Scalar inputs]: the last node's float parameter read from a 0-dim float64 tensor per run.")
      .def("traced_grad", [](const Tracer& t, nb::handle leaf) -> nb::object {
        Tensor g = IsTensor(leaf) ? t.TracedGrad(ToTensor(leaf)) : Tensor();
        return g.defined() ? Wrap(g) : nb::none();
      }, "The lazy gradient the traced backward accumulates into a leaf (one accumulation), or None.")
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
  m.def("_graph_program_load", [](nb::bytes bytes, nb::handle tensors, std::vector<std::string> names) {
    std::vector<Tensor> ts;
    for (nb::handle h : nb::borrow<nb::sequence>(tensors)) ts.push_back(ToTensor(h));
    return lazy::LoadProgram(std::string(bytes.c_str(), bytes.size()), ts, names);
  }, "A program saved by _GraphProgram.save, reading `tensors` (named `names`) in place of the saved ones.");
  m.def("_cpu_alloc_calls", &CpuAllocCalls, "CPU allocator calls so far (nn.Graph's arena tests count them).");
  m.def("_graph_arena_placements", &lazy::ArenaPlacements, "Node outputs written into a graph's arena so far.");
  m.def("_graph_tracing", [] { return lazy::Active() != nullptr; }, "A tracer records on this thread now.");
  m.def("_to_meta", [](nb::handle t) { return Wrap(ToMeta(ToTensor(t))); });
  m.def("_set_global_dispatcher", [m](nb::handle fn) { SetGlobalDispatcher(m, fn); },
        "The Python function that runs table ops on global tensors (Note [Global arguments]).");
  m.def("_is_lazy", [](nb::handle x) { return IsTensor(x) && lazy::IsLazy(ToTensor(x)); });
}
OF_BIND(30, BindGraph);

}  // namespace oneflow
