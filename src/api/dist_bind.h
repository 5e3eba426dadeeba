// What the binding files of oneflow.distributed share: the Python store object and the buffers
// the collectives take (api/dist_bind.cpp: stores and Gloo; cuda/nccl_bind.cpp: NCCL).
#pragma once
#include <memory>

#include "api/convert.h"
#include "dist/store.h"
#include "dist/tcp_store.h"

namespace oneflow::dist_bind {

// One Python store object over either kind of store.
struct PyStore {
  std::shared_ptr<dist::Store> store;
  dist::TcpStore* tcp = nullptr;  // set for TCP stores: port

  dist::TcpStore& Tcp(const char* what) {
    OF_CHECK(tcp) << "distributed: " << what << " needs a TCPStore";
    return *tcp;
  }
};

// The buffer of a tensor a collective reads or writes in place: contiguous, on `device`.
inline char* Buffer(const Tensor& t, const char* op, DeviceType device = DeviceType::kCPU) {
  OF_CHECK(t.device().type == device && t.is_contiguous())
      << "distributed." << op << ": internal error: expects a contiguous tensor on the group's device";
  return t.raw_ptr();
}

inline int64_t Bytes(const Tensor& t) { return t.numel() * t.element_size(); }

}  // namespace oneflow::dist_bind
