// The reordered-weight cache of oneDNN's primitives: Note [Weight cache] in dnnl_common.h.
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "kernels/dnnl/dnnl_common.h"

namespace oneflow::dnnl_glue {

namespace {

// ResNet-50's weights are 100 MB, BERT-base's LSTM-free; 256 MiB keeps a mid-sized model's
// reordered weights without letting a model zoo in one process grow without bound.
constexpr int64_t kDefaultWeightCacheBytes = int64_t(256) << 20;
// Records without a copy cost ~200 bytes; training sees each (weight, layout) once per step.
constexpr size_t kMaxRecords = 4096;

struct Record {
  const Storage* storage;       // identity; owned (through `hold`) only while a copy is kept
  IntrusivePtr<Storage> hold;
  const void* data;             // the weight's first element (Storage::Replace moves the bytes)
  uint32_t version;
  dnnl::memory::desc plain, chosen;
  Tensor copy;                  // the weight in `chosen`; undefined after a first sighting
  uint64_t last_use;
};

struct State {
  std::mutex mu;
  std::vector<Record> records;
  int64_t bytes = 0, limit = kDefaultWeightCacheBytes, hits = 0;
  uint64_t clock = 0;

  void Drop(size_t i) {
    if (records[i].copy.defined()) bytes -= records[i].copy.numel();
    records[i] = std::move(records.back());
    records.pop_back();
  }
  void Demote(Record& r) {
    if (r.copy.defined()) bytes -= r.copy.numel();
    r.copy = Tensor();
    r.hold.Reset();
  }
  // Copies whose storage only the cache still holds: their tensors died.
  void Sweep() {
    for (size_t i = records.size(); i-- > 0;)
      if (records[i].hold && records[i].hold->RefCount() == 1) Drop(i);
  }
  // Least recently used copies out until `extra` more bytes fit (records stay where they are).
  void MakeRoom(int64_t extra) {
    while (bytes + extra > limit) {
      Record* lru = nullptr;
      for (Record& r : records)
        if (r.copy.defined() && (!lru || r.last_use < lru->last_use)) lru = &r;
      if (!lru) break;
      Demote(*lru);
    }
  }
  // Least recently used records out until one more fits.
  void MakeRecordRoom() {
    while (records.size() >= kMaxRecords) {
      size_t lru = 0;
      for (size_t i = 1; i < records.size(); ++i)
        if (records[i].last_use < records[lru].last_use) lru = i;
      Drop(lru);
    }
  }
};

State& TheState() {
  static State* s = new State();  // leaked on purpose: copies may be released after static destructors
  return *s;
}

bool Enabled() {
  static const bool on = [] {
    const char* v = std::getenv("ONEFLOW_DNNL_WEIGHT_CACHE");
    return !v || std::strcmp(v, "0") != 0;
  }();
  return on;
}

dnnl::memory Reorder(const Reordered& r, const void* plain, dnnl::memory dst) {
  dnnl::memory src = Wrap(r.plain, plain);
  r.to_chosen->execute(Stream(), src, dst);
  return dst;
}

}  // namespace

dnnl::memory WeightIn(const Reordered& r, const Tensor& w, const std::function<const void*()>& plain,
                      std::vector<Tensor>* keep) {
  if (r.same()) return Wrap(r.plain, plain());
  if (!Enabled()) return r.In(plain(), keep);
  State& s = TheState();
  const Storage* storage = w.storage();
  const void* data = w.raw_data();
  const uint32_t version = storage->version();
  std::unique_lock<std::mutex> lock(s.mu);
  const uint64_t now = ++s.clock;
  Record* rec = nullptr;
  for (Record& c : s.records)
    if (c.storage == storage && c.data == data && c.chosen == r.chosen && c.plain == r.plain) {
      rec = &c;
      break;
    }
  if (rec && rec->version == version && rec->copy.defined()) {  // a hit
    rec->last_use = now;
    ++s.hits;
    keep->push_back(rec->copy);  // alive while the primitive runs, even if evicted meanwhile
    return Wrap(r.chosen, rec->copy.raw_data());
  }
  s.Sweep();
  rec = nullptr;  // the sweep may have moved records
  for (Record& c : s.records)
    if (c.storage == storage && c.data == data && c.chosen == r.chosen && c.plain == r.plain) rec = &c;
  const bool promote = rec && rec->version == version;  // its second sighting at this version
  if (!promote) {
    if (rec) {
      s.Demote(*rec);
      rec->version = version;
      rec->last_use = now;
    } else {
      s.MakeRecordRoom();
      s.records.push_back(Record{storage, {}, data, version, r.plain, r.chosen, Tensor(), now});
    }
    lock.unlock();
    return r.In(plain(), keep);
  }
  const int64_t nbytes = static_cast<int64_t>(r.chosen.get_size());
  if (nbytes > s.limit) {
    lock.unlock();
    return r.In(plain(), keep);
  }
  const size_t index = rec - s.records.data();
  s.MakeRoom(nbytes);  // demotes, never moves records: `index` stays valid
  Record& kept = s.records[index];
  kept.copy = Empty(DimVector{nbytes}, DType::kUInt8);
  kept.hold = IntrusivePtr<Storage>(const_cast<Storage*>(storage));
  kept.last_use = now;
  s.bytes += nbytes;
  Tensor copy = kept.copy;
  keep->push_back(copy);
  // Reordered under the lock: another thread asking for the same weight must not see the copy
  // before it is filled.
  return Reorder(r, plain(), dnnl::memory(r.chosen, Engine(), copy.raw_data()));
}

WeightCacheStats GetWeightCacheStats() {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.Sweep();
  WeightCacheStats st;
  st.records = static_cast<int64_t>(s.records.size());
  for (const Record& r : s.records) st.copies += r.copy.defined();
  st.bytes = s.bytes;
  st.hits = s.hits;
  return st;
}

void ClearWeightCache() {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.records.clear();
  s.bytes = 0;
}

int64_t SetWeightCacheLimit(int64_t bytes) {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  const int64_t old = s.limit;
  s.limit = bytes < 0 ? 0 : bytes;
  s.MakeRoom(0);
  return old;
}

}  // namespace oneflow::dnnl_glue
