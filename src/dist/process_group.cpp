// Note [Process groups] (process_group.h).
#include "dist/process_group.h"

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>
#include <type_traits>

#include "core/error.h"
#include "dist/store.h"

namespace oneflow::dist {
namespace {

// Gloo's view of our store (Note [Rendezvous]).
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(dist::Store& s) : s_(s) {}
  void set(const std::string& key, const std::vector<char>& data) override { s_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return s_.get(key); }
  void wait(const std::vector<std::string>& keys) override { s_.wait(keys, s_.timeout()); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    s_.wait(keys, timeout);
  }

 private:
  dist::Store& s_;
};

// Gloo's reduce functions: c[i] = a[i] (op) b[i], arithmetic in OpMath (float for 16-bit floats).
// bool reduces as logic: sum / max = or, product / min = and (PyTorch's ProcessGroupGloo too).
template <typename T, ReduceOp kOp>
void Combine(void* c_, const void* a_, const void* b_, size_t n) {
  T* c = static_cast<T*>(c_);
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  using M = OpMath<T>;
  for (size_t i = 0; i < n; ++i) {
    M x = static_cast<M>(a[i]), y = static_cast<M>(b[i]);
    if constexpr (std::is_same_v<T, bool>) {
      c[i] = (kOp == ReduceOp::kSum || kOp == ReduceOp::kMax || kOp == ReduceOp::kBor) ? (x || y)
             : kOp == ReduceOp::kBxor                                                    ? (x != y)
                                                                                         : (x && y);
    } else if constexpr (kOp == ReduceOp::kSum) {
      c[i] = static_cast<T>(x + y);
    } else if constexpr (kOp == ReduceOp::kProduct) {
      c[i] = static_cast<T>(x * y);
    } else if constexpr (kOp == ReduceOp::kMin || kOp == ReduceOp::kMax) {
      bool take_x = (kOp == ReduceOp::kMin) ? !(y < x) : !(x < y);
      if constexpr (std::is_floating_point_v<M>) take_x = take_x || std::isnan(x);  // nan wins, as flow.minimum
      c[i] = take_x ? a[i] : b[i];
    } else if constexpr (std::is_integral_v<M>) {
      c[i] = static_cast<T>(kOp == ReduceOp::kBand ? (x & y) : kOp == ReduceOp::kBor ? (x | y) : (x ^ y));
    }
  }
}

template <typename T>
gloo::AllreduceOptions::Func PickCombine(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return &Combine<T, ReduceOp::kSum>;
    case ReduceOp::kProduct: return &Combine<T, ReduceOp::kProduct>;
    case ReduceOp::kMin: return &Combine<T, ReduceOp::kMin>;
    case ReduceOp::kMax: return &Combine<T, ReduceOp::kMax>;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::kBand) return &Combine<T, ReduceOp::kBand>;
    if (op == ReduceOp::kBor) return &Combine<T, ReduceOp::kBor>;
    return &Combine<T, ReduceOp::kBxor>;
  }
  OF_THROW(kType) << "distributed: the bitwise reductions (BAND, BOR, BXOR) need an integer or bool tensor, got "
                  << DTypeName(DTypeOf<T>::value);
}

// Refuses a reduction the dtype has not (before anything is queued).
void PickCombineFor(DType dtype, ReduceOp op) {
  DispatchAll(dtype, [&](auto tag) { PickCombine<typename decltype(tag)::type>(op); });
}

// Runs one Gloo call, turning its exceptions (a peer gone, a timeout) into our RuntimeError.
template <typename F>
void Guarded(const char* op, F&& f) {
  try {
    f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    OF_THROW(kRuntime) << "distributed." << op << ": " << e.what();
  }
}

}  // namespace

ProcessGroup::ProcessGroup(Store& store, const std::string& prefix, int rank, int size,
                           const std::string& host, const std::string& iface, std::chrono::milliseconds timeout)
    : rank_(rank), size_(size), timeout_(timeout) {
  OF_CHECK_VALUE(size >= 1 && rank >= 0 && rank < size)
      << "distributed: rank " << rank << " is outside a group of " << size << " processes";
  gloo::transport::tcp::attr attr;
  if (!iface.empty()) attr.iface = iface;
  else attr.hostname = host;
  Guarded("init_process_group", [&] {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(timeout);
    GlooStore adapted(store);
    gloo::rendezvous::PrefixStore prefixed(prefix, adapted);
    ctx->connectFullMesh(prefixed, device);
    ctx_ = std::move(ctx);
  });
  queue_ = std::make_unique<Queue>();
}

