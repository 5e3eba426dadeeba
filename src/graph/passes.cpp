// Passes over a traced Program (see passes.h).
#include "graph/passes.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "graph/fusion.h"

namespace oneflow::lazy {

namespace {

// ---- Note [Pure nodes] ----

bool Writes(const Node& n) {
  if (n.barrier >= 0 || !n.fn) return true;  // a Python step may do anything
  // Ops that write an argument without the in-place name (the table's notes say so): BatchNorm's
  // running statistics, OneFlow's slice_update, max_norm's renorm, the fused optimizer updates.
  static const std::unordered_set<std::string_view> kWriters = {
      "setitem", "copy_", "batch_norm", "slice_update", "embedding_renorm", "sgd_update", "adam_update",
      "adamax_update", "lamb_update", "rmsprop_update", "adagrad_update", "adadelta_update", "nadam_update",
      "radam_update"};
  if (kWriters.count(n.name)) return true;
  return n.name.size() > 1 && n.name.back() == '_' && n.name[n.name.size() - 2] != '_';  // add_: in place
}

bool Random(const Node& n) {
  // Ops drawing from the default generator without taking a Generator parameter.
  if (n.name.find("dropout") != std::string::npos && n.name != "dropout_backward") return true;
  if (n.name.rfind("rrelu", 0) == 0) return true;
  if (n.schema)
    for (const ParamSchema& p : n.schema->params)
      if (p.type.rfind("Generator", 0) == 0) return true;
  return false;
}

bool Pure(const Node& n) {
  if (Writes(n) || Random(n)) return false;
  if (!n.scalars.empty()) return false;  // its value changes between runs (Note [Scalar inputs])
  for (int s : n.outs)
    if (s < 0) return false;  // returns a captured tensor (it updated it)
  return true;
}

struct Ctx {
  Program& p;
  PassStats stats;
  std::vector<char> dead;        // per node
  std::vector<int> producer;     // per slot: the live node that computed it last, or -1
  std::vector<char> written;     // per slot: the program writes it (or a view of it)
  std::vector<char> exposed;     // per slot: written, or returned to the user (or a view of one)
  std::unordered_set<const TensorImpl*> written_captured;  // captured tensors the program writes
  std::unordered_map<int, Tensor> constants;               // folded slots

  explicit Ctx(Program& prog) : p(prog) {
    dead.assign(p.nodes.size(), 0);
    producer.assign(p.num_slots, -1);
    written.assign(p.num_slots, 0);
    exposed.assign(p.num_slots, 0);
    if (p.forward.size() < static_cast<size_t>(p.num_slots)) p.forward.resize(p.num_slots, -1);
    for (const Node& n : p.nodes) {
      if (!Writes(n)) continue;
      for (const SlotRef& r : n.refs) written[r.slot] = 1;
      for (const Value& v : n.args) {
        if (const auto* t = std::get_if<Tensor>(&v); t && t->defined()) written_captured.insert(t->impl());
        if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
          for (const Tensor& t : *ts)
            if (t.defined()) written_captured.insert(t.impl());
      }
    }
    for (int s : p.pinned) exposed[p.Resolve(s)] = 1;
    for (int s = 0; s < p.num_slots; ++s) exposed[s] |= written[s];
    // A write to (or the user's hold on) a view reaches its base: back along the views.
    for (size_t i = p.nodes.size(); i-- > 0;) {
      const Node& n = p.nodes[i];
      if (!n.aliases) continue;
      bool w = false, e = false;
      for (int s : n.outs)
        if (s >= 0) w |= written[s], e |= exposed[s];
      for (const SlotRef& r : n.refs) {
        written[r.slot] |= w;
        exposed[r.slot] |= e;
      }
    }
  }

