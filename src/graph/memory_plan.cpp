// Liveness and arena offsets of a Program's intermediates (see memory_plan.h).
#include "graph/memory_plan.h"

#include <algorithm>
#include <atomic>

namespace oneflow::lazy {

MemoryPlan PlanMemory(const Program& p, const std::vector<char>* only) {
  const int n = static_cast<int>(p.nodes.size());
  std::vector<int> first(p.num_slots, -1), last(p.num_slots, -1);
  std::vector<char> is_view(p.num_slots, 0), outside(p.num_slots, 0);
  for (int s : p.inputs) outside[s] = 1;
  for (const auto& c : p.consts) outside[c.first] = 1;
  for (int i = 0; i < n; ++i) {
    const Node& node = p.nodes[i];
    for (const SlotRef& r : node.refs) last[r.slot] = std::max(last[r.slot], i);
    for (int s : node.outs) {
      if (s < 0) continue;
      if (first[s] < 0 && !outside[s]) {
        first[s] = i;
        is_view[s] = node.aliases;
      }
      last[s] = std::max(last[s], i);
    }
  }
  for (int s : p.pinned) last[p.Resolve(s)] = n;  // returned or read by Python after the program
  // A view keeps its base alive: back along the views (a view's base precedes it).
  for (int i = n; i-- > 0;) {
    const Node& node = p.nodes[i];
    if (!node.aliases) continue;
    int until = -1;
    for (int s : node.outs)
      if (s >= 0) until = std::max(until, last[s]);
    for (const SlotRef& r : node.refs) last[r.slot] = std::max(last[r.slot], until);
  }
  MemoryPlan plan;
  for (int s = 0; s < p.num_slots; ++s) {
    // (a value of run-time sizes, Note [Dynamic shapes]: its kernel allocates it)
    if (first[s] < 0 || is_view[s] || outside[s] || s >= static_cast<int>(p.meta.size()) || p.Dynamic(s)) continue;
    if (only && !(*only)[s]) continue;
    const Tensor& m = p.meta[s];
    int64_t bytes = m.numel() * ElementSize(m.dtype());
    bytes = (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    if (bytes == 0) continue;
    plan.blocks.push_back({s, bytes, 0, first[s], std::max(last[s], first[s])});
    plan.total_bytes += bytes;
  }
  // Greedy by size: the largest values first, each at the lowest offset free of every placed
  // value whose lifetime meets its own.
  std::vector<int> order(plan.blocks.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return plan.blocks[a].bytes > plan.blocks[b].bytes; });
  std::vector<int> placed;
  for (int k : order) {
    MemoryBlock& b = plan.blocks[k];
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of the live ones placed
    for (int j : placed) {
      const MemoryBlock& o = plan.blocks[j];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [lo, hi] : busy) {
      if (at + b.bytes <= lo) break;
      at = std::max(at, hi);
    }
    b.offset = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + b.bytes);
    placed.push_back(k);
  }
  return plan;
}

namespace {

std::atomic<int64_t> g_placed{0};

}  // namespace

void CountArenaPlacement(bool placed) {
  if (placed) g_placed.fetch_add(1, std::memory_order_relaxed);
}

int64_t ArenaPlacements() { return g_placed.load(std::memory_order_relaxed); }

std::shared_ptr<const ArenaPlan> ArenaPlanOf(const Program* p) { return p->arena; }

std::shared_ptr<const ArenaPlan> PlaceInArena(Program& p) {
  auto out = std::make_shared<ArenaPlan>();
  out->outputs.assign(p.nodes.size(), {-1, 0});
  if (p.device.type == DeviceType::kCPU) {
    const int n = static_cast<int>(p.nodes.size());
    // The first plan says which values live past the program (last == n): never in the arena.
    MemoryPlan all = PlanMemory(p);
    std::vector<int> last(p.num_slots, -1);
    for (const MemoryBlock& b : all.blocks) last[b.slot] = b.last;
    // A gradient an accumulate_grad_ node reads may become the leaf's .grad itself (Note
    // [Backward nodes]): it lives past the program.
    for (const Node& node : p.nodes)
      if (node.name == "accumulate_grad_")
        for (const SlotRef& r : node.refs) last[r.slot] = n;
    std::vector<char> only(p.num_slots, 0);
    std::vector<int> computed_by(p.num_slots, -1);
    for (int i = 0; i < n; ++i) {
      const Node& node = p.nodes[i];
      // (a local-autograd node's own autograd graph keeps values no slot names: not in the arena)
      if (node.barrier >= 0 || !node.fn || node.aliases || node.outs.size() != 1 || !node.local_grads.empty()) continue;
      const int s = node.outs[0];
      if (s < 0 || last[s] < 0 || last[s] >= n || computed_by[s] >= 0) continue;
      bool reads_itself = false;  // an op returning its input: not a new value
      for (const SlotRef& r : node.refs) reads_itself |= r.slot == s;
      if (reads_itself || !p.meta[s].defined()) continue;
      only[s] = 1;
      computed_by[s] = i;
    }
    MemoryPlan plan = PlanMemory(p, &only);
    for (const MemoryBlock& b : plan.blocks) {
      if (b.first != computed_by[b.slot]) continue;  // (computed first by another node)
      const Tensor& m = p.meta[b.slot];
      out->outputs[b.first] = {b.offset, m.numel() * static_cast<int64_t>(ElementSize(m.dtype()))};
    }
    out->bytes = plan.arena_bytes;
  }
  p.arena = out;
  return out;
}

}  // namespace oneflow::lazy
