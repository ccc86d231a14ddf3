// The simulator's model (docs/scaling.md, "The simulator", states it as rules):
//  * A worker runs the task on top of its stack one piece of work at a time: a piece ends at the
//    task's next point (a spawn or a join) or at its end.
//  * A spawn pushes the child on the spawning worker's deque (newest at the back) and costs
//    spawn_ns; a data-flow task whose last predecessor finishes goes on the finishing worker's
//    deque (Plait releases successors there).
//  * A task at a join whose children are not all done keeps its place on the stack; its worker
//    runs its own newest deque entry if it has one, else steals, and runs what it found on top of
//    the blocked task (leapfrogging / helping, as Plait's wait loop does). The blocked task goes
//    on when the worker's stack comes back to it and its children are done.
//  * A worker with nothing runs its own newest entry, else looks at victims: its last successful
//    victim first, then the others from a random start; a failed look costs steal_fail_ns, a
//    successful steal steal_ns and takes the victim's oldest entries (one, K, half, or an equal
//    share among the workers). If no victim has work, the worker parks. Each publication (a
//    push) wakes the longest-parked worker: within spin_ns of parking it was still looking and
//    reacts after steal_fail_ns, later it slept and reacts after wake_ns. A parked worker whose
//    blocked task's children finished is woken the same way.
//  * Roots run one after another, each handed to worker 0 when the previous one finished.
//  * With `cores` < workers a piece of work takes longer by running/cores (workers share cores),
//    and with `contention` c by 1 + c * (running - 1).
#include "sim.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <queue>
#include <random>
#include <sstream>

namespace plait::dag {

bool parse_policy(const std::string& s, policy* p, unsigned* k) {
  if (s == "one") return *p = policy::one, true;
  if (s == "half") return *p = policy::half, true;
  if (s == "adaptive") return *p = policy::adaptive, true;
  if (s.rfind("chunk:", 0) == 0) {
    const std::string n = s.substr(6);
    if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned v = static_cast<unsigned>(std::stoul(n));
    if (v == 0) return false;
    *p = policy::chunk;
    *k = v;
    return true;
  }
  return false;
}

bool parse_levels(const std::string& s, std::vector<unsigned>* out) {
  out->clear();
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i == s.size()) break;
    const std::size_t colon = s.find(':', i);
    if (colon == std::string::npos || colon == i) return false;
    std::size_t j = colon + 1, b = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == b || j - b > 4 || (j < s.size() && s[j] != ' ')) return false;
    const unsigned v = static_cast<unsigned>(std::stoul(s.substr(b, j - b)));
    if (v < 1 || v > 4096) return false;
    out->push_back(v);
    i = j;
  }
  return !out->empty();
}

costs load_costs(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw error(path + ": cannot read the cost model");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  value v;
  try {
    reader r(text);
    v = r.parse_value();
    if (!r.at_end()) r.fail("text after the cost model");
  } catch (const error& e) {
    throw error(path + ": " + e.what());
  }
  if (v.k != value::kind::object) throw error(path + ": a cost model is a JSON object");
  costs c;
  c.source = path;
  auto num = [&](const char* key, double* out) {
    const value* x = v.get(key);
    if (x == nullptr) return;
    if (!x->is_number() || !std::isfinite(x->num) || x->num < 0)
      throw error(path + ": '" + key + "' must be a number >= 0 (ns)");
    *out = x->num;
  };
  num("spawn_ns", &c.spawn_ns);
  num("steal_ns", &c.steal_ns);
  num("steal_fail_ns", &c.steal_fail_ns);
  num("wake_ns", &c.wake_ns);
  num("spin_ns", &c.spin_ns);
  num("trace_ns", &c.trace_ns);
  num("trace_task_ns", &c.trace_task_ns);
  return c;
}