// Note [Collective queue].
struct ProcessGroup::Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::packaged_task<void()>> jobs;
  bool stop = false;
  std::thread worker;

  Queue() {
    worker = std::thread([this] {
      for (;;) {
        std::packaged_task<void()> job;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [this] { return stop || !jobs.empty(); });
          if (jobs.empty()) return;  // stopping, everything done
          job = std::move(jobs.front());
          jobs.pop_front();
        }
        job();  // (its exception goes to its future)
      }
    });
  }
  ~Queue() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    worker.join();
  }
};

std::shared_future<void> ProcessGroup::Enqueue(std::function<void()> job) {
  std::packaged_task<void()> task(std::move(job));
  std::shared_future<void> done = task.get_future().share();
  {
    std::lock_guard<std::mutex> lock(queue_->mu);
    queue_->jobs.push_back(std::move(task));
  }
  queue_->cv.notify_one();
  return done;
}

ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<PendingTransfer> ProcessGroup::AllReduceAsync(void* data, int64_t n, DType dtype, ReduceOp op) {
  if (n == 0 || size_ == 1) return std::make_shared<PendingTransfer>([] { return -1; });
  (void)PickCombineFor(dtype, op);  // argument errors now, not at Wait()
  std::shared_future<void> done = Enqueue([this, data, n, dtype, op] { AllReduceNow(data, n, dtype, op); });
  return std::make_shared<PendingTransfer>([done] {
    done.get();
    return -1;
  });
}

void ProcessGroup::CheckPeer(int r, const char* op, const char* what) const {
  OF_CHECK_VALUE(r >= 0 && r < size_) << "distributed." << op << ": " << what << " " << r
                                      << " is not a rank of this group of " << size_ << " processes";
}

void ProcessGroup::AllReduce(void* data, int64_t n, DType dtype, ReduceOp op) {
  if (n == 0 || size_ == 1) return;
  (void)PickCombineFor(dtype, op);
  RunQueued([&] { AllReduceNow(data, n, dtype, op); });
}

void ProcessGroup::AllReduceNow(void* data, int64_t n, DType dtype, ReduceOp op) {
  DispatchAll(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    gloo::AllreduceOptions opts(ctx_);
    opts.setOutput(static_cast<T*>(data), n);
    opts.setReduceFunction(PickCombine<T>(op));
    opts.setTimeout(timeout_);
    Guarded("all_reduce", [&] { gloo::allreduce(opts); });
  });
}

void ProcessGroup::Reduce(void* data, int64_t n, DType dtype, ReduceOp op, int root) {
  CheckPeer(root, "reduce", "dst");
  if (n == 0 || size_ == 1) return;
  DispatchAll(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Gloo's reduce overwrites the non-roots' buffers with partial results: reduce a copy there.
    std::vector<char> scratch;  // (bytes: std::vector<bool> has no data())
    T* out = static_cast<T*>(data);
    if (rank_ != root) {
      scratch.assign(static_cast<char*>(data), static_cast<char*>(data) + n * sizeof(T));
      out = reinterpret_cast<T*>(scratch.data());
    }
    gloo::ReduceOptions opts(ctx_);
    opts.setOutput(out, n);
    opts.setRoot(root);
    opts.setReduceFunction(PickCombine<T>(op));
    opts.setTimeout(timeout_);
    RunQueued([&] { Guarded("reduce", [&] { gloo::reduce(opts); }); });
  });
}

void ProcessGroup::Broadcast(void* data, int64_t nbytes, int root) {
  CheckPeer(root, "broadcast", "src");
  if (nbytes == 0 || size_ == 1) return;
  gloo::BroadcastOptions opts(ctx_);
  opts.setOutput(static_cast<uint8_t*>(data), nbytes);
  opts.setRoot(root);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("broadcast", [&] { gloo::broadcast(opts); }); });
}

void ProcessGroup::AllGather(const void* in, void* out, int64_t nbytes) {
  if (nbytes == 0) return;
  gloo::AllgatherOptions opts(ctx_);
  opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), nbytes);
  opts.setOutput(static_cast<uint8_t*>(out), nbytes * size_);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("all_gather", [&] { gloo::allgather(opts); }); });
}

