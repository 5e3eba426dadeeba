// Fusion passes (see fusion.h).
#include "graph/fusion.h"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_set>

#include "autograd/autocast.h"
#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/storage_offer.h"
#include "graph/passes.h"
#include "ops/copy.h"
#include "decl/contiguous.h"

namespace oneflow::lazy {

namespace {

// What the fusion rules need to know of the program: who produces each slot, how often each is
// read, and where the nodes writing something are (nothing may be moved across one).
struct Info {
  Program& p;
  std::vector<char>& dead;
  std::vector<char> exposed;     // per slot: written, returned, read by Python (never fused away)
  std::vector<int> producer;     // per slot: the live node computing it, or -1
  std::vector<int> uses;         // per slot: reads by live nodes
  std::vector<int> writes_upto;  // per node: writing nodes (and Python steps) before it

  Info(Program& prog, std::vector<char>& d, const std::vector<char>& ex) : p(prog), dead(d), exposed(ex) {
    exposed.resize(p.num_slots, 0);
    for (int s : p.pinned) exposed[p.Resolve(s)] = 1;
    // Note [Dynamic shapes]: a value of run-time sizes is never fused away (the rules compare sizes)
    for (int s = 0; s < p.num_slots; ++s) exposed[s] |= p.Dynamic(s);
    producer.assign(p.num_slots, -1);
    uses.assign(p.num_slots, 0);
    writes_upto.assign(p.nodes.size() + 1, 0);
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      Node& n = p.nodes[i];
      writes_upto[i + 1] = writes_upto[i];
      if (dead[i]) continue;
      for (SlotRef& r : n.refs) r.slot = p.Resolve(r.slot), ++uses[r.slot];
      for (int s : n.outs)
        if (s >= 0) producer[s] = static_cast<int>(i);
      if (!IsPureNode(n)) ++writes_upto[i + 1];  // (random draws too: conservative)
    }
  }
  // Nothing between nodes a and b (exclusive) writes a value: a pure node at a may run at b.
  bool NoWritesBetween(int a, int b) const { return writes_upto[b] - writes_upto[a + 1] == 0; }
  // The slot argument `arg` of node n reads, or -1.
  static int In(const Node& n, int arg) {
    for (const SlotRef& r : n.refs)
      if (r.arg == arg && r.elem < 0) return r.slot;
    return -1;
  }
  // A tensor argument's traced meta (a slot's) or the captured tensor itself.
  Tensor ArgTensor(const Node& n, int arg) const {
    int s = In(n, arg);
    if (s >= 0) return p.meta[s];
    if (arg < static_cast<int>(n.args.size()))
      if (const auto* t = std::get_if<Tensor>(&n.args[arg])) return *t;
    return Tensor();
  }
  // Slot s is node `reader`'s alone to consume (its only reader, not exposed).
  bool OnlyReadBy(int s, const Node& reader) const {
    if (s < 0 || exposed[s]) return false;
    int k = 0;
    for (const SlotRef& r : reader.refs) k += r.slot == s;
    return uses[s] == k;
  }
};

bool IsOne(const Value& v) {
  if (const auto* s = std::get_if<Scalar>(&v)) return !s->is_complex() && s->ToDouble() == 1.0;
  if (const auto* d = std::get_if<double>(&v)) return *d == 1.0;
  return false;
}

const OpSchema& Schema(const char* name) {
  const OpSchema* s = Boxed().Find(name);
  OF_CHECK(s) << "nn.Graph fusion: no boxed op " << name;
  return *s;
}

// A table-op node of `name` computing `args`; its slot arguments come from `refs` (arg index ->
// slot). Location, scope, grad mode and outputs are the replaced node's.
Node MakeOpNode(const Node& like, const char* name, std::vector<Value> args, const std::vector<std::pair<int, int>>& refs) {
  const OpSchema& s = Schema(name);
  Node f;
  f.name = name;
  f.fn = s.call;
  f.schema = &s;
  f.args = std::move(args);
  for (const auto& [arg, slot] : refs) f.refs.push_back({arg, -1, slot});
  f.outs = like.outs;
  f.grad_enabled = like.grad_enabled;
  f.backward = like.backward;
  f.loc = like.loc;
  f.scope = like.scope;
  return f;
}

// ---- producer fusion: rules keyed by (producer op, consumer op) ----

using ProducerRule = bool (*)(Info& c, size_t consumer, int operand, const FusionOptions& o);

// A tensor argument as a Value for the fused node plus its slot (or -1 for a captured tensor).
std::pair<Value, int> Operand(const Info& c, const Node& n, int arg) {
  int s = Info::In(n, arg);
  if (s >= 0) return {Value(Tensor()), s};
  return {n.args[arg], -1};
}

bool SameDeviceCpu(const Program& p, std::initializer_list<const Tensor*> ts) {
  if (p.device.type != DeviceType::kCPU) return false;
  for (const Tensor* t : ts)
    if (t->device().type != DeviceType::kCPU && t->device().type != DeviceType::kMeta) return false;
  return true;
}

// add(matmul(x, t(w)), b) -> fused_matmul_bias(x, w, b): nn.Linear's trace (F.linear).
bool FuseMatmulBias(Info& c, size_t i, int operand, const FusionOptions&) {
  Node& n = c.p.nodes[i];
  if (n.args.size() != 3 || !IsOne(n.args[2]) || n.outs.size() != 1 || n.outs[0] < 0) return false;
  const int mm_slot = Info::In(n, operand);
  const int mi = c.producer[mm_slot];
  const Node& m = c.p.nodes[mi];
  if (!c.OnlyReadBy(mm_slot, n) || m.grad_enabled != n.grad_enabled || m.backward != n.backward ||
      !c.NoWritesBetween(mi, static_cast<int>(i)))
    return false;
  const int wt_slot = Info::In(m, 1);
  if (wt_slot < 0 || c.producer[wt_slot] < 0 || c.p.nodes[c.producer[wt_slot]].name != "t") return false;
  const Node& tn = c.p.nodes[c.producer[wt_slot]];
  if (tn.grad_enabled != n.grad_enabled) return false;
  Tensor x = c.ArgTensor(m, 0), w = c.ArgTensor(tn, 0), b = c.ArgTensor(n, 1 - operand);
  const Tensor& out = c.p.meta[n.outs[0]];
  if (!x.defined() || !w.defined() || !b.defined() || b.is_wrapped_number()) return false;
  if (!IsFloating(x.dtype()) || x.dim() < 1 || w.dim() != 2 || b.dim() != 1) return false;
  if (w.dtype() != x.dtype() || b.dtype() != x.dtype() || out.dtype() != x.dtype()) return false;
  if (b.sizes()[0] != w.sizes()[0] || out.sizes() != c.p.meta[mm_slot].sizes()) return false;
  if (!SameDeviceCpu(c.p, {&x, &w, &b})) return false;
  auto [xv, xs] = Operand(c, m, 0);
  auto [wv, ws] = Operand(c, tn, 0);
  auto [bv, bs] = Operand(c, n, 1 - operand);
  std::vector<std::pair<int, int>> refs;
  if (xs >= 0) refs.emplace_back(0, xs);
  if (ws >= 0) refs.emplace_back(1, ws), ++c.uses[ws];
  if (bs >= 0) refs.emplace_back(2, bs);
  --c.uses[wt_slot];
  n = MakeOpNode(n, "fused_matmul_bias", {xv, wv, bv, Value(), 1.0, 1.0}, refs);
  c.dead[mi] = 1;
  return true;
}

// add(fused_matmul_bias(x, w, b), r) -> fused_matmul_bias(x, w, b, _add_to_output=r): the
// residual written with the bias before the GEMM accumulates (OneFlow's allow_fuse_add_to_output).
bool FuseAddToOutput(Info& c, size_t i, int operand, const FusionOptions& o) {
  if (!o.add_to_output) return false;
  Node& n = c.p.nodes[i];
  if (n.args.size() != 3 || !IsOne(n.args[2]) || n.outs.size() != 1 || n.outs[0] < 0) return false;
  const int f_slot = Info::In(n, operand);
  const int fi = c.producer[f_slot];
  const Node& m = c.p.nodes[fi];
  if (m.args.size() != 6 || !std::holds_alternative<std::monostate>(m.args[3]) || Info::In(m, 3) >= 0 ||
      !IsOne(m.args[4]) || !IsOne(m.args[5]))
    return false;
  if (!c.OnlyReadBy(f_slot, n) || m.grad_enabled != n.grad_enabled || m.backward != n.backward ||
      !c.NoWritesBetween(fi, static_cast<int>(i)))
    return false;
  Tensor r = c.ArgTensor(n, 1 - operand);
  const Tensor& out = c.p.meta[n.outs[0]];
  if (!r.defined() || r.is_wrapped_number() || r.dtype() != out.dtype() || r.sizes() != out.sizes() ||
      out.sizes() != c.p.meta[f_slot].sizes() || !SameDeviceCpu(c.p, {&r}))
    return false;
  auto [rv, rs] = Operand(c, n, 1 - operand);
  std::vector<Value> args = m.args;
  args[3] = rv;
  std::vector<std::pair<int, int>> refs;
  for (const SlotRef& ref : m.refs) refs.emplace_back(ref.arg, ref.slot);
  if (rs >= 0) refs.emplace_back(3, rs);
  n = MakeOpNode(n, "fused_matmul_bias", std::move(args), refs);
  c.dead[fi] = 1;
  return true;
}

const std::map<std::pair<std::string_view, std::string_view>, ProducerRule>& ProducerRules() {
  static const std::map<std::pair<std::string_view, std::string_view>, ProducerRule> rules = {
      {{"matmul", "add"}, &FuseMatmulBias},
      {{"fused_matmul_bias", "add"}, &FuseAddToOutput},
  };
  return rules;
}

int FuseProducers(Info& c, const FusionOptions& o) {
  const auto& rules = ProducerRules();
  int fused = 0;
  for (size_t i = 0; i < c.p.nodes.size(); ++i) {
    if (c.dead[i] || !IsPureNode(c.p.nodes[i])) continue;
    for (int operand = 0; operand < 2; ++operand) {
      const Node& n = c.p.nodes[i];
      int s = Info::In(n, operand);
      if (s < 0 || c.producer[s] < 0 || c.dead[c.producer[s]]) continue;
      const Node& m = c.p.nodes[c.producer[s]];
      if (!IsPureNode(m) || !m.local_grads.empty() || !n.local_grads.empty()) continue;  // (their own autograd)
      auto it = rules.find({m.name, n.name});
      if (it != rules.end() && it->second(c, i, operand, o)) {
        ++fused;
        break;
      }
    }
  }
  return fused;
}

// ---- pointwise groups ----
//
// Note [Fused pointwise nodes]: a fused node's arguments are its members' arguments one after
// the other, then six of its own: the output tensor to write (undefined: allocate one; the
// executor's arena gives one, FusedOutputArg), the members' ops (indices into the boxed
// registry), how many arguments each takes, the links (pairs: argument position, member whose
// result it reads), the output's sizes and dtype. The executor fills the members' slot arguments
// as for any node; the kernel splits the output into blocks of rows that stay in cache and runs
// every member on each block with its own entry (the pointwise engine's functors), so each value
// inside the group lives in a block buffer, never in a whole tensor. Results are those of the
// unfused ops element for element: each element is computed by the same functor from the same
// inputs.

constexpr int kOwnArgs = 6;
constexpr int64_t kBlockElems = 16384;
// At most this many nodes a group: the block results of a group stay in cache (a longer chain
// becomes several groups).
constexpr size_t kMaxMembers = 32;
constexpr const char* kFusedPrefix = "fused_pointwise";

const std::unordered_set<std::string_view>& PointwiseSet() {
  static const auto* s = [] {
    auto* set = new std::unordered_set<std::string_view>();
    for (const char* n : FusiblePointwiseOps()) set->insert(n);
    return set;
  }();
  return *s;
}

bool NeedsGradArg(const Value& v) {
  if (const auto* t = std::get_if<Tensor>(&v)) return t->defined() && t->requires_grad();
  if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
    for (const Tensor& t : *ts)
      if (t.defined() && t.requires_grad()) return true;
  return false;
}

// Per slot: its value will require grad when the program runs (grad mode on).
std::vector<char> NeedsGrad(const Info& c, bool grad) {
  std::vector<char> g(c.p.num_slots, 0);
  if (!grad) return g;
  for (int s : c.p.inputs) g[s] = c.p.meta[s].requires_grad();
  for (size_t i = 0; i < c.p.nodes.size(); ++i) {
    const Node& n = c.p.nodes[i];
    if (c.dead[i]) continue;
    bool any = n.barrier >= 0;  // a Python step: its outputs may carry grad
    for (const SlotRef& r : n.refs) any |= g[r.slot] != 0;
    for (const Value& v : n.args) any |= NeedsGradArg(v);
    any &= n.grad_enabled || n.barrier >= 0;
    for (int s : n.outs)
      if (s >= 0) g[s] |= any;
  }
  return g;
}

// `t` broadcasts to `shape` the way a block can follow: the same sizes, a 0-d value, or (leading
// 1s aside) the trailing sizes of `shape`. Its rank without leading 1s, or -1 when it cannot.
int SuffixRank(const DimVector& t, const DimVector& shape) {
  if (t == shape) return static_cast<int>(shape.size());
  size_t lead = 0;
  while (lead < t.size() && t[lead] == 1) ++lead;
  const size_t k = t.size() - lead;
  if (k >= shape.size()) return -1;      // as many dims as the output but other sizes
  if (k == 0 && !t.empty()) return -1;   // ([1, 1] promotes as a dimensioned tensor, a 0-d view would not)
  for (size_t d = 0; d < k; ++d)
    if (t[lead + d] != shape[shape.size() - k + d]) return -1;
  return static_cast<int>(k);
}

bool Candidate(const Info& c, size_t i, const std::vector<char>& needs_grad) {
  const Node& n = c.p.nodes[i];
  if (c.dead[i] || !n.schema || !IsPureNode(n) || n.outs.size() != 1 || n.outs[0] < 0) return false;
  if (!PointwiseSet().count(n.name) || needs_grad[n.outs[0]] || !n.devices.empty() || !n.local_grads.empty())
    return false;
  // (a fused node writes an output of the traced sizes: none of run-time sizes, Note [Dynamic shapes])
  if (c.p.Dynamic(n.outs[0])) return false;
  for (const SlotRef& r : n.refs)
    if (c.p.Dynamic(r.slot)) return false;
  const DimVector& shape = c.p.meta[n.outs[0]].sizes();
  for (size_t k = 0; k < n.args.size(); ++k) {
    if (std::holds_alternative<std::vector<Tensor>>(n.args[k])) return false;
    Tensor t = c.ArgTensor(n, static_cast<int>(k));
    if (!t.defined() || t.is_wrapped_number()) continue;
    if (SuffixRank(t.sizes(), shape) < 0) return false;
  }
  return true;
}

struct Group {
  std::vector<int> members;  // node indices, in program order
};

Node MakeFusedNode(const Info& c, const Group& g) {
  const Node& last = c.p.nodes[g.members.back()];
  Node f;
  f.fn = nullptr;  // set by the caller (the kernel below)
  f.outs = last.outs;
  f.grad_enabled = last.grad_enabled;
  f.backward = last.backward;  // (the executor runs backward nodes with autocast off)
  f.loc = last.loc;
  f.scope = last.scope;
  std::string name = kFusedPrefix;
  // (lists of integers as doubles, exact: a DimVector holds at most kMaxDims)
  std::vector<double> ops, counts, links;
  std::vector<int> member_of_slot_index;
  const OpSchema* base = Boxed().all().data();
  std::unordered_map<int, int> produced;  // slot -> member index
  for (size_t k = 0; k < g.members.size(); ++k) {
    const Node& m = c.p.nodes[g.members[k]];
    name += (k ? "," : "[") + m.name;
    const int offset = static_cast<int>(f.args.size());
    ops.push_back(static_cast<double>(m.schema - base));
    counts.push_back(static_cast<double>(m.args.size()));
    for (const Value& v : m.args) f.args.push_back(v);
    for (const SlotRef& r : m.refs) {
      if (auto it = produced.find(r.slot); it != produced.end()) {
        links.push_back(offset + r.arg);
        links.push_back(it->second);
      } else {
        f.refs.push_back({offset + r.arg, r.elem, r.slot});
      }
    }
    produced[m.outs[0]] = static_cast<int>(k);
  }
  f.name = name + "]";
  const Tensor& out = c.p.meta[last.outs[0]];
  f.args.push_back(Value());  // the output to write into (Note [Fused pointwise nodes])
  f.args.push_back(ops);
  f.args.push_back(counts);
  f.args.push_back(links);
  f.args.push_back(out.sizes());
  f.args.push_back(out.dtype());
  return f;
}

std::vector<Tensor> FusedPointwiseCall(const std::vector<Value>& args);

std::pair<int, int> FusePointwise(Info& c, const FusionOptions& o) {
  const std::vector<char> needs_grad = NeedsGrad(c, o.grad);
  const int n = static_cast<int>(c.p.nodes.size());
  std::vector<int> group_of(n, -1);
  std::vector<Group> groups;
  for (int i = 0; i < n; ++i) {
    if (!Candidate(c, i, needs_grad)) continue;
    const Node& node = c.p.nodes[i];
    const DimVector& shape = c.p.meta[node.outs[0]].sizes();
    Group g;
    int merged = 0;
    for (const SlotRef& r : node.refs) {
      const int j = c.producer[r.slot];
      if (j < 0 || group_of[j] < 0) continue;
      Group& h = groups[group_of[j]];
      if (h.members.empty() || h.members.back() != j) continue;  // (already merged, or not its output)
      if (g.members.size() + h.members.size() + 1 > kMaxMembers) continue;
      const Node& m = c.p.nodes[j];
      // (not across the forward / backward boundary: backward nodes run with autocast off)
      if (!c.OnlyReadBy(r.slot, node) || c.p.meta[r.slot].sizes() != shape || m.grad_enabled != node.grad_enabled ||
          m.backward != node.backward ||
          !c.NoWritesBetween(h.members.front(), i))
        continue;
      for (int k : h.members) group_of[k] = -1;
      if (merged++ == 0) g.members = std::move(h.members);
      else g.members.insert(g.members.end(), h.members.begin(), h.members.end());
      h.members.clear();
    }
    g.members.push_back(i);
    if (merged > 1) std::sort(g.members.begin(), g.members.end());  // (one group: already in order)
    for (int k : g.members) group_of[k] = static_cast<int>(groups.size());
    groups.push_back(std::move(g));
  }
  int made = 0, absorbed = 0;
  for (const Group& g : groups) {
    if (g.members.size() < 2) continue;
    Node f = MakeFusedNode(c, g);
    f.fn = &FusedPointwiseCall;
    for (size_t k = 0; k + 1 < g.members.size(); ++k) c.dead[g.members[k]] = 1;
    c.p.nodes[g.members.back()] = std::move(f);
    ++made;
    absorbed += static_cast<int>(g.members.size());
  }
  return {made, absorbed};
}

// ---- the fused pointwise kernel ----

}  // namespace

