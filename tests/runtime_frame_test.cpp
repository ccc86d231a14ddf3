// Frame tasks (plait/frame.hpp) at 1, 2, 8 and 16 workers: fib values and the exact spawn count;
// syncs of stolen tasks (results, exceptions, the slot kept while the spawner leapfrogs); exceptions
// thrown by tasks and between a spawn and its sync; a full deque; tracing; frame code mixed with
// task groups, plait::spawn and loops in both directions (f.outside from frame code, frame::call
// from theirs), including task_group children left on the deque by code a frame function called;
// random programs that mix all of these, checked against a serial evaluation; and the misuses
// that stop the program with a message.
#include <plait/frame.hpp>

#include "test_util.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

using plait_test::mix;

class Frame : public plait_test::Workers {};

// Work that the compiler cannot remove: about a nanosecond per iteration.
void spin(unsigned iterations) {
  volatile std::uint64_t x = 0;
  for (unsigned i = 0; i < iterations; ++i) x = x + i;
}

long fib_serial(long n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }
std::uint64_t spawns_of(long n) { return n < 2 ? 0 : 1 + spawns_of(n - 1) + spawns_of(n - 2); }

long long fib(plait::frame f, long long n) noexcept {
  if (n < 2) return n;
  auto t = f.spawn<fib>(n - 1);
  long long b = fib(f, n - 2);
  return f.sync(t) + b;
}

// Three arguments, a struct result, a void task.
struct Pair {
  long long lo, hi;
};
Pair range_sum(plait::frame f, long long lo, long long hi, int grain) {
  if (hi - lo <= grain) {
    long long s = 0;
    for (long long i = lo; i < hi; ++i) s += i;
    return {s, hi - lo};
  }
  const long long mid = lo + (hi - lo) / 2;
  auto t = f.spawn<range_sum>(lo, mid, grain);
  Pair b = range_sum(f, mid, hi, grain);
  Pair a = f.sync(t);
  return {a.lo + b.lo, a.hi + b.hi};
}

std::atomic<long> void_hits{0};
void count_down(plait::frame f, int n) {
  void_hits.fetch_add(1, std::memory_order_relaxed);
  if (n <= 0) return;
  auto t = f.spawn<count_down>(n - 1);
  count_down(f, n - 2);
  f.sync(t);
}

TEST_P(Frame, FibValues) {
  for (long long n = 0; n <= 27; ++n)
    EXPECT_EQ(pool().run([n] { return plait::frame::call<fib>(n); }), fib_serial(n)) << "n=" << n;
}

TEST_P(Frame, LambdaFrameAndSeveralHandles) {
  long long r = pool().run([] {
    return plait::frame::run([](plait::frame f) {
      auto a = f.spawn<fib>(20);
      auto b = f.spawn<fib>(21);
      auto c = f.spawn<fib>(5);
      long long sc = f.sync(c);
      long long sb = f.sync(b);
      return f.sync(a) + sb + sc;
    });
  });
  EXPECT_EQ(r, fib_serial(20) + fib_serial(21) + fib_serial(5));
}

TEST_P(Frame, ArgumentsResultsAndVoid) {
  Pair p = pool().run([] { return plait::frame::call<range_sum>(0LL, 100000LL, 7); });
  EXPECT_EQ(p.lo, 100000LL * 99999 / 2);
  EXPECT_EQ(p.hi, 100000);
  void_hits = 0;
  pool().run([] { plait::frame::call<count_down>(20); });
  // calls of count_down(n): c(n) = 1 + c(n-1) + c(n-2), c(n <= 0) = 1
  long want = 0;
  {
    long a = 1, b = 1;  // c(-1), c(0)
    for (int n = 1; n <= 20; ++n) {
      long c = 1 + b + a;
      a = b;
      b = c;
    }
    want = b;
  }
  EXPECT_EQ(void_hits.load(), want);
}