  void ResolveRefs(Node& n) {
    for (SlotRef& r : n.refs) r.slot = p.Resolve(r.slot);
  }
  // The slot argument `arg` of node n reads (resolved), or -1.
  int In(const Node& n, int arg) const {
    for (const SlotRef& r : n.refs)
      if (r.arg == arg && r.elem < 0) return p.Resolve(r.slot);
    return -1;
  }
  // The live node that produced slot s, when it is op `name`.
  const Node* ProducedBy(int s, std::string_view name) const {
    if (s < 0 || producer[s] < 0) return nullptr;
    const Node& m = p.nodes[producer[s]];
    return m.name == name ? &m : nullptr;
  }
  const Tensor& Meta(int s) const { return p.meta[s]; }
  // Node i's only output is `to`'s value from now on (node i is removed). Only when the program
  // writes neither (they now share storage); a node that is a view in eager (`view`) already
  // shares `to`'s storage, so its output may be one the user holds, while another node's output
  // (a cast's new tensor) must not be returned or written.
  bool Forward(size_t i, int to, bool view) {
    const Node& n = p.nodes[i];
    if (n.outs.size() != 1 || to < 0) return false;
    int from = n.outs[0];
    if (from == to || written[from] || written[to] || (!view && exposed[from])) return false;
    p.forward[from] = to;
    dead[i] = 1;
    ++stats.simplified;
    return true;
  }
  // Node i, a view of a view of `to`, addresses `to`'s elements as `to` does (the same sizes,
  // strides and offset): its output is `to` from now on even where the program writes one of them
  // (they share storage already; the writes reached `to` through the views). A Linear's weight
  // gradient t(transpose(g)) that accumulate_grad_ reads, Note [Weight-gradient layout].
  bool ForwardSameView(size_t i, int to) {
    const Node& n = p.nodes[i];
    if (n.outs.size() != 1 || to < 0 || !n.aliases) return false;
    int from = n.outs[0];
    const Tensor& a = Meta(from);
    const Tensor& b = Meta(to);
    if (from == to || from < 0 || a.dtype() != b.dtype() || a.sizes() != b.sizes() || a.strides() != b.strides() ||
        a.offset() != b.offset())
      return false;
    p.forward[from] = to;
    written[to] |= written[from];
    exposed[to] |= exposed[from];
    dead[i] = 1;
    ++stats.simplified;
    return true;
  }
};

// ---- algebraic simplification: rules keyed by op ----
//
// Each rule looks at a live node (its refs resolved) and the live node producing its input, and
// may forward its output to an earlier slot or rewrite it to read an earlier slot. A chain's
// inner node stays when something else reads it (dead-code elimination removes it otherwise).
// Rules never cross a no_grad boundary: an output computed without grad must not become a value
// that carries it.

using Rule = bool (*)(Ctx& c, size_t i);

// Note [Dynamic shapes]: the node reads or computes a value whose sizes are known only when it runs.
bool TouchesDynamic(const Program& p, const Node& n) {
  for (const SlotRef& r : n.refs)
    if (p.Dynamic(r.slot)) return true;
  for (int s : n.outs)
    if (p.Dynamic(s)) return true;
  return false;
}

bool SameGradMode(const Node& a, const Node& b) { return a.grad_enabled == b.grad_enabled; }

int64_t WrapDim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// Transposes the two dims of a matrix (t, or transpose(x, 0, 1) of a 2-D x, either order).
bool SwapsMatrix(const Ctx& c, const Node& m) {
  if (m.name == "t") return true;
  int x = c.In(m, 0);
  if (m.name != "transpose" || x < 0 || c.Meta(x).dim() != 2 || m.args.size() != 3 ||
      !std::holds_alternative<int64_t>(m.args[1]) || !std::holds_alternative<int64_t>(m.args[2]))
    return false;
  return WrapDim(std::get<int64_t>(m.args[1]), 2) != WrapDim(std::get<int64_t>(m.args[2]), 2);
}

// t(t(x)) = t(transpose(x, 0, 1)) = x (the second: a Linear weight's gradient, Note
// [Weight-gradient layout] in autograd/formulas.cpp)
bool RuleT(Ctx& c, size_t i) {
  const Node& n = c.p.nodes[i];
  int x = c.In(n, 0);
  const Node* m = x >= 0 && c.producer[x] >= 0 ? &c.p.nodes[c.producer[x]] : nullptr;
  if (!m || !SwapsMatrix(c, *m) || !SameGradMode(n, *m)) return false;
  const int y = c.In(*m, 0);
  return c.Forward(i, y, true) || (m->aliases && c.ForwardSameView(i, y));
}

// transpose(x, a, a) = x; transpose(transpose(x, a, b), a, b) = x (either order)
bool RuleTranspose(Ctx& c, size_t i) {
  const Node& n = c.p.nodes[i];
  int x = c.In(n, 0);
  if (x < 0 || n.args.size() != 3 || !std::holds_alternative<int64_t>(n.args[1])) return false;
  const int64_t rank = c.Meta(x).dim();
  int64_t a = WrapDim(std::get<int64_t>(n.args[1]), rank), b = WrapDim(std::get<int64_t>(n.args[2]), rank);
  if (a == b) return c.Forward(i, x, true);
  const Node* m = c.ProducedBy(x, "transpose");
  if (!m || !SameGradMode(n, *m) || m->args.size() != 3 || !std::holds_alternative<int64_t>(m->args[1])) return false;
  int64_t ma = WrapDim(std::get<int64_t>(m->args[1]), rank), mb = WrapDim(std::get<int64_t>(m->args[2]), rank);
  if (!((a == ma && b == mb) || (a == mb && b == ma))) return false;
  return c.Forward(i, c.In(*m, 0), true);
}

// permute(x, identity) = x; permute(permute(x, p), q) = permute(x, p∘q) (x when that is the identity)
bool RulePermute(Ctx& c, size_t i) {
  Node& n = c.p.nodes[i];
  int x = c.In(n, 0);
  if (x < 0 || n.args.size() != 2 || !std::holds_alternative<DimVector>(n.args[1])) return false;
  const int64_t rank = c.Meta(x).dim();
  auto norm = [&](const DimVector& v) {
    DimVector out(v.size());
    for (size_t k = 0; k < v.size(); ++k) out[k] = WrapDim(v[k], rank);
    return out;
  };
  auto identity = [](const DimVector& v) {
    for (size_t k = 0; k < v.size(); ++k)
      if (v[k] != static_cast<int64_t>(k)) return false;
    return true;
  };
  DimVector q = norm(std::get<DimVector>(n.args[1]));
  if (static_cast<int64_t>(q.size()) != rank) return false;
  if (identity(q)) return c.Forward(i, x, true);
  const Node* m = c.ProducedBy(x, "permute");
  if (!m || !SameGradMode(n, *m) || m->args.size() != 2 || !std::holds_alternative<DimVector>(m->args[1])) return false;
  int y = c.In(*m, 0);
  if (y < 0) return false;
  DimVector pm = norm(std::get<DimVector>(m->args[1]));  // (same rank: a permutation keeps it)
  if (pm.size() != q.size()) return false;
  DimVector comp(q.size());
  for (size_t k = 0; k < q.size(); ++k) comp[k] = pm[q[k]];
  if (identity(comp)) return c.Forward(i, y, true);
  n.args[1] = comp;  // one permute of the inner input
  for (SlotRef& r : n.refs)
    if (r.arg == 0 && r.elem < 0) r.slot = y;
  ++c.stats.simplified;
  return true;
}

bool SameSizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.sizes()[d] != b.sizes()[d]) return false;
  return true;
}

