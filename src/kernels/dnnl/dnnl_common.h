// oneDNN glue shared by the convolution, pooling and normalisation kernels: the CPU engine, a
// stream per calling thread, memory objects over our tensors (and scratch buffers from our
// caching allocator instead of oneDNN's malloc), and a cache of primitives keyed by shape.
// oneDNN is built with the OpenMP runtime here (Debian's libdnnl), so flow.set_num_threads
// governs it like our own kernels and OpenBLAS.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "kernels/dnnl/dnnl_weight_cache.h"

namespace oneflow::dnnl_glue {

dnnl::engine& Engine();
dnnl::stream& Stream();

// A memory object over `data` with the plain (row-major) layout of dims.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt);
dnnl::memory Wrap(const dnnl::memory::desc& d, const void* data);
// A memory object of layout d on a fresh buffer from the caching allocator; the buffer lives as
// long as `keep` does.
dnnl::memory Scratch(const dnnl::memory::desc& d, std::vector<Tensor>* keep);

// Primitive cache key: the op kind and every integer that determines the primitive.
struct Key {
  std::vector<int64_t> v;
  bool operator==(const Key& o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};

// Creating a primitive descriptor costs tens of microseconds (it walks oneDNN's implementation
// list); eager training calls the same shapes every step, so entries are built once per key.
template <typename Entry>
class Cache {
 public:
  std::shared_ptr<Entry> Get(const Key& key, const std::function<std::shared_ptr<Entry>()>& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    std::shared_ptr<Entry> e = make();
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kCapacity) map_.clear();  // shapes churn: start over rather than grow
    map_.emplace(key, e);
    return e;
  }

 private:
  static constexpr size_t kCapacity = 512;
  std::mutex mu_;
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> map_;
};

// A primitive's argument in our plain layout, reordered to/from the layout the primitive chose.
struct Reordered {
  dnnl::memory::desc plain, chosen;
  std::shared_ptr<dnnl::reorder> to_chosen, to_plain;  // null when the layouts agree
  void Init(const dnnl::memory::desc& plain_desc, const dnnl::memory::desc& chosen_desc, bool in, bool out);
  bool same() const { return plain == chosen; }
  // Memory in the chosen layout holding `data` (reordered in if needed).
  dnnl::memory In(const void* data, std::vector<Tensor>* keep) const;
  // Memory in the chosen layout for an output that Out() later writes into `data`.
  dnnl::memory OutBuffer(void* data, std::vector<Tensor>* keep) const;
  void Out(const dnnl::memory& m, void* data) const;
};

// Note [Weight cache]
// A primitive that chose a blocked weight layout needs the weight reordered on every call (LSTM
// and GRU always; convolutions in the blocked layout). Inference calls them again and again with
// the same weights, so the reordered copy is kept per weight *version*: the cache remembers, for
// a storage (identity and data address), its version counter (Note [Version counter]), the plain
// and the chosen layout. Policy, so that training keeps no copies (its weights change every step,
// eager or nn.Graph, whose optimizer runs in no-grad and still bumps the counters):
//   - first sighting of (storage, layouts) at a version: reorder into scratch, remember the version;
//   - second sighting at the same version: reorder into a kept copy (holding the storage, so its
//     address cannot be reused by another storage while the copy is used);
//   - later sightings at that version: the copy, no reorder;
//   - a new version drops the copy (back to a first sighting).
// A copy whose storage no other tensor holds any more (its tensor died) is dropped at the next
// miss; the copies are bounded by bytes (least recently used go first), the records by count.
// Writes that bypass the version counter (through a numpy view or DLPack of the parameter) are
// not seen: ONEFLOW_DNNL_WEIGHT_CACHE=0 turns the cache off (docs/env.md).
//
// The weight w in r's chosen layout: a kept copy, or `plain()` (w's values in r.plain's layout:
// w's own memory, or a converted buffer such as GRU's gate order) reordered into scratch.
dnnl::memory WeightIn(const Reordered& r, const Tensor& w, const std::function<const void*()>& plain,
                      std::vector<Tensor>* keep);

}  // namespace oneflow::dnnl_glue
