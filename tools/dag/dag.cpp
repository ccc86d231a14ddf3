#include "dag.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <tuple>
#include <unordered_map>

namespace plait::dag {

namespace {

struct raw_task {
  std::uint64_t id, parent = 0, join = 0;
  double ts, dur, spawn = -1, join_ts = -1;
  std::uint32_t worker, spawn_worker = 0;
  std::vector<std::uint64_t> preds;
  std::string label;
};
struct raw_wait {
  std::uint32_t worker;
  double ts, dur;
  std::uint64_t task;
};

std::uint64_t as_u64(const value* v, const char* what) {
  if (v == nullptr || !v->is_number() || v->num < 0) throw error(std::string("a task without a valid '") + what + "'");
  return v->is_int ? v->u : static_cast<std::uint64_t>(v->num);
}
double as_ns(const value* v, const char* what) {  // the file's µs -> ns
  if (v == nullptr || !v->is_number() || !std::isfinite(v->num)) throw error(std::string("an event without a valid '") + what + "'");
  return std::round(v->num * 1000.0);
}

}  // namespace

graph load(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw error(path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw error(path + ": not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw error(path + ": empty file");
  }
  void* m = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) throw error(path + ": " + std::strerror(errno));
  try {
    graph g = parse(std::string_view(static_cast<const char*>(m), static_cast<std::size_t>(st.st_size)), path);
    ::munmap(m, static_cast<std::size_t>(st.st_size));
    return g;
  } catch (...) {
    ::munmap(m, static_cast<std::size_t>(st.st_size));
    throw;
  }
}

graph parse(std::string_view text, const std::string& name) {
  graph g;
  std::vector<raw_task> rt;
  std::vector<raw_wait> rw;
  bool have_other = false, dag = false;
  std::string format;
  try {
    reader r(text);
    const std::size_t lead = text.find_first_not_of(" \n\r\t");
    if (lead == std::string_view::npos || text[lead] != '{') throw error("not a JSON trace (a Plait trace is a JSON object)");
    r.expect('{');
    std::string key;
    for (bool first = true; r.next_key(first, &key); first = false) {
      if (key == "otherData") {
        value o = r.parse_value();
        have_other = true;
        if (const value* f = o.get("format"); f && f->k == value::kind::string) format = f->str;
        if (const value* d = o.get("dag"); d && d->k == value::kind::boolean) dag = d->b;
        if (const value* v = o.get("runtime"); v && v->k == value::kind::string) g.runtime = v->str;
        if (const value* v = o.get("program"); v && v->k == value::kind::string) g.program = v->str;
        if (const value* v = o.get("workers"); v && v->is_int) g.workers = static_cast<unsigned>(v->u);
      } else if (key == "traceEvents") {
        r.expect('[');
        for (bool f2 = true; r.next_element(f2); f2 = false) {
          value e = r.parse_value();
          const value* ph = e.get("ph");
          const value* cat = e.get("cat");
          if (!ph || ph->str != "X" || !cat) continue;
          const value* tid = e.get("tid");
          std::uint32_t w = static_cast<std::uint32_t>(as_u64(tid, "tid"));
          const value* args = e.get("args");
          if (cat->str == "task") {
            if (!args) throw error("a task slice without args");
            raw_task t;
            t.worker = w;
            t.ts = as_ns(e.get("ts"), "ts");
            t.dur = as_ns(e.get("dur"), "dur");
            t.id = as_u64(args->get("task"), "task");
            if (const value* p = args->get("parent")) t.parent = as_u64(p, "parent");
            if (const value* s = args->get("spawn")) t.spawn = as_ns(s, "spawn");
            if (const value* s = args->get("spawn_worker")) t.spawn_worker = static_cast<std::uint32_t>(as_u64(s, "spawn_worker"));
            if (const value* j = args->get("join")) t.join = as_u64(j, "join");
            if (const value* j = args->get("join_ts")) t.join_ts = as_ns(j, "join_ts");
            if (const value* l = args->get("label"); l && l->k == value::kind::string) t.label = l->str;
            if (const value* p = args->get("preds"); p && p->k == value::kind::array)
              for (const value& x : p->arr) t.preds.push_back(as_u64(&x, "preds"));
            if (args->get("unfinished")) throw error("task " + std::to_string(t.id) + " never ended (the run was cut short?)");
            rt.push_back(std::move(t));
          } else if (cat->str == "wait") {
            rw.push_back({w, as_ns(e.get("ts"), "ts"), as_ns(e.get("dur"), "dur"),
                          args ? as_u64(args->get("task"), "task") : 0});
          }
        }
      } else {
        r.parse_value();
      }
    }
    if (!r.at_end()) r.fail("text after the trace");
  } catch (const error& e) {
    throw error(name + ": " + e.what());
  }
  if (!have_other || format.rfind("plait-trace-", 0) != 0)
    throw error(name + ": not a Plait trace (no otherData.format \"plait-trace-N\")");
  if (format == "plait-trace-1" || !dag)
    throw error(name + ": a trace without DAG edges (format " + format + ", runtime " +
                (g.runtime.empty() ? "?" : g.runtime) + "); record it with PLAIT_TRACE=FILE.json on Plait");
  if (rt.empty()) throw error(name + ": the trace has no tasks");

  // Index, roots, parents.
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  index.reserve(rt.size() * 2);
  for (std::size_t i = 0; i < rt.size(); ++i)
    if (!index.emplace(rt[i].id, static_cast<std::uint32_t>(i)).second)
      throw error(name + ": task " + std::to_string(rt[i].id) + " appears twice");
  auto find = [&](std::uint64_t id, const char* what, std::uint64_t of) -> std::uint32_t {
    auto it = index.find(id);
    if (it == index.end())
      throw error(name + ": task " + std::to_string(of) + " names " + what + " " + std::to_string(id) + ", which is no task of the trace");
    return it->second;
  };
  g.tasks.resize(rt.size());
  double t0 = 1e300, t1 = 0;
  for (std::size_t i = 0; i < rt.size(); ++i) {
    task& t = g.tasks[i];
    const raw_task& r = rt[i];
    t.id = r.id;
    t.worker = r.worker;
    t.begin_ns = r.ts;
    t.end_ns = r.ts + r.dur;
    t.label = r.label;
    t0 = std::min(t0, t.begin_ns);
    t1 = std::max(t1, t.end_ns);
    if (r.parent != 0) t.parent = find(r.parent, "parent", r.id);
    if (r.join != 0) t.joiner = find(r.join, "joiner", r.id);
    for (std::uint64_t p : r.preds) t.preds.push_back(find(p, "predecessor", r.id));
  }
  g.trace_ns = t1 - t0;
  if (g.workers == 0) {
    for (const task& t : g.tasks) g.workers = std::max(g.workers, t.worker + 1);
  }

  // Own work: per worker, each task's slice minus what nests directly in it (child slices and its
  // waits; a child run inside a wait is inside the wait).
  struct item {
    double b, e;
    std::int64_t task;  // a task slice (its index) or a wait (-1 - waiter index)
  };
  std::vector<std::vector<item>> per(g.workers);
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    if (g.tasks[i].worker >= g.workers) throw error(name + ": a task on worker " + std::to_string(g.tasks[i].worker) + " of " + std::to_string(g.workers));
    per[g.tasks[i].worker].push_back({g.tasks[i].begin_ns, g.tasks[i].end_ns, static_cast<std::int64_t>(i)});
  }
  for (const raw_wait& w : rw) {
    if (w.worker >= g.workers) continue;
    auto it = index.find(w.task);
    if (it == index.end()) throw error(name + ": a wait of task " + std::to_string(w.task) + ", which is no task of the trace");
    per[w.worker].push_back({w.ts, w.ts + w.dur, -1 - static_cast<std::int64_t>(it->second)});
  }
  // excluded[i]: the intervals inside task i that are not its work, in time order.
  std::vector<std::vector<std::pair<double, double>>> excluded(g.tasks.size());
  for (auto& v : per) {
    // Outer first: by begin, then longer first; a wait before the task slice it nests in cannot
    // begin at the same time as that slice with a longer duration, so ties are harmless.
    std::sort(v.begin(), v.end(), [](const item& a, const item& b) {
      if (a.b != b.b) return a.b < b.b;
      if (a.e != b.e) return a.e > b.e;
      return a.task > b.task;  // a task slice before a wait with the same extent (the wait is its)
    });
    std::vector<const item*> stack;
    for (const item& it : v) {
      while (!stack.empty() && stack.back()->e <= it.b && !(stack.back()->e == it.b && it.e == it.b)) stack.pop_back();
      if (!stack.empty() && it.e > stack.back()->e)
        throw error(name + ": slices overlap without nesting on a worker at " + std::to_string(it.b / 1000.0) + " us");
      if (!stack.empty() && stack.back()->task >= 0) {
        const auto owner = static_cast<std::size_t>(stack.back()->task);
        if (it.task < 0 && static_cast<std::size_t>(-1 - it.task) != owner)
          throw error(name + ": a wait of task " + std::to_string(g.tasks[static_cast<std::size_t>(-1 - it.task)].id) +
                      " nested in task " + std::to_string(g.tasks[owner].id));
        excluded[owner].emplace_back(it.b, it.e);
      }
      stack.push_back(&it);
    }
  }
  // Work at a time point of task i: time since its begin minus excluded time before it.
  auto own_at = [&](std::size_t i, double ts) {
    const task& t = g.tasks[i];
    double x = std::clamp(ts, t.begin_ns, t.end_ns) - t.begin_ns;
    for (const auto& [b, e] : excluded[i]) {  // short lists; the trace's own order
      if (b >= ts) break;
      x -= std::min(e, ts) - b;
    }
    return std::max(0.0, x);
  };
  for (std::size_t i = 0; i < g.tasks.size(); ++i) g.tasks[i].work = own_at(i, g.tasks[i].end_ns);

