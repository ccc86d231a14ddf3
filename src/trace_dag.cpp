// Resolving the task DAG from a trace's events. The rules (docs/tracing.md, "The task DAG"):
//
//  * Parent: the task open innermost on the worker that recorded the spawn; for a data-flow task,
//    the task that submitted its node (not the predecessor that released it).
//  * Join of a detached child (task_group, loop record, data-flow task): the child records the
//    latch it counts down (`complete`, before the count-down). It joins the first wait on that
//    latch that ends at or after the record. Proof that this is the right wait: a wait on latch L
//    ends only after L reached zero; if the child was counted in L when that wait began, the wait
//    ends after the child's count-down, hence after its record. If a wait on L ended before the
//    record, the child cannot have been counted in it (it would have held L above zero). And a
//    later wait cannot be the one: the first wait ending after the record was still waiting when
//    the child counted down, so it had the child counted (a latch's count only grows by adds
//    made before the child exists, by run(), or by children added while it waits).
//    The task's last `complete` counts, and only a detached child's: work that runs at once
//    inside a task without being a task of its own (a child of a full deque, a throttled group
//    child, a loop's first record, which the loop's caller runs itself) records one inside that
//    task. In a detached child its own record comes after it; a frame child (joined by its own
//    join) and a root (joined by nobody) never record one of their own, so theirs are ignored —
//    taking them made a spawned task that runs a loop the joiner of itself.
//  * Join of a frame child (spawn/join, frame tasks): a wait keyed by the child's id (its join
//    found it stolen); otherwise its parent ran it inline at the join, nested in the parent's
//    slice, and it joins the parent where its slice ends.
//  * Data-flow edges name nodes (addresses). A node address is reused after the node is freed,
//    so an address at time t means the latest node submitted at that address before t: a node is
//    alive from its submit until after it ran and its successors were registered.
// Timestamps of different workers are compared (TSC, synchronised across cores on x86).
#include "trace_dag.hpp"

#include <algorithm>
#include <tuple>

