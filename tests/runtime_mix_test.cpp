// Random programs that mix every construct of the runtime in one task tree: spawn/join,
// plait::join, task groups (children added from spawned tasks, from loop bodies and from other
// groups' children; waits under unjoined spawn handles), parallel_for / parallel_for_chunks /
// parallel_reduce with every partitioner, dataflow regions, exceptions and cancellation, and
// detached tasks (run_detached: events fulfilled in the body or later by a pool poller). Each
// program follows from a seed and is evaluated twice: in parallel on a pool, and serially by a
// mirror of the same recursion. Every task must run exactly once and every value must match, for
// 1, 2, 3, 8 and 16 workers and every steal policy. Then one small regression test per pattern
// that mixes constructs in a way the runtime once hung on or lost a task in.
//
// A hang never returns to gtest, and ctest would only report a timeout minutes later without
// saying what hung. So every program runs under a watchdog: past its deadline the watchdog thread
// prints the program (seed, depth, constructs, tasks run so far), the worker count and the steal
// policy, and calls std::abort(): the test fails at once with that message.
//
// Environment (optional, for soak runs and for bisecting a hang): PLAIT_MIX_PROGRAMS=N runs N
// programs per parameter instead of the default; PLAIT_MIX_WATCHDOG_S=S sets the deadline of one
// program or one regression test (defaults: 60 s and 30 s).
#include "test_util.hpp"

#include "dag.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using plait_test::mix;

// ---- Watchdog ---------------------------------------------------------------------------------

// One thread for the whole binary. It sleeps on a condition variable until the armed deadline;
// arming and disarming notify it. If the deadline passes while armed, it calls the description
// callback (which reads only atomics and immutable state: the test thread is stuck somewhere in
// the runtime), prints it and aborts the process.
class Watchdog {
 public:
  using clock = std::chrono::steady_clock;

  static Watchdog& instance() {
    static Watchdog w;
    return w;
  }