namespace {

enum class mode { running, seeking, parked };
enum class evk : std::uint8_t { piece_done, look, wake };

struct event {
  double t;
  std::uint64_t seq;
  std::uint32_t w;
  evk k;
  std::uint64_t epoch;
  bool operator>(const event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class simulator {
 public:
  simulator(const graph& g, const sim_options& o) : g_(g), o_(o), rng_(o.seed) {
    const std::size_t n = g.tasks.size();
    t_.resize(n);
    succ_.resize(n);
    join_pt_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      t_[i].preds = static_cast<std::uint32_t>(g.tasks[i].preds.size());
      for (std::uint32_t p : g.tasks[i].preds) succ_[p].push_back(static_cast<std::uint32_t>(i));
      for (std::size_t p = 0; p < g.tasks[i].points.size(); ++p)
        for (std::uint32_t c : g.tasks[i].points[p].joins) join_pt_[c] = p;
    }
    // Children nobody joins join their root's end (as in the work/span analysis).
    root_of_.assign(n, -1);
    std::vector<std::uint32_t> path;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t x = i;
      path.clear();
      while (root_of_[x] < 0 && g.tasks[x].parent >= 0) path.push_back(static_cast<std::uint32_t>(x)), x = static_cast<std::size_t>(g.tasks[x].parent);
      const std::int64_t r = root_of_[x] >= 0 ? root_of_[x] : static_cast<std::int64_t>(x);
      root_of_[x] = r;
      for (std::uint32_t y : path) root_of_[y] = r;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (g.tasks[i].parent >= 0 && g.tasks[i].joiner < 0) ++t_[static_cast<std::size_t>(root_of_[i])].late;
    w_.resize(o.workers);
    // Victim rings by distance (topology), nearest first; flat: one ring of everyone.
    rings_.assign(o.workers, {});
    std::size_t cores = 1;
    for (unsigned c : o.levels) cores *= c;
    auto digits = [&](std::uint32_t w) {
      std::vector<unsigned> d(o.levels.size());
      std::size_t x = w % cores;
      for (std::size_t k = o.levels.size(); k-- > 0;) {
        d[k] = static_cast<unsigned>(x % o.levels[k]);
        x /= o.levels[k];
      }
      return d;
    };
    for (std::uint32_t w = 0; w < o.workers; ++w) {
      const std::size_t nd = o.levels.empty() ? 1 : o.levels.size();
      rings_[w].assign(nd + 1, {});
      const auto dw = digits(w);
      for (std::uint32_t v = 0; v < o.workers; ++v) {
        if (v == w) continue;
        std::size_t dist = 1;
        if (!o.levels.empty()) {
          const auto dv = digits(v);
          std::size_t common = 0;
          while (common < dw.size() && dw[common] == dv[common]) ++common;
          dist = dw.size() - common;  // 0: the same core (more workers than cores)
        }
        rings_[w][dist].push_back(v);
      }
    }
  }

  sim_result run() {
    sim_result r;
    r.workers = o_.workers;
    r.tasks = g_.tasks.size();
    for (const task& t : g_.tasks) r.work_ns += t.work;
    for (std::uint32_t w = 0; w < o_.workers; ++w) park(w, 0);
    inject_root(0);
    while (!q_.empty()) {
      event e = q_.top();
      q_.pop();
      now_ = e.t;
      wstate& ws = w_[e.w];
      if (e.epoch != ws.epoch) continue;  // superseded
      switch (e.k) {
        case evk::piece_done: piece_done(e.w); break;
        case evk::look: look(e.w); break;
        case evk::wake:
          if (ws.m == mode::parked) {
            ws.m = mode::seeking;
            look(e.w);
          }
          break;
      }
    }
    if (finished_ != g_.tasks.size())
      throw error("the simulation stopped with " + std::to_string(g_.tasks.size() - finished_) + " tasks unfinished (inconsistent DAG)");
    r.time_ns = end_;
    r.busy_ns = busy_;
    r.steals = steals_;
    r.steal_attempts = attempts_;
    r.moved = moved_;
    r.sleeps = sleeps_;
    return r;
  }

 private:
  struct tstate {
    std::size_t pos = 0;
    double prev_at = 0;
    std::uint32_t waiting = 0, preds = 0, late = 0;
    bool spawned = false, done = false, tail = false, started = false;
    std::uint32_t holder = 0, pushed_by = 0;
  };
  struct wstate {
    std::deque<std::uint32_t> dq;
    std::vector<std::uint32_t> stack;
    mode m = mode::parked;
    std::uint64_t epoch = 0;
    double parked_at = 0, piece = 0;
    std::int64_t last_victim = -1;
    std::size_t last_dist = 1;  // its ring (distance)
  };

  void schedule(std::uint32_t w, double t, evk k) { q_.push({t, seq_++, w, k, w_[w].epoch}); }

  void park(std::uint32_t w, double t) {
    wstate& ws = w_[w];
    ++ws.epoch;
    ws.m = mode::parked;
    ws.parked_at = t;
    parked_.push_back({w, ws.epoch});
  }
  double latency(std::uint32_t w) const {
    return now_ - w_[w].parked_at < o_.c.spin_ns ? o_.c.steal_fail_ns : o_.c.wake_ns;
  }
  void wake(std::uint32_t w) {
    wstate& ws = w_[w];
    if (ws.m != mode::parked) return;
    if (now_ - ws.parked_at >= o_.c.spin_ns) ++sleeps_;
    const double at = std::max(now_, ws.parked_at) + latency(w);
    ++ws.epoch;
    ws.m = mode::seeking;
    schedule(w, at, evk::look);
  }
  void wake_one() {
    while (!parked_.empty()) {
      auto [w, ep] = parked_.front();
      parked_.pop_front();
      if (w_[w].epoch == ep && w_[w].m == mode::parked) {
        wake(w);
        return;
      }
    }
  }

  void make_ready(std::uint32_t c, std::uint32_t w) {
    w_[w].dq.push_back(c);
    t_[c].pushed_by = w;
    wake_one();
  }

  void inject_root(std::uint32_t k) {
    if (k >= g_.roots.size()) return;
    next_root_ = k + 1;
    const std::uint32_t r = g_.roots[k];
    t_[r].spawned = true;
    if (t_[r].preds != 0) return;
    w_[0].dq.push_back(r);
    t_[r].pushed_by = 0;
    if (w_[0].m == mode::parked) {
      ++w_[0].epoch;
      w_[0].m = mode::seeking;
      schedule(0, now_, evk::look);
    }
  }

  unsigned running() const { return running_; }

  // Starts task c on worker w (on top of its stack).
  void begin(std::uint32_t w, std::uint32_t c) {
    w_[w].stack.push_back(c);
    t_[c].started = true;
    t_[c].holder = w;
    if (t_[c].pushed_by != w) ++moved_;
  }

  // Decides what worker w does next, from time `at`.
  void step(std::uint32_t w, double at) {
    wstate& ws = w_[w];
    for (;;) {
      if (!ws.stack.empty()) {
        const std::uint32_t i = ws.stack.back();
        tstate& ts = t_[i];
        if (ts.tail && ts.late == 0) {  // a root whose late children are done
          finish(i, w);
          continue;
        }
        if (ts.waiting == 0 && !ts.tail) {  // its next piece of work
          run_piece(w, i, at);
          return;
        }
      }
      // Nothing to run, or the top task waits for children: our newest entry, else look for work.
      if (!ws.dq.empty()) {
        const std::uint32_t c = ws.dq.back();
        ws.dq.pop_back();
        begin(w, c);
        continue;
      }
      ++ws.epoch;
      ws.m = mode::seeking;
      schedule(w, at, evk::look);
      return;
    }
  }

  void run_piece(std::uint32_t w, std::uint32_t i, double at) {
    wstate& ws = w_[w];
    const tstate& ts = t_[i];
    const task& t = g_.tasks[i];
    double d = ts.pos < t.points.size() ? t.points[ts.pos].at - ts.prev_at : t.work - ts.prev_at;
    d = std::max(0.0, d);
    ++running_;
    const double share = o_.cores > 0 ? std::max(1.0, static_cast<double>(running_) / o_.cores) : 1.0;
    d *= share * (1.0 + o_.contention * static_cast<double>(running_ - 1));
    ws.piece = d;
    ++ws.epoch;
    ws.m = mode::running;
    schedule(w, at + d, evk::piece_done);
  }

  void piece_done(std::uint32_t w) {
    wstate& ws = w_[w];
    --running_;
    busy_ += ws.piece;
    const std::uint32_t i = ws.stack.back();
    tstate& ts = t_[i];
    const task& t = g_.tasks[i];
    double at = now_;
    if (ts.pos < t.points.size()) {
      const point& pt = t.points[ts.pos];
      ts.prev_at = pt.at;
      ++ts.pos;
      if (pt.spawn >= 0) {
        const auto c = static_cast<std::uint32_t>(pt.spawn);
        at += o_.c.spawn_ns;
        busy_ += o_.c.spawn_ns;
        t_[c].spawned = true;
        if (t_[c].preds == 0) make_ready(c, w);
      }
      for (std::uint32_t c : pt.joins)
        if (!t_[c].done) ++ts.waiting;
      step(w, at);
      return;
    }
    ts.tail = true;
    if (ts.late > 0) {  // a root waiting for children nobody joins
      step(w, at);
      return;
    }
    finish(i, w);
    step(w, at);
  }

  void finish(std::uint32_t i, std::uint32_t w) {
    tstate& ts = t_[i];
    ts.done = true;
    ++finished_;
    w_[w].stack.pop_back();
    const task& t = g_.tasks[i];
    for (std::uint32_t y : succ_[i])
      if (--t_[y].preds == 0 && t_[y].spawned) make_ready(y, w);
    std::int64_t resume = -1;
    if (t.joiner >= 0) {
      const auto j = static_cast<std::size_t>(t.joiner);
      tstate& js = t_[j];
      if (js.waiting > 0 && js.pos == join_pt_[i] + 1 && --js.waiting == 0) resume = static_cast<std::int64_t>(j);
    } else if (t.parent >= 0) {
      const auto r = static_cast<std::size_t>(root_of_[i]);
      if (--t_[r].late == 0 && t_[r].tail) resume = static_cast<std::int64_t>(r);
    } else {
      end_ = std::max(end_, now_);
      inject_root(next_root_);
    }
    if (resume >= 0) {
      const auto j = static_cast<std::size_t>(resume);
      // A root whose late children are all done finishes when its worker comes back to it.
      const std::uint32_t h = t_[j].holder;
      if (h != w) {
        wstate& hs = w_[h];
        if (hs.m == mode::parked) {
          wake(h);
        }
        // seeking: its pending look sees the task can go on; running: it comes back to it.
      }
    }
  }

  void look(std::uint32_t w) {
    wstate& ws = w_[w];
    if (!ws.stack.empty()) {
      const tstate& ts = t_[ws.stack.back()];
      if (ts.waiting == 0 && (!ts.tail || ts.late == 0)) {  // it can go on
        step(w, now_);
        return;
      }
    }
    if (!ws.dq.empty()) {
      step(w, now_);
      return;
    }
    const unsigned P = o_.workers;
    double cost = 0;
    auto try_victim = [&](std::uint32_t v, std::size_t dist) -> bool {
      ++attempts_;
      std::deque<std::uint32_t>& vq = w_[v].dq;
      if (vq.empty()) {
        cost += o_.c.steal_fail_ns;
        return false;
      }
      std::size_t k = 1;
      switch (o_.steal) {
        case policy::one: k = 1; break;
        case policy::chunk: k = std::min<std::size_t>(o_.chunk, vq.size()); break;
        case policy::half: k = (vq.size() + 1) / 2; break;
        case policy::adaptive: k = std::max<std::size_t>(1, vq.size() / P); break;
      }
      cost += steal_cost(dist);
      ++steals_;
      const std::uint32_t first = vq.front();
      vq.pop_front();
      for (std::size_t j = 1; j < k; ++j) {
        // The rest of the chunk goes on the thief's deque, the oldest deepest.
        ws.dq.push_front(vq.front());
        vq.pop_front();
      }
      ws.last_victim = v;
      ws.last_dist = dist;
      begin(w, first);
      return true;
    };
    bool got = false;
    if (ws.last_victim >= 0 && static_cast<unsigned>(ws.last_victim) != w)
      got = try_victim(static_cast<std::uint32_t>(ws.last_victim), ws.last_dist);
    // Nearest ring first, each from a random start (flat: one ring of everyone).
    for (std::size_t d = 0; d < rings_[w].size() && !got; ++d) {
      const auto& ring = rings_[w][d];
      if (ring.empty()) continue;
      const auto start = static_cast<std::size_t>(rng_() % ring.size());
      for (std::size_t k = 0; k < ring.size() && !got; ++k) {
        const std::uint32_t v = ring[(start + k) % ring.size()];
        if (static_cast<std::int64_t>(v) == ws.last_victim) continue;
        got = try_victim(v, d);
      }
    }
    if (got) {
      step(w, now_ + cost);
      return;
    }
    park(w, now_ + cost);
  }

  double steal_cost(std::size_t dist) const {
    if (o_.steal_ns_levels.empty() || dist == 0) return o_.c.steal_ns;
    return o_.steal_ns_levels[std::min(dist, o_.steal_ns_levels.size()) - 1];
  }

  const graph& g_;
  const sim_options& o_;
  std::vector<std::vector<std::vector<std::uint32_t>>> rings_;  // worker -> distance -> victims
  std::mt19937_64 rng_;
  std::vector<tstate> t_;
  std::vector<std::vector<std::uint32_t>> succ_;
  std::vector<std::size_t> join_pt_;
  std::vector<std::int64_t> root_of_;
  std::vector<wstate> w_;
  std::deque<std::pair<std::uint32_t, std::uint64_t>> parked_;
  std::priority_queue<event, std::vector<event>, std::greater<>> q_;
  double now_ = 0, end_ = 0, busy_ = 0;
  std::uint64_t seq_ = 0, steals_ = 0, attempts_ = 0, moved_ = 0, sleeps_ = 0;
  std::size_t finished_ = 0;
  std::uint32_t next_root_ = 0;
  unsigned running_ = 0;
};

}  // namespace

sim_result simulate(const graph& g, const sim_options& o) {
  if (o.workers == 0) throw error("--workers must be at least 1 (got 0)");
  if (o.steal == policy::chunk && o.chunk == 0) throw error("chunk:K needs K >= 1");
  if (g.tasks.empty()) throw error("the DAG has no tasks");
  simulator s(g, o);
  return s.run();
}

}  // namespace plait::dag
