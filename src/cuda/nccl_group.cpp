// Note [NCCL groups] (dist/nccl_group.h). CMake defines ONEFLOW_WITH_NCCL for this file alone
// when it found NCCL; without it every entry says NCCL is not in this build.
#include "dist/nccl_group.h"

#include "core/error.h"
#include "cuda/runtime.h"
#include "dist/store.h"

#ifdef ONEFLOW_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

#include "cuda/check.h"
#endif

namespace oneflow::dist {

#ifdef ONEFLOW_WITH_NCCL

namespace {

#define OF_NCCL_CHECK(expr, op)                                                                              \
  do {                                                                                                       \
    ncclResult_t of_r_ = (expr);                                                                             \
    OF_CHECK(of_r_ == ncclSuccess) << "distributed." << (op) << " (NCCL): " << ncclGetErrorString(of_r_); \
  } while (0)

ncclComm_t Comm(void* c) { return static_cast<ncclComm_t>(c); }
cudaStream_t StreamOf(int device) { return static_cast<cudaStream_t>(cuda::Stream(device)); }

ncclDataType_t NcclType(DType t, const char* op) {
  switch (t) {
    case DType::kBool:
    case DType::kUInt8: return ncclUint8;
    case DType::kInt8: return ncclInt8;
    case DType::kInt32: return ncclInt32;
    case DType::kInt64: return ncclInt64;
    case DType::kFloat16: return ncclFloat16;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    default: break;
  }
  OF_THROW(kType) << "distributed." << op << ": NCCL has no " << DTypeName(t) << " (complex travels as pairs of reals)";
}

ncclRedOp_t NcclOp(ReduceOp op, DType t, const char* name) {
  if (t == DType::kBool) {  // bool as logic: or = max, and = min
    if (op == ReduceOp::kSum || op == ReduceOp::kMax || op == ReduceOp::kBor) return ncclMax;
    if (op == ReduceOp::kProduct || op == ReduceOp::kMin || op == ReduceOp::kBand) return ncclMin;
  }
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kProduct: return ncclProd;
    case ReduceOp::kMin: return ncclMin;
    case ReduceOp::kMax: return ncclMax;
    default: break;
  }
  OF_THROW(kType) << "distributed." << name << ": NCCL has no bitwise reductions (BAND, BOR, BXOR) for "
                  << DTypeName(t) << " tensors";
}

// Bytes travel as uint8: NCCL counts elements of its type.
constexpr ncclDataType_t kBytes = ncclUint8;

}  // namespace

bool NcclBuilt() { return true; }

NcclGroup::NcclGroup(Store& store, const std::string& prefix, int rank, int size, int device)
    : rank_(rank), size_(size), device_(device) {
  cuda::CheckDeviceIndex(device);
  ncclUniqueId id;
  const std::string key = prefix + "/nccl_id/" + std::to_string(device);
  if (rank == 0) {
    OF_NCCL_CHECK(ncclGetUniqueId(&id), "init");
    store.set(key, std::vector<char>(reinterpret_cast<char*>(&id), reinterpret_cast<char*>(&id) + sizeof id));
  } else {
    std::vector<char> v = store.get(key);
    OF_CHECK(v.size() == sizeof id) << "distributed: a malformed NCCL id in the store";
    std::memcpy(&id, v.data(), sizeof id);
  }
  cuda::DeviceGuard guard(device);
  ncclComm_t comm;
  OF_NCCL_CHECK(ncclCommInitRank(&comm, size, id, rank), "init");
  comm_ = comm;
}

NcclGroup::~NcclGroup() {
  if (comm_) ncclCommDestroy(Comm(comm_));
}

void NcclGroup::AllReduce(void* data, int64_t n, DType dtype, ReduceOp op) {
  if (n == 0) return;
  cuda::DeviceGuard guard(device_);
  OF_NCCL_CHECK(ncclAllReduce(data, data, n, NcclType(dtype, "all_reduce"), NcclOp(op, dtype, "all_reduce"),
                              Comm(comm_), StreamOf(device_)),
                "all_reduce");
}

void NcclGroup::Reduce(void* data, int64_t n, DType dtype, ReduceOp op, int root) {
  if (n == 0) return;
  cuda::DeviceGuard guard(device_);
  // NCCL leaves the non-roots' receive buffers alone; reducing in place is allowed.
  OF_NCCL_CHECK(ncclReduce(data, data, n, NcclType(dtype, "reduce"), NcclOp(op, dtype, "reduce"), root, Comm(comm_),
                           StreamOf(device_)),
                "reduce");
}

void NcclGroup::Broadcast(void* data, int64_t nbytes, int root) {
  if (nbytes == 0) return;
  cuda::DeviceGuard guard(device_);
  OF_NCCL_CHECK(ncclBroadcast(data, data, nbytes, kBytes, root, Comm(comm_), StreamOf(device_)), "broadcast");
}

void NcclGroup::AllGather(const void* in, void* out, int64_t nbytes) {
  if (nbytes == 0) return;
  cuda::DeviceGuard guard(device_);
  OF_NCCL_CHECK(ncclAllGather(in, out, nbytes, kBytes, Comm(comm_), StreamOf(device_)), "all_gather");
}