void ProcessGroup::GatherTo(const void* in, void* out, int64_t nbytes, int root) {
  CheckPeer(root, "gather", "dst");
  if (nbytes == 0) return;
  gloo::GatherOptions opts(ctx_);
  opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), nbytes);
  if (rank_ == root) opts.setOutput(static_cast<uint8_t*>(out), nbytes * size_);
  opts.setRoot(root);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("gather", [&] { gloo::gather(opts); }); });
}

void ProcessGroup::ScatterFrom(const std::vector<const void*>& inputs, void* out, int64_t nbytes, int root) {
  CheckPeer(root, "scatter", "src");
  if (nbytes == 0) return;
  gloo::ScatterOptions opts(ctx_);
  if (rank_ == root) {
    OF_CHECK_VALUE(static_cast<int>(inputs.size()) == size_)
        << "distributed.scatter: the source needs one tensor per rank (" << size_ << "), got " << inputs.size();
    std::vector<uint8_t*> ptrs;
    for (const void* p : inputs) ptrs.push_back(const_cast<uint8_t*>(static_cast<const uint8_t*>(p)));
    opts.setInputs(ptrs, nbytes);
  }
  opts.setOutput(static_cast<uint8_t*>(out), nbytes);
  opts.setRoot(root);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("scatter", [&] { gloo::scatter(opts); }); });
}

void ProcessGroup::AllToAll(const void* in, void* out, int64_t nbytes) {
  if (nbytes == 0) return;
  gloo::AlltoallOptions opts(ctx_);
  opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), nbytes * size_);
  opts.setOutput(static_cast<uint8_t*>(out), nbytes * size_);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("all_to_all", [&] { gloo::alltoall(opts); }); });
}

namespace {
int64_t Total(const std::vector<int64_t>& counts) {
  int64_t sum = 0;
  for (int64_t c : counts) {
    OF_CHECK_VALUE(c >= 0) << "distributed: a negative byte count";
    sum += c;
  }
  return sum;
}
}  // namespace

void ProcessGroup::AllGatherV(const void* in, void* out, const std::vector<int64_t>& counts) {
  OF_CHECK_VALUE(static_cast<int>(counts.size()) == size_)
      << "distributed.all_gather_v: needs one count per member (" << size_ << "), got " << counts.size();
  if (Total(counts) == 0) return;
  uint8_t dummy = 0;  // (Gloo refuses a null buffer: an empty input still passes a valid address)
  gloo::AllgathervOptions opts(ctx_);
  std::vector<size_t> elements(counts.begin(), counts.end());
  opts.setInput(in ? const_cast<uint8_t*>(static_cast<const uint8_t*>(in)) : &dummy, static_cast<size_t>(counts[rank_]));
  opts.setOutput(static_cast<uint8_t*>(out), elements);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("all_gather_v", [&] { gloo::allgatherv(opts); }); });
}

void ProcessGroup::AllToAllV(const void* in, const std::vector<int64_t>& in_counts, void* out,
                             const std::vector<int64_t>& out_counts) {
  OF_CHECK_VALUE(static_cast<int>(in_counts.size()) == size_ && static_cast<int>(out_counts.size()) == size_)
      << "distributed.all_to_all_v: needs one count per member (" << size_ << ") on each side";
  // (no early return on empty counts here: the others' counts may not be, and each call takes a
  // slot of the context; a size-1 group has nobody to wait for)
  (void)Total(in_counts);
  (void)Total(out_counts);
  if (size_ == 1) {
    if (in_counts[0] > 0) std::memcpy(out, in, static_cast<size_t>(in_counts[0]));
    return;
  }
  uint8_t dummy = 0;  // (as AllGatherV's)
  gloo::AlltoallvOptions opts(ctx_);
  opts.setInput(in ? const_cast<uint8_t*>(static_cast<const uint8_t*>(in)) : &dummy, in_counts);
  opts.setOutput(out ? static_cast<uint8_t*>(out) : &dummy, out_counts);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("all_to_all_v", [&] { gloo::alltoallv(opts); }); });
}

namespace {
// Point-to-point messages use slots apart from the collectives' (which count up from 0).
uint64_t P2PSlot(uint32_t tag) { return (uint64_t{1} << 56) | tag; }
}  // namespace

// A transfer dropped unwaited is waited for here: its buffer may not go while Gloo writes it.
PendingTransfer::~PendingTransfer() {
  if (done_) return;
  try {
    Wait();
  } catch (...) {
  }
}

