// Liveness and arena offsets of a Program's intermediates (see memory_plan.h).
#include "graph/memory_plan.h"

#include <algorithm>

namespace oneflow::lazy {

MemoryPlan PlanMemory(const Program& p) {
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
    if (first[s] < 0 || is_view[s] || outside[s] || s >= static_cast<int>(p.meta.size())) continue;
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

}  // namespace oneflow::lazy