  // Armed for the guard's lifetime.
  class [[nodiscard]] Guard {
   public:
    Guard(std::chrono::seconds limit, std::function<std::string()> describe) {
      instance().arm(limit, std::move(describe));
    }
    ~Guard() { instance().disarm(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  };

  // The deadline of one program or one regression test: PLAIT_MIX_WATCHDOG_S, else `fallback`.
  static std::chrono::seconds limit(long fallback) {
    const char* s = std::getenv("PLAIT_MIX_WATCHDOG_S");
    long v = s ? std::strtol(s, nullptr, 10) : 0;
    return std::chrono::seconds(v > 0 ? v : fallback);
  }

 private:
  Watchdog() : thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void arm(std::chrono::seconds limit, std::function<std::string()> describe) {
    std::lock_guard<std::mutex> lk(mu_);
    armed_ = true;
    limit_ = limit;
    deadline_ = clock::now() + limit;
    describe_ = std::move(describe);
    cv_.notify_all();
  }

  void disarm() {
    std::lock_guard<std::mutex> lk(mu_);
    armed_ = false;
    describe_ = nullptr;
    cv_.notify_all();
  }

  void loop() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      if (!armed_) {
        cv_.wait(lk);
      } else if (clock::now() < deadline_) {
        cv_.wait_until(lk, deadline_);
      } else {
        std::string what = describe_ ? describe_() : std::string("(no description)");
        std::fprintf(stderr,
                     "\nplait watchdog: HANG: %s did not finish within %lld s; aborting so that the test fails "
                     "here\n",
                     what.c_str(), static_cast<long long>(limit_.count()));
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool armed_ = false;
  std::chrono::seconds limit_{0};
  clock::time_point deadline_{};
  std::function<std::string()> describe_;
  std::thread thread_;  // last: starts once the members above exist
};

// ---- Pools ------------------------------------------------------------------------------------

using plait_test::make_pool;
using Policy = plait_test::StealPolicy;
const Policy policies[] = {{"one", plait::steal_policy::one, 8},
                           {"chunk4", plait::steal_policy::chunk, 4},
                           {"half", plait::steal_policy::half, 8},
                           {"adaptive", plait::steal_policy::adaptive, 8}};

// Work that the compiler cannot remove: about a nanosecond per iteration.
void spin(unsigned iterations) {
  volatile std::uint64_t x = 0;
  for (unsigned i = 0; i < iterations; ++i) x = x + i;
}

// ---- Programs ---------------------------------------------------------------------------------

// What a node does besides counting itself. Every construct that has children runs them as full
// nodes, which pick again.
enum class Kind : std::uint8_t {
  leaf,
  spawn,                    // k children spawned in a chain, joined LIFO
  join,                     // plait::join(child 0, child 1)
  group,                    // task_group with k children; odd ones may add to the enclosing group
  group_join,               // plait::join([&]{ g.run(c0); }, [&]{ c1; }); g.wait()  (arms in either order)
  group_spawn_first,        // h = spawn(c0); g.run(c1); h.join(); g.wait()
  group_wait_under_handle,  // g.run(c0); h = spawn(c1); g.wait(); h.join()
  outer_add,                // adds k children to the enclosing group (sometimes above an unjoined spawn)
  loop_for,                 // parallel_for: some iterations add their child to a group, the rest run it
  loop_chunks,              // parallel_for_chunks, likewise
  loop_reduce,              // parallel_reduce (fast or deterministic), likewise
  loop_throw,               // parallel_for whose iteration t throws; iterations not started are skipped
  dataflow,                 // dataflow_group: tasks with in/out/inout on three cells; the first 3 run a child
  throw_group,              // task_group whose child throws: the rest may be skipped; then reused
  cancel_group,             // task_group canceled by its creator or by its first child; then reused
  throw_spawn,              // a spawned task or a plait::join arm throws; caught at the join
  count_
};
constexpr unsigned kind_count = static_cast<unsigned>(Kind::count_);
const char* const kind_names[kind_count] = {
    "leaf",        "spawn",      "join",       "group",       "group_join",   "group_spawn_first",
    "group_wait_under_handle",   "outer_add",  "loop_for",    "loop_chunks",  "loop_reduce",
    "loop_throw",  "dataflow",   "throw_group", "cancel_group", "throw_spawn"};

// The exception a thrower throws: its node id, so the catcher checks it got the right one.
struct MixError : std::exception {
  explicit MixError(std::uint64_t i) : id(i) {}
  const char* what() const noexcept override { return "plait mix: thrown on purpose"; }
  std::uint64_t id;
};

// A program: everything about a node follows from a hash of (seed, node id, question).
struct Program {
  std::uint64_t seed;
  unsigned max_depth;

  std::uint64_t h(std::uint64_t id, std::uint64_t question) const {
    return mix(seed ^ mix(id * 0x9E3779B97F4A7C15ULL + question));
  }
  static std::uint64_t child(std::uint64_t id, std::uint64_t i) {
    return plait_test::RandomTree::child_id(id, static_cast<unsigned>(i));
  }
  // About one node in six is a leaf, and every node at max_depth.
  Kind kind(std::uint64_t id, unsigned depth) const {
    if (depth >= max_depth) return Kind::leaf;
    auto k = static_cast<unsigned>(h(id, 1) % (kind_count + 2));
    return k >= kind_count ? Kind::leaf : static_cast<Kind>(k);
  }
  unsigned fanout(std::uint64_t id) const { return 1 + static_cast<unsigned>(h(id, 2) % 4); }
  std::uint64_t payload(std::uint64_t id) const { return h(id, 3) >> 8; }
  bool bit(std::uint64_t id, unsigned which) const { return (h(id, 4) >> which) & 1; }
  // Group children and data-flow tasks: 0 a plain task, 1 detached (run_detached) with its event
  // fulfilled at the end of the body, 2 detached with its event handed to the run's poller, which
  // fulfils it later on whatever worker polls.
  unsigned event_mode(std::uint64_t id) const { return static_cast<unsigned>(h(id, 77) % 4) % 3; }

  // Loops: usually 0..32 iterations, one in eight has 200..999 (forced leaves beyond the third),
  // so that every partitioner splits for real.
  std::int64_t loop_len(std::uint64_t id) const {
    std::uint64_t x = h(id, 5);
    return static_cast<std::int64_t>(x % 8 == 0 ? 200 + (x >> 8) % 800 : (x >> 8) % 33);
  }
  // Iterations 0..2 are full nodes; the others are leaves (they still count as tasks).
  unsigned iter_depth(unsigned depth, std::int64_t i) const { return i < 3 ? depth + 1 : max_depth; }
  // Children of a group that gets canceled (throw_group, cancel_group) are small subtrees, at
  // most one level above the leaves: most of them are skipped, and a skipped subtree tests
  // nothing beyond the skip itself.
  unsigned cancelable_depth(unsigned depth) const { return std::max(depth + 1, max_depth - 1); }
  // The loop body adds this iteration's child to a group instead of running it.
  bool detach(std::uint64_t id, std::int64_t i) const {
    return h(child(id, static_cast<std::uint64_t>(i)), 6) % 4 == 0;
  }
  plait::partitioner part(std::uint64_t id) const {
    std::uint64_t x = h(id, 7);
    auto a = static_cast<std::int64_t>((x >> 8) % 8) + 1;
    switch (x % 7) {
      case 0: return plait::adaptive_partition();
      case 1: return plait::static_partition();
      case 2: return plait::dynamic_partition(a);
      case 3: return plait::guided_partition(a);
      case 4: return plait::taskloop_grainsize(a);
      case 5: return plait::taskloop_num_tasks(3 * a);
      default: return plait::recursive_partition(a);
    }
  }
  plait::reduce_mode reduce(std::uint64_t id) const {
    return bit(id, 3) ? plait::reduce_mode::deterministic : plait::reduce_mode::fast;
  }
  // Where a thrower goes among k children (0..k: before child i, or last).
  unsigned throw_pos(std::uint64_t id, unsigned k) const { return static_cast<unsigned>(h(id, 8) % (k + 1)); }

  // Dataflow: 1..6 tasks; task t's access to cell j: 0 none, 1 in, 2 out, 3 inout.
  static constexpr unsigned df_cells = 3;
  unsigned df_tasks(std::uint64_t id) const { return 1 + static_cast<unsigned>(h(id, 9) % 6); }
  unsigned df_mode(std::uint64_t id, unsigned t, unsigned j) const {
    return static_cast<unsigned>((h(child(id, t), 10) >> (2 * j)) & 3);
  }
  std::uint64_t df_init(std::uint64_t id, unsigned j) const { return h(id, 11 + j); }  // 11..13

  // throw_spawn: 0 spawn + join, 1 plait::join whose inline arm throws, 2 ... whose spawned arm throws.
  unsigned throw_variant(std::uint64_t id) const { return static_cast<unsigned>(h(id, 14) % 3); }
};

// What a task computes in a dataflow region, from what it read and its child's value.
std::uint64_t df_value(std::uint64_t in_sum, std::uint64_t child_value, unsigned t) {
  return mix(in_sum ^ (child_value * 3) ^ (0x51ED270B27B6D4A3ULL * (t + 1)));
}

// ---- Serial evaluation ------------------------------------------------------------------------

struct Totals {
  std::uint64_t nodes = 0;  // tasks that run (throwers included)
  std::uint64_t sum = 0;    // sum of their payloads
  std::array<std::uint64_t, kind_count> kinds{};
};

// The serial mirror of run_node below: the same recursion with plain arithmetic, every child
// run. A node's return value is its payload plus what its attached children returned; a child
// added to an enclosing group hands its value to that group's accumulator (`out`) instead. The
// order of additions does not matter (wrapping sums).
std::uint64_t expect_node(const Program& p, std::uint64_t id, unsigned depth, std::uint64_t* out, Totals& t) {
  const std::uint64_t v = p.payload(id);
  ++t.nodes;
  t.sum += v;
  Kind kd = p.kind(id, depth);
  if (kd == Kind::outer_add && out == nullptr) kd = Kind::group;
  ++t.kinds[static_cast<unsigned>(kd)];
  const unsigned k = p.fanout(id);
  auto sub = [&](std::uint64_t i, std::uint64_t* o) { return expect_node(p, Program::child(id, i), depth + 1, o, t); };
  auto thrower = [&](std::uint64_t tid) {
    ++t.nodes;
    t.sum += p.payload(tid);
  };
  switch (kd) {
    case Kind::leaf:
      return v;
    case Kind::spawn: {
      std::uint64_t r = v;
      for (unsigned i = 0; i < k; ++i) r += sub(i, out);
      return r;
    }
    case Kind::join: {
      std::uint64_t a = sub(0, out);
      return v + a + sub(1, out);
    }
    case Kind::group: {
      std::uint64_t acc = 0;
      for (unsigned i = 0; i < k; ++i) {
        std::uint64_t x = sub(i, (i & 1) && out ? out : &acc);
        acc += x;
      }
      return v + acc;
    }
    case Kind::group_join: {
      std::uint64_t acc = 0;
      std::uint64_t a = sub(0, &acc);
      acc += a;
      std::uint64_t b = sub(1, &acc);
      return v + acc + b;
    }
    case Kind::group_spawn_first: {
      std::uint64_t acc = 0;
      std::uint64_t a = sub(0, &acc);
      std::uint64_t c = sub(1, &acc);
      acc += c;
      return v + a + acc;
    }
    case Kind::group_wait_under_handle: {
      std::uint64_t acc = 0;
      std::uint64_t a = sub(0, &acc);
      acc += a;
      std::uint64_t b = sub(1, out);
      return v + acc + b;
    }
    case Kind::outer_add: {
      std::uint64_t r = v;
      unsigned first = 0;
      if (k >= 2 && p.bit(id, 0)) {
        r += sub(0, out);
        first = 1;
      }
      for (unsigned i = first; i < k; ++i) {
        std::uint64_t x = sub(i, out);
        *out += x;
      }
      return r;
    }
    case Kind::loop_for:
    case Kind::loop_chunks:
    case Kind::loop_reduce: {
      std::uint64_t local = 0, direct = 0;
      std::uint64_t* dst = p.bit(id, 1) || out == nullptr ? &local : out;
      for (std::int64_t i = 0, n = p.loop_len(id); i < n; ++i) {
        std::uint64_t x =
            expect_node(p, Program::child(id, static_cast<std::uint64_t>(i)), p.iter_depth(depth, i), dst, t);
        if (p.detach(id, i))
          *dst += x;
        else
          direct += x;
      }
      return v + direct + local;
    }
    case Kind::loop_throw: {
      std::int64_t n = p.loop_len(id);
      if (n == 0) n = 1;
      const auto tpos = static_cast<std::int64_t>(p.h(id, 8) % static_cast<std::uint64_t>(n));
      std::uint64_t direct = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint64_t cid = Program::child(id, static_cast<std::uint64_t>(i));
        if (i == tpos)
          thrower(cid);
        else
          direct += expect_node(p, cid, p.iter_depth(depth, i), nullptr, t);
      }
      return v + direct;
    }
    case Kind::dataflow: {
      std::array<std::uint64_t, Program::df_cells> c{};
      for (unsigned j = 0; j < Program::df_cells; ++j) c[j] = p.df_init(id, j);
      std::uint64_t r = v;
      for (unsigned ti = 0, m = p.df_tasks(id); ti < m; ++ti) {
        std::uint64_t in_sum = 0;
        for (unsigned j = 0; j < Program::df_cells; ++j)
          if (p.df_mode(id, ti, j) == 1 || p.df_mode(id, ti, j) == 3) in_sum += c[j] * (j + 1);
        std::uint64_t cv = ti < 3 ? sub(ti, out) : 0;
        std::uint64_t hv = df_value(in_sum, cv, ti);
        for (unsigned j = 0; j < Program::df_cells; ++j) {
          if (p.df_mode(id, ti, j) == 2) c[j] = hv + j;
          if (p.df_mode(id, ti, j) == 3) c[j] = mix(c[j] + hv);
        }
        r += hv;
      }
      for (unsigned j = 0; j < Program::df_cells; ++j) r += c[j];
      return r;
    }
    case Kind::throw_group:
    case Kind::cancel_group: {
      std::uint64_t acc = 0;
      for (unsigned i = 0; i < k; ++i)
        acc += expect_node(p, Program::child(id, i), p.cancelable_depth(depth), nullptr, t);
      if (kd == Kind::throw_group) thrower(Program::child(id, k));
      std::uint64_t again = sub(k + 1, &acc);  // the reused group's child
      acc += again;
      return v + acc;
    }
    case Kind::throw_spawn: {
      std::uint64_t b = sub(0, out);
      thrower(Program::child(id, 1));
      return v + b;
    }
    case Kind::count_:
      break;
  }
  return v;
}

// ---- Parallel evaluation ----------------------------------------------------------------------

// What one parallel run accumulates. Children skipped by cancellation (or by an exception that
// canceled their group or loop) are accounted for by evaluating their subtrees serially: the
// sums then equal the serial program's whatever was skipped, and a task that ran twice or never
// still shows.
struct MixRun {
  explicit MixRun(const Program& prog) : p(prog) {}
  const Program& p;
  std::atomic<std::uint64_t> executed{0}, sum{0}, skipped_nodes{0}, skipped_sum{0};
  std::atomic<int> errors{0};
  std::mutex mu;
  std::string first_error;

