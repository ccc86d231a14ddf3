// Unit and litmus tests of the split deque on its own (detail::SplitDeque: no pool, no worker).
//
//   DequeProtocol  one thread walks the protocol step by step and checks every field that a step
//                  changes: ts (tail|split), head, split, allstolen, fresh, the fast-path limits
//                  and the request bit; the invariants after every step. Two of them force a
//                  race on one thread: the protocol hook runs the other side's step between a
//                  load of ts and the CAS that depends on it.
//   DequeLitmus    two or three threads race over a fresh deque, thousands of times. Every pushed
//                  task must run exactly once (popped by the owner, run inline by it, or claimed by
//                  exactly one thief), and the slots the owner finds stolen must be exactly the
//                  slots the thieves claimed, with their marks. Variants force one order through
//                  the protocol hook (a thread waits at a named protocol point until another has
//                  done its step) or widen every window with random delays and yields at the
//                  points.
//   DequeLimits    the fast paths' limit compares (an asm compare on x86-64) answer as the plain
//                  compare at every boundary and read the limit each time (a looping reader sees
//                  another thread move it).
//   ClaimRule      claim_rule::amount for every kind.
//
// Iteration counts shrink under the sanitizers and in debug builds, never to 0. On a busy machine
// (ctest runs other tests beside these; every hand-off between the racing threads may then wait
// for a timeslice) a litmus run also stops after a time budget of 1.5 s, but never before a tenth
// of its iterations; it prints how many it ran, and says when the budget cut it short.
// PLAIT_LITMUS_SCALE=N multiplies the counts and the budget (soak runs). PLAIT_STRESS=1 (the stress pass of `make
// test`) adds the random-delay hook to the variants that force no order: these tests make no pool,
// so stress mode would not install its own hook.
#include <plait/detail/split_deque.hpp>

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace plait::detail;

// ---- Iteration counts -----------------------------------------------------------------------

#if defined(PLAIT_TSAN) || defined(__SANITIZE_THREAD__)
constexpr int build_divisor = 5;
#elif defined(__SANITIZE_ADDRESS__)
constexpr int build_divisor = 2;
#elif !defined(NDEBUG)
constexpr int build_divisor = 2;
#else
constexpr int build_divisor = 1;
#endif

int env_scale() {
  static const int scale = [] {
    const char* s = std::getenv("PLAIT_LITMUS_SCALE");
    if (s == nullptr || *s == '\0') return 1;
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (*end != '\0' || v < 1 || v > 100000) {
      std::fprintf(stderr, "split_deque_test: PLAIT_LITMUS_SCALE='%s' is not a positive integer\n", s);
      std::abort();
    }
    return static_cast<int>(v);
  }();
  return scale;
}

// The iteration count of a litmus run: `release` in a release build, fewer in slower builds.
int iterations(int release) { return std::max(1, release / build_divisor) * env_scale(); }

// A litmus run stops at the budget once it has run min_iterations(iters).
std::chrono::milliseconds time_budget() { return std::chrono::milliseconds(1500) * env_scale(); }
int min_iterations(int iters) { return std::max(1, iters / 10); }

bool stress_env() {
  const char* s = std::getenv("PLAIT_STRESS");
  return s != nullptr && std::strcmp(s, "1") == 0;
}

// ---- Small helpers --------------------------------------------------------------------------

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
};

void cpu_pause() { __builtin_ia32_pause(); }

void delay(std::uint32_t pauses) {
  for (std::uint32_t i = 0; i < pauses; ++i) cpu_pause();
}

// Spins until p(): pause, then sched_yield (the machine may have fewer cores than threads).
// Waiters never block: a racing thread that slept at the start barrier would wake long after the
// others had finished (with 3 threads on 2 cores the thieves then missed every race).
template <class Pred>
void spin_until(Pred p) {
  for (unsigned i = 0; !p(); ++i) {
    if (i < 64)
      cpu_pause();
    else
      sched_yield();
  }
}

// A flag between the racing threads: set_flag publishes what the setter did before (release),
// wait_until sees it (acquire).
template <class T, class Done>
void wait_until(const std::atomic<T>& a, Done done) {
  spin_until([&] { return done(a.load(std::memory_order_acquire)); });
}

template <class T>
void set_flag(std::atomic<T>& a, T v) {
  a.store(v, std::memory_order_release);
}

void wait_for(const std::atomic<bool>& flag) {
  wait_until(flag, [](bool v) { return v; });
}

// The tasks in the slots: run_task marks a task the test pushed, tombstone a slot whose task the
// owner ran in place after reclaiming it. Neither is ever called; the tests compare pointers.
void run_task(void*, Worker*) {}
void tombstone(void*, Worker*) {}

// A task id travels in the slot's tagged data word (bit 0 is the slot kind).
std::uintptr_t tag(std::uint64_t id) { return static_cast<std::uintptr_t>(id << 3); }
std::uint64_t id_of(std::uintptr_t tagged) { return static_cast<std::uint64_t>(tagged >> 3); }

std::uint32_t tail_of(const SplitDeque& d) { return ts_tail(d.ts.load(std::memory_order_relaxed)); }
std::uint32_t word_split_of(const SplitDeque& d) { return ts_split(d.ts.load(std::memory_order_relaxed)); }

// A deque and its slots. reset() gives a freshly initialised deque over zeroed slots.
struct Deque {
  explicit Deque(std::uint32_t cap) : mem(cap) { reset(); }
  void resize(std::uint32_t cap) {
    mem = std::vector<Slot>(cap);
    reset();
  }
  void reset() {
    for (Slot& s : mem) {
      s.exec = nullptr;
      s.tagged = 0;
      s.thief.store(0, std::memory_order_relaxed);
      s.trace_label = 0;
      s.trace_id = 0;
    }
    std::destroy_at(&d);
    std::construct_at(&d);
    d.init(mem.data(), static_cast<std::uint32_t>(mem.size()));
  }
  std::vector<Slot> mem;
  SplitDeque d;
};

// The invariants of docs/design.md that the owner can check between its operations, in every
// build (check_invariants asserts them in debug builds only; it runs here too). Safe while thieves
// run: they only move tail, never past split.
::testing::AssertionResult invariants(const SplitDeque& d) {
  d.check_invariants();
  const std::uint64_t v = d.ts.load(std::memory_order_relaxed);
  const std::uint32_t t = ts_tail(v), s = ts_split(v);
  auto fail = [&](const char* what) {
    return ::testing::AssertionFailure() << what << ": tail " << t << " split " << s << " (owner's " << d.split
                                         << ") head " << d.head << " allstolen " << d.allstolen;
  };
  if (s != d.split) return fail("3: the owner's split is not the word's");
  if (t > s) return fail("1: tail above split");
  if (d.allstolen && (t != s || d.head > s)) return fail("1: the all-stolen state needs tail == split >= head");
  if (!d.allstolen && d.split > d.head) return fail("1: split above head");
  if (d.head < d.base || d.head > d.capacity) return fail("6: head outside [base, capacity]");
  for (std::uint32_t i = d.head; i < d.capacity; ++i)
    if (d.own[i].thief.load(std::memory_order_relaxed) != 0)
      return fail(("5: a mark at or above head, slot " + std::to_string(i)).c_str());
  return ::testing::AssertionSuccess();
}

// The state of a deque whose owner is between operations: the word and the owner's fields.
struct State {
  std::uint32_t tail, word_split, split, head;
  bool allstolen;
};

State state_of(const SplitDeque& d) {
  const std::uint64_t v = d.ts.load(std::memory_order_relaxed);
  return {ts_tail(v), ts_split(v), d.split, d.head, d.allstolen};
}

::testing::AssertionResult state_is(const State& st, std::uint32_t tail, std::uint32_t split, std::uint32_t head,
                                    bool allstolen) {
  if (st.tail == tail && st.word_split == split && st.split == split && st.head == head && st.allstolen == allstolen)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "tail " << st.tail << " split " << st.word_split << " (owner's " << st.split
                                       << ") head " << st.head << " allstolen " << st.allstolen << "; expected tail "
                                       << tail << " split " << split << " head " << head << " allstolen " << allstolen;
}

::testing::AssertionResult state_is(const SplitDeque& d, std::uint32_t tail, std::uint32_t split, std::uint32_t head,
                                    bool allstolen) {
  return state_is(state_of(d), tail, split, head, allstolen);
}

// The fast-path limits and the request bit, single-threaded.
::testing::AssertionResult limits_are(const SplitDeque& d, std::uint32_t push_limit, std::uint32_t pop_limit,
                                      std::uint32_t req) {
  const std::uint32_t pu = d.push_limit.load(std::memory_order_relaxed);
  const std::uint32_t po = d.pop_limit.load(std::memory_order_relaxed);
  const std::uint32_t r = d.req.load(std::memory_order_relaxed);
  if (pu == push_limit && po == pop_limit && r == req) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "push_limit " << pu << " pop_limit " << po << " req " << r
                                       << "; expected " << push_limit << ", " << pop_limit << ", " << req;
}

bool request_pending_with_slow_limits(const SplitDeque& d) {
  return d.req.load(std::memory_order_relaxed) != 0 && d.push_limit.load(std::memory_order_relaxed) == 0 &&
         d.pop_limit.load(std::memory_order_relaxed) == pop_limit_requested;
}

// One slot that went to a thief: its index, the task id in it (0: a tombstone), the thief's mark.
struct Take {
  std::uint32_t index;
  std::uint64_t id;
  std::uint32_t mark;
  auto operator<=>(const Take&) const = default;
  friend std::ostream& operator<<(std::ostream& os, const Take& t) {
    return os << "{slot " << t.index << ", task " << t.id << ", mark " << t.mark << "}";
  }
};

// The owner's side, as the runtime drives it (push: fast path if push_fast_ok, else push_slow; a
// full deque runs the task inline; pop: pop_private, else take_back), with a model of what each
// slot holds and a record of who ran what.
struct Owner {
  SplitDeque* d = nullptr;
  std::vector<std::uint64_t> at;      // the task id the owner last wrote to slot i (0: tombstone)
  std::vector<std::uint64_t> pushed;  // every task id pushed (or run inline) this iteration
  std::vector<std::uint64_t> ran;     // ids the owner ran: popped as its own, inline, reclaimed
  std::vector<Take> lost;             // slots popped and found stolen
  std::string error;                  // the first disagreement with the model
  std::uint64_t next_id = 1;

  void reset(SplitDeque& dq) {
    d = &dq;
    at.assign(dq.capacity, 0);
    pushed.clear();
    ran.clear();
    lost.clear();
    error.clear();
    next_id = 1;
  }
  void note(const std::string& what) {
    if (error.empty()) error = what;
  }