// reshape(reshape(x, a), b) = reshape(x, b) (and through a view); view(view(x, a), b) = view(x, b)
// for a contiguous x (a view of a contiguous tensor always exists); either to x's sizes = x.
template <bool kView>
bool RuleReshape(Ctx& c, size_t i) {
  Node& n = c.p.nodes[i];
  int x = c.In(n, 0);
  if (x < 0 || n.outs.size() != 1) return false;
  bool changed = false;
  const Node* m = c.producer[x] >= 0 ? &c.p.nodes[c.producer[x]] : nullptr;
  if (m && SameGradMode(n, *m) && (m->name == "view" || m->name == "reshape")) {
    int y = c.In(*m, 0);
    if (y >= 0 && (!kView || c.Meta(y).is_contiguous()) && !c.written[x]) {
      for (SlotRef& r : n.refs)
        if (r.arg == 0 && r.elem < 0) r.slot = y;
      x = y;
      changed = true;
    }
  }
  if (SameSizes(c.Meta(n.outs[0]), c.Meta(x)) && c.Forward(i, x, true)) return true;
  if (changed) ++c.stats.simplified;
  return changed;
}

// Every value of `from` survives the round trip from -> to -> from.
bool Widens(DType from, DType to) {
  auto rank = [](DType t) -> int {
    switch (t) {
      case DType::kFloat16: case DType::kBFloat16: return 1;
      case DType::kFloat32: return 2;
      case DType::kFloat64: return 3;
      default: return 0;
    }
  };
  if (from == DType::kBool) return true;
  if (IsFloating(from) && IsFloating(to)) return rank(to) > rank(from);
  if (IsFloating(to) || IsComplex(to)) {
    if (from == DType::kInt8 || from == DType::kUInt8) return true;  // exact in any float
    // int16 needs 16 bits of mantissa: float32 and wider, not float16 / bfloat16.
    if (from == DType::kInt16) return rank(to) >= 2 || IsComplex(to);
    if (from == DType::kInt32) return to == DType::kFloat64 || to == DType::kComplex128;
    if (IsFloating(from)) return to == DType::kComplex128 || (to == DType::kComplex64 && rank(from) <= 2);
    return false;
  }
  if (from == DType::kInt8 || from == DType::kUInt8)
    return to == DType::kInt16 || to == DType::kInt32 || to == DType::kInt64;
  if (from == DType::kInt16) return to == DType::kInt32 || to == DType::kInt64;
  if (from == DType::kInt32) return to == DType::kInt64;
  return false;
}

