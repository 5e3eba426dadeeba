#include "kernels/dnnl/dnnl_common.h"

namespace oneflow::dnnl_glue {

dnnl::engine& Engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& Stream() {
  // CPU streams are cheap, but one per thread keeps concurrent Python threads independent.
  thread_local dnnl::stream s(Engine());
  return s;
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return dnnl::memory::desc(dims, dt, strides);
}

dnnl::memory Wrap(const dnnl::memory::desc& d, const void* data) {
  return dnnl::memory(d, Engine(), const_cast<void*>(data));
}

dnnl::memory Scratch(const dnnl::memory::desc& d, std::vector<Tensor>* keep) {
  keep->push_back(Empty(DimVector{static_cast<int64_t>(d.get_size())}, DType::kUInt8));
  return dnnl::memory(d, Engine(), keep->back().raw_data());
}

void Reordered::Init(const dnnl::memory::desc& plain_desc, const dnnl::memory::desc& chosen_desc, bool in,
                     bool out) {
  plain = plain_desc;
  chosen = chosen_desc;
  if (same()) return;
  if (in) to_chosen = std::make_shared<dnnl::reorder>(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), chosen));
  if (out) to_plain = std::make_shared<dnnl::reorder>(dnnl::reorder::primitive_desc(Engine(), chosen, Engine(), plain));
}

dnnl::memory Reordered::In(const void* data, std::vector<Tensor>* keep) const {
  dnnl::memory src = Wrap(plain, data);
  if (same()) return src;
  dnnl::memory dst = Scratch(chosen, keep);
  to_chosen->execute(Stream(), src, dst);
  return dst;
}

dnnl::memory Reordered::OutBuffer(void* data, std::vector<Tensor>* keep) const {
  return same() ? Wrap(plain, data) : Scratch(chosen, keep);
}

void Reordered::Out(const dnnl::memory& m, void* data) const {
  if (same()) return;
  dnnl::memory dst = Wrap(plain, data);
  to_plain->execute(Stream(), const_cast<dnnl::memory&>(m), dst);
}

}  // namespace oneflow::dnnl_glue