  // Pushes a new task; returns its slot, or no_slot when the deque was full (it then ran inline).
  std::uint32_t push() {
    const std::uint64_t id = next_id++;
    pushed.push_back(id);
    const std::uint32_t h = d->head;
    if (d->push_fast_ok(h)) {
      d->write_private(h, &run_task, tag(id));
      at[h] = id;
      return h;
    }
    const std::uint32_t got = d->push_slow(&run_task, tag(id));
    if (got == no_slot) {
      if (h < d->capacity) note("push_slow refused a push below capacity at head " + std::to_string(h));
      ran.push_back(id);
      return no_slot;
    }
    if (got != h) note("push_slow pushed at " + std::to_string(got) + ", head was " + std::to_string(h));
    at[got] = id;
    return got;
  }

  // Pops the newest slot: true when it was the owner's (the owner runs it), false when stolen.
  bool pop() {
    const bool fast = d->pop_private();
    const std::uint32_t h = d->head;
    const bool ours = fast || d->take_back(h);
    if (ours) {
      const Slot& s = d->own[h];
      if (at[h] != 0) {
        if (s.exec != &run_task || id_of(s.tagged) != at[h])
          note("popped slot " + std::to_string(h) + " does not hold task " + std::to_string(at[h]));
        ran.push_back(at[h]);
      } else if (s.exec != &tombstone) {
        note("popped slot " + std::to_string(h) + " should hold a tombstone");
      }
    } else {
      if (d->last_thief == 0) note("stolen pop of slot " + std::to_string(h) + " without a mark");
      if (d->own[h].thief.load(std::memory_order_relaxed) != 0)
        note("stolen slot " + std::to_string(h) + " keeps its mark after the pop");
      lost.push_back({h, at[h], d->last_thief});
    }
    return ours;
  }

  // Reclaims buried slot i; on success runs its task in place and leaves a tombstone there.
  bool reclaim(std::uint32_t i) {
    if (!d->reclaim(i)) return false;
    if (at[i] != 0) ran.push_back(at[i]);
    d->own[i].exec = &tombstone;
    at[i] = 0;
    return true;
  }

  void drain() {
    while (d->head > d->base) pop();
  }
};

// A thief: claims with a rule, reads every claimed slot, then releases it with its mark.
struct Thief {
  std::uint32_t mark = 0;
  std::vector<Take> took;
  std::vector<claim> claims;
  std::string error;
  steal_result first = steal_result::empty;  // the result of the first attempt
  unsigned attempts = 0;

  void reset(std::uint32_t m) {
    mark = m;
    took.clear();
    claims.clear();
    error.clear();
    first = steal_result::empty;
    attempts = 0;
  }

  claim steal(SplitDeque& d, const claim_rule& rule) {
    const claim c = d.try_claim(rule);
    if (attempts++ == 0) first = c.result;
    if (c.result != steal_result::success) return c;
    claims.push_back(c);
    if (c.k < 1 || c.first + c.k > d.capacity) {
      if (error.empty()) error = "claim of " + std::to_string(c.k) + " slots at " + std::to_string(c.first);
      return c;
    }
    for (std::uint32_t i = c.first; i < c.first + c.k; ++i) {
      const Slot& s = d.slots[i];
      const exec_fn fn = s.exec;
      const std::uintptr_t tagged = s.tagged;
      std::uint64_t id = 0;
      if (fn == &run_task) {
        id = id_of(tagged);
        if (id == 0 && error.empty()) error = "slot " + std::to_string(i) + " holds task 0";
      } else if (fn != &tombstone && error.empty()) {
        error = "claimed slot " + std::to_string(i) + " holds no task the owner wrote";
      }
      d.release(i, mark);
      took.push_back({i, id, mark});
    }
    return c;
  }
};

// Every task the owner pushed ran exactly once: by the owner, or by one thief; no other task ran.
// And the slots the owner found stolen are exactly those the thieves claimed, with their marks.
::testing::AssertionResult exactly_once(const Owner& o, std::initializer_list<const Thief*> thieves) {
  if (!o.error.empty()) return ::testing::AssertionFailure() << "owner: " << o.error;
  std::vector<std::uint64_t> ran = o.ran;
  std::vector<Take> claimed;
  for (const Thief* t : thieves) {
    if (!t->error.empty()) return ::testing::AssertionFailure() << "thief " << t->mark << ": " << t->error;
    for (const Take& k : t->took) {
      if (k.id != 0) ran.push_back(k.id);
      claimed.push_back(k);
    }
  }
  std::vector<std::uint64_t> want = o.pushed;
  std::sort(ran.begin(), ran.end());
  std::sort(want.begin(), want.end());
  if (ran != want) {
    auto m = ::testing::AssertionFailure() << "tasks run: ";
    for (std::uint64_t id : ran) m << id << ' ';
    m << "; tasks pushed: ";
    for (std::uint64_t id : want) m << id << ' ';
    return m;
  }
  std::uint64_t sum_ran = 0, sum_pushed = 0;
  for (std::uint64_t id : ran) sum_ran += id * 0x9E3779B97F4A7C15ULL;
  for (std::uint64_t id : want) sum_pushed += id * 0x9E3779B97F4A7C15ULL;
  if (sum_ran != sum_pushed) return ::testing::AssertionFailure() << "checksum of task ids differs";
  std::vector<Take> lost = o.lost;
  std::sort(lost.begin(), lost.end());
  std::sort(claimed.begin(), claimed.end());
  if (lost != claimed) {
    auto m = ::testing::AssertionFailure() << "slots the owner found stolen (index:id:mark): ";
    for (const Take& k : lost) m << k.index << ':' << k.id << ':' << k.mark << ' ';
    m << "; slots the thieves claimed: ";
    for (const Take& k : claimed) m << k.index << ':' << k.id << ':' << k.mark << ' ';
    return m;
  }
  return ::testing::AssertionSuccess();
}

// ---- Protocol hooks -------------------------------------------------------------------------

// Who the calling thread is in a litmus run: 0 the owner, 1 and 2 thieves.
thread_local unsigned tl_role = 0;

// Installs a hook for the guard's lifetime, restoring whatever was there (a pool made earlier in
// the same process under PLAIT_STRESS=1 may have installed stress mode's). Only while no other
// thread uses the deque code: the hook is a plain global.
class HookGuard {
 public:
  explicit HookGuard(protocol_hook h) : saved_(g_protocol_hook) {
    if (h != nullptr) g_protocol_hook = h;
  }
  ~HookGuard() { g_protocol_hook = saved_; }
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;

 private:
  protocol_hook saved_;
};

// Random delays at every protocol point: with probability 1/4 a spin of up to 255 pauses, with
// probability 1/32 a sched_yield (stress mode in a pool yields with probability 1/4; here mostly
// spinning widens the windows as well and costs less time when other processes want the cores).
void yield_hook(protocol_point) noexcept {
  static thread_local std::uint32_t x = 0;
  if (x == 0) x = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&x)) | 1u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  if ((x & 31u) == 0)
    sched_yield();
  else if ((x & 3u) == 0)
    delay((x >> 8) & 255u);
}

// How a litmus variant orders the race.
enum class Mode {
  free,         // no hook (yield_hook under PLAIT_STRESS=1)
  yield,        // yield_hook: random delays and yields at every protocol point
  thief_first,  // the owner's take-back (or reclaim) CAS waits until the thief's attempt is over
  owner_first,  // the thief, between its load of ts and its CAS, waits until the owner's CAS is done
};

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::free: return "free";
    case Mode::yield: return "yield";
    case Mode::thief_first: return "thief_first";
    case Mode::owner_first: return "owner_first";
  }
  return "?";
}

std::string mode_param_name(const ::testing::TestParamInfo<Mode>& p) { return mode_name(p.param); }

// State of the ordering hooks. Written by the owner in setup while the other threads wait at the
// barrier (which orders it), and by the racing threads as they pass their steps.
Mode g_mode = Mode::free;
std::atomic<bool> g_armed{false};          // the hooks act only between setup and check
std::atomic<bool> g_thief_loaded{false};   // thief 1 read ts and waits before its CAS
std::atomic<bool> g_thief_tried{false};    // thief 1's attempt is over
std::atomic<bool> g_owner_moved{false};    // the owner's first CAS on the shared part is done
std::atomic<bool> g_thief1_done{false};    // ABA: thief 1 claimed the slot
std::atomic<bool> g_reset_done{false};     // ABA: the owner pushed again after all-stolen
std::atomic<bool> g_thief2_loaded{false};  // ABA: thief 2 read ts
std::atomic<bool> g_thief2_tried{false};   // ABA: thief 2's attempt is over

void disarm() {
  g_armed.store(false, std::memory_order_relaxed);
  for (auto* f : {&g_thief_loaded, &g_thief_tried, &g_owner_moved, &g_thief1_done, &g_reset_done, &g_thief2_loaded,
                  &g_thief2_tried})
    f->store(false, std::memory_order_relaxed);
}

// thief_first / owner_first between the owner (role 0) and thief 1.
void order_hook(protocol_point p) noexcept {
  if (!g_armed.load(std::memory_order_acquire)) return;
  if (tl_role == 0 && (p == protocol_point::take_back || p == protocol_point::reclaim)) {
    if (g_mode == Mode::thief_first) wait_for(g_thief_tried);
    if (g_mode == Mode::owner_first) wait_for(g_thief_loaded);
  } else if (tl_role == 1 && p == protocol_point::steal && g_mode == Mode::owner_first) {
    set_flag(g_thief_loaded, true);
    wait_for(g_owner_moved);
  }
}

// The ABA of a reset: thief 2 reads ts while slot 0 holds task A and waits; thief 1 steals A; the
// owner pops (stolen: all-stolen), pushes B (the reset stores the same word thief 2 read); then
// thief 2's stale CAS succeeds, before the owner's take-back CAS.
void aba_hook(protocol_point p) noexcept {
  if (!g_armed.load(std::memory_order_acquire)) return;
  if (tl_role == 2 && p == protocol_point::steal) {
    set_flag(g_thief2_loaded, true);
    wait_for(g_reset_done);
  } else if (tl_role == 0 && p == protocol_point::take_back) {
    wait_for(g_thief2_tried);
  }
}

// Whether a variant forces one order: the outcome is known, so fewer iterations do (their setups
// vary over a small space).
bool forced(Mode m) { return m == Mode::thief_first || m == Mode::owner_first; }

// Whether a variant runs with yield_hook. Its iterations cost more, most of all when
// ctest runs other tests beside it and a yield hands the core away.
bool yields(Mode m) { return m == Mode::yield || (m == Mode::free && stress_env()); }

