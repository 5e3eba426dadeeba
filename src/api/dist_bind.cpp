// flow._C's stores and process groups (Note [Rendezvous], Note [Process groups], Note [NCCL
// groups]); the public API is python/oneflow/distributed. Gloo's collectives take contiguous CPU
// tensors, NCCL's contiguous CUDA tensors of the group's device (the Python layer stages others);
// both release the GIL while they wait for the other processes.
#include <nanobind/stl/shared_ptr.h>

#include "api/bind_registry.h"
#include "api/dist_bind.h"
#ifdef ONEFLOW_WITH_GLOO
#include "dist/process_group.h"
#endif

namespace oneflow {
namespace {

using dist::ReduceOp;
using dist_bind::Buffer;
using dist_bind::Bytes;
using dist_bind::PyStore;
using Millis = std::chrono::milliseconds;

Millis ToMillis(double seconds) { return Millis(static_cast<int64_t>(seconds * 1000.0)); }

void BindStores(nb::module_& m) {
  nb::class_<PyStore>(m, "_Store")
      .def_static(
          "tcp",
          [](const std::string& host, int port, bool is_server, double timeout) {
            nb::gil_scoped_release r;  // a client may wait for the server to come up
            auto s = std::make_shared<dist::TcpStore>(host, port, is_server, ToMillis(timeout));
            PyStore p;
            p.tcp = s.get();
            p.store = std::move(s);
            return p;
          },
          "host"_a, "port"_a, "is_server"_a, "timeout"_a)
      .def_static("file",
                  [](const std::string& path, double timeout) {
                    PyStore p;
                    p.store = std::make_shared<dist::FileStore>(path, ToMillis(timeout));
                    return p;
                  })
      .def("set",
           [](PyStore& s, const std::string& key, nb::bytes value) {
             std::vector<char> v(value.c_str(), value.c_str() + value.size());
             nb::gil_scoped_release r;
             s.store->set(key, v);
           })
      .def("get",
           [](PyStore& s, const std::string& key) {
             std::vector<char> v;
             {
               nb::gil_scoped_release r;
               v = s.store->get(key);
             }
             return nb::bytes(v.data(), v.size());
           })
      .def("wait",
           [](PyStore& s, const std::vector<std::string>& keys, double timeout) {
             nb::gil_scoped_release r;
             s.store->wait(keys, ToMillis(timeout));
           })
      .def("add",
           [](PyStore& s, const std::string& key, int64_t delta) {
             nb::gil_scoped_release r;
             return s.store->add(key, delta);
           })
      .def("check", [](PyStore& s, const std::string& key) { return s.store->check(key); })
      .def_prop_ro("port", [](PyStore& s) { return s.Tcp("port").port(); });
}

#ifdef ONEFLOW_WITH_GLOO
using dist::ProcessGroup;

void BindGloo(nb::module_& m) {
  m.def("_gloo_available", [] { return true; });
  nb::class_<dist::PendingTransfer>(m, "_PendingTransfer").def("wait", [](dist::PendingTransfer& p) {
    nb::gil_scoped_release r;
    return p.Wait();
  });
  nb::class_<ProcessGroup>(m, "_ProcessGroup")
      .def(
          "__init__",
          [](ProcessGroup* self, PyStore& store, const std::string& prefix, int rank, int size, const std::string& host,
             const std::string& iface, double timeout) {
            nb::gil_scoped_release r;
            new (self) ProcessGroup(*store.store, prefix, rank, size, host, iface, ToMillis(timeout));
          },
          "store"_a, "prefix"_a, "rank"_a, "size"_a, "host"_a, "iface"_a, "timeout"_a)
      .def_prop_ro("rank", &ProcessGroup::rank)
      .def_prop_ro("size", &ProcessGroup::size)
      .def("all_reduce",
           [](ProcessGroup& g, const PyTensor& t, int op) {
             char* p = Buffer(t, "all_reduce");
             {
               nb::gil_scoped_release r;
               g.AllReduce(p, t.numel(), t.dtype(), static_cast<ReduceOp>(op));
             }
             t.BumpVersion();
           })
      .def("all_reduce_async",
           [](ProcessGroup& g, const PyTensor& t, int op) {
             t.BumpVersion();  // (written later, by the queue's worker: Note [Collective queue])
             return g.AllReduceAsync(Buffer(t, "all_reduce"), t.numel(), t.dtype(), static_cast<ReduceOp>(op));
           })
      .def("reduce",
           [](ProcessGroup& g, const PyTensor& t, int op, int root) {
             char* p = Buffer(t, "reduce");
             {
               nb::gil_scoped_release r;
               g.Reduce(p, t.numel(), t.dtype(), static_cast<ReduceOp>(op), root);
             }
             t.BumpVersion();
           })
      .def("broadcast",
           [](ProcessGroup& g, const PyTensor& t, int root) {
             char* p = Buffer(t, "broadcast");
             {
               nb::gil_scoped_release r;
               g.Broadcast(p, Bytes(t), root);
             }
             t.BumpVersion();
           })
      .def("all_gather",
           [](ProcessGroup& g, const PyTensor& in, const PyTensor& out) {
             OF_CHECK(Bytes(out) == Bytes(in) * g.size()) << "distributed.all_gather: internal error: output size";
             char *a = Buffer(in, "all_gather"), *b = Buffer(out, "all_gather");
             nb::gil_scoped_release r;
             g.AllGather(a, b, Bytes(in));
           })
      .def(
          "gather",
          [](ProcessGroup& g, const PyTensor& in, nb::handle out, int root) {
            char* a = Buffer(in, "gather");
            char* b = nullptr;
            if (!out.is_none()) {
              const Tensor& o = ToTensor(out);
              OF_CHECK(Bytes(o) == Bytes(in) * g.size()) << "distributed.gather: internal error: output size";
              b = Buffer(o, "gather");
            }
            nb::gil_scoped_release r;
            g.GatherTo(a, b, Bytes(in), root);
          },
          "input"_a, "output"_a.none(), "root"_a)
      .def(
          "scatter",
          [](ProcessGroup& g, nb::handle inputs, const PyTensor& out, int root) {
            std::vector<const void*> ptrs;
            if (!inputs.is_none())
              for (const Tensor& t : ToTensorList(inputs)) {
                OF_CHECK(Bytes(t) == Bytes(out)) << "distributed.scatter: internal error: input size";
                ptrs.push_back(Buffer(t, "scatter"));
              }
            char* b = Buffer(out, "scatter");
            nb::gil_scoped_release r;
            g.ScatterFrom(ptrs, b, Bytes(out), root);
          },
          "inputs"_a.none(), "output"_a, "root"_a)
      .def("all_to_all",
           [](ProcessGroup& g, const PyTensor& in, const PyTensor& out) {
             OF_CHECK(Bytes(in) == Bytes(out) && Bytes(in) % g.size() == 0)
                 << "distributed.all_to_all: internal error: sizes";
             char *a = Buffer(in, "all_to_all"), *b = Buffer(out, "all_to_all");
             nb::gil_scoped_release r;
             g.AllToAll(a, b, Bytes(in) / g.size());
           })
      .def("all_gather_v",  // counts in elements, one per member
           [](ProcessGroup& g, const PyTensor& in, const PyTensor& out, std::vector<int64_t> counts) {
             const int64_t e = in.element_size();
             OF_CHECK(static_cast<int64_t>(counts.size()) == g.size() && counts[g.rank()] == in.numel() &&
                      out.element_size() == e)
                 << "distributed.all_gather_v: internal error: counts";
             int64_t total = 0;
             for (int64_t& c : counts) total += c, c *= e;
             OF_CHECK(out.numel() == total) << "distributed.all_gather_v: internal error: output size";
             char *a = Buffer(in, "all_gather_v"), *b = Buffer(out, "all_gather_v");
             nb::gil_scoped_release r;
             g.AllGatherV(a, b, counts);
           })
      .def("all_to_all_v",  // counts in elements, one per member
           [](ProcessGroup& g, const PyTensor& in, std::vector<int64_t> in_counts, const PyTensor& out,
              std::vector<int64_t> out_counts) {
             const int64_t e = in.element_size();
             int64_t tin = 0, tout = 0;
             for (int64_t& c : in_counts) tin += c, c *= e;
             for (int64_t& c : out_counts) tout += c, c *= e;
             OF_CHECK(tin == in.numel() && tout == out.numel() && out.element_size() == e)
                 << "distributed.all_to_all_v: internal error: counts";
             char *a = Buffer(in, "all_to_all_v"), *b = Buffer(out, "all_to_all_v");
             nb::gil_scoped_release r;
             g.AllToAllV(a, in_counts, b, out_counts);
           })
      .def("isend",
           [](ProcessGroup& g, const PyTensor& t, int dst, uint32_t tag) {
             return g.StartSend(Buffer(t, "send"), Bytes(t), t.dtype(), dst, tag);
           })
      .def("irecv",
           [](ProcessGroup& g, const PyTensor& t, int src, uint32_t tag) {
             t.BumpVersion();
             return g.StartRecv(Buffer(t, "recv"), Bytes(t), t.dtype(), src, tag);
           })
      .def("barrier", [](ProcessGroup& g) {
        nb::gil_scoped_release r;
        g.Barrier();
      });
}

#else  // built without Gloo

void BindGloo(nb::module_& m) {
  m.def("_gloo_available", [] { return false; });
}

#endif


}  // namespace

void BindDist(nb::module_& m) {
  BindStores(m);
  BindGloo(m);
}
OF_BIND(120, BindDist);

}  // namespace oneflow