namespace plait::trace {

namespace {

constexpr std::uint64_t id_key_bit = std::uint64_t{1} << 63;  // wait keys that are task ids, not addresses

struct Submit {
  std::uint64_t t, task;
  std::uint32_t worker;
  std::uint64_t runner = 0;  // the task that executed the node
};

}  // namespace

Dag resolve_dag(const Trace& t) {
  Dag d;
  // Plait's runtime records the DAG's events whenever it traces: its trace has a DAG even when
  // the program made no task beyond its root (one task, no edges). Another runtime's (the OMPT
  // tool's) has one only if DAG events show up.
  d.recorded = t.runtime == "plait";
  const std::size_t nw = t.workers.size();
  d.waits.resize(nw);
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> complete;  // task -> (key, t)
  std::unordered_map<std::uint64_t, std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>>> waits_by_key;
  std::unordered_map<std::uint64_t, std::uint8_t> joinable;
  std::unordered_map<std::uint64_t, std::uint64_t> enclosing, end_ns;
  std::unordered_map<std::uint64_t, std::uint32_t> ran_on;
  std::unordered_map<std::uint64_t, std::vector<Submit>> submits;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> edges, runs;  // (t, node, pred|task)

  for (std::uint32_t w = 0; w < nw; ++w) {
    std::vector<std::uint64_t> open;
    struct wait_open {
      std::uint64_t key, t, task;
    };
    std::vector<wait_open> wopen;
    const auto top = [&] { return open.empty() ? std::uint64_t{0} : open.back(); };
    for (const Event& e : t.workers[w]) {
      switch (e.kind) {
        case ev::task_begin:
          d.tasks[e.task];
          enclosing[e.task] = top();
          ran_on[e.task] = w;
          open.push_back(e.task);
          break;
        case ev::task_end:
          if (!open.empty()) {
            end_ns[open.back()] = e.t_ns;
            open.pop_back();
          }
          break;
        case ev::spawn: {
          d.recorded = true;
          DagTask& c = d.tasks[e.task];
          c.parent = top();
          c.spawn_ns = e.t_ns;
          c.spawn_worker = w;
          joinable[e.task] = static_cast<std::uint8_t>(e.other);
          break;
        }
        case ev::complete:
          if (top() != 0) complete[top()] = {e.aux, e.t_ns};
          break;
        case ev::wait_begin:
          d.recorded = true;
          wopen.push_back({e.other == 1 ? (e.aux | id_key_bit) : e.aux, e.t_ns, top()});
          break;
        case ev::wait_end:
          if (!wopen.empty()) {
            const wait_open o = wopen.back();
            wopen.pop_back();
            d.waits[w].push_back({o.t, e.t_ns, o.task});
            waits_by_key[o.key].emplace_back(e.t_ns, o.task, w);
          }
          break;
        case ev::df_submit: submits[e.aux].push_back({e.t_ns, top(), w}); break;
        case ev::df_edge: edges.emplace_back(e.t_ns, e.task, e.aux); break;
        case ev::df_run: runs.emplace_back(e.t_ns, e.aux, top()); break;
        default: break;
      }
    }
  }
  for (auto& kv : waits_by_key) std::sort(kv.second.begin(), kv.second.end());
  for (auto& kv : submits)
    std::sort(kv.second.begin(), kv.second.end(), [](const Submit& a, const Submit& b) { return a.t < b.t; });
  for (auto& w : d.waits)
    std::sort(w.begin(), w.end(), [](const DagWait& a, const DagWait& b) { return a.end_ns < b.end_ns; });

  // The node submitted at `node` that was alive at time `at`.
  const auto instance = [&](std::uint64_t node, std::uint64_t at) -> Submit* {
    auto it = submits.find(node);
    if (it == submits.end()) return nullptr;
    auto& v = it->second;
    auto u = std::upper_bound(v.begin(), v.end(), at, [](std::uint64_t x, const Submit& s) { return x < s.t; });
    return u == v.begin() ? nullptr : &*(u - 1);
  };
  for (const auto& [at, node, task] : runs) {
    Submit* s = instance(node, at);
    if (s == nullptr || task == 0) continue;
    s->runner = task;
    DagTask& c = d.tasks[task];
    c.parent = s->task;
    c.spawn_ns = s->t;
    c.spawn_worker = s->worker;
  }
  for (const auto& [at, node, pred] : edges) {
    Submit* s = instance(node, at);
    Submit* p = instance(pred, at);
    if (s == nullptr || p == nullptr || s->runner == 0 || p->runner == 0) continue;
    auto& v = d.tasks[s->runner].preds;
    if (std::find(v.begin(), v.end(), p->runner) == v.end()) v.push_back(p->runner);
  }

  for (auto& [id, c] : d.tasks) {
    const std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>>* ws = nullptr;
    std::uint64_t after = 0;
    const auto j = joinable.find(id);
    const bool detached = j != joinable.end() && j->second == 0;
    if (auto ci = complete.find(id); detached && ci != complete.end()) {
      auto wk = waits_by_key.find(ci->second.first);
      if (wk != waits_by_key.end()) ws = &wk->second;
      after = ci->second.second;
    } else if (j != joinable.end() && j->second == 1) {
      auto wk = waits_by_key.find(id | id_key_bit);
      if (wk != waits_by_key.end()) {
        ws = &wk->second;
      } else if (c.parent != 0 && enclosing[id] == c.parent) {
        c.join = c.parent;
        c.join_ns = end_ns[id];
        c.join_worker = ran_on[id];
        continue;
      }
    }
    if (ws == nullptr) continue;
    auto it = std::lower_bound(ws->begin(), ws->end(), std::make_tuple(after, std::uint64_t{0}, std::uint32_t{0}));
    if (it == ws->end()) continue;
    c.join = std::get<1>(*it);
    c.join_ns = std::get<0>(*it);
    c.join_worker = std::get<2>(*it);
  }
  return d;
}

}  // namespace plait::trace
