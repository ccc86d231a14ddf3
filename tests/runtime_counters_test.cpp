// The counter list (PLAIT_COUNTER_LIST in plait/counters.hpp) and what is generated from it: the
// names table, the public struct's arithmetic, the pool's snapshot and reset.
#include <plait/plait.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

#if PLAIT_COUNTERS
constexpr bool counting = true;
#else
constexpr bool counting = false;
#endif

// The names as the benchmarks' JSON records and the study tool (python/) know them, in field
// order. A counter added to the list is added here too; a rename or a removal fails this test.
const std::vector<std::string> expected_names = {
    "spawns",    "steals", "steal_attempts", "steal_failures", "leapfrogs", "joins_stolen", "injected",
    "sleeps",    "wakeups", "publishes",     "steal_chunks",   "idle_ns",   "inlined"};

TEST(Counters, TableNamesEveryFieldOnce) {
  static_assert(plait::num_counters == plait::counter_table.size());
  // Every field is a uint64_t from the list; nothing else lives in the struct.
  static_assert(sizeof(plait::worker_counters) == plait::num_counters * sizeof(std::uint64_t));

  std::vector<std::string> names;
  std::set<std::string> unique;
  std::vector<std::uint64_t plait::worker_counters::*> fields;
  plait::for_each_counter([&](const plait::counter_info& k) {
    names.emplace_back(k.name);
    unique.insert(k.name);
    for (auto f : fields) EXPECT_NE(f, k.field) << k.name << " shares its field with an earlier entry";
    fields.push_back(k.field);
    EXPECT_NE(k.description, nullptr);
    if (k.description) {
      EXPECT_GT(std::strlen(k.description), 0u) << k.name;
    }
  });
  EXPECT_EQ(names, expected_names);
  EXPECT_EQ(unique.size(), plait::num_counters);

  // Entry i is the struct's i-th field: write i+1 through the table, read the raw words back.
  plait::worker_counters c;
  std::uint64_t i = 0;
  plait::for_each_counter([&](const plait::counter_info& k) { c.*k.field = ++i; });
  std::uint64_t words[plait::num_counters];
  std::memcpy(words, &c, sizeof words);
  for (std::size_t j = 0; j < plait::num_counters; ++j) EXPECT_EQ(words[j], j + 1) << expected_names[j];

  // The name is the field's identifier (spot checks through the named fields).
  EXPECT_EQ(c.spawns, 1u);
  EXPECT_EQ(c.steal_chunks, 11u);
  EXPECT_EQ(c.idle_ns, 12u);
  EXPECT_EQ(c.inlined, 13u);
}

TEST(Counters, ArithmeticCoversEveryField) {
  plait::worker_counters a, b;
  std::uint64_t i = 0;
  plait::for_each_counter([&](const plait::counter_info& k) {
    ++i;
    a.*k.field = 100 * i;
    b.*k.field = i;
  });
  const plait::worker_counters sum = a + b, diff = a - b;
  plait::worker_counters acc = a;
  acc += b;
  EXPECT_EQ(acc, sum);
  acc -= b;
  EXPECT_EQ(acc, a);
  std::size_t seen = 0;
  plait::for_each_counter(sum, [&](const plait::counter_info& k, std::uint64_t v) {
    ++seen;
    EXPECT_EQ(v, k(a) + k(b)) << k.name;
    EXPECT_EQ(k(diff), k(a) - k(b)) << k.name;
  });
  EXPECT_EQ(seen, plait::num_counters);
  EXPECT_EQ(b - a + a, b);  // modulo 2^64
}

// The pools below have one worker that spins when idle: it never steals (there is no victim),
// never sleeps and so never wakes anyone, and counts nothing while idle, so once run() has
// returned the counters hold still and are exactly those of the run.
TEST(Counters, OneJoinedSpawnOnOneWorker) {
  plait::pool p({.num_workers = 1, .idle = plait::idle_policy::spin});
  p.reset_counters();
  const int r = p.run([] {
    auto h = plait::spawn([] { return 41; });
    return h.join() + 1;
  });
  EXPECT_EQ(r, 42);

  // Counters of the run; those not named may be anything (publishes: whether the first push made
  // its slot shared; idle_ns: the idle stretch before the root was taken).
  const std::map<std::string, std::uint64_t> expected = {
      {"spawns", 1},         {"injected", 1},  {"steals", 0},       {"steal_attempts", 0},
      {"steal_failures", 0}, {"steal_chunks", 0}, {"leapfrogs", 0}, {"joins_stolen", 0},
      {"sleeps", 0},         {"wakeups", 0},   {"inlined", 0}};
  const std::vector<plait::worker_counters> per = p.counters();
  ASSERT_EQ(per.size(), 1u);
  EXPECT_EQ(p.total_counters(), per[0]);
  std::size_t checked = 0;
  plait::for_each_counter(per[0], [&](const plait::counter_info& k, std::uint64_t v) {
    auto e = expected.find(k.name);
    if (e != expected.end()) ++checked;
    if (!counting) {
      EXPECT_EQ(v, 0u) << k.name << " with PLAIT_COUNTERS=OFF";
    } else if (e != expected.end()) {
      EXPECT_EQ(v, e->second) << k.name;
    }
  });
  EXPECT_EQ(checked, expected.size());  // every name above is a counter
}

TEST(Counters, ResetZeroesEveryField) {
  plait::pool p({.num_workers = 1, .idle = plait::idle_policy::spin, .group_throttle = 1});
  // Spawns, a root, and task_group children of which the throttle runs some at once.
  const long r = p.run([] {
    long s = 0;
    plait::task_group g;
    for (int i = 0; i < 8; ++i) g.run([] {});
    g.wait();
    auto h = plait::spawn([] { return 1L; });
    s += h.join();
    return s;
  });
  EXPECT_EQ(r, 1);
  const plait::worker_counters before = p.total_counters();
  if (counting) {
    EXPECT_GT(before.spawns, 0u);
    EXPECT_EQ(before.injected, 1u);
    EXPECT_GT(before.inlined, 0u);
  }

  p.reset_counters();
  plait::for_each_counter(p.total_counters(), [](const plait::counter_info& k, std::uint64_t v) {
    EXPECT_EQ(v, 0u) << k.name << " after reset_counters()";
  });
  EXPECT_EQ(p.total_counters(), plait::worker_counters{});

  // Counting starts again from zero.
  p.run([] {});
  if (counting) {
    EXPECT_EQ(p.total_counters().injected, 1u);
  }
}

}  // namespace