// cast(x, dtype(x)) = x; cast(cast(x, wider), dtype(x)) = x
bool RuleCast(Ctx& c, size_t i) {
  const Node& n = c.p.nodes[i];
  int x = c.In(n, 0);
  if (x < 0 || n.outs.size() != 1) return false;
  DType want = c.Meta(n.outs[0]).dtype();
  if (c.Meta(x).dtype() == want && c.Meta(x).is_contiguous()) return c.Forward(i, x, false);
  const Node* m = c.ProducedBy(x, "cast");
  if (!m || !SameGradMode(n, *m)) return false;
  int y = c.In(*m, 0);
  if (y < 0 || c.Meta(y).dtype() != want || !Widens(want, c.Meta(x).dtype())) return false;
  return c.Forward(i, y, false);
}

const std::unordered_map<std::string_view, Rule>& Rules() {
  static const std::unordered_map<std::string_view, Rule> rules = {
      {"t", &RuleT},
      {"transpose", &RuleTranspose},
      {"permute", &RulePermute},
      {"reshape", &RuleReshape<false>},
      {"view", &RuleReshape<true>},
      {"cast", &RuleCast},
  };
  return rules;
}

void Simplify(Ctx& c) {
  const auto& rules = Rules();
  for (size_t i = 0; i < c.p.nodes.size(); ++i) {
    Node& n = c.p.nodes[i];
    if (c.dead[i]) continue;
    c.ResolveRefs(n);
    if (Pure(n) && !n.outs.empty() && !TouchesDynamic(c.p, n)) {
      // an op that returned its input (contiguous() of a contiguous tensor, .to() its own dtype)
      bool all_inputs = true;
      for (int s : n.outs) {
        bool found = false;
        for (const SlotRef& r : n.refs) found |= r.slot == s;
        all_inputs &= found;
      }
      if (all_inputs) {
        c.dead[i] = 1;
        ++c.stats.simplified;
        continue;
      }
      // (not a local-autograd node: its leaves and its own autograd graph are outputs no rule keeps;
      // not a value of run-time sizes, Note [Dynamic shapes]: the rules compare traced sizes)
      if (auto it = rules.find(n.name);
          n.local_grads.empty() && !TouchesDynamic(c.p, n) && it != rules.end() && it->second(c, i) && c.dead[i])
        continue;
    }
    for (int s : n.outs)
      if (s >= 0) c.producer[s] = static_cast<int>(i);
  }
}