// Arguments of exactly 24 bytes in every shape (the payload's size; frame.hpp's rule), and a
// 24-byte result. Each shape's task recurses, spawning one child and running the other; the
// parallel run (thieves read the arguments from the slot and write the result into it) must give
// what the serial one gives (the same recursion without spawns).
struct Big {
  std::uint64_t a, b, c;
};
Big leaf(std::uint64_t x, std::uint64_t y) { return {x * 0x9E3779B97F4A7C15ULL ^ y, y + 1, 1}; }
Big combine(const Big& l, const Big& r) { return {l.a * 31 + r.a, l.b ^ (r.b << 1), l.c + r.c}; }

#define PLAIT_WITH_F_(...) (f, __VA_ARGS__)
#define PLAIT_SHAPE_(name, params, depth, next_a, next_b, leaf_x, leaf_y)                 \
  template <bool Par>                                                                 \
  Big name params noexcept {                                                          \
    if ((depth) <= 0) return leaf(static_cast<std::uint64_t>(leaf_x), static_cast<std::uint64_t>(leaf_y)); \
    if constexpr (Par) {                                                              \
      auto t = f.spawn<name<true>> next_a;                                            \
      Big r = name<true> next_b;                                                      \
      return combine(f.sync(t), r);                                                   \
    } else {                                                                          \
      Big l = name<false> PLAIT_WITH_F_ next_a;                                       \
      return combine(l, name<false> next_b);                                          \
    }                                                                                 \
  }
PLAIT_SHAPE_(s_longs, (plait::frame f, long d, long x, long y), d, (d - 1, x + 1, y * 3), (f, d - 1, x + 2, y), x, y)
PLAIT_SHAPE_(s_ints, (plait::frame f, int d, int a, int b, int c, int e, int g), d, (d - 1, a + 1, b, c * 2, e, g - 1),
             (f, d - 1, a, b + 3, c, e ^ 5, g), a + b + c, e * 7 + g)
PLAIT_SHAPE_(s_char_longs, (plait::frame f, char d, long x, long y), d, (static_cast<char>(d - 1), x + 5, y),
             (f, static_cast<char>(d - 1), x, y - 9), x, y)
PLAIT_SHAPE_(s_mixed, (plait::frame f, short d, short a, int b, long x, long y), d,
             (static_cast<short>(d - 1), static_cast<short>(a + 1), b * 3, x, y + 1),
             (f, static_cast<short>(d - 1), a, b, x - 4, y), a + b + x, y)
PLAIT_SHAPE_(s_floats, (plait::frame f, double x, float y, int d, short a, short b, int c), d,
             (x * 1.5, y + 1.0f, d - 1, a, static_cast<short>(b + 2), c), (f, x + 1.0, y, d - 1, static_cast<short>(a + 1), b, c + 3),
             static_cast<long>(x * 8) + a, static_cast<long>(y * 4) + b + c)
using bytes24 = std::array<unsigned char, 24>;
bytes24 bump(bytes24 v, int k) {
  --v[0];
  for (std::size_t i = 1; i < v.size(); ++i) v[i] = static_cast<unsigned char>(v[i] + k * static_cast<int>(i));
  return v;
}
std::uint64_t sum_bytes(const bytes24& v) {
  std::uint64_t s = 0;
  for (unsigned char c : v) s = s * 131 + c;
  return s;
}
PLAIT_SHAPE_(s_bytes, (plait::frame f, bytes24 v), v[0], (bump(v, 1)), (f, bump(v, 2)), sum_bytes(v), v[23])
#undef PLAIT_SHAPE_
#undef PLAIT_WITH_F_

static_assert(sizeof(plait::detail::frame_args<long, long, long>) == 24);
static_assert(sizeof(plait::detail::frame_args<int, int, int, int, int, int>) == 24);
static_assert(sizeof(plait::detail::frame_args<char, long, long>) == 24);
static_assert(sizeof(plait::detail::frame_args<short, short, int, long, long>) == 24);
static_assert(sizeof(plait::detail::frame_args<double, float, int, short, short, int>) == 24);
static_assert(sizeof(plait::detail::frame_args<bytes24>) == 24);
static_assert(sizeof(plait::detail::frame_args<long>) == 8 && sizeof(plait::detail::frame_args<char>) == 1);
// One byte more does not fit (the static_assert in frame_task refuses it at compile time).
static_assert(sizeof(plait::detail::frame_args<long, long, long, char>) > plait::detail::payload_size);

