// flow._C._NcclGroup (Note [NCCL groups]): oneflow.distributed's collectives on CUDA tensors. Only a
// CUDA build compiles this file (into the module: it registers itself, Note [Binding registry]);
// without it flow._C has no _nccl_available, which python/oneflow/distributed reads as False.
#include <nanobind/stl/shared_ptr.h>

#include "api/bind_registry.h"
#include "api/dist_bind.h"
#include "dist/nccl_group.h"

namespace oneflow {

using dist::NcclGroup;
using dist::ReduceOp;
using dist_bind::Buffer;
using dist_bind::Bytes;
using dist_bind::PyStore;

// The same methods as _ProcessGroup's, on CUDA tensors of the group's device; point-to-point
// calls are enqueued (send / recv: the Python side returns completed works).
void BindNccl(nb::module_& m) {
  m.def("_nccl_available", [] { return dist::NcclBuilt(); });
  constexpr DeviceType kCUDA = DeviceType::kCUDA;
  nb::class_<NcclGroup>(m, "_NcclGroup")
      .def(
          "__init__",
          [](NcclGroup* self, PyStore& store, const std::string& prefix, int rank, int size, int device) {
            nb::gil_scoped_release r;
            new (self) NcclGroup(*store.store, prefix, rank, size, device);
          },
          "store"_a, "prefix"_a, "rank"_a, "size"_a, "device"_a)
      .def_prop_ro("rank", &NcclGroup::rank)
      .def_prop_ro("size", &NcclGroup::size)
      .def_prop_ro("device", &NcclGroup::device)
      .def("all_reduce",
           [](NcclGroup& g, const PyTensor& t, int op) {
             g.AllReduce(Buffer(t, "all_reduce", kCUDA), t.numel(), t.dtype(), static_cast<ReduceOp>(op));
             t.BumpVersion();
           })
      .def("reduce",
           [](NcclGroup& g, const PyTensor& t, int op, int root) {
             g.Reduce(Buffer(t, "reduce", kCUDA), t.numel(), t.dtype(), static_cast<ReduceOp>(op), root);
             t.BumpVersion();
           })
      .def("broadcast",
           [](NcclGroup& g, const PyTensor& t, int root) {
             g.Broadcast(Buffer(t, "broadcast", kCUDA), Bytes(t), root);
             t.BumpVersion();
           })
      .def("all_gather",
           [](NcclGroup& g, const PyTensor& in, const PyTensor& out) {
             g.AllGather(Buffer(in, "all_gather", kCUDA), Buffer(out, "all_gather", kCUDA), Bytes(in));
           })
      .def(
          "gather",
          [](NcclGroup& g, const PyTensor& in, nb::handle out, int root) {
            char* b = out.is_none() ? nullptr : Buffer(ToTensor(out), "gather", kCUDA);
            g.GatherTo(Buffer(in, "gather", kCUDA), b, Bytes(in), root);
          },
          "input"_a, "output"_a.none(), "root"_a)
      .def(
          "scatter",
          [](NcclGroup& g, nb::handle inputs, const PyTensor& out, int root) {
            std::vector<const void*> ptrs;
            if (!inputs.is_none())
              for (const Tensor& t : ToTensorList(inputs)) ptrs.push_back(Buffer(t, "scatter", kCUDA));
            g.ScatterFrom(ptrs, Buffer(out, "scatter", kCUDA), Bytes(out), root);
          },
          "inputs"_a.none(), "output"_a, "root"_a)
      .def("all_to_all",
           [](NcclGroup& g, const PyTensor& in, const PyTensor& out) {
             g.AllToAll(Buffer(in, "all_to_all", kCUDA), Buffer(out, "all_to_all", kCUDA), Bytes(in) / g.size());
           })
      .def("send", [](NcclGroup& g, const PyTensor& t, int dst) { g.Send(Buffer(t, "send", kCUDA), Bytes(t), dst); })
      .def("recv",
           [](NcclGroup& g, const PyTensor& t, int src) {
             g.Recv(Buffer(t, "recv", kCUDA), Bytes(t), src);
             t.BumpVersion();
           })
      .def("barrier", [](NcclGroup& g) {
        nb::gil_scoped_release r;
        g.Barrier();
      });
}

OF_BIND(121, BindNccl);

}  // namespace oneflow