// ---- constant folding ----

bool RequiresGradArg(const Node& n) {
  if (!n.schema) return false;
  for (size_t k = 0; k < n.schema->params.size() && k < n.args.size(); ++k)
    if (n.schema->params[k].name == "requires_grad" && std::holds_alternative<bool>(n.args[k]) &&
        std::get<bool>(n.args[k]))
      return true;
  return false;
}

void Fold(Ctx& c) {
  for (size_t i = 0; i < c.p.nodes.size(); ++i) {
    Node& n = c.p.nodes[i];
    if (c.dead[i]) continue;
    c.ResolveRefs(n);
    if (!Pure(n) || n.outs.empty() || RequiresGradArg(n)) continue;
    bool ok = true;
    for (const SlotRef& r : n.refs) ok &= c.constants.count(r.slot) > 0;
    for (int s : n.outs) ok &= !c.exposed[s];
    // a captured tensor (a parameter, a buffer) may change between calls: not a constant
    auto captured = [](const Tensor& t) { return t.defined() && !t.is_wrapped_number(); };
    for (size_t k = 0; ok && k < n.args.size(); ++k) {
      bool is_ref = false;
      for (const SlotRef& r : n.refs) is_ref |= r.arg == static_cast<int>(k);
      if (const auto* t = std::get_if<Tensor>(&n.args[k]); t && !is_ref) ok &= !captured(*t);
      if (const auto* ts = std::get_if<std::vector<Tensor>>(&n.args[k])) {
        for (size_t e = 0; e < ts->size(); ++e) {
          bool ref = false;
          for (const SlotRef& r : n.refs) ref |= r.arg == static_cast<int>(k) && r.elem == static_cast<int>(e);
          ok &= ref || !captured((*ts)[e]);
        }
      }
    }
    if (!ok) continue;
    std::vector<Value> a = n.args;
    for (const SlotRef& r : n.refs) {
      const Tensor& t = c.constants.at(r.slot);
      if (r.arg < 0) continue;  // (a value read for its sizes: a constant's are the traced ones)
      if (r.elem < 0) a[r.arg] = t;
      else std::get<std::vector<Tensor>>(a[r.arg])[r.elem] = t;
    }
    for (int k : n.devices) a[k] = c.p.device;
    std::vector<Tensor> outs;
    try {
      AutoGradMode no_grad(false);
      outs = n.Call(a);
    } catch (const std::exception&) {
      continue;  // it raises when run too, with the op's own message then
    }
    if (outs.size() != n.outs.size()) continue;
    for (size_t k = 0; k < outs.size(); ++k) c.constants[n.outs[k]] = outs[k];
    c.dead[i] = 1;
    ++c.stats.folded;
  }
}

// ---- common-subexpression elimination ----