protocol_hook hook_for(Mode m) {
  switch (m) {
    case Mode::free: return stress_env() ? &yield_hook : nullptr;
    case Mode::yield: return &yield_hook;
    default: return &order_hook;
  }
}

// ---- Litmus harness -------------------------------------------------------------------------

// A spinning barrier (sense by generation): everything a thread did before it arrives
// happens-before everything any thread does after it leaves.
class Barrier {
 public:
  explicit Barrier(unsigned n) : n_(n) {}
  void arrive_and_wait() {
    const unsigned g = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      set_flag(gen_, g + 1);
      return;
    }
    wait_until(gen_, [&](unsigned v) { return v != g; });
  }

 private:
  const unsigned n_;
  std::atomic<unsigned> count_{0};
  std::atomic<unsigned> gen_{0};
};

// A lost slot or mark hangs the owner (it waits for a mark no thief will write) or a hook. Rather
// than let ctest time out minutes later without a word, abort when a run makes no progress (no new
// iteration) for 30 s and say where it stood.
class Watchdog {
 public:
  Watchdog(std::string what, const std::atomic<int>& iteration)
      : what_(std::move(what)), iteration_(iteration), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch() {
    std::unique_lock<std::mutex> lk(mu_);
    int seen = -2;
    for (;;) {
      if (cv_.wait_for(lk, std::chrono::seconds(30), [&] { return done_; })) return;
      const int now = iteration_.load(std::memory_order_relaxed);
      if (now == seen) {
        std::fprintf(stderr, "split_deque_test: %s made no progress for 30 s in iteration %d; aborting\n",
                     what_.c_str(), now);
        std::abort();
      }
      seen = now;
    }
  }
  std::string what_;
  const std::atomic<int>& iteration_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

void report(const std::string& line) { std::printf("[   info   ] %s\n", line.c_str()); }

// Where the threads of a litmus run go: the owner on the first CPU this process may use, the
// others spread over the rest (on a 2-CPU machine both thieves share the second one and interleave
// at their yields). Left to the scheduler, the owner often shared a CPU with a spinning thief and
// ran its whole body in one timeslice while the thieves waited: no race at all. Nothing is pinned
// when fewer than 2 CPUs are allowed. The owner is the gtest thread: restore() gives its CPUs back.
class Placement {
 public:
  Placement() {
    CPU_ZERO(&allowed_);
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed_, &allowed_) != 0) return;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed_)) cpus_.push_back(c);
  }
  void pin(unsigned role) const {
    if (cpus_.size() < 2) return;
    const int c = role == 0 ? cpus_[0] : cpus_[1 + (role - 1) % (cpus_.size() - 1)];
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  }
  void restore() const {
    if (cpus_.size() >= 2) pthread_setaffinity_np(pthread_self(), sizeof allowed_, &allowed_);
  }

 private:
  cpu_set_t allowed_;
  std::vector<int> cpus_;
};

// Runs `iters` iterations over `threads` threads. The calling thread is the owner (role 0): it
// runs setup(it), then all threads pass a barrier and run body(role, it), pass a second barrier,
// and the owner runs check(it); the owner starts its body once the others have started theirs.
// The other threads live for the whole run. The hook is installed
// before they start and removed after they are joined. A failed check ends the run; so does the
// time budget, once min_iterations(iters) have run.
void run_litmus(const std::string& name, unsigned threads, int iters, protocol_hook hook,
                const std::function<void(int)>& setup, const std::function<void(unsigned, int)>& body,
                const std::function<void(int)>& check) {
  HookGuard hg(hook);
  const Placement place;
  Barrier bar(threads);
  std::atomic<bool> stop{false};
  std::atomic<unsigned> started{0};  // bodies entered, over the whole run, by the other threads
  std::atomic<int> at{-1};
  Watchdog wd(name, at);
  std::vector<std::thread> pool;
  for (unsigned r = 1; r < threads; ++r)
    pool.emplace_back([&, r] {
      tl_role = r;
      place.pin(r);
      for (int it = 0;; ++it) {
        bar.arrive_and_wait();
        if (stop.load(std::memory_order_relaxed)) return;
        started.fetch_add(1, std::memory_order_relaxed);
        body(r, it);
        bar.arrive_and_wait();
      }
    });
  // An exception in setup or check (an out-of-range at() on a broken outcome) fails the test;
  // it must not unwind past the joinable threads.
  auto guarded = [&](const std::function<void(int)>& f, int it, const char* what) {
    try {
      f(it);
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << what << " threw " << e.what();
    }
  };
  tl_role = 0;
  place.pin(0);
  const auto start = std::chrono::steady_clock::now();
  int ran = 0;
  for (int it = 0; it < iters; ++it) {
    if (it >= min_iterations(iters) && std::chrono::steady_clock::now() - start > time_budget()) break;
    at.store(it, std::memory_order_relaxed);
    guarded(setup, it, "setup");
    if (::testing::Test::HasFailure()) break;
    bar.arrive_and_wait();
    // Start only once the others run: on a busy machine a thread leaves the barrier late, and
    // the owner would finish alone.
    const unsigned want = (threads - 1) * static_cast<unsigned>(it + 1);
    spin_until([&] { return started.load(std::memory_order_relaxed) >= want; });
    body(0, it);
    bar.arrive_and_wait();
    guarded(check, it, "check");
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << name << ": iteration " << it << " of " << iters;
      break;
    }
    ran = it + 1;
  }
  stop.store(true, std::memory_order_relaxed);
  bar.arrive_and_wait();
  for (auto& t : pool) t.join();
  place.restore();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report(name + ": " + std::to_string(ran) + " of " + std::to_string(iters) + " iterations in " +
         std::to_string(secs).substr(0, 5) + " s" +
         (ran < iters && !::testing::Test::HasFailure() ? " (stopped at the time budget)" : ""));
}


// ==== 1. The protocol, one thread ===========================================================

// A test's deque of `cap` slots and its owner. fresh(): the deque freshly initialised over zeroed
// slots and the owner's record cleared (before a walk, and before every litmus iteration).
template <class Test, std::uint32_t cap>
class WithDeque : public Test {
 protected:
  void fresh() {
    q.reset();
    o.reset(d);
  }
  Deque q{cap};
  SplitDeque& d = q.d;
  Owner o;
};

// Each walk's deque (16 slots unless the test starts another) and its owner, reset on it.
class DequeProtocol : public WithDeque<::testing::Test, 16> {
 protected:
  void SetUp() override { o.reset(d); }
  // A freshly initialised deque of `cap` slots in place of the current one, the owner reset on it.
  void start(std::uint32_t cap) {
    q.resize(cap);
    o.reset(d);
  }
};

TEST_F(DequeProtocol, FirstPushAfterInitPublishesItsSlot) {
  EXPECT_TRUE(state_is(d, 0, 0, 0, true));
  EXPECT_TRUE(limits_are(d, 0, 0, 0));
  EXPECT_EQ(d.fresh, 0u);
  EXPECT_TRUE(invariants(d));

  // allstolen starts true and push_limit 0: the first push goes slow and its slot is shared.
  EXPECT_FALSE(d.push_fast_ok(0));
  EXPECT_EQ(o.push(), 0u);
  EXPECT_TRUE(state_is(d, 0, 1, 1, false));
  EXPECT_TRUE(limits_are(d, 16, 1, 0));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_EQ(d.slots[0].exec, &run_task);
  EXPECT_EQ(id_of(d.slots[0].tagged), 1u);
  EXPECT_TRUE(invariants(d));

  // Later pushes are private, fast, and publish nothing.
  EXPECT_TRUE(d.push_fast_ok(1));
  EXPECT_EQ(o.push(), 1u);
  EXPECT_EQ(o.push(), 2u);
  EXPECT_TRUE(state_is(d, 0, 1, 3, false));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));

  // Pops of private slots are fast; the pop of the shared slot takes it back with the CAS.
  EXPECT_TRUE(d.pop_private());
  EXPECT_EQ(id_of(d.own[2].tagged), 3u);
  EXPECT_TRUE(d.pop_private());
  EXPECT_EQ(id_of(d.own[1].tagged), 2u);
  EXPECT_TRUE(invariants(d));
  EXPECT_FALSE(d.pop_private());
  EXPECT_TRUE(d.take_back(0));
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_TRUE(limits_are(d, 16, 0, 0));
  EXPECT_TRUE(invariants(d));

  // Not all-stolen any more: the next push is fast and private.
  EXPECT_TRUE(d.push_fast_ok(0));
  EXPECT_EQ(o.push(), 0u);
  EXPECT_TRUE(state_is(d, 0, 0, 1, false));
  EXPECT_TRUE(d.pop_private());
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));
}

TEST_F(DequeProtocol, ThiefTakesTheSharedSlotAndTheOwnerFindsItStolen) {
  Thief th;
  th.reset(5);
  o.push();  // slot 0: shared
  o.push();  // slot 1: private
  EXPECT_TRUE(state_is(d, 0, 1, 2, false));

  const claim c = th.steal(d, claim_rule{});
  ASSERT_EQ(c.result, steal_result::success);
  EXPECT_EQ(c.first, 0u);
  EXPECT_EQ(c.k, 1u);
  EXPECT_EQ(th.took.at(0), (Take{0, 1, 5}));
  EXPECT_EQ(d.slots[0].thief.load(), 5u);
  // It emptied the shared part, so it asked for the refill at once.
  EXPECT_TRUE(state_is(d, 1, 1, 2, false));
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));
  EXPECT_TRUE(invariants(d));

  // A thief finds nothing now; the request stays as it is.
  EXPECT_EQ(d.try_claim(claim_rule{}).result, steal_result::empty);
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));

  // Pop of private slot 1 goes slow (request): nothing private below it, so the request stays.
  EXPECT_TRUE(o.pop());
  EXPECT_TRUE(state_is(d, 1, 1, 1, false));
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));
  EXPECT_TRUE(invariants(d));

  // Pop of slot 0: stolen. The owner learns the mark, re-zeroes it, and is all-stolen.
  EXPECT_FALSE(o.pop());
  EXPECT_EQ(d.last_thief, 5u);
  EXPECT_EQ(d.own[0].thief.load(), 0u);
  EXPECT_TRUE(state_is(d, 1, 1, 0, true));
  EXPECT_TRUE(request_pending_with_slow_limits(d));
  EXPECT_TRUE(invariants(d));

  // The next push resets: its slot is shared at once (fresh counts it). The request stays
  // pending, as nothing private is left to publish.
  const std::uint32_t fresh = d.fresh;
  EXPECT_FALSE(d.push_fast_ok(0));
  EXPECT_EQ(o.push(), 0u);
  EXPECT_TRUE(state_is(d, 0, 1, 1, false));
  EXPECT_EQ(d.fresh, fresh + 1);
  EXPECT_TRUE(request_pending_with_slow_limits(d));
  EXPECT_TRUE(invariants(d));

  // The next push serves it: half of the private slots [1, 2), the new slot itself.
  EXPECT_EQ(o.push(), 1u);
  EXPECT_TRUE(state_is(d, 0, 2, 2, false));
  EXPECT_TRUE(limits_are(d, 16, 2, 0));
  EXPECT_EQ(d.fresh, fresh + 2);
  EXPECT_TRUE(invariants(d));
  o.drain();
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_TRUE(exactly_once(o, {&th}));
}