FusedLayout ReadFusedLayout(const std::vector<Value>& args) {
  OF_CHECK(args.size() >= kOwnArgs) << "fused_pointwise: malformed node";
  FusedLayout l;
  l.nargs = args.size() - kOwnArgs;
  const auto& ops = std::get<std::vector<double>>(args[l.nargs + 1]);
  const auto& counts = std::get<std::vector<double>>(args[l.nargs + 2]);
  const auto& links = std::get<std::vector<double>>(args[l.nargs + 3]);
  const auto& all = Boxed().all();
  size_t at = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    l.begin.push_back(at);
    l.op.push_back(&all[static_cast<size_t>(ops[k])]);
    at += static_cast<size_t>(counts[k]);
  }
  l.begin.push_back(at);
  l.source.assign(l.nargs, -1);
  for (size_t k = 0; k + 1 < links.size(); k += 2)
    l.source[static_cast<size_t>(links[k])] = static_cast<int>(links[k + 1]);
  return l;
}

namespace {

// Per-thread buffers for the members' block results: member k's kernel is offered region k for
// its output (Note [Storage offers]), so once the results' element sizes are known (the first
// block) a block allocates nothing.
struct Scratch {
  IntrusivePtr<Storage> owner;
  int64_t stride = 0;
  std::vector<int64_t> elem;  // per member: its result's element size
};

// Runs the members once over `inputs` (the node's arguments with some replaced by blocks of
// `block_elems` elements); `dtypes` (optional) receives the results' dtypes.
Tensor RunMembers(const FusedLayout& l, const std::vector<Value>& inputs, int64_t block_elems = 0,
                  const Scratch* scratch = nullptr, std::vector<DType>* dtypes = nullptr) {
  std::vector<Tensor> vals(l.op.size());
  for (size_t k = 0; k < l.op.size(); ++k) {
    std::vector<Value> a(inputs.begin() + l.begin[k], inputs.begin() + l.begin[k + 1]);
    for (size_t q = l.begin[k]; q < l.begin[k + 1]; ++q)
      if (l.source[q] >= 0) a[q - l.begin[k]] = vals[l.source[q]];
    std::vector<Tensor> r;
    if (scratch) {
      StorageOffer offer;
      offer.data = static_cast<char*>(scratch->owner->data()) + k * scratch->stride;
      offer.nbytes = static_cast<size_t>(block_elems * scratch->elem[k]);
      offer.owner = scratch->owner.get();
      offer.Open();
      try {
        r = l.op[k]->call(a);
      } catch (...) {
        offer.Settle(nullptr);
        throw;
      }
      offer.Settle(r.size() == 1 && r[0].defined() ? r[0].storage() : nullptr);
    } else {
      r = l.op[k]->call(a);
    }
    OF_CHECK(r.size() == 1) << "fused_pointwise: " << l.op[k]->name << " gave " << r.size() << " outputs";
    vals[k] = std::move(r[0]);
    if (dtypes) (*dtypes)[k] = vals[k].dtype();
  }
  return vals.back();
}

// A Python number argument (a 0-d wrapped tensor) of a member computing in a floating dtype R
// -- its result's, every other tensor argument having it too, so that the entry's computation
// dtype is R -- is cast to R once here: the entry casts it to its computation dtype on every
// call (an allocation per block), and a cast of the same value gives the same bits.
void CastNumbersOnce(const FusedLayout& l, const std::vector<DType>& dtypes, std::vector<Value>& whole) {
  for (size_t k = 0; k < l.op.size(); ++k) {
    const DType r = dtypes[k];
    if (!IsFloating(r)) continue;
    bool same = true;
    std::vector<size_t> numbers;
    for (size_t q = l.begin[k]; q < l.begin[k + 1]; ++q) {
      if (l.source[q] >= 0) {
        same &= dtypes[l.source[q]] == r;
        continue;
      }
      const auto* t = std::get_if<Tensor>(&whole[q]);
      if (!t || !t->defined()) continue;
      if (t->is_wrapped_number()) numbers.push_back(q);
      else same &= t->dtype() == r;
    }
    if (!same) continue;
    for (size_t q : numbers) whole[q] = CastTo(std::get<Tensor>(whole[q]), r);
  }
}

std::vector<Tensor> FusedPointwiseCall(const std::vector<Value>& args) {
  OpScope scope(kFusedPrefix);
  const FusedLayout l = ReadFusedLayout(args);
  const Tensor given = TensorValue(args[l.nargs]);
  const DimVector& shape = std::get<DimVector>(args[l.nargs + 4]);
  const DType dtype = std::get<DType>(args[l.nargs + 5]);
  const int rank = static_cast<int>(shape.size());
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  // Blocks of rows when every tensor argument is on the CPU and follows the output's rows
  // (SuffixRank); otherwise the members run once on the whole tensors, as unfused.
  bool blocked = rank >= 1 && numel > kBlockElems;
  int tail_rank = 0;
  std::vector<Value> whole(args.begin(), args.begin() + l.nargs);
  std::vector<char> rows(l.nargs, 0);  // arguments cut into blocks
  for (size_t q = 0; blocked && q < l.nargs; ++q) {
    const auto* t = std::get_if<Tensor>(&whole[q]);
    if (l.source[q] >= 0 || !t || !t->defined() || t->is_wrapped_number()) continue;
    if (t->device().type != DeviceType::kCPU) blocked = false;
    const int k = SuffixRank(t->sizes(), shape);
    if (k < 0) blocked = false;
    else if (k == rank) rows[q] = 1, whole[q] = Contiguous(*t);
    else {
      tail_rank = std::max(tail_rank, k);
      // without its leading 1s: the block's rank may be below the argument's
      const int64_t lead = t->dim() - k;
      whole[q] = MakeView(*t, DimVector(t->sizes().begin() + lead, t->sizes().end()),
                          DimVector(t->strides().begin() + lead, t->strides().end()), t->offset());
    }
  }
  if (given.defined()) blocked &= given.is_contiguous() && given.sizes() == shape && given.device().type == DeviceType::kCPU;
  if (!blocked) {
    Tensor r = RunMembers(l, whole);
    if (!given.defined()) return {r};
    CopyInto(given, r);
    return {given};
  }
  DimVector tail(shape.end() - tail_rank, shape.end());
  int64_t tail_elems = 1;
  for (int64_t s : tail) tail_elems *= s;
  const int64_t outer = numel / tail_elems;
  const int64_t block_rows = std::max<int64_t>(1, kBlockElems / tail_elems);
  const int64_t nblocks = (outer + block_rows - 1) / block_rows;
  Tensor out = given.defined() ? given : Empty(shape, dtype, Device{DeviceType::kCPU, -1});
  auto block_view = [&](const Tensor& t, int64_t r0, int64_t nrows) {
    DimVector sizes{nrows};
    for (int64_t d : tail) sizes.push_back(d);
    return MakeView(t, sizes, ContiguousStrides(sizes), t.offset() + r0 * tail_elems);
  };
  std::exception_ptr error;
  std::mutex error_mu;
  std::vector<DType> dtypes(l.op.size(), DType::kFloat32);
  std::vector<int64_t> elem(l.op.size(), 0);
  int64_t stride = 0;  // (set once the first block gave the results' element sizes)
  auto block = [&](std::vector<Value>& in, int64_t b, const Scratch* scratch, std::vector<DType>* got) {
    const int64_t r0 = b * block_rows, nrows = std::min(block_rows, outer - r0);
    for (size_t q = 0; q < l.nargs; ++q)
      if (rows[q]) in[q] = block_view(std::get<Tensor>(whole[q]), r0, nrows);
    CopyInto(block_view(out, r0, nrows), RunMembers(l, in, nrows * tail_elems, scratch, got));
  };
  auto run = [&](int64_t b0, int64_t b1) {
    try {
      AutoGradMode no_grad(false);  // (a group needs no gradient; a worker thread's mode is its own)
      std::vector<Value> in = whole;
      Scratch scratch{Storage::Allocate(stride * l.op.size(), Device{DeviceType::kCPU, -1}), stride, elem};
      for (int64_t b = b0; b < b1; ++b) block(in, b, &scratch, nullptr);
    } catch (...) {
      std::lock_guard<std::mutex> g(error_mu);
      if (!error) error = std::current_exception();
    }
  };
  {
    AutoGradMode no_grad(false);
    std::vector<Value> in = whole;
    block(in, 0, nullptr, &dtypes);  // (the first block: the results' dtypes)
  }
  for (size_t k = 0; k < l.op.size(); ++k) elem[k] = ElementSize(dtypes[k]);
  CastNumbersOnce(l, dtypes, whole);
  stride = (block_rows * tail_elems * *std::max_element(elem.begin(), elem.end()) + 63) / 64 * 64;
  // Autocast's state is the calling thread's: under it the blocks run there.
  if (autocast::IsActive()) run(1, nblocks);
  else ParallelFor(1, nblocks, std::max<int64_t>(1, kGrainSize / (block_rows * tail_elems)), run);
  if (error) std::rethrow_exception(error);
  return {out};
}

}  // namespace