  // Points: spawns in the parent, joins in the joiner (children joined by one wait share a point:
  // the same joiner and the same time).
  std::vector<std::tuple<std::size_t, std::uint64_t, std::uint32_t>> joins;  // (joiner, time, child)
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    const raw_task& r = rt[i];
    const task& t = g.tasks[i];
    if (t.parent >= 0) {
      if (r.spawn < 0) throw error(name + ": task " + std::to_string(r.id) + " has a parent but no spawn time");
      auto pi = static_cast<std::size_t>(t.parent);
      g.tasks[pi].points.push_back({own_at(pi, r.spawn), static_cast<std::uint64_t>(r.spawn), static_cast<std::int64_t>(i), {}});
    }
    if (t.joiner >= 0)
      joins.emplace_back(static_cast<std::size_t>(t.joiner), static_cast<std::uint64_t>(r.join_ts), static_cast<std::uint32_t>(i));
  }
  std::sort(joins.begin(), joins.end());
  for (std::size_t k = 0; k < joins.size(); ++k) {
    const auto [ji, ts, child] = joins[k];
    if (k == 0 || std::get<0>(joins[k - 1]) != ji || std::get<1>(joins[k - 1]) != ts)
      g.tasks[ji].points.push_back({own_at(ji, static_cast<double>(ts)), ts, -1, {}});
    g.tasks[ji].points.back().joins.push_back(child);
  }
  // Points in time order. The file's times have 1 ns resolution, so a join and the next spawn can
  // share a time: the join comes first (a task joins a child, then spawns the next), unless it
  // joins the child spawned at that very time (a child that took under 1 ns).
  for (task& t : g.tasks) {
    std::stable_sort(t.points.begin(), t.points.end(), [](const point& a, const point& b) {
      if (a.ts != b.ts) return a.ts < b.ts;
      return a.spawn < 0 && b.spawn >= 0;
    });
    for (std::size_t p = 0; p + 1 < t.points.size(); ++p) {
      point& a = t.points[p];
      if (a.spawn >= 0 || a.joins.empty()) continue;
      for (std::size_t q = p + 1; q < t.points.size() && t.points[q].ts == a.ts; ++q) {
        const std::int64_t c = t.points[q].spawn;
        if (c >= 0 && std::find(a.joins.begin(), a.joins.end(), static_cast<std::uint32_t>(c)) != a.joins.end()) {
          std::rotate(t.points.begin() + static_cast<std::ptrdiff_t>(p), t.points.begin() + static_cast<std::ptrdiff_t>(p) + 1,
                      t.points.begin() + static_cast<std::ptrdiff_t>(q) + 1);  // the join moves just after that spawn
          --p;
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < g.tasks.size(); ++i)
    if (g.tasks[i].parent < 0) g.roots.push_back(static_cast<std::uint32_t>(i));
  std::sort(g.roots.begin(), g.roots.end(), [&](std::uint32_t a, std::uint32_t b) { return g.tasks[a].begin_ns < g.tasks[b].begin_ns; });
  for (const task& t : g.tasks)
    if (t.parent >= 0 && t.joiner < 0) ++g.unjoined;
  return g;
}

void remove_trace_cost(graph& g, double per_task_ns, double per_spawn_ns) {
  if (per_task_ns <= 0 && per_spawn_ns <= 0) return;
  // What tracing costs varies from task to task (a page of the event buffer touched for the
  // first time, say): a task may hold less than its share. What it cannot give is taken from all
  // tasks in proportion afterwards, so that the total removed is exactly the calibrated one.
  auto scale = [](task& t, double w) {
    const double f = t.work > 0 ? w / t.work : 0;
    for (point& p : t.points) p.at *= f;
    t.work = w;
  };
  double short_by = 0, left = 0;
  for (task& t : g.tasks) {
    std::size_t spawns = 0;
    for (const point& p : t.points) spawns += p.spawn >= 0;
    const double want = per_task_ns + per_spawn_ns * static_cast<double>(spawns);
    if (t.work < want) short_by += want - t.work;
    scale(t, std::max(0.0, t.work - want));
    left += t.work;
  }
  if (short_by <= 0 || left <= 0) return;
  const double f = std::max(0.0, left - short_by) / left;
  for (task& t : g.tasks) scale(t, t.work * f);
}

std::size_t check(const graph& g) {
  // Slack for comparing times of two workers: the writer clamps each worker's clock to be
  // monotonic, and the TSCs of two cores agree to well under this.
  constexpr double slack = 1000;  // ns
  std::size_t edges = 0;
  auto id = [&](std::size_t i) { return std::to_string(g.tasks[i].id); };
  for (std::size_t pi = 0; pi < g.tasks.size(); ++pi) {
    const task& p = g.tasks[pi];
    if (p.work < 0 || p.work > p.end_ns - p.begin_ns + 1) throw error("task " + id(pi) + " has inconsistent work");
    for (const point& pt : p.points) {
      const double at = static_cast<double>(pt.ts);
      if (at + 1 < p.begin_ns || at > p.end_ns + 1)
        throw error("task " + id(pi) + " spawns or joins outside its own slice");
      if (pt.spawn >= 0) {
        ++edges;
        const task& c = g.tasks[static_cast<std::size_t>(pt.spawn)];
        if (c.begin_ns + slack < at) throw error("task " + std::to_string(c.id) + " begins before it is spawned");
      }
      // A task counts as finished when it counts down its latch or releases its successors,
      // inside its slice: a preempted worker can record the slice's end long after its joiner or
      // successor went on. So the check is that they did not go on before it began.
      for (std::uint32_t ci : pt.joins) {
        ++edges;
        if (g.tasks[ci].begin_ns > at + slack) throw error("task " + id(ci) + " begins after the wait that joins it ended");
      }
    }
    for (std::uint32_t q : p.preds) {
      ++edges;
      if (g.tasks[q].begin_ns > p.begin_ns + slack)
        throw error("task " + id(pi) + " begins before its data-flow predecessor " + id(q) + " began");
    }
  }
  // Acyclic: the analysis completes every task exactly when the DAG has no cycle.
  analyse(g, 0);
  return edges;
}

work_span analyse(const graph& g, double burden, std::vector<region>* regions) {
  const std::size_t n = g.tasks.size();
  // Longest paths, two at once (k = 0 plain, k = 1 burdened), in dependence order: a task starts
  // once its spawn point was reached and its predecessors finished; its walk stops at a join
  // point until every child joined there finished. Children nobody joins (none in Plait's own
  // constructs; tasks of an OpenMP program whose waits the trace does not key) join their root's end.
  struct st {
    double start[2] = {0, 0}, cur[2] = {0, 0}, finish[2] = {0, 0};
    double prev_at = 0, late_max[2] = {0, 0};
    std::uint32_t waiting_preds = 0, waiting_joins = 0, late = 0;
    std::size_t pos = 0;
    bool spawned = false, started = false, tail = false, done = false;
  };
  std::vector<st> s(n);
  std::vector<std::vector<std::uint32_t>> succ(n);
  for (std::size_t i = 0; i < n; ++i) {
    s[i].waiting_preds = static_cast<std::uint32_t>(g.tasks[i].preds.size());
    for (std::uint32_t p : g.tasks[i].preds) succ[p].push_back(static_cast<std::uint32_t>(i));
  }
  // Each task's root (through parent links, memoised).
  std::vector<std::int64_t> root_of(n, -1);
  {
    std::vector<std::uint32_t> path;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t x = i;
      path.clear();
      while (root_of[x] < 0 && g.tasks[x].parent >= 0) {
        path.push_back(static_cast<std::uint32_t>(x));
        x = static_cast<std::size_t>(g.tasks[x].parent);
        if (path.size() > n) throw error("the parent links form a cycle");
      }
      const std::int64_t r = root_of[x] >= 0 ? root_of[x] : static_cast<std::int64_t>(x);
      root_of[x] = r;
      for (std::uint32_t y : path) root_of[y] = r;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (g.tasks[i].parent >= 0 && g.tasks[i].joiner < 0) ++s[static_cast<std::size_t>(root_of[i])].late;
  }
  // The point of its joiner at which each child is joined.
  std::vector<std::size_t> join_pt(n, 0);
  for (const task& t : g.tasks)
    for (std::size_t p = 0; p < t.points.size(); ++p)
      for (std::uint32_t c : t.points[p].joins) join_pt[c] = p;
  std::vector<std::uint32_t> ready;
  double root_at[2] = {0, 0};
  std::size_t finished = 0, next_root = 0;
  auto launch_root = [&] {
    if (next_root >= g.roots.size()) return;
    const std::uint32_t r = g.roots[next_root++];
    s[r].spawned = true;
    for (int k = 0; k < 2; ++k) s[r].start[k] = std::max(s[r].start[k], root_at[k]);
    if (s[r].waiting_preds == 0) ready.push_back(r);
  };
  auto joined = [&](std::size_t into, const double f[2]) {
    for (int k = 0; k < 2; ++k) s[into].cur[k] = std::max(s[into].cur[k], f[k]);
  };
  launch_root();
  while (!ready.empty()) {
    const std::uint32_t i = ready.back();
    ready.pop_back();
    st& x = s[i];
    const task& t = g.tasks[i];
    if (x.done) continue;
    if (!x.started) {
      x.started = true;
      x.cur[0] = x.start[0];
      x.cur[1] = x.start[1];
    }
    bool blocked = false;
    for (; x.pos < t.points.size() && !blocked; ++x.pos) {
      const point& pt = t.points[x.pos];
      for (int k = 0; k < 2; ++k) x.cur[k] += pt.at - x.prev_at;
      x.prev_at = pt.at;
      if (pt.spawn >= 0) {
        const auto c = static_cast<std::size_t>(pt.spawn);
        s[c].spawned = true;
        for (int k = 0; k < 2; ++k) s[c].start[k] = std::max(s[c].start[k], x.cur[k] + (k ? burden : 0));
        if (s[c].waiting_preds == 0) ready.push_back(static_cast<std::uint32_t>(c));
      }
      for (std::uint32_t c : pt.joins) {
        if (s[c].done)
          joined(i, s[c].finish);
        else
          ++x.waiting_joins;
      }
      blocked = x.waiting_joins > 0;
    }
    if (blocked) continue;  // the last child to finish puts it back on `ready`
    if (!x.tail) {
      for (int k = 0; k < 2; ++k) x.cur[k] += t.work - x.prev_at;
      x.prev_at = t.work;
      x.tail = true;
    }
    if (x.late > 0) continue;  // a root waiting for children nobody joins
    joined(i, x.late_max);
    x.done = true;
    ++finished;
    for (int k = 0; k < 2; ++k) x.finish[k] = x.cur[k];
    for (std::uint32_t y : succ[i]) {
      for (int k = 0; k < 2; ++k) s[y].start[k] = std::max(s[y].start[k], x.finish[k] + (k ? burden : 0));
      if (--s[y].waiting_preds == 0 && s[y].spawned) ready.push_back(y);
    }
    if (t.joiner >= 0) {
      const auto j = static_cast<std::size_t>(t.joiner);
      // Blocked at this child's join point: count it in; else that point reads `finish` when reached.
      if (s[j].waiting_joins > 0 && s[j].pos == join_pt[i] + 1) {
        joined(j, x.finish);
        if (--s[j].waiting_joins == 0) ready.push_back(static_cast<std::uint32_t>(j));
      }
    } else if (t.parent >= 0) {
      const auto r = static_cast<std::size_t>(root_of[i]);
      for (int k = 0; k < 2; ++k) s[r].late_max[k] = std::max(s[r].late_max[k], x.finish[k]);
      if (--s[r].late == 0 && s[r].tail) ready.push_back(static_cast<std::uint32_t>(r));
    } else {
      for (int k = 0; k < 2; ++k) root_at[k] = std::max(root_at[k], x.finish[k]);
      launch_root();
    }
  }
  if (finished != n) throw error("the DAG has a cycle or a task that can never start (" + std::to_string(n - finished) + " of " + std::to_string(n) + " tasks)");
  work_span ws;
  for (const task& t : g.tasks) ws.work += t.work;
  ws.span = root_at[0];
  ws.burdened_span = root_at[1];
  if (regions != nullptr) {
    regions->clear();
    // Subtree work per labelled task: children add into parents (parents before children is not
    // guaranteed by the order, so accumulate along parent links from each task up to its nearest
    // labelled ancestor... once per task, with memoised nearest-labelled ancestors).
    std::vector<std::int64_t> owner(n, -2);
    auto nearest = [&](std::size_t i) {
      std::vector<std::size_t> path;
      std::size_t x = i;
      while (owner[x] == -2) {
        path.push_back(x);
        if (!g.tasks[x].label.empty()) {
          owner[x] = static_cast<std::int64_t>(x);
          path.pop_back();
          break;
        }
        if (g.tasks[x].parent < 0) {
          owner[x] = -1;
          path.pop_back();
          break;
        }
        x = static_cast<std::size_t>(g.tasks[x].parent);
      }
      for (std::size_t y : path) owner[y] = owner[x];
      return owner[i];
    };
    std::vector<double> sub_work(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      // Work counts for every labelled ancestor (regions may nest).
      std::int64_t o = nearest(i);
      while (o >= 0) {
        sub_work[static_cast<std::size_t>(o)] += g.tasks[i].work;
        std::int64_t par = g.tasks[static_cast<std::size_t>(o)].parent;
        o = par >= 0 ? nearest(static_cast<std::size_t>(par)) : -1;
      }
    }
    std::unordered_map<std::string, std::size_t> at;
    for (std::size_t i = 0; i < n; ++i) {
      if (g.tasks[i].label.empty()) continue;
      auto [it, fresh] = at.emplace(g.tasks[i].label, regions->size());
      if (fresh) regions->push_back({g.tasks[i].label, 0, {}});
      region& r = (*regions)[it->second];
      ++r.instances;
      r.ws.work += sub_work[i];
      r.ws.span += s[i].finish[0] - s[i].start[0];
      r.ws.burdened_span += s[i].finish[1] - s[i].start[1];
    }
  }
  return ws;
}

}  // namespace plait::dag