void KeyOf(std::ostringstream& os, const Value& v) {
  std::visit([&](const auto& x) {
    using T = std::decay_t<decltype(x)>;
    os << v.index() << ':';
    if constexpr (std::is_same_v<T, std::monostate>) {
    } else if constexpr (std::is_same_v<T, Tensor>) {
      if (!x.defined()) return;
      if (x.is_wrapped_number()) {  // a Python number: its value and dtype
        Scalar s = ItemOf(x);
        double d = s.ToDouble();
        int64_t bits;
        std::memcpy(&bits, &d, sizeof(bits));
        os << 'w' << static_cast<int>(x.dtype()) << ',' << s.ToInt() << ',' << bits;
      } else {
        os << 'c' << static_cast<const void*>(x.impl());
      }
    } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
      for (const Tensor& t : x) KeyOf(os, Value(t)), os << ';';
    } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
      os << x;
    } else if constexpr (std::is_same_v<T, double>) {
      int64_t bits;
      std::memcpy(&bits, &x, sizeof(bits));
      os << bits;
    } else if constexpr (std::is_same_v<T, Scalar>) {
      double d = x.ToDouble();
      int64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      os << static_cast<int>(x.kind()) << ',' << x.ToInt() << ',' << bits;
    } else if constexpr (std::is_same_v<T, DimVector>) {
      for (int64_t e : x) os << e << ',';
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      for (double e : x) {
        int64_t bits;
        std::memcpy(&bits, &e, sizeof(bits));
        os << bits << ',';
      }
    } else if constexpr (std::is_same_v<T, DType>) os << static_cast<int>(x);
    else if constexpr (std::is_same_v<T, Device>) os << x.str();
    else if constexpr (std::is_same_v<T, std::string>) os << x.size() << ':' << x;
    else os << static_cast<const void*>(x.get());
    os << '|';
  }, v);
}

void Cse(Ctx& c) {
  std::unordered_map<std::string, size_t> seen;
  int epoch = 0;  // Python steps between: captured tensors may have changed
  for (size_t i = 0; i < c.p.nodes.size(); ++i) {
    Node& n = c.p.nodes[i];
    if (n.barrier >= 0) ++epoch;
    if (c.dead[i]) continue;
    c.ResolveRefs(n);
    if (!Pure(n) || n.outs.empty()) continue;
    bool ok = true;
    for (const SlotRef& r : n.refs) ok &= !c.written[r.slot];
    for (int s : n.outs) {
      ok &= !c.exposed[s];
      for (const SlotRef& r : n.refs) ok &= r.slot != s;  // an op that returned its input (simplify's)
    }
    for (const Value& v : n.args) {  // captured tensors the program writes are not the same value twice
      if (const auto* t = std::get_if<Tensor>(&v); t && t->defined() && c.written_captured.count(t->impl())) ok = false;
      if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
        for (const Tensor& t : *ts)
          if (t.defined() && c.written_captured.count(t.impl())) ok = false;
    }
    if (!ok) continue;
    std::ostringstream os;
    os << n.name << '#' << reinterpret_cast<uintptr_t>(n.fn) << '#' << n.grad_enabled << '#' << epoch << '#';
    for (const SlotRef& r : n.refs) os << r.arg << '.' << r.elem << '=' << r.slot << ';';
    for (const ArgPos& g : n.local_grads) os << 'g' << g.arg << '.' << g.elem << ';';
    for (const Value& v : n.args) KeyOf(os, v);  // (slots are undefined tensors here: the refs say which)
    auto [it, fresh] = seen.emplace(os.str(), i);
    if (fresh) continue;
    const Node& m = c.p.nodes[it->second];
    if (m.outs.size() != n.outs.size()) continue;
    for (size_t k = 0; k < n.outs.size(); ++k) c.p.forward[n.outs[k]] = m.outs[k];
    c.dead[i] = 1;
    ++c.stats.merged;
  }
}

// ---- dead-code elimination ----