template <auto Par, auto Ser, class... A>
void same_in_parallel(plait::pool& p, const char* shape, A... a) {
  const Big want = p.run([=] { return plait::frame::call<Ser>(a...); });
  for (int rep = 0; rep < 3; ++rep) {
    const Big got = p.run([=] { return plait::frame::call<Par>(a...); });
    EXPECT_EQ(got.a, want.a) << shape;
    EXPECT_EQ(got.b, want.b) << shape;
    EXPECT_EQ(got.c, want.c) << shape;
  }
}

TEST_P(Frame, TwentyFourByteArgumentsInEveryShape) {
  same_in_parallel<s_longs<true>, s_longs<false>>(pool(), "3 x long", 12L, 1L, 2L);
  same_in_parallel<s_ints<true>, s_ints<false>>(pool(), "6 x int", 12, 1, 2, 3, 4, 5);
  same_in_parallel<s_char_longs<true>, s_char_longs<false>>(pool(), "char, 2 x long", static_cast<char>(12), 7L, 9L);
  same_in_parallel<s_mixed<true>, s_mixed<false>>(pool(), "2 x short, int, 2 x long", static_cast<short>(12),
                                                  static_cast<short>(1), 2, 3L, 4L);
  same_in_parallel<s_floats<true>, s_floats<false>>(pool(), "double, float, int, 2 x short, int", 0.5, 0.25f, 12,
                                                    static_cast<short>(1), static_cast<short>(2), 3);
  bytes24 v{};
  v[0] = 12;
  for (std::size_t i = 1; i < v.size(); ++i) v[i] = static_cast<unsigned char>(i * 11);
  same_in_parallel<s_bytes<true>, s_bytes<false>>(pool(), "24 bytes", v);
  const Big leaves = pool().run([] { return plait::frame::call<s_longs<true>>(12L, 1L, 2L); });
  EXPECT_EQ(leaves.c, 4096u);  // every leaf once
}

TEST_P(Frame, CallFromAThreadThatIsNoWorkerUsesTheDefaultPool) {
  EXPECT_EQ(plait::frame::call<fib>(15LL), fib_serial(15));
}

TEST_P(Frame, CountersCountEveryFrameSpawn) {
  pool().reset_counters();
  EXPECT_EQ(pool().run([] { return plait::frame::call<fib>(22LL); }), fib_serial(22));
  plait::worker_counters c = pool().total_counters();
#if PLAIT_COUNTERS
  EXPECT_EQ(c.spawns, spawns_of(22));
  EXPECT_LE(c.steals, c.spawns);
  EXPECT_LE(c.joins_stolen, c.steals);
  if (GetParam() == 1) {
    EXPECT_EQ(c.steals, 0u);
  }
#else
  EXPECT_EQ(c.spawns, 0u);
#endif
}

// ---- Stolen syncs ------------------------------------------------------------------------------

struct FrameError : std::runtime_error {
  explicit FrameError(long long v) : std::runtime_error("frame task threw on purpose"), value(v) {}
  long long value;
};

std::atomic<int> started_on{-1};

// Marks where it runs, gives a thief time to arrive and the spawner time to move on, then
// spawns work of its own (so that the spawner, waiting for it, has something to take back).
long long stealable(plait::frame f, long long n, bool fail) {
  started_on.store(static_cast<int>(f.worker_index()), std::memory_order_release);
  spin(20000);
  auto t = f.spawn<fib>(n);
  long long b = fib(f, n - 1);
  long long r = f.sync(t) + b;
  if (fail) throw FrameError(r);
  return r;
}

