// A group of processes and the collectives between them, on Gloo (docs/architecture.md §4 dist).
//
// Note [Process groups]: a ProcessGroup is one Gloo context: every member has a TCP pair to every
// other, set up once through the store (Note [Rendezvous]). The collectives work on contiguous
// host buffers; the Python layer (oneflow/distributed) gives them contiguous CPU tensors and
// copies results back into the caller's tensors, so a strided or CUDA tensor costs one copy each
// way. Everything is synchronous, like the CPU's kernels (docs/architecture.md §3): a collective returns when
// this process's part of it is done, and the bindings release the GIL while it waits.
// Reductions run in the tensor's own dtype (16-bit floats through float, as the pointwise engine).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "dist/reduce_op.h"

namespace gloo {
class Context;
namespace transport {
class UnboundBuffer;
}
}  // namespace gloo

namespace oneflow::dist {

class Store;

// A point-to-point transfer in flight (isend / irecv). Gloo moves the bytes once both sides have
// posted, so the sender's wait is deferred to Wait(): a ring of isend-then-irecv completes.
//
// Note [Checked transfers]: a payload larger than the receiver's buffer makes Gloo abort the
// process from its I/O thread. So every message is preceded by a header (its byte count and
// dtype) on a slot of its own; the receive waits for the header on a thread of its own (so that
// the payload's receive is posted without the caller's wait, as the ring above needs), then takes
// the payload into its buffer when the header matches, else into a scratch buffer (the connection
// must be drained for later messages), and Wait() raises a RuntimeError naming both sides.
class PendingTransfer {
 public:
  explicit PendingTransfer(std::function<int()> finish) : finish_(std::move(finish)) {}
  ~PendingTransfer();
  int Wait();  // the peer's rank (the sender's, for a receive from any rank)

 private:
  std::function<int()> finish_;
  bool done_ = false;
  int peer_ = -1;
};

// Note [Collective queue]: a group's collectives run one after the other on a worker thread of
// the group, in the order they were called: the synchronous ones wait for their turn and their
// end, AllReduceAsync returns at once. So a bucket's all-reduce can run while backward goes on
// (DistributedDataParallel), and Gloo never sees two collectives of one context at once (they
// would share its slots). Point-to-point transfers have slots of their own and bypass the queue.
class ProcessGroup {
 public:
  // Joins the group of `size` processes meeting under `prefix` in `store`; `host` (or `iface`, a
  // network interface's name) is the address the others reach this process at.
  ProcessGroup(Store& store, const std::string& prefix, int rank, int size,
               const std::string& host, const std::string& iface, std::chrono::milliseconds timeout);
  ~ProcessGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // In place: every member ends with the reduction of everyone's `data` (n elements of `dtype`).
  void AllReduce(void* data, int64_t n, DType dtype, ReduceOp op);
  // The reduction lands in root's `data`; the others' buffers are left as they were.
  void Reduce(void* data, int64_t n, DType dtype, ReduceOp op, int root);
  void Broadcast(void* data, int64_t nbytes, int root);
  // out holds size() * nbytes: member i's `in` at offset i * nbytes.
  void AllGather(const void* in, void* out, int64_t nbytes);
  void GatherTo(const void* in, void* out, int64_t nbytes, int root);  // out used on root only
  // root sends inputs[i] (nbytes each) to member i.
  void ScatterFrom(const std::vector<const void*>& inputs, void* out, int64_t nbytes, int root);
  // Block i of `in` (nbytes each) goes to member i; block j of `out` comes from member j.
  void AllToAll(const void* in, void* out, int64_t nbytes);
  // The uneven forms (Gloo's allgatherv / alltoallv), counts in bytes per member: out holds
  // member i's `in` (counts[i] bytes, counts[rank()] here) at the sum of the counts before i.
  void AllGatherV(const void* in, void* out, const std::vector<int64_t>& counts);
  // Block i of `in` (in_counts[i] bytes, packed in member order) goes to member i; block j of
  // `out` (out_counts[j] bytes) comes from member j.
  void AllToAllV(const void* in, const std::vector<int64_t>& in_counts, void* out,
                 const std::vector<int64_t>& out_counts);
  // The buffer must stay alive until Wait() returns. src < 0: from any member.
  std::shared_ptr<PendingTransfer> StartSend(const void* data, int64_t nbytes, DType dtype, int dst, uint32_t tag);
  std::shared_ptr<PendingTransfer> StartRecv(void* data, int64_t nbytes, DType dtype, int src, uint32_t tag);
  void Barrier();
  // AllReduce queued behind the group's other collectives; `data` must live until Wait().
  std::shared_ptr<PendingTransfer> AllReduceAsync(void* data, int64_t n, DType dtype, ReduceOp op);

 private:
  struct Queue;
  void AllReduceNow(void* data, int64_t n, DType dtype, ReduceOp op);
  std::shared_future<void> Enqueue(std::function<void()> job);
  void RunQueued(std::function<void()> job) { Enqueue(std::move(job)).get(); }

  void CheckPeer(int r, const char* op, const char* what) const;

  std::shared_ptr<gloo::Context> ctx_;
  std::unique_ptr<Queue> queue_;
  int rank_, size_;
  std::chrono::milliseconds timeout_;
};

}  // namespace oneflow::dist