const std::vector<const char*>& FusiblePointwiseOps() {
  static const std::vector<const char*> ops = {
      // unary
      "abs", "neg", "sign", "square", "ceil", "floor", "trunc", "relu", "exp", "log", "log2", "log10", "log1p",
      "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "erfc", "reciprocal",
      "leaky_relu", "relu6", "hardtanh", "elu", "selu", "celu", "hardsigmoid", "hardswish", "softsign",
      "softplus", "mish", "silu", "gelu",
      // binary
      "add", "sub", "mul", "div", "maximum", "minimum", "pow",
  };
  return ops;
}

NodeFn FusedPointwiseFn() { return &FusedPointwiseCall; }

int FusedOutputArg(const Node& n) {
  if (n.fn != &FusedPointwiseCall || n.args.size() < kOwnArgs) return -1;
  return static_cast<int>(n.args.size()) - kOwnArgs;
}

FusionStats Fuse(Program& p, std::vector<char>& dead, const std::vector<char>& exposed, const FusionOptions& o) {
  FusionStats st;
  if (o.producers) {
    Info c(p, dead, exposed);
    st.producers = FuseProducers(c, o);
  }
  if (o.pointwise) {
    Info c(p, dead, exposed);
    auto [made, absorbed] = FusePointwise(c, o);
    st.pointwise = made;
    st.absorbed = absorbed;
  }
  return st;
}

}  // namespace oneflow::lazy