// Spawns `stealable` and waits a while for a thief to start it; then keeps spawning frame tasks
// of its own before the sync, which then waits for the thief (with our slot reserved while we run
// what we take back from it). Returns whether the task ran elsewhere.
bool steal_round(plait::frame f, long long n, bool fail, long long& got, bool& threw) {
  started_on.store(-1, std::memory_order_relaxed);
  const int me = static_cast<int>(f.worker_index());
  auto t = f.spawn<stealable>(n, fail);
  // Up to ~50 ms, yielding now and then: on a loaded machine the thief may not be running.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  for (int i = 0; started_on.load(std::memory_order_acquire) < 0 && std::chrono::steady_clock::now() < until; ++i) {
    spin(500);
    if (i % 16 == 15) std::this_thread::yield();
  }
  auto u = f.spawn<fib>(16LL);
  long long x = fib(f, 15);
  x += f.sync(u);
  EXPECT_EQ(x, fib_serial(15) + fib_serial(16));
  threw = false;
  try {
    got = f.sync(t);
  } catch (const FrameError& e) {
    threw = true;
    got = e.value;
  }
  const int ran = started_on.load(std::memory_order_acquire);
  return ran >= 0 && ran != me;
}

TEST_P(Frame, StolenTasksSyncWithTheirResultOrException) {
  const long long n = 18;
  const long long want = fib_serial(n) + fib_serial(n - 1);
  int stolen = 0, stolen_throw = 0;
  for (int rep = 0; rep < 400 && (stolen < 5 || stolen_throw < 5); ++rep) {
    const bool fail = rep % 2 == 1;
    long long got = 0;
    bool threw = false;
    bool was_stolen = pool().run([&] {
      return plait::frame::run([&](plait::frame f) { return steal_round(f, n, fail, got, threw); });
    });
    ASSERT_EQ(got, want) << "repetition " << rep;
    ASSERT_EQ(threw, fail) << "repetition " << rep;
    if (was_stolen) ++(fail ? stolen_throw : stolen);
    if (GetParam() == 1) {
      ASSERT_FALSE(was_stolen);
    }
    if (GetParam() == 1 && rep >= 3) break;
  }
  if (GetParam() > 1) {
    EXPECT_GE(stolen, 1) << "no repetition had its task stolen";
    EXPECT_GE(stolen_throw, 1) << "no throwing repetition had its task stolen";
  }
  // The pool is fine afterwards.
  EXPECT_EQ(pool().run([] { return plait::frame::call<fib>(20LL); }), fib_serial(20));
}

// ---- Exceptions ----------------------------------------------------------------------------------

long long fib_throw(plait::frame f, long long n, long long at) {
  if (n == at) throw FrameError(n);
  if (n < 2) return n;
  auto t = f.spawn<fib_throw>(n - 1, at);
  long long b = fib_throw(f, n - 2, at);
  return f.sync(t) + b;
}

std::atomic<long> ran{0};
long long counted(plait::frame, long long x) noexcept {
  spin(200);
  ran.fetch_add(1, std::memory_order_relaxed);
  return x;
}

// Spawns k tasks, then throws before syncing any: every handle's destructor syncs its task (each
// runs exactly once, here or on a thief) and the exception goes on.
long long spawn_then_throw(plait::frame f, int k) {
  auto a = f.spawn<counted>(1LL);
  auto b = f.spawn<counted>(2LL);
  auto c = f.spawn<counted>(3LL);
  if (k > 0) throw FrameError(k);
  return f.sync(c) + f.sync(b) + f.sync(a);
}

TEST_P(Frame, ExceptionsReachTheCallerAndAbandonedTasksRunOnce) {
  for (long long at : {0LL, 1LL, 5LL, 12LL}) {
    try {
      (void)pool().run([at] { return plait::frame::call<fib_throw>(20LL, at); });
      ADD_FAILURE() << "no exception for at=" << at;
    } catch (const FrameError& e) {
      EXPECT_EQ(e.value, at);
    }
  }
  EXPECT_EQ(pool().run([] { return plait::frame::call<fib_throw>(20LL, -1LL); }), fib_serial(20));
  for (int rep = 0; rep < 50; ++rep) {
    ran = 0;
    EXPECT_THROW((void)pool().run([] { return plait::frame::call<spawn_then_throw>(1); }), FrameError);
    EXPECT_EQ(ran.load(), 3) << "repetition " << rep;
  }
  ran = 0;
  EXPECT_EQ(pool().run([] { return plait::frame::call<spawn_then_throw>(0); }), 6);
  EXPECT_EQ(ran.load(), 3);
}