TEST_F(DequeProtocol, RequestMakesTheNextPushPublishHalf) {
  for (int i = 0; i < 5; ++i) o.push();  // slot 0 shared, 1..4 private
  d.fresh = 0;                           // collected
  EXPECT_TRUE(state_is(d, 0, 1, 5, false));

  d.request();
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));
  d.request();  // pending: no-op
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));

  EXPECT_FALSE(d.push_fast_ok(5));
  EXPECT_EQ(o.push(), 5u);
  // Half (rounded up) of the private slots [1, 6): 3 of them, the oldest.
  EXPECT_TRUE(state_is(d, 0, 4, 6, false));
  EXPECT_TRUE(limits_are(d, 16, 4, 0));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));

  // A thief can take them, oldest first.
  Thief th;
  th.reset(3);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const claim c = th.steal(d, claim_rule{});
    ASSERT_EQ(c.result, steal_result::success);
    EXPECT_EQ(c.first, i);
  }
  EXPECT_EQ(th.steal(d, claim_rule{}).result, steal_result::empty);
  o.drain();
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(exactly_once(o, {&th}));
}

TEST_F(DequeProtocol, RequestMakesTheNextPopPublishHalfBelowThePoppedSlot) {
  for (int i = 0; i < 6; ++i) o.push();  // slot 0 shared, 1..5 private
  d.fresh = 0;
  d.request();

  // The pop of slot 5 goes slow; slot 5 stays ours; half of [1, 5) is published.
  EXPECT_FALSE(d.pop_private());
  EXPECT_EQ(d.head, 5u);
  EXPECT_TRUE(d.take_back(5));
  EXPECT_TRUE(state_is(d, 0, 3, 5, false));
  EXPECT_TRUE(limits_are(d, 16, 3, 0));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));

  // Private pops are fast again, down to split.
  EXPECT_TRUE(d.pop_private());
  EXPECT_TRUE(d.pop_private());
  EXPECT_EQ(d.head, 3u);
  // The pop of shared slot 2 takes back the newer half of [0, 3): split goes to 1.
  EXPECT_FALSE(d.pop_private());
  EXPECT_TRUE(d.take_back(2));
  EXPECT_TRUE(state_is(d, 0, 1, 2, false));
  EXPECT_TRUE(limits_are(d, 16, 1, 0));
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(d.pop_private());  // slot 1, private again
  EXPECT_FALSE(d.pop_private());
  EXPECT_TRUE(d.take_back(0));
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));
}

TEST_F(DequeProtocol, RequestWithNothingPrivateStaysPendingUntilAPushServesIt) {
  o.push();  // slot 0 shared: nothing private
  d.fresh = 0;
  d.request();

  d.serve();  // nothing private below head: re-armed, not dropped
  EXPECT_TRUE(state_is(d, 0, 1, 1, false));
  EXPECT_TRUE(request_pending_with_slow_limits(d));
  EXPECT_EQ(d.fresh, 0u);
  EXPECT_TRUE(invariants(d));

  EXPECT_TRUE(o.pop());  // take back slot 0: still nothing to publish below it
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_TRUE(request_pending_with_slow_limits(d));
  EXPECT_EQ(d.fresh, 0u);
  EXPECT_TRUE(invariants(d));

  EXPECT_FALSE(d.push_fast_ok(0));
  EXPECT_EQ(o.push(), 0u);  // served: the new slot is published
  EXPECT_TRUE(state_is(d, 0, 1, 1, false));
  EXPECT_TRUE(limits_are(d, 16, 1, 0));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));
  o.drain();
  EXPECT_TRUE(exactly_once(o, {}));
}

TEST_F(DequeProtocol, TakeBackTakesTheNewerHalfOrWithTakeOneOnlyThePoppedSlot) {
  for (int i = 0; i < 8; ++i) o.push();
  d.supply_all();
  EXPECT_TRUE(state_is(d, 0, 8, 8, false));
  EXPECT_TRUE(limits_are(d, 16, 8, 0));
  EXPECT_EQ(d.fresh, 2u);  // the reset and the supply

  EXPECT_TRUE(o.pop());  // slot 7 shared: split 8 -> 0 + 8/2
  EXPECT_TRUE(state_is(d, 0, 4, 7, false));
  for (int i = 0; i < 3; ++i) {  // 6, 5, 4: private now, popped on the fast path
    EXPECT_GE(d.head - 1, d.pop_limit.load());
    EXPECT_TRUE(o.pop());
  }
  EXPECT_TRUE(state_is(d, 0, 4, 4, false));

  d.take_one = true;
  EXPECT_TRUE(o.pop());  // slot 3: only it comes back
  EXPECT_TRUE(state_is(d, 0, 3, 3, false));
  EXPECT_TRUE(o.pop());  // slot 2
  EXPECT_TRUE(state_is(d, 0, 2, 2, false));
  EXPECT_TRUE(invariants(d));
  d.take_one = false;
  o.push();  // slot 2 again, private
  EXPECT_TRUE(o.pop());
  EXPECT_TRUE(o.pop());  // slot 1: split 2 -> 0 + 2/2
  EXPECT_TRUE(state_is(d, 0, 1, 1, false));
  EXPECT_TRUE(o.pop());
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(exactly_once(o, {}));
}

TEST_F(DequeProtocol, ServeTopUpAndSupplyAll) {
  for (int i = 0; i < 6; ++i) o.push();  // slot 0 shared, 1..5 private
  d.fresh = 0;

  d.serve();  // no request: nothing happens
  EXPECT_TRUE(state_is(d, 0, 1, 6, false));
  EXPECT_TRUE(limits_are(d, 16, 1, 0));
  EXPECT_EQ(d.fresh, 0u);

  // top_up(floor) acts only when split rose above the floor, and keeps the top slot private.
  d.top_up(1);
  EXPECT_TRUE(state_is(d, 0, 1, 6, false));
  EXPECT_EQ(d.fresh, 0u);
  d.top_up(0);  // half of [1, 5): 2
  EXPECT_TRUE(state_is(d, 0, 3, 6, false));
  EXPECT_TRUE(limits_are(d, 16, 3, 0));
  EXPECT_EQ(d.fresh, 1u);
  EXPECT_TRUE(invariants(d));
  d.top_up(0);  // half of [3, 5): 1
  EXPECT_TRUE(state_is(d, 0, 4, 6, false));
  d.top_up(0);  // half of [4, 5): 1
  EXPECT_TRUE(state_is(d, 0, 5, 6, false));
  EXPECT_EQ(d.fresh, 3u);
  d.top_up(0);  // only the top slot is private: nothing
  EXPECT_TRUE(state_is(d, 0, 5, 6, false));
  EXPECT_EQ(d.fresh, 3u);
  EXPECT_TRUE(limits_are(d, 16, 5, 0));
  EXPECT_TRUE(invariants(d));

  // supply_all publishes every private slot and raises pop_limit: the next pop goes slow.
  d.supply_all();
  EXPECT_TRUE(state_is(d, 0, 6, 6, false));
  EXPECT_TRUE(limits_are(d, 16, 6, 0));
  EXPECT_EQ(d.fresh, 4u);
  d.supply_all();  // nothing private: nothing
  EXPECT_EQ(d.fresh, 4u);
  EXPECT_TRUE(invariants(d));
  EXPECT_LT(d.head - 1, d.pop_limit.load());  // the next pop goes slow: its slot is shared
  EXPECT_TRUE(o.pop());
  EXPECT_TRUE(state_is(d, 0, 3, 5, false));

  // supply_all in the all-stolen state: nothing (no private slot).
  Thief th;
  th.reset(2);
  claim_rule all;
  all.how = claim_rule::kind::chunk;
  all.chunk = 100;
  ASSERT_EQ(th.steal(d, all).k, 3u);
  o.drain();
  EXPECT_TRUE(state_is(d, 3, 3, 0, true));
  const std::uint32_t fresh = d.fresh;
  d.supply_all();
  d.top_up(0);
  EXPECT_EQ(d.fresh, fresh);
  EXPECT_TRUE(state_is(d, 3, 3, 0, true));
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(exactly_once(o, {&th}));
}

TEST_F(DequeProtocol, ReclaimOfABuriedSlot) {
  Thief th;
  th.reset(3);
  for (int i = 0; i < 6; ++i) o.push();
  d.supply_all();  // [0, 6) shared
  ASSERT_EQ(th.steal(d, claim_rule{}).first, 0u);
  EXPECT_TRUE(state_is(d, 1, 6, 6, false));

  EXPECT_TRUE(o.reclaim(4));  // split 6 -> 4: [4, 6) private
  EXPECT_TRUE(state_is(d, 1, 4, 6, false));
  EXPECT_TRUE(limits_are(d, 16, 4, 0));
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(o.reclaim(4));  // already private: nothing changes
  EXPECT_TRUE(state_is(d, 1, 4, 6, false));
  EXPECT_FALSE(o.reclaim(0));  // claimed by the thief
  EXPECT_TRUE(state_is(d, 1, 4, 6, false));
  EXPECT_TRUE(o.reclaim(2));
  EXPECT_TRUE(state_is(d, 1, 2, 6, false));
  EXPECT_TRUE(invariants(d));
  // A thief takes what is still shared: slot 1.
  ASSERT_EQ(th.steal(d, claim_rule{}).first, 1u);
  EXPECT_FALSE(o.reclaim(1));

  // Pops: 5, 4 (tombstone), 3, 2 (tombstone) are private; 1 and 0 were stolen.
  o.drain();
  EXPECT_EQ(o.lost.size(), 2u);
  EXPECT_TRUE(state_is(d, 2, 2, 0, true));
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(exactly_once(o, {&th}));

  // Reclaim in the all-stolen state: the slot was stolen.
  fresh();
  th.reset(4);
  for (int i = 0; i < 4; ++i) o.push();
  d.supply_all();
  claim_rule all;
  all.how = claim_rule::kind::half;
  while (th.steal(d, all).result == steal_result::success) {
  }
  EXPECT_FALSE(o.pop());  // slot 3: stolen, all-stolen now
  EXPECT_TRUE(state_is(d, 4, 4, 3, true));
  EXPECT_FALSE(o.reclaim(1));
  EXPECT_TRUE(invariants(d));
  o.drain();
  EXPECT_TRUE(exactly_once(o, {&th}));
}