void Dce(Ctx& c) {
  std::vector<char> needed(c.p.num_slots, 0);
  for (int s : c.p.pinned) needed[c.p.Resolve(s)] = 1;
  for (size_t i = c.p.nodes.size(); i-- > 0;) {
    Node& n = c.p.nodes[i];
    if (c.dead[i]) continue;
    c.ResolveRefs(n);
    bool live = !Pure(n);
    for (int s : n.outs) live |= s >= 0 && needed[s];
    if (!live) {
      c.dead[i] = 1;
      ++c.stats.removed;
      continue;
    }
    for (const SlotRef& r : n.refs) needed[r.slot] = 1;
  }
}

}  // namespace

bool IsPureNode(const Node& n) { return Pure(n); }
bool WritesArguments(const Node& n) { return Writes(n); }

// ---- Note [Dropped gradient writes] ----
// With the optimizers' updates as nodes (docs/graph.md, "The update as nodes"), an update node
// reads each parameter's gradient from the slot the backward computed, and the graph clears the
// .grad fields after every call (zero_grad(set_to_none=True)): a compiled OneFlow graph leaves a
// parameter's .grad None too. So the accumulate_grad_ of a parameter that a later update node
// takes writes a .grad nobody reads: it is removed, which also ends the gradient's slot at the
// update (the arena reuses its bytes) and saves the copy or add. Kept: a write a Python step
// after it may read (a barrier follows), and a graph input's (not an update's parameter).
namespace {
void DropGradWrites(Ctx& c) {
  // The fused multi-tensor updates update_nodes.py records.
  static const std::unordered_set<std::string_view> kUpdates = {"sgd_update", "adam_update"};
  std::unordered_set<const TensorImpl*> updated;  // parameters a later update node takes
  bool barrier_after = false;
  for (size_t i = c.p.nodes.size(); i-- > 0;) {
    const Node& n = c.p.nodes[i];
    if (c.dead[i]) continue;
    if (n.barrier >= 0) {
      barrier_after = true;
    } else if (kUpdates.count(n.name)) {
      for (const Value& v : n.args)
        if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
          for (const Tensor& t : *ts)
            if (t.defined()) updated.insert(t.impl());
    } else if (n.name == "accumulate_grad_" && !barrier_after && !n.args.empty()) {
      bool leaf_is_slot = false;
      for (const SlotRef& r : n.refs) leaf_is_slot |= r.arg == 0;
      const auto* leaf = std::get_if<Tensor>(&n.args[0]);
      if (!leaf_is_slot && leaf && leaf->defined() && updated.count(leaf->impl())) {
        c.dead[i] = 1;
        ++c.stats.dropped;
      }
    }
  }
}
}  // namespace

PassStats Optimize(Program& p, const PassOptions& o) {
  Ctx c(p);
  if (o.simplify) Simplify(c);
  if (o.fold) Fold(c);
  if (o.cse) Cse(c);
  if (o.fuse || o.fuse_pointwise) {
    FusionStats f = Fuse(p, c.dead, c.exposed, {o.fuse, o.fuse && o.add_to_output, o.fuse_pointwise, o.grad});
    c.stats.fused = f.producers;
    c.stats.pointwise = f.pointwise;
    c.stats.absorbed = f.absorbed;
  }
  if (o.drop_grad_writes) DropGradWrites(c);
  if (o.dce) Dce(c);
  std::vector<Node> kept;
  kept.reserve(p.nodes.size());
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (c.dead[i]) continue;
    c.ResolveRefs(p.nodes[i]);
    kept.push_back(std::move(p.nodes[i]));
  }
  p.nodes = std::move(kept);
  // the folded values still read (by a node or as a pinned slot)
  std::vector<char> read(p.num_slots, 0);
  for (const Node& n : p.nodes)
    for (const SlotRef& r : n.refs) read[r.slot] = 1;
  for (int s : p.pinned) read[p.Resolve(s)] = 1;
  for (const auto& [s, t] : c.constants)
    if (read[s]) p.consts.emplace_back(s, t);
  std::sort(p.consts.begin(), p.consts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  p.Finalize();
  return c.stats;
}

}  // namespace oneflow::lazy