// ---- Full deque, tracing -------------------------------------------------------------------------

long long chain(plait::frame f, long long n) noexcept {
  if (n == 0) return 0;
  auto t = f.spawn<chain>(n - 1);
  return f.sync(t) + 1;
}

TEST(FrameDeque, FullDequeRunsSpawnsAtTheirSync) {
  // 16 slots: the chain and fib overflow the deque and carry on with the task run at its sync.
  for (unsigned w : {1u, 2u}) {
    plait::pool p({.num_workers = w, .deque_capacity = 16});
    EXPECT_EQ(p.run([] { return plait::frame::call<chain>(5000LL); }), 5000);
    EXPECT_EQ(p.run([] { return plait::frame::call<fib>(24LL); }), fib_serial(24));
    EXPECT_EQ(p.run([] { return plait::frame::call<fib_throw>(20LL, -1LL); }), fib_serial(20));
    EXPECT_THROW((void)p.run([] { return plait::frame::call<fib_throw>(20LL, 3LL); }), FrameError);
  }
}

TEST(FrameTrace, TracedPoolsRunFrameTasks) {
  char path[] = "/tmp/plait-frame-trace-XXXXXX.csv";
  int fd = mkstemps(path, 4);
  ASSERT_GE(fd, 0);
  close(fd);
  for (unsigned w : {1u, 2u, 8u}) {
    plait::pool_options o{.num_workers = w};
    o.trace_path = path;
    plait::pool p(o);
    ASSERT_TRUE(p.tracing());
    EXPECT_EQ(p.run([] { return plait::frame::call<fib>(18LL); }), fib_serial(18));
    EXPECT_EQ(p.run([] { return plait::frame::call<fib_throw>(16LL, -1LL); }), fib_serial(16));
  }
  std::remove(path);
}

// ---- Mixing with the rest of the runtime --------------------------------------------------------

// Frame code that uses task groups, plait::spawn and a loop through f.outside, between its own
// spawns and syncs; their tasks call frame code again.
long long mixed(plait::frame f, long long n) {
  if (n < 8) return fib(f, n);
  auto t = f.spawn<mixed>(n - 1);
  long long from_group = 0;
  f.outside([&] {
    plait::task_group g;
    std::atomic<long long> acc{0};
    for (int i = 0; i < 3; ++i)
      g.run([&acc, i] { acc.fetch_add(plait::frame::call<fib>(static_cast<long long>(10 + i))); });
    auto h = plait::spawn([] { return plait::frame::call<fib>(12LL); });
    plait::parallel_for(0, 8, [&acc](std::int64_t i) { acc.fetch_add(plait::frame::call<fib>(static_cast<long long>(i))); });
    acc.fetch_add(h.join());
    g.wait();
    from_group = acc.load();
  });
  long long b = mixed(f, n - 2);
  return f.sync(t) + b + from_group;
}
long long mixed_serial(long long n) {
  if (n < 8) return fib_serial(n);
  long long g = fib_serial(10) + fib_serial(11) + fib_serial(12) + fib_serial(12);
  for (long long i = 0; i < 8; ++i) g += fib_serial(i);
  return mixed_serial(n - 1) + mixed_serial(n - 2) + g;
}

TEST_P(Frame, OutsideRunsOtherConstructsInsideFrameCode) {
  EXPECT_EQ(pool().run([] { return plait::frame::call<mixed>(14LL); }), mixed_serial(14));
}

// A child added to a group of the enclosing (non-frame) task from inside frame code, above the
// frame's unsynced spawn: outside() runs it before returning, and the sync finds its own slot.
struct Outer {
  plait::task_group* g;
  std::atomic<int>* children;
};
long long adds_to_outer(plait::frame f, Outer o, long long n) {
  auto t = f.spawn<fib>(n);
  f.outside([&] {
    o.g->run([c = o.children] {
      spin(1000);
      c->fetch_add(1);
    });
  });
  auto u = f.spawn<fib>(n - 1);
  long long b = f.sync(u);
  return f.sync(t) + b;
}