TEST_F(DequeProtocol, FullDequeRefusesThePush) {
  start(4);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(o.push(), i);
  EXPECT_FALSE(d.push_fast_ok(4));
  EXPECT_EQ(o.push(), no_slot);  // run inline by the owner
  EXPECT_TRUE(state_is(d, 0, 1, 4, false));
  EXPECT_EQ(id_of(d.own[3].tagged), 4u);
  EXPECT_TRUE(invariants(d));

  // A full push still serves a request: half of the private [1, 4).
  d.request();
  EXPECT_EQ(d.push_slow(&run_task, tag(99)), no_slot);
  EXPECT_TRUE(state_is(d, 0, 3, 4, false));
  EXPECT_TRUE(limits_are(d, 4, 3, 0));
  EXPECT_TRUE(invariants(d));
  o.drain();
  EXPECT_TRUE(exactly_once(o, {}));
}

TEST_F(DequeProtocol, GoSlowSendsEveryPushAndPopToTheSlowPath) {
  d.go_slow = true;
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(d.push_fast_ok(d.head));
    EXPECT_EQ(o.push(), i);
    EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, 0));
  }
  EXPECT_TRUE(state_is(d, 0, 1, 4, false));  // only the reset published; no request, no publish
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(d.pop_private());
    EXPECT_TRUE(d.take_back(d.head));
    EXPECT_TRUE(invariants(d));
  }
  EXPECT_TRUE(state_is(d, 0, 0, 0, false));
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, 0));
}

TEST_F(DequeProtocol, ClaimTakesTheOldestSharedSlotsAndAsksWhenEmpty) {
  start(32);
  Thief th;
  th.reset(7);
  // On a fresh deque nothing is shared: the thief asks.
  EXPECT_EQ(th.steal(d, claim_rule{}).result, steal_result::empty);
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));
  o.push();  // the reset shares slot 0; nothing private to publish: the request stays pending
  EXPECT_TRUE(state_is(d, 0, 1, 1, false));
  EXPECT_TRUE(request_pending_with_slow_limits(d));
  o.push();  // served: half of the private [1, 2)
  EXPECT_TRUE(state_is(d, 0, 2, 2, false));
  EXPECT_TRUE(limits_are(d, 32, 2, 0));
  for (int i = 0; i < 8; ++i) o.push();
  EXPECT_TRUE(state_is(d, 0, 2, 10, false));
  d.supply_all();
  EXPECT_TRUE(state_is(d, 0, 10, 10, false));

  claim_rule r;
  r.how = claim_rule::kind::chunk;
  r.chunk = 3;
  claim c = th.steal(d, r);
  EXPECT_EQ(c.first, 0u);
  EXPECT_EQ(c.k, 3u);
  r.room = 2;  // capped by the thief's room
  c = th.steal(d, r);
  EXPECT_EQ(c.first, 3u);
  EXPECT_EQ(c.k, 2u);
  r.how = claim_rule::kind::half;
  r.room = ~0u;
  c = th.steal(d, r);  // half of 5, rounded up
  EXPECT_EQ(c.first, 5u);
  EXPECT_EQ(c.k, 3u);
  EXPECT_EQ(d.req.load(), 0u);
  r.chunk = 10;
  r.how = claim_rule::kind::chunk;
  c = th.steal(d, r);  // capped by what is shared, and it empties the shared part: asks at once
  EXPECT_EQ(c.first, 8u);
  EXPECT_EQ(c.k, 2u);
  EXPECT_TRUE(limits_are(d, 0, pop_limit_requested, req_steal));
  EXPECT_TRUE(state_is(d, 10, 10, 10, false));
  for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(d.slots[i].thief.load(), 7u);
  o.drain();
  EXPECT_TRUE(state_is(d, 10, 10, 0, true));
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(exactly_once(o, {&th}));
}

// The hook runs the other side's step on the same thread, between the load and the CAS.
SplitDeque* g_single = nullptr;
Thief* g_single_thief = nullptr;
int g_single_hits = 0;

void owner_moves_at_steal(protocol_point p) noexcept {
  if (p == protocol_point::steal && g_single_hits++ == 0) g_single->supply_all();
}
void thief_claims_at_take_back(protocol_point p) noexcept {
  if (p == protocol_point::take_back && g_single_hits++ == 0) g_single_thief->steal(*g_single, claim_rule{});
}

TEST_F(DequeProtocol, ThiefCasFailsWhenSplitMovedAfterItsLoad) {
  for (int i = 0; i < 4; ++i) o.push();  // [0, 1) shared
  Thief th;
  th.reset(1);
  g_single = &d;
  g_single_hits = 0;
  claim c{};
  {
    HookGuard hg(&owner_moves_at_steal);
    c = th.steal(d, claim_rule{});
  }
  EXPECT_EQ(g_single_hits, 1);
  EXPECT_EQ(c.result, steal_result::contended);
  EXPECT_TRUE(state_is(d, 0, 4, 4, false));  // the owner's publish stands, the thief took nothing
  EXPECT_EQ(th.steal(d, claim_rule{}).first, 0u);
  o.drain();
  EXPECT_TRUE(invariants(d));
  EXPECT_TRUE(exactly_once(o, {&th}));
}

TEST_F(DequeProtocol, TakeBackRetriesWhenTailMovedAfterItsLoad) {
  for (std::uint32_t n : {1u, 2u, 4u}) {
    SCOPED_TRACE("shared slots: " + std::to_string(n));
    start(16);
    for (std::uint32_t i = 0; i < n; ++i) o.push();
    d.supply_all();  // [0, n) shared
    Thief th;
    th.reset(9);
    g_single = &d;
    g_single_thief = &th;
    g_single_hits = 0;
    bool ours;
    {
      HookGuard hg(&thief_claims_at_take_back);
      ours = o.pop();  // loads (0, n); the thief takes slot 0; the CAS fails and is retried
    }
    EXPECT_EQ(g_single_hits, n == 1 ? 1 : 2);
    if (n == 1) {
      EXPECT_FALSE(ours);
      EXPECT_EQ(d.last_thief, 9u);
      EXPECT_TRUE(state_is(d, 1, 1, 0, true));
    } else {
      EXPECT_TRUE(ours);
      EXPECT_TRUE(state_is(d, 1, 1 + (n - 1) / 2, n - 1, false));
    }
    EXPECT_TRUE(invariants(d));
    o.drain();
    EXPECT_TRUE(exactly_once(o, {&th}));
  }
}

// ==== 2. Litmus tests =======================================================================

// ---- Pop of the last shared slot against a steal of it --------------------------------------

// How the slot the race is over became shared.
enum class Published {
  reset,        // the first push after init (all-stolen)
  served,       // a private slot published by request + serve
  after_steal,  // as served, above a slot a thief already took (tail > 0)
};

const char* published_name(Published p) {
  switch (p) {
    case Published::reset: return "reset";
    case Published::served: return "served";
    case Published::after_steal: return "after_steal";
  }
  return "?";
}

// The owner pops the only shared slot (take_back) while a thief makes one claim on it: exactly one
// of them gets it. If the thief does, take_back says stolen with the thief's mark, and the owner
// ends all-stolen; the exact state after either outcome is checked. Then the owner pushes into the
// same slot again (after a stolen pop only the thief's mark orders the thief's read of the slot
// before this write) and pops it.
class PopVsSteal : public WithDeque<::testing::TestWithParam<std::tuple<Published, Mode>>, 8> {};

TEST_P(PopVsSteal, ExactlyOneGetsTheSlot) {
  const Published how = std::get<0>(GetParam());
  const Mode mode = std::get<1>(GetParam());
  Thief th, earlier;
  std::uint32_t t0 = 0;
  std::uint64_t raced = 0;  // the task in the slot the race is over
  bool owner_won = false;
  State after{};
  int owner_wins = 0, thief_wins = 0;
  std::uint32_t jitter_o = 0, jitter_t = 0;
  g_mode = mode;
  run_litmus(
      std::string("PopVsSteal/") + published_name(how) + "/" + mode_name(mode), 2,
      iterations(forced(mode) ? 2000 : 20000),
      hook_for(mode),
      [&](int it) {
        disarm();
        fresh();
        th.reset(1);
        earlier.reset(9);
        Rng r{static_cast<std::uint64_t>(it) * 7919 + 1};
        jitter_o = r.below(48);
        jitter_t = r.below(48);
        switch (how) {
          case Published::reset:
            o.push();
            break;
          case Published::served:
            o.push();
            o.pop();  // taken back: not all-stolen, nothing shared
            o.push();
            d.request();
            d.serve();
            break;
          case Published::after_steal:
            o.push();
            o.push();
            earlier.steal(d, claim_rule{});  // slot 0; asks for more
            d.serve();                       // publishes slot 1
            break;
        }
        t0 = how == Published::after_steal ? 1 : 0;
        raced = o.pushed.back();
        ASSERT_TRUE(state_is(d, t0, t0 + 1, t0 + 1, false));
        ASSERT_TRUE(invariants(d));
        set_flag(g_armed, true);
      },
      [&](unsigned role, int) {
        if (role == 0) {
          delay(jitter_o);
          owner_won = o.pop();
          set_flag(g_owner_moved, true);
          if (how == Published::after_steal) o.pop();  // slot 0, stolen in setup
          after = state_of(d);
          // Reuse the raced slot. If the thief took it, only its mark orders its read of the slot
          // before this write (ThreadSanitizer checks that), so the owner must not wait for the
          // thief here; it has made its one attempt. If the owner won, the thief may not have
          // tried yet: wait, or it could take the new slot.
          if (owner_won) wait_for(g_thief_tried);
          for (std::uint32_t k = 0; k <= t0; ++k) o.push();
          o.drain();
        } else {
          delay(jitter_t);
          th.steal(d, claim_rule{});
          set_flag(g_thief_tried, true);
        }
      },
      [&](int) {
        const bool thief_won = th.first == steal_result::success;
        EXPECT_NE(owner_won, thief_won) << "owner " << owner_won << ", thief " << thief_won;
        if (thief_won) {
          ++thief_wins;
          ASSERT_EQ(th.took.size(), 1u);
          ASSERT_FALSE(o.lost.empty());
          EXPECT_EQ(th.took[0], (Take{t0, raced, 1}));
          EXPECT_EQ(o.lost[0], (Take{t0, raced, 1}));  // last_thief was the thief's mark
          EXPECT_TRUE(state_is(after, t0 + 1, t0 + 1, 0, true));
        } else {
          ++owner_wins;
          const bool tail1 = how == Published::after_steal;
          EXPECT_TRUE(state_is(after, tail1 ? 1 : 0, tail1 ? 1 : 0, 0, tail1));
        }
        EXPECT_TRUE(state_is(d, 0, 0, 0, false));  // after the reuse: pushed (a reset if all-stolen), popped
        if (mode == Mode::thief_first) {
          EXPECT_TRUE(thief_won);
        }
        if (mode == Mode::owner_first) {
          EXPECT_TRUE(owner_won);
          EXPECT_EQ(th.first, steal_result::contended);
        }
        EXPECT_TRUE(invariants(d));
        EXPECT_TRUE(exactly_once(o, {&th, &earlier}));
      });
  report("owner won " + std::to_string(owner_wins) + ", thief won " + std::to_string(thief_wins));
}

