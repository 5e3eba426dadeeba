// Saving and loading a traced Program (Note [Saved programs] in serialize.h).
#include "graph/serialize.h"

#include <cstring>
#include <unordered_map>

#include "core/error.h"
#include "graph/fusion.h"

namespace oneflow::lazy {

namespace {

// The format's version, in the magic string; a loader refuses any other. Bump it (here only) with
// any change of the bytes:
//  1: the first format;
//  2: Node::local_grads (a local-autograd node is its op's own node, Note [Local autograd nodes]),
//     Node::scalars (per-run scalar inputs, Note [Scalar inputs]);
//  3: Program::dynamic and Node::size_refs (the dims of run-time sizes, Note [Dynamic shapes]).
constexpr int kFormatVersion = 3;
const std::string& Magic() {
  static const std::string magic = "OFPROG" + std::to_string(kFormatVersion);
  return magic;
}

// The boxed registry's identity: fused pointwise nodes name their members by index in it.
std::string RegistryFingerprint() {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the op names in order
  for (const OpSchema& s : Boxed().all()) {
    for (char c : s.name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  }
  return std::to_string(Boxed().all().size()) + ":" + std::to_string(h);
}

// kLocalBackward: a local-autograd node's backward (Note [Local autograd nodes]), named after its op.
enum class NodeKind : int8_t { kTable, kHandWritten, kFusedPointwise, kBarrier, kLocalBackward };
enum class Tag : int8_t { kNone, kTensor, kTensors, kBool, kInt, kDouble, kScalar, kDims, kDoubles, kDType, kDevice,
                          kString, kGenerator };

class Writer {
 public:
  template <typename T> void Pod(T v) { out.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
  void Str(const std::string& s) {
    Pod<int64_t>(static_cast<int64_t>(s.size()));
    out.append(s);
  }
  template <typename T> void Ints(const T& v) {
    Pod<int64_t>(static_cast<int64_t>(v.size()));
    for (auto x : v) Pod<int64_t>(static_cast<int64_t>(x));
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  template <typename T> T Pod() {
    OF_CHECK_VALUE(pos_ + sizeof(T) <= s_.size()) << "load_runtime_state_dict: the saved program is truncated";
    T v;
    std::memcpy(&v, s_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string Str() {
    const int64_t n = Pod<int64_t>();
    OF_CHECK_VALUE(n >= 0 && pos_ + n <= s_.size()) << "load_runtime_state_dict: the saved program is truncated";
    std::string v = s_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  std::vector<int64_t> Ints() {
    const int64_t n = Pod<int64_t>();
    OF_CHECK_VALUE(n >= 0 && static_cast<size_t>(n) <= s_.size()) << "load_runtime_state_dict: the saved program is corrupt";
    std::vector<int64_t> v(n);
    for (auto& x : v) x = Pod<int64_t>();
    return v;
  }
  std::vector<int> Ints32() {
    std::vector<int64_t> v = Ints();
    return std::vector<int>(v.begin(), v.end());
  }
  bool done() const { return pos_ == s_.size(); }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

// Tensors the program holds, each listed once (by impl): nodes reading the same captured tensor
// read the same tensor after loading.
struct TensorTable {
  int Index(const Tensor& t) {
    auto [it, added] = index.emplace(t.impl(), static_cast<int>(saved->tensors.size()));
    if (added) {
      saved->tensors.push_back(t);
      auto name = names->find(t.impl());
      saved->names.push_back(name == names->end() ? std::string() : name->second);
    }
    return it->second;
  }
  SavedProgram* saved;
  const std::unordered_map<const TensorImpl*, std::string>* names;
  std::unordered_map<const TensorImpl*, int> index;
};

void WriteTensorRef(Writer& w, TensorTable& table, const Tensor& t) {
  w.Pod<int32_t>(t.defined() ? table.Index(t) : -1);  // (undefined: a slot fills it, or None)
}

void WriteValue(Writer& w, TensorTable& table, const Value& v, const std::string& op) {
  std::visit([&](const auto& x) {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::monostate>) {
      w.Pod(Tag::kNone);
    } else if constexpr (std::is_same_v<T, Tensor>) {
      w.Pod(Tag::kTensor);
      WriteTensorRef(w, table, x);
    } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
      w.Pod(Tag::kTensors);
      w.Pod<int64_t>(static_cast<int64_t>(x.size()));
      for (const Tensor& t : x) WriteTensorRef(w, table, t);
    } else if constexpr (std::is_same_v<T, bool>) {
      w.Pod(Tag::kBool);
      w.Pod<int8_t>(x);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      w.Pod(Tag::kInt);
      w.Pod(x);
    } else if constexpr (std::is_same_v<T, double>) {
      w.Pod(Tag::kDouble);
      w.Pod(x);
    } else if constexpr (std::is_same_v<T, Scalar>) {
      w.Pod(Tag::kScalar);
      w.Pod<int8_t>(x.kind());
      if (x.kind() >= Scalar::kFloat) {
        w.Pod(x.ToDouble());
        w.Pod(x.ImagPart());
      } else {
        w.Pod(x.ToInt());
      }
    } else if constexpr (std::is_same_v<T, DimVector>) {
      w.Pod(Tag::kDims);
      w.Ints(x);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      w.Pod(Tag::kDoubles);
      w.Pod<int64_t>(static_cast<int64_t>(x.size()));
      for (double d : x) w.Pod(d);
    } else if constexpr (std::is_same_v<T, DType>) {
      w.Pod(Tag::kDType);
      w.Pod(x);
    } else if constexpr (std::is_same_v<T, Device>) {
      w.Pod(Tag::kDevice);
      w.Pod(x.type);
      w.Pod<int32_t>(x.index);
    } else if constexpr (std::is_same_v<T, std::string>) {
      w.Pod(Tag::kString);
      w.Str(x);
    } else if constexpr (std::is_same_v<T, GeneratorPtr>) {
      // A random op's generator: the device's default one is found again when loading; a
      // Generator object the user made belongs to their process.
      OF_CHECK_KIND(x.get() == DefaultGeneratorPtr(x->device()).get(), ErrorKind::kNotImplemented)
          << "runtime_state_dict: the op '" << op << "' draws from a oneflow.Generator made by the user; "
          << "only the default generators can be saved";
      w.Pod(Tag::kGenerator);
      w.Pod(x->device().type);
      w.Pod<int32_t>(x->device().index);
    }
  }, v);
}

Tensor ReadTensorRef(Reader& r, const std::vector<Tensor>& tensors) {
  const int32_t k = r.Pod<int32_t>();
  if (k < 0) return Tensor();
  OF_CHECK_VALUE(static_cast<size_t>(k) < tensors.size())
      << "load_runtime_state_dict: the saved program reads tensor " << k << " of " << tensors.size();
  return tensors[k];
}

Value ReadValue(Reader& r, const std::vector<Tensor>& tensors) {
  switch (r.Pod<Tag>()) {
    case Tag::kNone: return Value();
    case Tag::kTensor: {
      Tensor t = ReadTensorRef(r, tensors);
      return t.defined() ? Value(t) : Value(Tensor());
    }
    case Tag::kTensors: {
      const int64_t n = r.Pod<int64_t>();
      std::vector<Tensor> v;
      for (int64_t i = 0; i < n; ++i) v.push_back(ReadTensorRef(r, tensors));
      return Value(std::move(v));
    }
    case Tag::kBool: return Value(r.Pod<int8_t>() != 0);
    case Tag::kInt: return Value(r.Pod<int64_t>());
    case Tag::kDouble: return Value(r.Pod<double>());
    case Tag::kScalar: {
      const auto kind = static_cast<Scalar::Kind>(r.Pod<int8_t>());
      if (kind >= Scalar::kFloat) {
        const double re = r.Pod<double>(), im = r.Pod<double>();
        return Value(kind == Scalar::kComplex ? Scalar(std::complex<double>(re, im)) : Scalar(re));
      }
      const int64_t i = r.Pod<int64_t>();
      return Value(kind == Scalar::kBool ? Scalar(i != 0) : Scalar(i));
    }
    case Tag::kDims: {
      std::vector<int64_t> v = r.Ints();
      return Value(DimVector(v));
    }
    case Tag::kDoubles: {
      const int64_t n = r.Pod<int64_t>();
      std::vector<double> v;
      for (int64_t i = 0; i < n; ++i) v.push_back(r.Pod<double>());
      return Value(std::move(v));
    }
    case Tag::kDType: return Value(r.Pod<DType>());
    case Tag::kDevice: {
      const auto type = r.Pod<DeviceType>();
      return Value(Device{type, static_cast<int>(r.Pod<int32_t>())});
    }
    case Tag::kString: return Value(r.Str());
    case Tag::kGenerator: {
      const auto type = r.Pod<DeviceType>();
      return Value(DefaultGeneratorPtr(Device{type, static_cast<int>(r.Pod<int32_t>())}));
    }
  }
  OF_THROW(kValue) << "load_runtime_state_dict: the saved program is corrupt (an unknown value tag)";
  return Value();
}

// A slot's meta tensor: sizes, strides, dtype (what tracing knew of the value).
void WriteMeta(Writer& w, const Tensor& m) {
  w.Pod<int8_t>(m.defined());
  if (!m.defined()) return;
  w.Ints(m.sizes());
  w.Ints(m.strides());
  w.Pod(m.dtype());
  w.Pod<int8_t>(m.is_wrapped_number());
  w.Pod<int8_t>(m.requires_grad());
}

Tensor ReadMeta(Reader& r) {
  if (!r.Pod<int8_t>()) return Tensor();
  const DimVector sizes(r.Ints()), strides(r.Ints());
  const DType dtype = r.Pod<DType>();
  int64_t extent = 1;
  bool empty = false;
  for (int i = 0; i < sizes.size(); ++i) {
    extent += (sizes[i] - 1) * strides[i];
    empty = empty || sizes[i] == 0;
  }
  Tensor base = Empty(DimVector{empty ? 0 : extent}, dtype, Device{DeviceType::kMeta, -1});
  Tensor m = MakeView(base, sizes, strides, 0);
  m.impl()->view_base_.Reset();
  m.impl()->is_wrapped_number_ = r.Pod<int8_t>() != 0;
  m.impl()->requires_grad_ = r.Pod<int8_t>() != 0;
  return m;
}

NodeKind KindOf(const Node& n) {
  if (n.barrier >= 0) return NodeKind::kBarrier;
  if (n.fn == FusedPointwiseFn()) return NodeKind::kFusedPointwise;
  if (n.fn == LocalBackwardFn()) return NodeKind::kLocalBackward;
  if (n.schema) return NodeKind::kTable;
  return NodeKind::kHandWritten;
}

}  // namespace

SavedProgram SaveProgram(const Program& p) {
  SavedProgram saved;
  TensorTable table{&saved, &p.names, {}};
  Writer w;
  w.Str(Magic());
  w.Str(RegistryFingerprint());
  w.Pod(p.device.type);
  w.Pod<int32_t>(p.device.index);
  w.Pod<int64_t>(p.num_slots);
  w.Ints(p.inputs);
  w.Ints(p.pinned);
  w.Ints(p.outputs);
  w.Ints(p.forward);
  w.Pod<int8_t>(p.run_grad);
  w.Pod<int64_t>(static_cast<int64_t>(p.meta.size()));
  for (const Tensor& m : p.meta) WriteMeta(w, m);
  w.Pod<int64_t>(static_cast<int64_t>(p.dynamic.size()));  // Note [Dynamic shapes] (since OFPROG3)
  for (uint64_t d : p.dynamic) w.Pod<uint64_t>(d);
  w.Pod<int64_t>(static_cast<int64_t>(p.consts.size()));
  for (const auto& [slot, t] : p.consts) {
    w.Pod<int64_t>(slot);
    WriteTensorRef(w, table, t);
  }
  w.Pod<int64_t>(static_cast<int64_t>(p.nodes.size()));
  for (const Node& n : p.nodes) {
    const NodeKind kind = KindOf(n);
    OF_CHECK_KIND(kind != NodeKind::kHandWritten || FindNodeFn(n.name) == n.fn, ErrorKind::kNotImplemented)
        << "runtime_state_dict: the node '" << n.name << "' has no call registered by name (lazy::RegisterNodeFn)";
    w.Pod(kind);
    w.Str(n.name);
    w.Pod<int64_t>(static_cast<int64_t>(n.args.size()));
    for (const Value& v : n.args) WriteValue(w, table, v, n.name);
    w.Pod<int64_t>(static_cast<int64_t>(n.refs.size()));
    for (const SlotRef& r : n.refs) {
      w.Pod<int32_t>(r.arg);
      w.Pod<int32_t>(r.elem);
      w.Pod<int32_t>(r.slot);
    }
    w.Ints(n.outs);
    w.Ints(n.devices);
    w.Pod<int8_t>(n.grad_enabled);
    w.Pod<int32_t>(n.barrier);
    w.Pod<int8_t>(n.aliases);
    w.Str(n.loc);
    w.Str(n.scope);
    w.Pod<int8_t>(n.backward);
    w.Pod<int64_t>(static_cast<int64_t>(n.local_grads.size()));
    for (const ArgPos& g : n.local_grads) {
      w.Pod<int32_t>(g.arg);
      w.Pod<int32_t>(g.elem);
    }
    // Per-run scalar inputs (Note [Scalar inputs]): tensors of the live optimizer, listed with the
    // others; the caller names them so that a loading graph binds its own (runtime_state.py).
    w.Pod<int64_t>(static_cast<int64_t>(n.scalars.size()));
    for (const auto& [arg, t] : n.scalars) {
      w.Pod<int32_t>(arg);
      WriteTensorRef(w, table, t);
    }
    w.Pod<int64_t>(static_cast<int64_t>(n.size_refs.size()));  // (Note [Dynamic shapes])
    for (const SizeRef& z : n.size_refs)
      for (int x : {z.arg, z.elem, z.ref, z.dim}) w.Pod<int32_t>(x);
  }
  // Wrapped numbers (Python numbers as 0-d tensors) promote as numbers: the flag goes with them.
  for (const Tensor& t : saved.tensors) w.Pod<int8_t>(t.is_wrapped_number());
  saved.bytes = std::move(w.out);
  return saved;
}

std::shared_ptr<Program> LoadProgram(const std::string& bytes, const std::vector<Tensor>& given,
                                     const std::vector<std::string>& names) {
  Reader r(bytes);
  const std::string magic = r.Str();
  OF_CHECK_VALUE(magic.rfind("OFPROG", 0) == 0) << "load_runtime_state_dict: not a saved nn.Graph program";
  OF_CHECK_VALUE(magic == Magic()) << "load_runtime_state_dict: the program was saved in format " << magic
                                   << "; this build reads " << Magic() << " (save it again with this build)";
  OF_CHECK_VALUE(r.Str() == RegistryFingerprint())
      << "load_runtime_state_dict: the program was saved by a build with other ops (its op registry differs)";
  std::vector<Tensor> tensors = given;
  auto p = std::make_shared<Program>();
  const auto dev_type = r.Pod<DeviceType>();
  p->device = Device{dev_type, static_cast<int>(r.Pod<int32_t>())};
  p->num_slots = static_cast<int>(r.Pod<int64_t>());
  p->inputs = r.Ints32();
  p->pinned = r.Ints32();
  p->outputs = r.Ints32();
  p->forward = r.Ints32();
  p->run_grad = r.Pod<int8_t>() != 0;
  const int64_t metas = r.Pod<int64_t>();
  for (int64_t i = 0; i < metas; ++i) p->meta.push_back(ReadMeta(r));
  const int64_t dynamic = r.Pod<int64_t>();
  for (int64_t i = 0; i < dynamic; ++i) p->dynamic.push_back(r.Pod<uint64_t>());
  const int64_t consts = r.Pod<int64_t>();
  for (int64_t i = 0; i < consts; ++i) {
    const int slot = static_cast<int>(r.Pod<int64_t>());
    p->consts.emplace_back(slot, ReadTensorRef(r, tensors));
  }
  const int64_t nodes = r.Pod<int64_t>();
  for (int64_t i = 0; i < nodes; ++i) {
    Node n;
    const auto kind = r.Pod<NodeKind>();
    n.name = r.Str();
    const int64_t nargs = r.Pod<int64_t>();
    for (int64_t a = 0; a < nargs; ++a) n.args.push_back(ReadValue(r, tensors));
    const int64_t nrefs = r.Pod<int64_t>();
    for (int64_t k = 0; k < nrefs; ++k) {
      SlotRef ref;
      ref.arg = r.Pod<int32_t>();
      ref.elem = r.Pod<int32_t>();
      ref.slot = r.Pod<int32_t>();
      OF_CHECK_VALUE(ref.arg >= -1 && ref.arg < nargs && ref.slot >= 0 && ref.slot < p->num_slots)
          << "load_runtime_state_dict: the saved program is corrupt (node " << n.name << ")";
      n.refs.push_back(ref);
    }
    n.outs = r.Ints32();
    n.devices = r.Ints32();
    n.grad_enabled = r.Pod<int8_t>() != 0;
    n.barrier = r.Pod<int32_t>();
    n.aliases = r.Pod<int8_t>() != 0;
    n.loc = r.Str();
    n.scope = r.Str();
    n.backward = r.Pod<int8_t>() != 0;
    const int64_t nlocal = r.Pod<int64_t>();
    for (int64_t k = 0; k < nlocal; ++k) {
      ArgPos g;
      g.arg = r.Pod<int32_t>();
      g.elem = r.Pod<int32_t>();
      OF_CHECK_VALUE(g.arg >= 0 && g.arg < nargs && g.elem >= -1) << "load_runtime_state_dict: the saved program is corrupt (node " << n.name << ")";
      n.local_grads.push_back(g);
    }
    const int64_t nscalars = r.Pod<int64_t>();
    for (int64_t k = 0; k < nscalars; ++k) {
      const int arg = r.Pod<int32_t>();
      OF_CHECK_VALUE(arg >= 0 && arg < nargs) << "load_runtime_state_dict: the saved program is corrupt (node " << n.name << ")";
      n.scalars.emplace_back(arg, ReadTensorRef(r, tensors));
    }
    const int64_t nsizes = r.Pod<int64_t>();
    for (int64_t k = 0; k < nsizes; ++k) {
      SizeRef z;
      z.arg = r.Pod<int32_t>();
      z.elem = r.Pod<int32_t>();
      z.ref = r.Pod<int32_t>();
      z.dim = r.Pod<int32_t>();
      const bool number = z.elem == -1 && z.dim >= -1;  // (a Python number: a count or one dim's size)
      OF_CHECK_VALUE(z.arg >= 0 && z.arg < nargs && z.ref >= 0 && z.ref < static_cast<int>(n.refs.size()) &&
                     z.dim < 64 &&
                     (number ? std::holds_alternative<Tensor>(n.args[z.arg])
                             : z.elem >= 0 && z.dim >= 0 && std::holds_alternative<DimVector>(n.args[z.arg]) &&
                                   z.elem < static_cast<int>(std::get<DimVector>(n.args[z.arg]).size())))
          << "load_runtime_state_dict: the saved program is corrupt (node " << n.name << ")";
      n.size_refs.push_back(z);
    }
    switch (kind) {
      case NodeKind::kTable:
        n.schema = Boxed().Find(n.name);
        OF_CHECK_KIND(n.schema, ErrorKind::kNotImplemented)
            << "load_runtime_state_dict: this build has no op '" << n.name << "'";
        n.fn = n.schema->call;
        break;
      case NodeKind::kHandWritten:
        n.fn = FindNodeFn(n.name);
        OF_CHECK_KIND(n.fn, ErrorKind::kNotImplemented)
            << "load_runtime_state_dict: this build has no graph node '" << n.name << "'";
        break;
      case NodeKind::kLocalBackward:
        n.fn = LocalBackwardFn();
        break;
      case NodeKind::kFusedPointwise:
        n.fn = FusedPointwiseFn();  // (its members' op indices: the registry's fingerprint matched)
        break;
      case NodeKind::kBarrier:
        n.fn = nullptr;
        break;
    }
    p->nodes.push_back(std::move(n));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const bool wrapped = r.Pod<int8_t>() != 0;
    if (!tensors[i].defined()) continue;
    tensors[i].impl()->is_wrapped_number_ = wrapped;
    if (i < names.size() && !names[i].empty()) p->names[tensors[i].impl()] = names[i];
  }
  OF_CHECK_VALUE(r.done()) << "load_runtime_state_dict: the saved program has trailing bytes";
  p->Finalize();
  return p;
}

}  // namespace oneflow::lazy