TEST_P(Frame, ChildrenLeftOnTheDequeByOutsideRunOnce) {
  for (int rep = 0; rep < 200; ++rep) {
    std::atomic<int> children{0};
    long long r = pool().run([&] {
      plait::task_group g;
      long long v = plait::frame::call<adds_to_outer>(Outer{&g, &children}, 12LL);
      g.wait();
      return v;
    });
    ASSERT_EQ(r, fib_serial(12) + fib_serial(11)) << "repetition " << rep;
    ASSERT_EQ(children.load(), 1) << "repetition " << rep;
  }
}

// Frame code called from task_group children and from spawned closures, with closures and
// children still unjoined below it on the same deque.
TEST_P(Frame, FrameCodeInsideGroupsAndSpawns) {
  long long r = pool().run([] {
    plait::task_group g;
    std::atomic<long long> acc{0};
    for (int i = 0; i < 6; ++i) g.run([&acc, i] { acc.fetch_add(plait::frame::call<fib>(static_cast<long long>(12 + i))); });
    auto h = plait::spawn([] { return plait::frame::call<fib>(20LL); });
    long long mine = plait::frame::call<fib>(19LL);
    long long theirs = h.join();
    g.wait();
    return acc.load() + mine + theirs;
  });
  long long want = fib_serial(19) + fib_serial(20);
  for (int i = 0; i < 6; ++i) want += fib_serial(12 + i);
  EXPECT_EQ(r, want);
}

// ---- Random programs -----------------------------------------------------------------------------
// Node `id` at `depth`: its payload plus the values of its children, which run as frame spawns
// (in a chain, synced LIFO), through f.outside as task_group children or plait::spawn handles
// whose closures re-enter frame code, or as plain frame calls. Every node counts itself.

struct Prog {
  std::uint64_t seed;
  unsigned max_depth;
  std::atomic<std::uint64_t>* nodes;
  std::uint64_t h(std::uint64_t id, std::uint64_t q) const { return mix(seed ^ mix(id * 0x9E3779B97F4A7C15ULL + q)); }
  unsigned kind(std::uint64_t id, unsigned depth) const { return depth >= max_depth ? 0 : static_cast<unsigned>(h(id, 1) % 5); }
  unsigned fanout(std::uint64_t id) const { return 1 + static_cast<unsigned>(h(id, 2) % 4); }
  std::uint64_t payload(std::uint64_t id) const { return h(id, 3) >> 8; }
  static std::uint64_t child(std::uint64_t id, unsigned i) { return mix(id + 0x632BE59BD9B4E019ULL * (i + 1)); }
};

std::uint64_t node_serial(const Prog& p, std::uint64_t id, unsigned depth) {
  std::uint64_t v = p.payload(id);
  if (p.kind(id, depth) == 0) return v;
  for (unsigned i = 0; i < p.fanout(id); ++i) v += node_serial(p, Prog::child(id, i), depth + 1);
  return v;
}

std::uint64_t node(plait::frame f, const Prog* p, std::uint64_t id, unsigned depth);

// Children [i, k) of `id` as a chain of frame spawns, synced newest first.
std::uint64_t chain_children(plait::frame f, const Prog* p, std::uint64_t id, unsigned depth, unsigned i, unsigned k) {
  if (i == k) return 0;
  auto t = f.spawn<node>(p, Prog::child(id, i), depth + 1);
  std::uint64_t rest = chain_children(f, p, id, depth, i + 1, k);
  return f.sync(t) + rest;
}