std::string pop_vs_steal_name(const ::testing::TestParamInfo<std::tuple<Published, Mode>>& info) {
  return std::string(published_name(std::get<0>(info.param))) + "_" + mode_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(DequeLitmus, PopVsSteal,
                         ::testing::Combine(::testing::Values(Published::reset, Published::served,
                                                              Published::after_steal),
                                            ::testing::Values(Mode::free, Mode::yield, Mode::thief_first,
                                                              Mode::owner_first)),
                         pop_vs_steal_name);

// ---- Chunk steal against the take-back of the newest shared slot ----------------------------

// A random multi-slot rule: chunk of 2..5, half, or a share among 2 or 3 workers.
claim_rule random_rule(Rng& r) {
  claim_rule rule;
  switch (r.below(3)) {
    case 0:
      rule.how = claim_rule::kind::chunk;
      rule.chunk = 2 + r.below(4);
      break;
    case 1: rule.how = claim_rule::kind::half; break;
    default:
      rule.how = claim_rule::kind::share;
      rule.workers = 2 + r.below(2);
      break;
  }
  if (r.below(4) == 0) rule.room = 1 + r.below(3);
  return rule;
}

// Thieves that loop back off a little after a failed attempt, and yield after every 16th (the
// owner may share their core). Yielding on every failure would park them while the owner runs.
void back_off(unsigned& fails) {
  if ((++fails & 15) == 0)
    sched_yield();
  else
    delay(8u << (fails & 3));
}

// Such a thief: it claims with its rule until `done`, backing off after every failed attempt.
void steal_until(const std::atomic<bool>& done, Thief& th, SplitDeque& d, const claim_rule& rule) {
  unsigned fails = 0;
  while (!done.load(std::memory_order_acquire)) {
    if (th.steal(d, rule).result == steal_result::success)
      fails = 0;
    else
      back_off(fails);
  }
}

// 2 to 9 slots, all shared (supply_all) or half (request + serve); the owner pops them all (its
// take-backs take the newer half, or with take_one only the popped slot) while a thief claims
// with a multi-slot rule: every slot goes to exactly one side. thief_first: the claim is the
// rule's amount of the oldest slots; owner_first: it fails (contended). Then a second round of
// pushes and pops, which the thief (unless forced to one attempt) races as requests publish them.
class ChunkVsTakeBack : public WithDeque<::testing::TestWithParam<std::tuple<bool, Mode>>, 16> {};

TEST_P(ChunkVsTakeBack, EverySlotGoesToExactlyOneSide) {
  const bool by_request = std::get<0>(GetParam());
  const Mode mode = std::get<1>(GetParam());
  Thief th;
  claim_rule rule;
  std::uint32_t n = 0, t0 = 0, s0 = 0;
  std::atomic<bool> owner_done{false};
  std::uint32_t jitter_o = 0, jitter_t = 0;
  long split_claims = 0, thief_all = 0;
  std::size_t ran_first = 0;
  g_mode = mode;
  const bool once = mode == Mode::thief_first || mode == Mode::owner_first;
  run_litmus(
      std::string("ChunkVsTakeBack/") + (by_request ? "served" : "supplied") + "/" + mode_name(mode), 2,
      iterations(forced(mode) ? 4000 : 20000), hook_for(mode),
      [&](int it) {
        disarm();
        owner_done.store(false, std::memory_order_relaxed);
        fresh();
        th.reset(1);
        Rng r{static_cast<std::uint64_t>(it) * 104729 + 3};
        n = 2 + r.below(8);
        for (std::uint32_t i = 0; i < n; ++i) o.push();
        if (by_request) {
          d.request();
          d.serve();  // half of the private slots [1, n)
        } else {
          d.supply_all();  // all of them
        }
        d.take_one = r.below(4) == 0;
        rule = random_rule(r);
        jitter_o = r.below(64);
        jitter_t = r.below(64);
        t0 = tail_of(d);
        s0 = word_split_of(d);
        ASSERT_EQ(s0, by_request ? 1 + n / 2 : n);
        ASSERT_TRUE(invariants(d));
        set_flag(g_armed, true);
      },
      [&](unsigned role, int) {
        if (role == 0) {
          delay(jitter_o);
          bool ok = true;
          auto drain = [&] {
            while (ok && d.head > 0) {
              const bool shared = d.head - 1 < d.split;
              o.pop();
              if (shared) set_flag(g_owner_moved, true);
              ok = invariants(d);
            }
          };
          drain();
          ran_first = o.ran.size();
          set_flag(g_owner_moved, true);
          // A second round written here, not in setup: what requests publish now reaches a thief
          // through the deque's release alone (ThreadSanitizer checks it), and slots the thief
          // took are reused after the owner saw their marks.
          for (std::uint32_t k = 0; k < n && ok; ++k) o.push();
          drain();
          set_flag(owner_done, true);
        } else {
          delay(jitter_t);
          unsigned fails = 0;
          do {
            if (th.steal(d, rule).result != steal_result::success) back_off(fails);
          } while (!once && !owner_done.load(std::memory_order_acquire));
          set_flag(g_thief_tried, true);
        }
      },
      [&](int) {
        EXPECT_TRUE(invariants(d));
        EXPECT_EQ(d.head, 0u);
        EXPECT_TRUE(exactly_once(o, {&th}));
        if (mode == Mode::thief_first) {
          EXPECT_EQ(th.first, steal_result::success);
          ASSERT_EQ(th.claims.size(), 1u);
          EXPECT_EQ(th.claims[0].first, t0);
          EXPECT_EQ(th.claims[0].k, rule.amount(s0 - t0));
        }
        if (mode == Mode::owner_first) {
          EXPECT_EQ(th.first, steal_result::contended);
          EXPECT_TRUE(th.took.empty());
        }
        if (!th.took.empty() && ran_first > 0) ++split_claims;
        if (ran_first == 0) ++thief_all;
      });
  report("first round: both sides got slots in " + std::to_string(split_claims) + " iterations, the thief all in " +
         std::to_string(thief_all));
}

std::string chunk_name(const ::testing::TestParamInfo<std::tuple<bool, Mode>>& info) {
  return std::string(std::get<0>(info.param) ? "served" : "supplied") + "_" + mode_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(DequeLitmus, ChunkVsTakeBack,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(Mode::free, Mode::yield,
                                                                                 Mode::thief_first,
                                                                                 Mode::owner_first)),
                         chunk_name);

// ---- Reclaim of a buried slot against a chunk steal -------------------------------------------

// 3 to 8 shared slots; the owner reclaims a buried one (below the newest) while a thief makes one
// claim: the slot goes to exactly one of them, and with thief_first exactly when the claim did not
// cover it.
class ReclaimVsSteal : public WithDeque<::testing::TestWithParam<Mode>, 16> {};

TEST_P(ReclaimVsSteal, TheBuriedSlotGoesToExactlyOneSide) {
  const Mode mode = GetParam();
  Thief th;
  claim_rule rule;
  std::uint32_t n = 0, i = 0, t0 = 0, s0 = 0;
  bool reclaimed = false;
  std::uint32_t jitter_o = 0, jitter_t = 0;
  int owner_wins = 0, thief_wins = 0;
  g_mode = mode;
  run_litmus(
      std::string("ReclaimVsSteal/") + mode_name(mode), 2, iterations(forced(mode) ? 4000 : 20000), hook_for(mode),
      [&](int it) {
        disarm();
        fresh();
        th.reset(1);
        Rng r{static_cast<std::uint64_t>(it) * 15485863 + 5};
        n = 3 + r.below(6);
        for (std::uint32_t k = 0; k < n; ++k) o.push();
        d.supply_all();
        i = r.below(n - 1);  // a buried slot: below the newest
        rule = random_rule(r);
        if (r.below(3) == 0) rule = claim_rule{};
        jitter_o = r.below(64);
        jitter_t = r.below(64);
        t0 = tail_of(d);
        s0 = word_split_of(d);
        ASSERT_TRUE(invariants(d));
        set_flag(g_armed, true);
      },
      [&](unsigned role, int) {
        if (role == 0) {
          delay(jitter_o);
          reclaimed = o.reclaim(i);
          set_flag(g_owner_moved, true);
          o.drain();
        } else {
          delay(jitter_t);
          th.steal(d, rule);
          set_flag(g_thief_tried, true);
        }
      },
      [&](int) {
        EXPECT_TRUE(invariants(d));
        EXPECT_TRUE(exactly_once(o, {&th}));
        const bool thief_has_i = std::any_of(th.took.begin(), th.took.end(), [&](const Take& k) { return k.index == i; });
        EXPECT_NE(reclaimed, thief_has_i) << "slot " << i;
        if (reclaimed)
          ++owner_wins;
        else
          ++thief_wins;
        if (mode == Mode::thief_first) {
          ASSERT_EQ(th.first, steal_result::success);
          const std::uint32_t k = rule.amount(s0 - t0);
          EXPECT_EQ(th.claims.at(0).k, k);
          EXPECT_EQ(reclaimed, i >= t0 + k);
        }
        if (mode == Mode::owner_first) {
          EXPECT_TRUE(reclaimed);
          EXPECT_EQ(th.first, steal_result::contended);
        }
      });
  report("owner reclaimed " + std::to_string(owner_wins) + ", thief claimed it " + std::to_string(thief_wins));
}

INSTANTIATE_TEST_SUITE_P(DequeLitmus, ReclaimVsSteal,
                         ::testing::Values(Mode::free, Mode::yield, Mode::thief_first, Mode::owner_first),
                         mode_param_name);

// ---- A request against the owner's settle ---------------------------------------------------

// The thief makes `rounds` requests per iteration, one at a time; the owner pushes, pops and serves
// until it sees that the round's request was made (so the request happened-before what follows),
// then checks that it was not lost: it was served (something published since the round began) or
// it is still pending with both limits on their slow values. Then one more push or pop must serve
// it if anything private lies below that slot. Before the next round the owner serves whatever is
// pending, so that every round starts with no request and only its own request can publish.
class RequestVsSettle : public WithDeque<::testing::TestWithParam<Mode>, 16> {};

TEST_P(RequestVsSettle, ARequestIsNeverLost) {
  const Mode mode = GetParam();
  const std::uint32_t cap = d.capacity;
  constexpr int rounds = 8;
  std::atomic<int> round{0};      // the owner: round k may begin (no request pending)
  std::atomic<int> requested{0};  // the thief: round k's request was made
  std::uint64_t seed = 0;
  long served_in_window = 0, pending_at_check = 0, served_by_next = 0;
  run_litmus(
      std::string("RequestVsSettle/") + mode_name(mode), 2, iterations(yields(mode) ? 1000 : 5000), hook_for(mode),
      [&](int it) {
        round.store(0, std::memory_order_relaxed);
        requested.store(0, std::memory_order_relaxed);
        fresh();
        Rng r{static_cast<std::uint64_t>(it) * 2654435761u + 7};
        const std::uint32_t n = 1 + r.below(7);
        for (std::uint32_t k = 0; k < n; ++k) o.push();  // slot 0 shared, the rest private
        seed = r.next();
        ASSERT_TRUE(invariants(d));
        ASSERT_TRUE(limits_are(d, cap, 1, 0));
      },
      [&](unsigned role, int) {
        if (role == 1) {
          Rng r{seed ^ 0x5bd1e995u};
          for (int k = 1; k <= rounds; ++k) {
            wait_until(round, [&](int v) { return v >= k; });
            delay(r.below(600));
            d.request();
            set_flag(requested, k);
          }
          return;
        }
        // However the owner leaves (a failed check returns early), the thief must not wait for
        // a round that never comes.
        struct Release {
          std::atomic<int>& round;
          ~Release() { set_flag(round, rounds + 1); }
        } release{round};
        Rng r{seed};
        for (int k = 1; k <= rounds; ++k) {
          const std::uint32_t fresh0 = d.fresh;
          set_flag(round, k);
          while (requested.load(std::memory_order_acquire) < k) {
            const std::uint32_t op = r.below(8);
            if (op < 3 && d.head + 1 < cap)
              o.push();
            else if (op < 6 && d.head > 0)
              o.pop();
            else
              d.serve();
            if (!invariants(d)) return;
          }
          const bool pending = d.req.load(std::memory_order_relaxed) != 0;
          if (pending) {
            EXPECT_TRUE(request_pending_with_slow_limits(d))
                << "round " << k << ": a pending request must keep both limits slow";
            ++pending_at_check;
          } else {
            EXPECT_EQ(d.fresh, fresh0 + 1) << "round " << k << ": the request was taken but nothing was published";
            ++served_in_window;
          }
          EXPECT_LE(d.fresh, fresh0 + 1) << "round " << k << ": one request, one publication at most";
          // The next push or pop serves a pending request if anything private lies below its slot.
          const bool push = d.head + 1 < cap && (d.head == 0 || r.below(2) == 0);
          const bool can_publish = (push ? d.head + 1 : d.head - 1) > d.split;
          const std::uint32_t fresh1 = d.fresh;
          if (push)
            o.push();
          else
            o.pop();
          EXPECT_TRUE(invariants(d));
          EXPECT_TRUE(d.fresh == fresh0 + 1 || request_pending_with_slow_limits(d))
              << "round " << k << ": after the next " << (push ? "push" : "pop")
              << " the request is neither served nor pending";
          if (pending && can_publish) {
            EXPECT_EQ(d.fresh, fresh1 + 1) << "round " << k;
            EXPECT_TRUE(limits_are(d, cap, d.split, 0)) << "round " << k;
            ++served_by_next;
          }
          EXPECT_LE(d.fresh, fresh0 + 1) << "round " << k;
          if (::testing::Test::HasFailure()) return;
          // Serve what is pending (a push always can: its own slot is private), so that the next
          // round starts with no request.
          while (d.req.load(std::memory_order_relaxed) != 0) {
            if (d.head + 1 < cap)
              o.push();
            else
              o.pop();
          }
        }
        o.drain();
      },
      [&](int) {
        EXPECT_TRUE(exactly_once(o, {}));
        EXPECT_TRUE(o.lost.empty());
      });
  report("requests served while the owner ran " + std::to_string(served_in_window) + ", pending when it looked " +
         std::to_string(pending_at_check) + " (then served by the next push/pop " + std::to_string(served_by_next) +
         ")");
}

INSTANTIATE_TEST_SUITE_P(DequeLitmus, RequestVsSettle, ::testing::Values(Mode::free, Mode::yield), mode_param_name);

// ---- The reset after all-stolen against a claim -------------------------------------------

class ResetAfterAllStolen : public WithDeque<::testing::TestWithParam<Mode>, 16> {};

// Two thieves steal everything the owner shared; the owner pops down into the all-stolen state and
// pushes again (the reset store) while both thieves keep trying.
TEST_P(ResetAfterAllStolen, TheNewSlotsGoToExactlyOneSide) {
  const Mode mode = GetParam();
  Thief thieves[3];
  claim_rule rules[3];
  std::uint32_t n = 0, m = 0;
  std::atomic<bool> owner_done{false};
  long reset_stolen = 0, reset_popped = 0;
  run_litmus(
      std::string("ResetAfterAllStolen/") + mode_name(mode), 3, iterations(8000), hook_for(mode),
      [&](int it) {
        owner_done.store(false, std::memory_order_relaxed);
        fresh();
        Rng r{static_cast<std::uint64_t>(it) * 999983 + 11};
        for (std::uint32_t k = 1; k < 3; ++k) {
          thieves[k].reset(k);
          rules[k] = r.below(2) == 0 ? claim_rule{} : random_rule(r);
        }
        n = 1 + r.below(4);
        m = 1 + r.below(3);
        for (std::uint32_t k = 0; k < n; ++k) o.push();
        d.supply_all();
        ASSERT_TRUE(state_is(d, 0, n, n, false));
      },
      [&](unsigned role, int) {
        if (role == 0) {
          // Wait until the thieves took everything, then pop it all: every pop finds its slot stolen.
          spin_until([&] { return tail_of(d) == n; });
          for (std::uint32_t k = 0; k < n; ++k) {
            const bool ours = o.pop();
            EXPECT_FALSE(ours) << "slot " << d.head;
          }
          EXPECT_TRUE(d.allstolen);
          EXPECT_TRUE(invariants(d));
          // Push again: the first push resets the word and shares its slot at once.
          for (std::uint32_t k = 0; k < m; ++k) o.push();
          EXPECT_TRUE(invariants(d));
          o.drain();
          set_flag(owner_done, true);
        } else {
          steal_until(owner_done, thieves[role], d, rules[role]);
        }
      },
      [&](int) {
        EXPECT_TRUE(invariants(d));
        EXPECT_TRUE(exactly_once(o, {&thieves[1], &thieves[2]}));
        const std::uint64_t first_new = n + 1;  // the reset slot's task id
        bool stolen = false;
        for (int k = 1; k < 3; ++k)
          for (const Take& t : thieves[k].took) stolen |= t.id == first_new;
        stolen ? ++reset_stolen : ++reset_popped;
      });
  report("the reset slot was stolen " + std::to_string(reset_stolen) + " times, popped " +
         std::to_string(reset_popped));
}

INSTANTIATE_TEST_SUITE_P(DequeLitmus, ResetAfterAllStolen, ::testing::Values(Mode::free, Mode::yield),
                         mode_param_name);

// The ABA on ts after a reset, forced: thief 2 reads ts = (0, 1) while slot 0 holds task A, thief 1
// steals A, the owner pops (stolen), pushes B (the reset stores (0, 1) again), and only then does
// thief 2 CAS: it succeeds on the stale value and must read B, and the owner must find B stolen.
class DequeLitmus : public WithDeque<::testing::Test, 8> {};

TEST_F(DequeLitmus, StaleClaimAfterResetTakesTheNewSlot) {
  Thief t1, t2;
  run_litmus(
      "StaleClaimAfterReset", 3, iterations(1000), &aba_hook,
      [&](int) {
        disarm();
        fresh();
        t1.reset(1);
        t2.reset(2);
        o.push();  // task 1 in slot 0, shared
        ASSERT_TRUE(state_is(d, 0, 1, 1, false));
        set_flag(g_armed, true);
      },
      [&](unsigned role, int) {
        if (role == 0) {
          wait_for(g_thief1_done);
          EXPECT_FALSE(o.pop());  // stolen by thief 1
          EXPECT_TRUE(state_is(d, 1, 1, 0, true));
          o.push();  // task 2 in slot 0: the reset stores (0, 1)
          EXPECT_TRUE(state_is(d, 0, 1, 1, false));
          set_flag(g_reset_done, true);
          o.pop();  // its take-back CAS waits until thief 2 has tried
        } else if (role == 1) {
          wait_for(g_thief2_loaded);
          t1.steal(d, claim_rule{});
          set_flag(g_thief1_done, true);
        } else {
          t2.steal(d, claim_rule{});
          set_flag(g_thief2_tried, true);
        }
      },
      [&](int) {
        EXPECT_EQ(t1.first, steal_result::success);
        EXPECT_EQ(t2.first, steal_result::success);
        ASSERT_EQ(t1.took.size(), 1u);
        ASSERT_EQ(t2.took.size(), 1u);
        EXPECT_EQ(t1.took[0], (Take{0, 1, 1}));
        EXPECT_EQ(t2.took[0], (Take{0, 2, 2}));
        EXPECT_EQ(d.last_thief, 2u);
        EXPECT_TRUE(state_is(d, 1, 1, 0, true));
        EXPECT_TRUE(invariants(d));
        EXPECT_TRUE(exactly_once(o, {&t1, &t2}));
      });
}

// ---- Owner and two thieves over random operation sequences ---------------------------------

// 64 random owner operations per iteration (push, pop, serve, supply_all, top_up, reclaim, take_one
// on and off; a 16-slot deque, so pushes find it full) and a drain, against two thieves with random
// claim rules: every task runs exactly once, and the slots found stolen are the ones claimed.
class RandomRace : public WithDeque<::testing::TestWithParam<Mode>, 16> {};

TEST_P(RandomRace, EveryTaskRunsExactlyOnce) {
  const Mode mode = GetParam();
  Thief thieves[3];
  claim_rule rules[3];
  std::uint64_t seed = 0;
  std::atomic<bool> owner_done{false};
  long pushes = 0, stolen = 0, inline_runs = 0, reclaims = 0, attempts = 0;
  run_litmus(
      std::string("RandomRace/") + mode_name(mode), 3, iterations(yields(mode) ? 3000 : 6000), hook_for(mode),
      [&](int it) {
        owner_done.store(false, std::memory_order_relaxed);
        fresh();
        Rng r{static_cast<std::uint64_t>(it) * 6364136223846793005ULL + 13};
        for (std::uint32_t k = 1; k < 3; ++k) {
          thieves[k].reset(k);
          rules[k] = r.below(3) == 0 ? claim_rule{} : random_rule(r);
        }
        seed = r.next();
      },
      [&](unsigned role, int) {
        if (role != 0) {
          steal_until(owner_done, thieves[role], d, rules[role]);
          return;
        }
        Rng r{seed};
        for (int step = 0; step < 64; ++step) {
          const std::uint32_t op = r.below(100);
          if (op < 50) {
            if (o.push() == no_slot) ++inline_runs;
          } else if (op < 85) {
            if (d.head > 0) o.pop();
          } else if (op < 88) {
            d.serve();
          } else if (op < 91) {
            d.supply_all();
          } else if (op < 94) {
            d.top_up(r.below(d.head + 1));
          } else if (op < 97) {
            if (d.head >= 2 && o.reclaim(r.below(d.head - 1))) ++reclaims;
          } else {
            d.take_one = !d.take_one;
          }
          if (!invariants(d)) break;
          if (r.below(8) == 0) delay(r.below(200));
        }
        o.drain();
        EXPECT_TRUE(invariants(d));
        set_flag(owner_done, true);
      },
      [&](int) {
        EXPECT_TRUE(invariants(d));
        EXPECT_EQ(tail_of(d), word_split_of(d));
        EXPECT_TRUE(exactly_once(o, {&thieves[1], &thieves[2]}));
        pushes += static_cast<long>(o.pushed.size());
        stolen += static_cast<long>(o.lost.size());
        attempts += thieves[1].attempts + thieves[2].attempts;
      });
  report("tasks " + std::to_string(pushes) + ", claim attempts " + std::to_string(attempts) + ", slots stolen " +
         std::to_string(stolen) + ", run inline (full) " +
         std::to_string(inline_runs) + ", reclaimed " + std::to_string(reclaims));
}

INSTANTIATE_TEST_SUITE_P(DequeLitmus, RandomRace, ::testing::Values(Mode::free, Mode::yield),
                         mode_param_name);

// ==== 3. The fast paths' limit compares ======================================================
// below_limit / limit_reached (an asm compare on x86-64 outside TSan builds, the relaxed load
// elsewhere) and the frame paths' frame_push_ok / frame_pop_ok must answer as the plain compare of
// x's low 32 bits with the limit, at every boundary, and must read the limit each time they run.

TEST(DequeLimits, EachCompareAnswersAsThePlainCompareAtEveryBoundary) {
  const std::uint32_t limits[] = {0u, 1u, 2u, 63u, 64u, 65u, (1u << 30) - 1, 1u << 30, 0x7fffffffu, 0x80000000u,
                                  0xfffffffeu, 0xffffffffu};
  Deque q(4);
  SplitDeque& d = q.d;
  int checked = 0;
  for (const std::uint32_t lim : limits) {
    std::atomic<std::uint32_t> limit{lim};
    d.push_limit.store(lim, std::memory_order_relaxed);
    d.pop_limit.store(lim, std::memory_order_relaxed);
    const std::uint32_t xs[] = {0u, 1u, lim - 1, lim, lim + 1, lim + 2, 0x7fffffffu, 0x80000000u, 0xffffffffu};
    for (const std::uint32_t x : xs) {
      // A 64-bit x compares its low half (a frame's head is 64 bits wide and below 2^30).
      for (const std::uint64_t high : {std::uint64_t{0}, std::uint64_t{1} << 32, ~std::uint64_t{0} << 32}) {
        const std::uint64_t x64 = high | x;
        SCOPED_TRACE("limit " + std::to_string(lim) + ", x " + std::to_string(x64));
        EXPECT_EQ(below_limit(x, limit), x < lim);
        EXPECT_EQ(limit_reached(x, limit), x >= lim);
        EXPECT_EQ(below_limit(x64, limit), x < lim);
        EXPECT_EQ(limit_reached(x64, limit), x >= lim);
        EXPECT_EQ(d.frame_push_ok(x64), x < lim);
        EXPECT_EQ(d.frame_pop_ok(x64), x >= lim);
        checked += 6;
      }
    }
  }
  EXPECT_EQ(checked, 12 * 9 * 3 * 6);
}

// A reader loops on a compare while another thread moves the limit: the loop must end (a compare
// whose read the compiler kept from an earlier run, or hoisted out of the loop, would spin for
// ever; the 20-s watchdog then fails the test). Each of the four compares, in both directions.
TEST(DequeLimits, ALimitAnotherThreadMovesIsSeenByALoopingReader) {
  Deque q(4);
  SplitDeque& d = q.d;
  std::atomic<std::uint32_t> limit{0};
  std::atomic<bool> done{false};
  std::atomic<unsigned long> spins{0};
  enum class which { below, reached, frame_push, frame_pop };
  // Loops while the compare gives `keep`; returns the number of reads it made.
  auto loop = [&](which w, bool keep) {
    unsigned long n = 0;
    const std::uint64_t x = 10;
    switch (w) {
      case which::below:
        while (below_limit(x, limit) == keep) ++n;
        break;
      case which::reached:
        while (limit_reached(x, limit) == keep) ++n;
        break;
      case which::frame_push:
        while (d.frame_push_ok(x) == keep) ++n;
        break;
      case which::frame_pop:
        while (d.frame_pop_ok(x) == keep) ++n;
        break;
    }
    return n;
  };
  std::thread watchdog([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > until) {
        std::fprintf(stderr, "DequeLimits: a looping reader did not see the limit move in 20 s\n");
        std::_Exit(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  for (const which w : {which::below, which::reached, which::frame_push, which::frame_pop}) {
    for (const bool up : {true, false}) {
      // x = 10. `up`: the limit starts at 5 and moves to 20 (below_limit: false -> true); else back.
      const std::uint32_t from = up ? 5 : 20, to = up ? 20 : 5;
      limit.store(from, std::memory_order_relaxed);
      d.push_limit.store(from, std::memory_order_relaxed);
      d.pop_limit.store(from, std::memory_order_relaxed);
      const bool keep = (w == which::below || w == which::frame_push) ? !up : up;
      std::atomic<bool> started{false};
      std::thread mover([&] {
        wait_for(started);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        limit.store(to, std::memory_order_relaxed);
        d.push_limit.store(to, std::memory_order_relaxed);
        d.pop_limit.store(to, std::memory_order_relaxed);
      });
      set_flag(started, true);
      spins += loop(w, keep);
      mover.join();
    }
  }
  done.store(true, std::memory_order_release);
  watchdog.join();
  report("DequeLimits: 8 loops ended after " + std::to_string(spins.load()) + " reads in all");
}

// ==== 4. claim_rule::amount ==================================================================

TEST(ClaimRule, EachKindGivesItsAmount) {
  claim_rule one;
  for (std::uint32_t a : {1u, 2u, 7u, 1000u}) EXPECT_EQ(one.amount(a), 1u);

  claim_rule chunk;
  chunk.how = claim_rule::kind::chunk;
  chunk.chunk = 8;
  EXPECT_EQ(chunk.amount(1), 1u);
  EXPECT_EQ(chunk.amount(3), 3u);  // capped by what is shared
  EXPECT_EQ(chunk.amount(8), 8u);
  EXPECT_EQ(chunk.amount(20), 8u);
  chunk.chunk = 0;
  EXPECT_EQ(chunk.amount(20), 1u);  // never 0

  claim_rule half;
  half.how = claim_rule::kind::half;
  EXPECT_EQ(half.amount(1), 1u);
  EXPECT_EQ(half.amount(2), 1u);
  EXPECT_EQ(half.amount(3), 2u);
  EXPECT_EQ(half.amount(7), 4u);
  EXPECT_EQ(half.amount(100), 50u);

  claim_rule share;
  share.how = claim_rule::kind::share;
  share.workers = 4;
  EXPECT_EQ(share.amount(1), 1u);
  EXPECT_EQ(share.amount(7), 1u);  // fewer than 2 per worker: single tasks
  EXPECT_EQ(share.amount(8), 2u);
  EXPECT_EQ(share.amount(9), 2u);
  EXPECT_EQ(share.amount(100), 25u);
  share.workers = 1;
  EXPECT_EQ(share.amount(1), 1u);
  EXPECT_EQ(share.amount(2), 2u);
  EXPECT_EQ(share.amount(50), 50u);
}

TEST(ClaimRule, RoomCapsEveryKindButNeverToZero) {
  claim_rule r;
  r.room = 3;
  EXPECT_EQ(r.amount(10), 1u);
  r.how = claim_rule::kind::chunk;
  r.chunk = 8;
  EXPECT_EQ(r.amount(10), 3u);
  r.how = claim_rule::kind::half;
  EXPECT_EQ(r.amount(10), 3u);
  EXPECT_EQ(r.amount(4), 2u);
  r.how = claim_rule::kind::share;
  r.workers = 2;
  EXPECT_EQ(r.amount(10), 3u);
  r.room = 0;  // a thief whose deque is full still takes one
  for (auto how : {claim_rule::kind::one, claim_rule::kind::chunk, claim_rule::kind::half, claim_rule::kind::share}) {
    r.how = how;
    EXPECT_EQ(r.amount(10), 1u);
  }
}

TEST(ClaimRule, AmountIsBetweenOneAndAvailAndRoom) {
  for (auto how : {claim_rule::kind::one, claim_rule::kind::chunk, claim_rule::kind::half, claim_rule::kind::share})
    for (std::uint32_t param = 0; param <= 9; ++param)
      for (std::uint32_t room : {0u, 1u, 2u, 5u, 17u, ~0u})
        for (std::uint32_t avail = 1; avail <= 64; ++avail) {
          claim_rule r;
          r.how = how;
          r.chunk = param;
          r.workers = param == 0 ? 1 : param;
          r.room = room;
          const std::uint32_t k = r.amount(avail);
          ASSERT_GE(k, 1u);
          ASSERT_LE(k, avail);
          ASSERT_LE(k, std::max(room, 1u));
          std::uint32_t want = 1;
          switch (how) {
            case claim_rule::kind::chunk: want = param; break;
            case claim_rule::kind::half: want = (avail + 1) / 2; break;
            case claim_rule::kind::share: want = avail >= 2 * r.workers ? avail / r.workers : 1; break;
            default: break;
          }
          want = std::max(1u, std::min({want, avail, room}));
          ASSERT_EQ(k, want) << "kind " << static_cast<int>(how) << " param " << param << " room " << room
                             << " avail " << avail;
        }
}

}  // namespace