  void count(std::uint64_t id) {
    executed.fetch_add(1, std::memory_order_relaxed);
    sum.fetch_add(p.payload(id), std::memory_order_relaxed);
  }
  // Events handed to the poller (event_mode 2); MixPrograms registers it on the pool.
  std::mutex events_mu;
  std::vector<plait::event> events;
  void settle(plait::event e, unsigned mode) {
    if (mode == 1) {
      e.fulfill();
      return;
    }
    std::lock_guard<std::mutex> lk(events_mu);
    events.push_back(std::move(e));
  }
  void poll() {
    std::vector<plait::event> now;
    {
      std::lock_guard<std::mutex> lk(events_mu);
      now.swap(events);
    }
    for (auto& e : now) e.fulfill();
  }

  void fail(const std::string& m) {
    if (errors.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lk(mu);
      first_error = m;
    }
  }
  // A child that never started: its subtree's tasks and payloads count as skipped; returns the
  // value it would have returned.
  std::uint64_t skip(std::uint64_t cid, unsigned depth) {
    Totals t;
    std::uint64_t r = expect_node(p, cid, depth, nullptr, t);
    skipped_nodes.fetch_add(t.nodes, std::memory_order_relaxed);
    skipped_sum.fetch_add(t.sum, std::memory_order_relaxed);
    return r;
  }
  void check_caught(const MixError& e, std::uint64_t want, const char* where) {
    if (e.id != want) fail(std::string(where) + ": caught the exception of another node");
  }
};

// A group seen from inside: the task_group and the accumulator its children's values go to.
struct Outer {
  plait::task_group* g;
  std::atomic<std::uint64_t>* acc;
};

std::uint64_t run_node(MixRun& r, std::uint64_t id, unsigned depth, Outer* out);

// Adds node `cid` to group `into`; its value goes to into's accumulator, and `its_outer` is the
// group its own subtree may add to. Both outlive the child: the child is pending in `into` (or
// runs inside a child pending there) until the group's owner has waited.
void add_child(MixRun& r, Outer* into, Outer* its_outer, std::uint64_t cid, unsigned depth) {
  const unsigned em = r.p.event_mode(cid);
  if (em == 0) {
    into->g->run([&r, into, its_outer, cid, depth] {
      into->acc->fetch_add(run_node(r, cid, depth, its_outer), std::memory_order_relaxed);
    });
    return;
  }
  into->g->run_detached([&r, into, its_outer, cid, depth, em](plait::event e) {
    into->acc->fetch_add(run_node(r, cid, depth, its_outer), std::memory_order_relaxed);
    r.settle(std::move(e), em);
  });
}

std::uint64_t spawn_chain(MixRun& r, std::uint64_t id, unsigned depth, unsigned i, unsigned k, Outer* out) {
  if (i == k) return 0;
  auto h = plait::spawn([&r, id, depth, i, out] { return run_node(r, Program::child(id, i), depth + 1, out); });
  std::uint64_t rest = spawn_chain(r, id, depth, i + 1, k, out);
  return rest + h.join();
}

// The loop kinds (for, chunks, reduce): iterations whose detach() bit is set add their child to
// a group — the loop's own or the enclosing one — from inside the loop body; the others run it.
std::uint64_t run_loop_node(MixRun& r, Kind kd, std::uint64_t id, unsigned depth, Outer* out) {
  const Program& p = r.p;
  plait::task_group g;
  std::atomic<std::uint64_t> local_acc{0}, direct{0};
  Outer local{&g, &local_acc};
  Outer* dst = p.bit(id, 1) || out == nullptr ? &local : out;
  auto iter = [&r, &p, dst, id, depth](std::int64_t i) -> std::uint64_t {
    std::uint64_t cid = Program::child(id, static_cast<std::uint64_t>(i));
    if (p.detach(id, i)) {
      add_child(r, dst, dst, cid, p.iter_depth(depth, i));
      return 0;
    }
    return run_node(r, cid, p.iter_depth(depth, i), dst);
  };
  const std::int64_t n = p.loop_len(id);
  std::uint64_t reduced = 0;
  switch (kd) {
    case Kind::loop_for:
      plait::parallel_for(
          0, n, [&](std::int64_t i) { direct.fetch_add(iter(i), std::memory_order_relaxed); }, p.part(id));
      break;
    case Kind::loop_chunks:
      plait::parallel_for_chunks(
          0, n,
          [&](std::int64_t lo, std::int64_t hi) {
            std::uint64_t s = 0;
            for (std::int64_t i = lo; i < hi; ++i) s += iter(i);
            direct.fetch_add(s, std::memory_order_relaxed);
          },
          p.part(id));
      break;
    default:
      reduced = plait::parallel_reduce(
          0, n, std::uint64_t{0},
          [&](std::int64_t lo, std::int64_t hi, std::uint64_t acc) {
            for (std::int64_t i = lo; i < hi; ++i) acc += iter(i);
            return acc;
          },
          [](std::uint64_t a, std::uint64_t b) { return a + b; }, p.part(id), p.reduce(id));
      break;
  }
  g.wait();
  return direct.load() + local_acc.load() + reduced;
}

std::uint64_t run_loop_throw(MixRun& r, std::uint64_t id, unsigned depth) {
  const Program& p = r.p;
  std::int64_t n = p.loop_len(id);
  if (n == 0) n = 1;
  const auto tpos = static_cast<std::int64_t>(p.h(id, 8) % static_cast<std::uint64_t>(n));
  const std::uint64_t tid = Program::child(id, static_cast<std::uint64_t>(tpos));
  std::vector<std::atomic<std::uint8_t>> ran(static_cast<std::size_t>(n));
  std::atomic<std::uint64_t> direct{0};
  try {
    plait::parallel_for(
        0, n,
        [&](std::int64_t i) {
          ran[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
          if (i == tpos) {
            r.count(tid);
            throw MixError(tid);
          }
          direct.fetch_add(run_node(r, Program::child(id, static_cast<std::uint64_t>(i)), p.iter_depth(depth, i),
                                    nullptr),
                           std::memory_order_relaxed);
        },
        p.part(id));
    r.fail("loop_throw: parallel_for returned without the body's exception");
  } catch (const MixError& e) {
    r.check_caught(e, tid, "loop_throw");
  }
  std::uint64_t v = direct.load();
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint8_t c = ran[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
    if (c > 1) r.fail("loop_throw: an iteration ran twice");
    if (c == 0) {
      if (i == tpos) r.fail("loop_throw: the throwing iteration never ran");
      else v += r.skip(Program::child(id, static_cast<std::uint64_t>(i)), p.iter_depth(depth, i));
    }
  }
  return v;
}

std::uint64_t run_dataflow(MixRun& r, std::uint64_t id, unsigned depth, Outer* out) {
  const Program& p = r.p;
  constexpr unsigned cells = Program::df_cells;
  std::array<std::uint64_t, cells> c{};
  for (unsigned j = 0; j < cells; ++j) c[j] = p.df_init(id, j);
  std::array<std::uint64_t, 6> res{};
  const unsigned m = p.df_tasks(id);
  {
    plait::dataflow_group df;
    for (unsigned t = 0; t < m; ++t) {
      std::vector<plait::access> deps;
      for (unsigned j = 0; j < cells; ++j) {
        switch (p.df_mode(id, t, j)) {
          case 1: deps.push_back(plait::in(c[j])); break;
          case 2: deps.push_back(plait::out(c[j])); break;
          case 3: deps.push_back(plait::inout(c[j])); break;
          default: break;
        }
      }
      // Reads and writes only the cells it declared, so a wrong order is a wrong value (and a
      // data race under TSan). A detached task's successors wait for its event, fulfilled at
      // the end of its body or later by the poller.
      auto body = [&r, &p, &c, &res, id, depth, out, t] {
        std::uint64_t in_sum = 0;
        for (unsigned j = 0; j < cells; ++j)
          if (p.df_mode(id, t, j) == 1 || p.df_mode(id, t, j) == 3) in_sum += c[j] * (j + 1);
        std::uint64_t cv = t < 3 ? run_node(r, Program::child(id, t), depth + 1, out) : 0;
        std::uint64_t hv = df_value(in_sum, cv, t);
        for (unsigned j = 0; j < cells; ++j) {
          if (p.df_mode(id, t, j) == 2) c[j] = hv + j;
          if (p.df_mode(id, t, j) == 3) c[j] = mix(c[j] + hv);
        }
        res[t] = hv;
      };
      const unsigned em = p.event_mode(Program::child(id, 100 + t));
      if (em == 0)
        df.run(std::span<const plait::access>(deps), body);
      else
        df.run_detached(std::span<const plait::access>(deps), [&r, body, em](plait::event e) {
          body();
          r.settle(std::move(e), em);
        });
    }
    df.wait();
  }  // destroyed right after the wait, as regions created inside tasks are
  std::uint64_t v = 0;
  for (unsigned t = 0; t < m; ++t) v += res[t];
  for (unsigned j = 0; j < cells; ++j) v += c[j];
  return v;
}

// throw_group / cancel_group: children record that they started; the ones that did not were
// skipped by the cancellation. Afterwards the group is reused for one more child, which must run.
std::uint64_t run_canceling_group(MixRun& r, Kind kd, std::uint64_t id, unsigned depth) {
  const Program& p = r.p;
  const unsigned k = p.fanout(id);
  plait::task_group g;
  std::atomic<std::uint64_t> acc{0};
  Outer self{&g, &acc};
  std::array<std::atomic<std::uint8_t>, 4> ran{};
  const bool by_child = kd == Kind::cancel_group && p.bit(id, 2);  // child 0 cancels its group
  auto add = [&](unsigned i) {
    g.run([&r, &g, &acc, &ran, id, depth, i, by_child] {
      ran[i].fetch_add(1, std::memory_order_relaxed);
      if (by_child && i == 0) g.cancel();
      acc.fetch_add(run_node(r, Program::child(id, i), r.p.cancelable_depth(depth), nullptr),
                    std::memory_order_relaxed);
    });
  };
  const std::uint64_t tid = Program::child(id, k);
  if (kd == Kind::throw_group) {
    const unsigned tpos = p.throw_pos(id, k);
    for (unsigned i = 0; i <= k; ++i) {
      if (i == tpos)
        g.run([&r, tid] {
          r.count(tid);
          throw MixError(tid);
        });
      if (i < k) add(i);
    }
    try {
      g.wait();
      r.fail("throw_group: wait() returned without the child's exception");
    } catch (const MixError& e) {
      r.check_caught(e, tid, "throw_group");
    }
  } else {
    for (unsigned i = 0; i < k; ++i) add(i);
    if (!by_child) g.cancel();
    try {
      g.wait();
    } catch (...) {
      r.fail("cancel_group: wait() threw");
    }
  }
  std::uint64_t v = 0;
  for (unsigned i = 0; i < k; ++i) {
    std::uint8_t c = ran[i].load(std::memory_order_relaxed);
    if (c > 1) r.fail("canceled group: a child ran twice");
    if (c == 0) {
      if (by_child && i == 0) r.fail("cancel_group: the canceling child never ran");
      v += r.skip(Program::child(id, i), p.cancelable_depth(depth));
    }
  }
  // wait() cleared the cancellation and the exception: the group works again.
  add_child(r, &self, &self, Program::child(id, k + 1), depth + 1);
  try {
    g.wait();
  } catch (...) {
    r.fail("reused group: wait() threw");
  }
  return v + acc.load();
}

std::uint64_t run_throw_spawn(MixRun& r, std::uint64_t id, unsigned depth, Outer* out) {
  const std::uint64_t tid = Program::child(id, 1);
  std::uint64_t b = 0;
  auto thrower = [&r, tid]() -> std::uint64_t {
    r.count(tid);
    throw MixError(tid);
  };
  auto other = [&] { b = run_node(r, Program::child(id, 0), depth + 1, out); };
  try {
    switch (r.p.throw_variant(id)) {
      case 0: {
        auto h = plait::spawn(thrower);  // stealable while `other` runs here
        other();
        (void)h.join();
        break;
      }
      case 1:
        (void)plait::join(thrower, other);  // f throws; g finishes first
        break;
      default:
        (void)plait::join(other, thrower);  // the spawned arm throws
        break;
    }
    r.fail("throw_spawn: the join returned without the exception");
  } catch (const MixError& e) {
    r.check_caught(e, tid, "throw_spawn");
  }
  return b;
}

// One node: counts itself, then runs its construct. Returns its value (see expect_node).
std::uint64_t run_node(MixRun& r, std::uint64_t id, unsigned depth, Outer* out) {
  const Program& p = r.p;
  r.count(id);
  const std::uint64_t v = p.payload(id);
  // A little work per node (0.1-1 us), so that idle workers wake up and steal while the program
  // runs: without it most programs finish before a thief arrives.
  spin(100 + static_cast<unsigned>(v % 900));
  Kind kd = p.kind(id, depth);
  if (kd == Kind::outer_add && out == nullptr) kd = Kind::group;
  const unsigned k = p.fanout(id);
  auto child = [id](std::uint64_t i) { return Program::child(id, i); };
  switch (kd) {
    case Kind::leaf:
      return v;
    case Kind::spawn:
      return v + spawn_chain(r, id, depth, 0, k, out);
    case Kind::join: {
      auto ab = plait::join([&] { return run_node(r, child(0), depth + 1, out); },
                            [&] { return run_node(r, child(1), depth + 1, out); });
      return v + ab.first + ab.second;
    }
    case Kind::group: {
      plait::task_group g;
      std::atomic<std::uint64_t> acc{0};
      Outer self{&g, &acc};
      for (unsigned i = 0; i < k; ++i) add_child(r, &self, (i & 1) && out ? out : &self, child(i), depth + 1);
      g.wait();
      return v + acc.load();
    }
    case Kind::group_join: {
      // The child added inside one arm lands above (or inside) the join's own spawn.
      plait::task_group g;
      std::atomic<std::uint64_t> acc{0};
      Outer self{&g, &acc};
      std::uint64_t b = 0;
      auto adder = [&] { add_child(r, &self, &self, child(0), depth + 1); };
      auto runner = [&] { b = run_node(r, child(1), depth + 1, &self); };
      if (p.bit(id, 0))
        plait::join(adder, runner);
      else
        plait::join(runner, adder);
      g.wait();
      return v + acc.load() + b;
    }
    case Kind::group_spawn_first: {
      plait::task_group g;
      std::atomic<std::uint64_t> acc{0};
      Outer self{&g, &acc};
      auto h = plait::spawn([&] { return run_node(r, child(0), depth + 1, &self); });
      add_child(r, &self, &self, child(1), depth + 1);  // above the unjoined spawn
      std::uint64_t a = h.join();
      g.wait();
      return v + a + acc.load();
    }
    case Kind::group_wait_under_handle: {
      plait::task_group g;
      std::atomic<std::uint64_t> acc{0};
      Outer self{&g, &acc};
      add_child(r, &self, &self, child(0), depth + 1);
      // The spawned child must not add to g: it may still run after g.wait() returned.
      auto h = plait::spawn([&] { return run_node(r, child(1), depth + 1, out); });
      g.wait();  // the spawn above is not joined yet
      std::uint64_t b = h.join();
      return v + acc.load() + b;
    }
    case Kind::outer_add: {
      if (k >= 2 && p.bit(id, 0)) {
        auto h = plait::spawn([&] { return run_node(r, child(0), depth + 1, out); });
        for (unsigned i = 1; i < k; ++i) add_child(r, out, out, child(i), depth + 1);
        return v + h.join();
      }
      for (unsigned i = 0; i < k; ++i) add_child(r, out, out, child(i), depth + 1);
      return v;
    }
    case Kind::loop_for:
    case Kind::loop_chunks:
    case Kind::loop_reduce:
      return v + run_loop_node(r, kd, id, depth, out);
    case Kind::loop_throw:
      return v + run_loop_throw(r, id, depth);
    case Kind::dataflow:
      return v + run_dataflow(r, id, depth, out);
    case Kind::throw_group:
    case Kind::cancel_group:
      return v + run_canceling_group(r, kd, id, depth);
    case Kind::throw_spawn:
      return v + run_throw_spawn(r, id, depth, out);
    case Kind::count_:
      break;
  }
  return v;
}

// ---- The random-program test ------------------------------------------------------------------

constexpr int default_programs = plait_test::sanitized ? 300 : 1000;
constexpr std::uint64_t min_program_tasks = 16, max_program_tasks = 10000;

int programs_per_instance() {
  const char* s = std::getenv("PLAIT_MIX_PROGRAMS");
  long v = s ? std::strtol(s, nullptr, 10) : 0;
  return v > 0 ? static_cast<int>(v) : default_programs;
}

// Program s: the first of its candidate seeds whose program has at least min_program_tasks tasks
// (a root that happens to be a leaf tests nothing), at the largest depth up to 2 + s % 5 that
// keeps it at most max_program_tasks (the size stays bounded while most programs nest as deep as
// they can). The serial evaluation gives the expected totals and value.
Program make_program(int s, Totals& want, std::uint64_t& want_value) {
  for (std::uint64_t attempt = 0;; ++attempt) {
    Program p{mix(static_cast<std::uint64_t>(s) * 0x2545F4914F6CDD1DULL + 0xC0FFEE + (attempt << 40)),
              2u + static_cast<unsigned>(s % 5)};
    for (;;) {
      want = Totals{};
      want_value = expect_node(p, 1, 0, nullptr, want);
      if (want.nodes <= max_program_tasks || p.max_depth == 1) break;
      --p.max_depth;
    }
    if (want.nodes >= min_program_tasks) return p;
  }
}

std::string describe_kinds(const Totals& t) {
  std::ostringstream o;
  bool first = true;
  for (unsigned i = 1; i < kind_count; ++i) {
    if (t.kinds[i] == 0) continue;
    o << (first ? "" : " ") << kind_names[i] << "=" << t.kinds[i];
    first = false;
  }
  return o.str();
}

using MixParam = std::tuple<unsigned, int>;

class MixPrograms : public ::testing::TestWithParam<MixParam> {
 protected:
  void SetUp() override { pool_ = make_pool(workers(), policy()); }
  unsigned workers() const { return std::get<0>(GetParam()); }
  const Policy& policy() const { return policies[std::get<1>(GetParam())]; }
  std::unique_ptr<plait::pool> pool_;
};

TEST_P(MixPrograms, EveryTaskRunsOnceAndEveryResultIsRight) {
  const int programs = programs_per_instance();
  for (int s = 0; s < programs; ++s) {
    Totals want;
    std::uint64_t want_value = 0;
    const Program p = make_program(s, want, want_value);
    MixRun run{p};
    auto where = [&] {
      std::ostringstream o;
      o << "program " << s << " (seed 0x" << std::hex << p.seed << std::dec << ", depth " << p.max_depth << ", "
        << want.nodes << " tasks; nodes by construct: " << describe_kinds(want) << ") with workers=" << workers()
        << " steal=" << policy().name;
      return o.str();
    };
    Watchdog::Guard guard(Watchdog::limit(60), [&] {
      return where() + " [" + std::to_string(run.executed.load()) + " tasks ran so far]";
    });
    std::uint64_t got = 0;
    const auto poller = pool_->add_poller([&run] { run.poll(); });
    try {
      got = pool_->run([&] { return run_node(run, 1, 0, nullptr); });
    } catch (const std::exception& e) {
      pool_->remove_poller(poller);
      FAIL() << where() << ": unexpected exception: " << e.what();
    }
    pool_->remove_poller(poller);
    ASSERT_EQ(run.errors.load(), 0) << where() << ": " << run.first_error;
    ASSERT_EQ(run.executed.load() + run.skipped_nodes.load(), want.nodes)
        << where() << ": a task ran twice or never (" << run.executed.load() << " ran, " << run.skipped_nodes.load()
        << " skipped by cancellation)";
    ASSERT_EQ(run.sum.load() + run.skipped_sum.load(), want.sum) << where() << ": the set of tasks that ran is wrong";
    ASSERT_EQ(got, want_value) << where() << ": wrong result";
  }
}

std::string mix_name(const ::testing::TestParamInfo<MixParam>& info) {
  return "w" + std::to_string(std::get<0>(info.param)) + "_" + policies[std::get<1>(info.param)].name;
}

INSTANTIATE_TEST_SUITE_P(Runtime, MixPrograms,
                         ::testing::Combine(::testing::Values(1u, 2u, 3u, 8u, 16u), ::testing::Range(0, 4)),
                         mix_name);

// ---- Traces of random programs: every DAG passes plait-dag's check ------------------------------
// A sample of the same programs on a tracing pool: the trace's task DAG (src/trace_dag.cpp) must
// pass the check (every task once, spawns and joins inside their makers' slices, a child between
// its spawn and its join, no cycle, no task that joins itself). Exceptions and cancellation are in
// the sample too: a skipped task is simply absent. PLAIT_MIX_TRACED=N traces N programs per
// parameter instead (soak runs).
constexpr int traced_programs = plait_test::sanitized ? 15 : 60;

class MixTraces : public ::testing::TestWithParam<MixParam> {
 protected:
  unsigned workers() const { return std::get<0>(GetParam()); }
  const Policy& policy() const { return policies[std::get<1>(GetParam())]; }
};

TEST_P(MixTraces, EveryTraceOfARandomProgramPassesTheCheck) {
  const std::string dir = ::testing::TempDir();
  const char* env = std::getenv("PLAIT_MIX_TRACED");  // soak runs: programs per parameter
  const int programs = env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : traced_programs;
  for (int s = 0; s < programs; ++s) {
    // Other programs than the untraced test's first ones, spread over the seeds.
    const int prog = 7 * s + 3;
    Totals want;
    std::uint64_t want_value = 0;
    const Program p = make_program(prog, want, want_value);
    const std::string path = dir + "plait_mix_trace_" + std::to_string(getpid()) + "_" + std::to_string(s) + ".json";
    auto where = [&] {
      std::ostringstream o;
      o << "program " << prog << " (seed 0x" << std::hex << p.seed << std::dec << ", " << want.nodes
        << " tasks; " << describe_kinds(want) << ") with workers=" << workers() << " steal=" << policy().name;
      return o.str();
    };
    std::uint64_t got = 0;
    MixRun run{p};
    {
      Watchdog::Guard guard(Watchdog::limit(60), [&] { return where() + " (traced)"; });
      plait::pool_options o{.num_workers = workers(), .steal = policy().steal, .steal_chunk = policy().chunk};
      o.trace_path = path;
      plait::pool pl(o);
      const auto poller = pl.add_poller([&run] { run.poll(); });
      got = pl.run([&] { return run_node(run, 1, 0, nullptr); });
      pl.remove_poller(poller);
    }  // the trace is written here
    ASSERT_EQ(run.errors.load(), 0) << where() << ": " << run.first_error;
    ASSERT_EQ(got, want_value) << where() << ": wrong result";
    try {
      const plait::dag::graph g = plait::dag::load(path);
      plait::dag::check(g);
      EXPECT_GE(g.tasks.size(), 1u) << where();
    } catch (const std::exception& e) {
      ADD_FAILURE() << where() << ": the trace (kept at " << path << ") fails the check: " << e.what();
      return;
    }
    std::remove(path.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Runtime, MixTraces,
                         ::testing::Combine(::testing::Values(1u, 2u, 8u), ::testing::Range(0, 4)), mix_name);

// ---- Regressions: one pattern each, at 1, 2 and 4 workers --------------------------------------

class MixRegress : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override { pool_ = std::make_unique<plait::pool>(plait::pool_options{.num_workers = GetParam()}); }
  plait::pool& pool() { return *pool_; }
  // The watchdog for one regression test: names the test, the worker count and the repetition.
  Watchdog::Guard guard(const std::atomic<int>& rep) {
    const ::testing::TestInfo* ti = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(ti->test_suite_name()) + "." + ti->name();
    return Watchdog::Guard(Watchdog::limit(30), [name, &rep] {
      return name + " (repetition " + std::to_string(rep.load()) + ")";
    });
  }
  // Regressions (1), (1b) and (2): `reps` repetitions of a root that runs one group child and one
  // other task (a join's arm or a spawn); after each, both must have run exactly once.
  void child_and_other_run_once(const std::function<void(std::atomic<int>&, std::atomic<int>&)>& root);
  std::unique_ptr<plait::pool> pool_;
};

constexpr int reps = plait_test::sanitized ? 200 : 2000;

void MixRegress::child_and_other_run_once(
    const std::function<void(std::atomic<int>&, std::atomic<int>&)>& root) {
  std::atomic<int> rep{0};
  auto g_ = guard(rep);
  for (; rep < reps; ++rep) {
    std::atomic<int> child{0}, other{0};
    pool().run([&] { root(child, other); });
    ASSERT_EQ(child.load(), 1) << "repetition " << rep.load();
    ASSERT_EQ(other.load(), 1) << "repetition " << rep.load();
  }
}

// A few microseconds of work: long enough for a thief to take the other arm or the child.
void work() { spin(2000); }

// (1) The child is added from the first arm of a join: it lands on the deque above the join's
// own spawned arm. The join must still find its arm, and the child must run once.
TEST_P(MixRegress, ChildAddedInsideJoinArmRunsOnce) {
  child_and_other_run_once([](std::atomic<int>& child, std::atomic<int>& other) {
    plait::task_group g;
    plait::join([&] { g.run([&] { child.fetch_add(1); }); },
                [&] {
                  work();
                  other.fetch_add(1);
                });
    g.wait();
  });
}

// (1b) A child added to a group above an unjoined spawn, the spawn joined before the wait.
TEST_P(MixRegress, ChildAddedAboveUnjoinedSpawnRunsOnce) {
  child_and_other_run_once([](std::atomic<int>& child, std::atomic<int>& spawned) {
    plait::task_group g;
    auto h = plait::spawn([&] {
      work();
      return spawned.fetch_add(1) + 1;
    });
    g.run([&] { child.fetch_add(1); });
    EXPECT_EQ(h.join(), 1);
    g.wait();
  });
}

// (1c) The default (adaptive) loop splits with spawn/join; its body adds children to a group
// created around the loop, so they land above the loop's unjoined spawns.
TEST_P(MixRegress, AdaptiveLoopBodyAddsChildrenToEnclosingGroup) {
  constexpr std::int64_t n = 10000;
  std::atomic<int> rep{0};
  auto g_ = guard(rep);
  for (; rep < 20; ++rep) {
    std::vector<std::atomic<std::uint8_t>> body(n), child(n);
    pool().run([&] {
      plait::task_group g;
      plait::parallel_for(0, n, [&](std::int64_t i) {
        body[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
        g.run([&child, i] { child[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed); });
      });
      g.wait();
    });
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(body[static_cast<std::size_t>(i)].load(), 1) << "iteration " << i << ", repetition " << rep.load();
      ASSERT_EQ(child[static_cast<std::size_t>(i)].load(), 1) << "child " << i << ", repetition " << rep.load();
    }
  }
}

// (2) The group waits while a spawn above its child is not joined yet.
TEST_P(MixRegress, GroupWaitUnderUnjoinedSpawn) {
  child_and_other_run_once([](std::atomic<int>& child, std::atomic<int>& spawned) {
    plait::task_group g;
    g.run([&] { child.fetch_add(1); });
    auto h = plait::spawn([&] {
      work();
      spawned.fetch_add(1);
    });
    g.wait();
    EXPECT_EQ(child.load(), 1);
    h.join();
  });
}

// (3) A short-lived dataflow region: created, waited and destroyed 3000 times in a row, so the
// last task's completion races with the destruction of the region (a TSan reproducer). With the
// race present, TSan reported it in about half of the runs of 3000 regions at 4 workers and in
// each of 12 runs of 15000 at 2 and 4 workers (0.3-0.4 s each), so TSan builds run 15000.
#if defined(PLAIT_TSAN)
constexpr int dataflow_regions = 15000;
#else
constexpr int dataflow_regions = 3000;
#endif

TEST_P(MixRegress, DataflowGroupCreatedWaitedDestroyedInALoop) {
  std::atomic<int> rep{0};
  auto g_ = guard(rep);
  pool().run([&] {
    for (; rep < dataflow_regions; ++rep) {
      const std::uint64_t it = static_cast<std::uint64_t>(rep.load());
      std::uint64_t a = it, b = 0, c = 0, seen = 0;
      {
        plait::dataflow_group df;
        // Two independent producers with a little work: thieves take them, so the consumers
        // (launched by whichever producer finishes last) and the last task often run on another
        // worker than the one that destroys the region.
        df.run({plait::in(a), plait::out(b)}, [&] {
          spin(200);
          b = a * 3 + 1;
        });
        df.run({plait::in(a), plait::out(c)}, [&] {
          spin(200);
          c = a + 7;
        });
        df.run({plait::in(b), plait::in(c), plait::inout(a)}, [&] { a = a + b + c; });
        df.run({plait::in(a), plait::out(seen)}, [&] { seen = a; });
        // Busy for a while that sweeps with the repetition, so that in some repetitions the
        // thieves finish the last task just as wait() looks: wait() then finds nothing left to
        // run and the destruction follows the last task's completion at once.
        spin(static_cast<unsigned>(it % 64) * 200);
        df.wait();
      }
      ASSERT_EQ(seen, it + (3 * it + 1) + (it + 7)) << "repetition " << it;
    }
  });
}

// (6) Two pools calling into each other: A's task runs a root on B, whose task runs a root on A.
// With one worker each, A's only worker is blocked in B.run when the inner A.run arrives.
TEST_P(MixRegress, PoolsCallingEachOtherReturnTheRightValue) {
  plait::pool a(plait::pool_options{.num_workers = GetParam()});
  plait::pool b(plait::pool_options{.num_workers = GetParam()});
  std::atomic<int> rep{0};
  auto g_ = guard(rep);
  for (; rep < 50; ++rep) {
    int v = a.run([&] { return b.run([&] { return a.run([] { return 40; }) + 1; }) + 1; });
    ASSERT_EQ(v, 42) << "repetition " << rep.load();
  }
}

INSTANTIATE_TEST_SUITE_P(Runtime, MixRegress, ::testing::Values(1u, 2u, 4u), plait_test::workers_name);

}  // namespace