std::uint64_t node(plait::frame f, const Prog* p, std::uint64_t id, unsigned depth) {
  p->nodes->fetch_add(1, std::memory_order_relaxed);
  std::uint64_t v = p->payload(id);
  const unsigned k = p->fanout(id);
  switch (p->kind(id, depth)) {
    case 0:
      return v;
    case 1:
    case 2:
      return v + chain_children(f, p, id, depth, 0, k);
    case 3: {  // a task group inside outside(), between a frame spawn and its sync
      auto t = f.spawn<node>(p, Prog::child(id, 0), depth + 1);
      std::atomic<std::uint64_t> acc{0};
      f.outside([&] {
        plait::task_group g;
        for (unsigned i = 1; i < k; ++i)
          g.run([&acc, p, id, depth, i] {
            acc.fetch_add(plait::frame::call<node>(p, Prog::child(id, i), depth + 1), std::memory_order_relaxed);
          });
        g.wait();
      });
      return v + acc.load() + f.sync(t);
    }
    default: {  // plait::spawn handles inside outside(), the frame's own spawn above them
      std::uint64_t sum = 0;
      f.outside([&] {
        auto h0 = plait::spawn([p, id, depth] { return plait::frame::call<node>(p, Prog::child(id, 0), depth + 1); });
        std::uint64_t rest = plait::frame::call<chain_children>(p, id, depth, 1u, k);
        sum = rest + h0.join();
      });
      return v + sum;
    }
  }
}

constexpr int programs = plait_test::sanitized ? 40 : 300;

TEST_P(Frame, RandomMixedProgramsRunEveryNodeOnce) {
  for (int s = 0; s < programs; ++s) {
    std::atomic<std::uint64_t> nodes{0};
    Prog p{mix(static_cast<std::uint64_t>(s) + 77), 3u + static_cast<unsigned>(s % 6), &nodes};
    const std::uint64_t want = node_serial(p, 1, 0);
    std::uint64_t want_nodes = 0;
    {
      // count nodes serially
      struct C {
        const Prog& p;
        std::uint64_t n = 0;
        void go(std::uint64_t id, unsigned d) {
          ++n;
          if (p.kind(id, d) == 0) return;
          for (unsigned i = 0; i < p.fanout(id); ++i) go(Prog::child(id, i), d + 1);
        }
      } c{p};
      c.go(1, 0);
      want_nodes = c.n;
    }
    std::uint64_t got = pool().run([&] { return plait::frame::call<node>(&p, std::uint64_t{1}, 0u); });
    ASSERT_EQ(got, want) << "program " << s;
    ASSERT_EQ(nodes.load(), want_nodes) << "program " << s << ": a node ran twice or never";
  }
}

INSTANTIATE_TEST_SUITE_P(Runtime, Frame, plait_test::worker_counts, plait_test::workers_name);

// ---- Misuse --------------------------------------------------------------------------------------

long long spawns_a_closure(plait::frame, long long) {
  auto h = plait::spawn([] { return 1; });
  return h.join();
}
long long runs_a_group(plait::frame, long long) {
  plait::task_group g;
  g.run([] {});
  g.wait();
  return 0;
}
long long reenters(plait::frame, long long n) { return plait::frame::call<fib>(n); }
long long syncs_out_of_order(plait::frame f, long long n) {
  auto a = f.spawn<fib>(n);
  auto b = f.spawn<fib>(n + 1);
  long long x = f.sync(a);  // wrong: b is newer
  return x + f.sync(b);
}

TEST(FrameDeathTest, OtherConstructsInsideFrameCodeWithoutOutsideAbort) {
  EXPECT_DEATH(
      {
        plait::pool p({.num_workers = 1});
        (void)p.run([] { return plait::frame::call<spawns_a_closure>(1LL); });
      },
      "inside a frame function.*f.outside");
  EXPECT_DEATH(
      {
        plait::pool p({.num_workers = 1});
        (void)p.run([] { return plait::frame::call<runs_a_group>(1LL); });
      },
      "inside a frame function.*f.outside");
  EXPECT_DEATH(
      {
        plait::pool p({.num_workers = 1});
        (void)p.run([] { return plait::frame::call<reenters>(5LL); });
      },
      "plait::frame::run .or frame::call");
}

TEST(FrameDeathTest, SyncOutOfOrderAborts) {
  EXPECT_DEATH(
      {
        plait::pool p({.num_workers = 1});
        (void)p.run([] { return plait::frame::call<syncs_out_of_order>(5LL); });
      },
      "frame sync out of order");
}

}  // namespace