// gather / scatter / all-to-all are grouped point-to-point calls (NCCL's own recipe).
void NcclGroup::GatherTo(const void* in, void* out, int64_t nbytes, int root) {
  if (nbytes == 0) return;
  cuda::DeviceGuard guard(device_);
  cudaStream_t s = StreamOf(device_);
  OF_NCCL_CHECK(ncclGroupStart(), "gather");
  if (rank_ == root) {
    for (int r = 0; r < size_; ++r) {
      char* dst = static_cast<char*>(out) + r * nbytes;
      if (r == rank_) OF_CUDA_CHECK(cudaMemcpyAsync(dst, in, nbytes, cudaMemcpyDeviceToDevice, s));
      else OF_NCCL_CHECK(ncclRecv(dst, nbytes, kBytes, r, Comm(comm_), s), "gather");
    }
  } else {
    OF_NCCL_CHECK(ncclSend(in, nbytes, kBytes, root, Comm(comm_), s), "gather");
  }
  OF_NCCL_CHECK(ncclGroupEnd(), "gather");
}

void NcclGroup::ScatterFrom(const std::vector<const void*>& inputs, void* out, int64_t nbytes, int root) {
  if (nbytes == 0) return;
  cuda::DeviceGuard guard(device_);
  cudaStream_t s = StreamOf(device_);
  OF_NCCL_CHECK(ncclGroupStart(), "scatter");
  if (rank_ == root) {
    OF_CHECK_VALUE(static_cast<int>(inputs.size()) == size_)
        << "distributed.scatter: the source needs one tensor per rank (" << size_ << "), got " << inputs.size();
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) OF_CUDA_CHECK(cudaMemcpyAsync(out, inputs[r], nbytes, cudaMemcpyDeviceToDevice, s));
      else OF_NCCL_CHECK(ncclSend(inputs[r], nbytes, kBytes, r, Comm(comm_), s), "scatter");
    }
  } else {
    OF_NCCL_CHECK(ncclRecv(out, nbytes, kBytes, root, Comm(comm_), s), "scatter");
  }
  OF_NCCL_CHECK(ncclGroupEnd(), "scatter");
}

void NcclGroup::AllToAll(const void* in, void* out, int64_t nbytes) {
  if (nbytes == 0) return;
  cuda::DeviceGuard guard(device_);
  cudaStream_t s = StreamOf(device_);
  OF_NCCL_CHECK(ncclGroupStart(), "all_to_all");
  for (int r = 0; r < size_; ++r) {
    OF_NCCL_CHECK(ncclSend(static_cast<const char*>(in) + r * nbytes, nbytes, kBytes, r, Comm(comm_), s), "all_to_all");
    OF_NCCL_CHECK(ncclRecv(static_cast<char*>(out) + r * nbytes, nbytes, kBytes, r, Comm(comm_), s), "all_to_all");
  }
  OF_NCCL_CHECK(ncclGroupEnd(), "all_to_all");
}

void NcclGroup::Send(const void* data, int64_t nbytes, int dst) {
  OF_CHECK_VALUE(dst >= 0 && dst < size_ && dst != rank_)
      << "distributed.send: dst " << dst << " must be another rank of this group of " << size_;
  cuda::DeviceGuard guard(device_);
  OF_NCCL_CHECK(ncclSend(data, nbytes, kBytes, dst, Comm(comm_), StreamOf(device_)), "send");
}

void NcclGroup::Recv(void* data, int64_t nbytes, int src) {
  OF_CHECK_VALUE(src >= 0 && src < size_ && src != rank_)
      << "distributed.recv: NCCL needs the source rank (another rank of this group of " << size_ << "), got " << src;
  cuda::DeviceGuard guard(device_);
  OF_NCCL_CHECK(ncclRecv(data, nbytes, kBytes, src, Comm(comm_), StreamOf(device_)), "recv");
}

void NcclGroup::Barrier() {
  cuda::DeviceGuard guard(device_);
  void* one = cuda::Alloc(sizeof(int32_t), device_);
  try {
    OF_CUDA_CHECK(cudaMemsetAsync(one, 0, sizeof(int32_t), StreamOf(device_)));
    OF_NCCL_CHECK(ncclAllReduce(one, one, 1, ncclInt32, ncclSum, Comm(comm_), StreamOf(device_)), "barrier");
    cuda::Synchronize(device_);
  } catch (...) {
    cuda::Free(one, sizeof(int32_t), device_);
    throw;
  }
  cuda::Free(one, sizeof(int32_t), device_);
}

#else  // a CUDA build without NCCL

bool NcclBuilt() { return false; }

NcclGroup::NcclGroup(Store&, const std::string&, int rank, int size, int device)
    : rank_(rank), size_(size), device_(device) {
  OF_THROW(kRuntime) << "distributed: NCCL is not in this build (CMake found no nccl.h / libnccl)";
}
NcclGroup::~NcclGroup() = default;
void NcclGroup::AllReduce(void*, int64_t, DType, ReduceOp) {}
void NcclGroup::Reduce(void*, int64_t, DType, ReduceOp, int) {}
void NcclGroup::Broadcast(void*, int64_t, int) {}
void NcclGroup::AllGather(const void*, void*, int64_t) {}
void NcclGroup::GatherTo(const void*, void*, int64_t, int) {}
void NcclGroup::ScatterFrom(const std::vector<const void*>&, void*, int64_t, int) {}
void NcclGroup::AllToAll(const void*, void*, int64_t) {}
void NcclGroup::Send(const void*, int64_t, int) {}
void NcclGroup::Recv(void*, int64_t, int) {}
void NcclGroup::Barrier() {}

#endif

}  // namespace oneflow::dist
