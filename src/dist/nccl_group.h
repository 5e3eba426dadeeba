// A process group's collectives on CUDA tensors, on NCCL (Note [NCCL groups]).
//
// Note [NCCL groups]: a group's CUDA collectives use one NCCL communicator per device, made the
// first time a collective meets a CUDA tensor of that device (every member gets there together,
// as for any collective): rank 0 draws NCCL's unique id and publishes it in the group's store
// (Note [Rendezvous]). The calls are enqueued on the device's compute stream (runtime.h), like the
// kernels around them: nothing waits on the host, and later kernels see the results in stream
// order. Point-to-point transfers are stream operations too, so isend / irecv complete when
// enqueued (NCCL has no receive from any rank: the source must be given). Reductions: NCCL's sum,
// product, min, max (bool as max / min); the bitwise ones are refused. Built only in CUDA builds
// that found NCCL (the nvidia-nccl Python package or the toolkit); otherwise NcclBuilt() is false
// and CUDA tensors travel through host memory and Gloo.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "dist/reduce_op.h"

namespace oneflow::dist {

class Store;

bool NcclBuilt();

class NcclGroup {
 public:
  NcclGroup(Store& store, const std::string& prefix, int rank, int size, int device);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }

  // The same contracts as ProcessGroup's (process_group.h), on buffers of this device.
  void AllReduce(void* data, int64_t n, DType dtype, ReduceOp op);
  void Reduce(void* data, int64_t n, DType dtype, ReduceOp op, int root);
  void Broadcast(void* data, int64_t nbytes, int root);
  void AllGather(const void* in, void* out, int64_t nbytes);
  void GatherTo(const void* in, void* out, int64_t nbytes, int root);
  void ScatterFrom(const std::vector<const void*>& inputs, void* out, int64_t nbytes, int root);
  void AllToAll(const void* in, void* out, int64_t nbytes);
  void Send(const void* data, int64_t nbytes, int dst);
  void Recv(void* data, int64_t nbytes, int src);
  // Returns when every member has reached it (a one-element all-reduce, then a stream sync).
  void Barrier();

 private:
  void* comm_ = nullptr;  // ncclComm_t
  int rank_, size_, device_;
};

}  // namespace oneflow::dist