int PendingTransfer::Wait() {
  if (!done_) {
    done_ = true;
    peer_ = finish_();
  }
  return peer_;
}

namespace {
// Note [Checked transfers]: a message's header travels on a slot beside its payload's.
uint64_t HeaderSlot(uint32_t tag) { return P2PSlot(tag) | (uint64_t{1} << 55); }
using Header = std::array<int64_t, 2>;  // payload bytes, dtype
}  // namespace

std::shared_ptr<PendingTransfer> ProcessGroup::StartSend(const void* data, int64_t nbytes, DType dtype, int dst,
                                                         uint32_t tag) {
  CheckPeer(dst, "send", "dst");
  OF_CHECK_VALUE(dst != rank_) << "distributed.send: a process cannot send to itself (rank " << rank_ << ")";
  auto header = std::make_shared<Header>(Header{nbytes, static_cast<int64_t>(dtype)});
  std::shared_ptr<gloo::transport::UnboundBuffer> head, body;
  Guarded("send", [&] {
    head = ctx_->createUnboundBuffer(header->data(), sizeof(Header));
    body = ctx_->createUnboundBuffer(const_cast<void*>(data), nbytes);
    head->send(dst, HeaderSlot(tag));
    body->send(dst, P2PSlot(tag));
  });
  auto timeout = timeout_;
  return std::make_shared<PendingTransfer>([header, head, body, dst, timeout] {
    Guarded("send", [&] {
      head->waitSend(timeout);
      body->waitSend(timeout);
    });
    return dst;
  });
}

std::shared_ptr<PendingTransfer> ProcessGroup::StartRecv(void* data, int64_t nbytes, DType dtype, int src,
                                                         uint32_t tag) {
  if (src >= 0) {
    CheckPeer(src, "recv", "src");
    OF_CHECK_VALUE(src != rank_) << "distributed.recv: a process cannot receive from itself (rank " << rank_ << ")";
  }
  struct State {
    Header header{};
    int from = -1;
    std::string error;
    std::thread worker;
  };
  auto st = std::make_shared<State>();
  std::shared_ptr<gloo::transport::UnboundBuffer> head;
  Guarded("recv", [&] {
    head = ctx_->createUnboundBuffer(st->header.data(), sizeof(Header));
    if (src >= 0) {
      head->recv(src, HeaderSlot(tag));
    } else {
      std::vector<int> all;
      for (int r = 0; r < size_; ++r)
        if (r != rank_) all.push_back(r);
      head->recv(all, HeaderSlot(tag));
    }
  });
  auto ctx = ctx_;
  auto timeout = timeout_;
  st->worker = std::thread([st, head, ctx, data, nbytes, dtype, tag, timeout] {
    try {
      head->waitRecv(&st->from, timeout);
      const auto [sent, sent_dtype] = st->header;
      const bool fits = sent == nbytes && sent_dtype == static_cast<int64_t>(dtype);
      std::vector<char> scratch(fits ? 0 : std::max<int64_t>(sent, 0));
      auto body = ctx->createUnboundBuffer(fits ? data : scratch.data(), fits ? nbytes : scratch.size());
      body->recv(st->from, P2PSlot(tag));
      body->waitRecv(timeout);
      if (!fits) {
        const bool known = sent_dtype >= 0 && sent_dtype < kNumDTypes;
        const DType d = known ? static_cast<DType>(sent_dtype) : dtype;
        std::ostringstream msg;
        msg << "distributed.recv: rank " << st->from << " sent " << sent / std::max<int64_t>(ElementSize(d), 1) << " "
            << (known ? DTypeName(d) : "?") << " elements, but the receiving tensor holds "
            << nbytes / std::max<int64_t>(ElementSize(dtype), 1) << " " << DTypeName(dtype) << " elements";
        st->error = msg.str();
      }
    } catch (const std::exception& e) {
      st->error = std::string("distributed.recv: ") + e.what();
    }
  });
  return std::make_shared<PendingTransfer>([st] {
    {
      // (the GIL is not held here: the bindings release it around Wait)
      if (st->worker.joinable()) st->worker.join();
    }
    OF_CHECK(st->error.empty()) << st->error;
    return st->from;
  });
}

void ProcessGroup::Barrier() {
  if (size_ == 1) return;
  gloo::BarrierOptions opts(ctx_);
  opts.setTimeout(timeout_);
  RunQueued([&] { Guarded("barrier", [&] { gloo::barrier(opts); }); });
}

}  // namespace oneflow::dist
