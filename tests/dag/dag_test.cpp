// The task DAG (src/trace_dag.cpp, tools/dag/): Plait programs with known work and span are traced
// at 1, 2 and 8 workers and analysed (a chain: span = work; a balanced spawn tree: parallelism =
// its leaves; a data-flow wavefront: span = the diagonal), a program that mixes every construct
// gives a DAG that passes the check with every task joined, and the simulator replays DAGs with
// known optimal schedules (one worker = work + spawn costs; independent tasks scale until they
// run out; a chain never speeds up; the same seed gives the same result).
#include "dag.hpp"
#include "sim.hpp"

#include <plait/plait.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace plait::dag;

std::string temp_path() {
  static std::atomic<int> n{0};
  return ::testing::TempDir() + "plait_dag_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".json";
}

// Work that takes `us` microseconds of wall time (a leaf of known cost).
void busy(double us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

template <class F>
graph traced(unsigned workers, F&& body) {
  const std::string path = temp_path();
  {
    plait::pool_options o{.num_workers = workers};
    o.trace_path = path;
    plait::pool p(o);
    p.run(body);
  }
  graph g = load(path);
  std::remove(path.c_str());
  check(g);
  return g;
}

// Work and span are wall-clock measures: with more workers than cores a worker is preempted
// inside a strand and the strand looks longer. The timed cases run at 1 and 2 workers (this
// machine's cores); the structural ones also oversubscribed.
class Known : public ::testing::TestWithParam<unsigned> {};
class Structure : public ::testing::TestWithParam<unsigned> {};

TEST_P(Known, ChainSpanEqualsWork) {
  graph g = traced(GetParam(), [] {
    for (int i = 0; i < 30; ++i) {
      auto h = plait::spawn([] { busy(20); });
      h.join();
    }
  });
  EXPECT_EQ(g.unjoined, 0u);
  const work_span ws = analyse(g, 0);
  EXPECT_GT(ws.work, 30 * 20e3);
  // Every task lies on the one path: the span is the work, but for the parent's own work
  // between a spawn and its join (the runtime's bookkeeping), which may overlap the child. So
  // every child's work is on it, and at most the work.
  double children = 0;
  for (const task& t : g.tasks) children += t.parent >= 0 ? t.work : 0;
  EXPECT_GT(children, 30 * 20e3);
  EXPECT_LE(ws.span, ws.work + 1);
  EXPECT_GE(ws.span, children - 1);
}

void tree(int depth) {
  if (depth == 0) {
    busy(100);
    return;
  }
  auto h = plait::spawn([depth] { tree(depth - 1); });
  tree(depth - 1);
  h.join();
}

TEST_P(Known, BalancedTreeParallelismIsItsLeaves) {
  graph g = traced(GetParam(), [] { tree(6); });  // 64 leaves of 100 us
  EXPECT_EQ(g.tasks.size(), 64u);                 // the root and one spawn per inner call
  EXPECT_EQ(g.unjoined, 0u);
  const work_span ws = analyse(g, 0);
  EXPECT_GT(ws.work, 64 * 100e3);
  // Every task runs exactly one leaf (its inline descent ends in one) and spawns on the way
  // down, so a path holds one task's whole work plus the spawning pieces of its ancestors. From
  // the measured works (a preempted leaf lengthens its task, and the span with it):
  //   max task work <= span <= max task work + all the runtime's bookkeeping,
  // where the bookkeeping is at most the work beyond 64 x the shortest task.
  double mx = 0, mn = 1e300;
  for (const task& t : g.tasks) mx = std::max(mx, t.work), mn = std::min(mn, t.work);
  EXPECT_GE(mn, 100e3);
  EXPECT_GE(ws.span, mx - 1);
  EXPECT_LE(ws.span, mx + (ws.work - 64 * mn) + 1);
  EXPECT_LE(ws.parallelism(), 64.0);  // work / span <= 64 x max / max
  // The ideal: parallelism near 64 unless a leaf was preempted for long.
  EXPECT_GT(ws.parallelism(), 64 * mn / (mx + (ws.work - 64 * mn)) - 1e-9);
  // Burdened: at most 6 spawns lie on a path (a leaf of the root's own recursion has none).
  const work_span wb = analyse(g, 1e6);
  EXPECT_LE(wb.burdened_span, wb.span + 6e6 + 1);
  EXPECT_GE(wb.burdened_span, 6e6);
}

TEST_P(Known, WavefrontSpanIsTheDiagonal) {
  constexpr int n = 8;
  static int cell[n][n];
  graph g = traced(GetParam(), [] {
    plait::dataflow_group df;
    for (auto& row : cell) std::fill(std::begin(row), std::end(row), 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        std::vector<plait::access> deps{plait::out(cell[i][j])};
        if (i > 0) deps.push_back(plait::in(cell[i - 1][j]));
        if (j > 0) deps.push_back(plait::in(cell[i][j - 1]));
        df.run(deps, [i, j] {
          busy(60);
          cell[i][j] = (i > 0 ? cell[i - 1][j] : 0) + (j > 0 ? cell[i][j - 1] : 0) + 1;
        });
      }
    df.wait();
  });
  EXPECT_EQ(g.unjoined, 0u);
  EXPECT_EQ(cell[n - 1][n - 1], 12869);  // C(16, 8) - 1: the cells ran in dependence order
  // The cells are the tasks whose work includes the 60 us (the root's is bookkeeping only).
  std::vector<double> w;
  double root = 0;
  for (const task& t : g.tasks) {
    if (t.parent < 0)
      root += t.work;
    else
      w.push_back(t.work);
  }
  ASSERT_EQ(w.size(), static_cast<std::size_t>(n * n));
  std::size_t with_preds = 0;
  for (const task& t : g.tasks) with_preds += !t.preds.empty();
  // Every cell but the first depends on one or two others; edges to cells that had finished when
  // a cell was submitted are not recorded (docs/tracing.md): with one worker none had (the root
  // submits all before any runs), so all 2n(n-1) edges are there.
  if (GetParam() == 1) {
    EXPECT_EQ(with_preds, static_cast<std::size_t>(n * n - 1));
  }
  const work_span ws = analyse(g, 0);
  // The diagonal bound from the measured cells: a path of 2n - 1 cells is at most (2n - 1) x the
  // longest cell, and the root's submit strand is a path of its own.
  const double longest = *std::max_element(w.begin(), w.end());
  const double shortest = *std::min_element(w.begin(), w.end());
  EXPECT_GE(shortest, 60e3);
  EXPECT_LE(ws.span, (2 * n - 1) * longest + root + 1);
  if (GetParam() == 1) {
    EXPECT_GE(ws.span, (2 * n - 1) * shortest);  // every edge recorded: the diagonal is a path
  }
  EXPECT_GE(ws.span, longest);
}

TEST_P(Structure, EveryConstructJoins) {
  graph g = traced(GetParam(), [] {
    plait::task_group tg;
    std::atomic<long> sum{0};
    for (int k = 0; k < 8; ++k)
      tg.run([&, k] {
        auto h = plait::spawn([&] { plait::parallel_for(0, 200, [&](std::int64_t i) { sum += i; }); });
        if (k % 2 == 0) tg.run([&] { sum += 1; });  // a child adding to the group
        h.join();
        plait::dataflow_group df;
        int x = 0;
        df.run({plait::out(x)}, [&] { x = 1; });
        df.run({plait::inout(x)}, [&] { x += 1; });
        df.wait();
        sum += x;
      });
    tg.wait();
    EXPECT_EQ(sum.load(), 8 * (199 * 200 / 2 + 2) + 4);
  });
  EXPECT_EQ(g.unjoined, 0u);
  EXPECT_GT(g.tasks.size(), 8u * 3);
  const work_span ws = analyse(g, 0);
  EXPECT_GT(ws.work, 0);
  EXPECT_LE(ws.span, ws.work + 1);
}

// A spawned task that runs a loop of each partitioner and is then joined. The loop's first record
// runs inline in the spawned task and counts the loop's latch down there: that is no task of its
// own, and the spawned task must not become the joiner of itself (it is joined by its parent).
TEST_P(Structure, SpawnedLoopsJoinWithEveryPartitioner) {
  for (const char* spec : {"static", "dynamic:4", "guided:2", "grainsize:10", "num_tasks:8", "recursive:10", "adaptive"}) {
    const plait::partitioner part = plait::parse_partitioner(spec);
    std::atomic<long> sum{0};
    graph g = traced(GetParam(), [&] {
      auto h = plait::spawn([&] { plait::parallel_for(0, 200, [&](std::int64_t i) { sum += i; }, part); });
      plait::parallel_for(0, 100, [&](std::int64_t i) { sum += i; }, part);
      h.join();
      plait::task_group tg;
      tg.run([&] {
        auto h2 = plait::spawn([&] { plait::parallel_for(0, 50, [&](std::int64_t i) { sum += i; }, part); });
        h2.join();
      });
      tg.wait();
    });
    EXPECT_EQ(sum.load(), 199 * 200 / 2 + 99 * 100 / 2 + 49 * 50 / 2) << spec;
    EXPECT_EQ(g.unjoined, 0u) << spec;
    for (const task& t : g.tasks)
      if (t.joiner >= 0) {
        EXPECT_NE(&g.tasks[static_cast<std::size_t>(t.joiner)], &t) << spec << ": a task joins itself";
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, Known, ::testing::Values(1u, 2u));
INSTANTIATE_TEST_SUITE_P(Workers, Structure, ::testing::Values(1u, 2u, 8u, 16u));

// ---- the simulator on hand-made DAGs ----

// A root that spawns n children of `leaf` ns each, then joins them all at one wait.
graph fan(std::size_t n, double leaf, double root_work = 0) {
  graph g;
  g.workers = 1;
  g.tasks.resize(n + 1);
  task& r = g.tasks[0];
  r.id = 1;
  r.work = root_work;
  point wait{root_work, n + 1, -1, {}};
  for (std::size_t i = 1; i <= n; ++i) {
    g.tasks[i].id = i + 1;
    g.tasks[i].work = leaf;
    g.tasks[i].parent = 0;
    g.tasks[i].joiner = 0;
    r.points.push_back({0, i, static_cast<std::int64_t>(i), {}});
    wait.joins.push_back(static_cast<std::uint32_t>(i));
  }
  r.points.push_back(wait);
  g.roots = {0};
  return g;
}

// A chain: each task spawns the next and joins it at once.
graph chain(std::size_t n, double work) {
  graph g;
  g.workers = 1;
  g.tasks.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    g.tasks[i].id = i + 1;
    g.tasks[i].work = work;
    if (i > 0) {
      g.tasks[i].parent = static_cast<std::int64_t>(i - 1);
      g.tasks[i].joiner = static_cast<std::int64_t>(i - 1);
    }
    if (i + 1 < n) {
      g.tasks[i].points.push_back({work / 2, 2 * i, static_cast<std::int64_t>(i + 1), {}});
      g.tasks[i].points.push_back({work / 2, 2 * i + 1, -1, {static_cast<std::uint32_t>(i + 1)}});
    }
  }
  g.roots = {0};
  return g;
}

sim_options opts(unsigned p) {
  sim_options o;
  o.workers = p;
  o.c.spawn_ns = 10;
  o.c.steal_ns = 300;
  o.c.steal_fail_ns = 50;
  o.c.wake_ns = 5000;
  return o;
}

TEST(Sim, OneWorkerIsWorkPlusSpawns) {
  const graph g = fan(100, 1000, 500);
  const sim_result r = simulate(g, opts(1));
  EXPECT_DOUBLE_EQ(r.time_ns, 100 * 1000 + 500 + 100 * 10);
  EXPECT_EQ(r.steals, 0u);
  EXPECT_EQ(r.moved, 0u);
  EXPECT_DOUBLE_EQ(analyse(g, 0).work, r.work_ns);
}

TEST(Sim, IndependentTasksScaleUntilTheyRunOut) {
  const graph g = fan(64, 100000);
  double prev = 0;
  for (unsigned p : {1u, 2u, 4u, 8u, 16u, 32u, 64u}) {
    const sim_result r = simulate(g, opts(p));
    const double ideal = 64.0 / p * 100000;
    EXPECT_GE(r.time_ns, ideal) << p;
    EXPECT_LT(r.time_ns, ideal * 1.1 + 64 * 400) << p;  // + spawns and steals
    if (prev > 0) {
      EXPECT_LT(r.time_ns, prev) << p;
    }
    prev = r.time_ns;
  }
  // Past 64 workers there is nothing left to run in parallel.
  EXPECT_GE(simulate(g, opts(128)).time_ns, simulate(g, opts(64)).time_ns * 0.999);
}

TEST(Sim, AChainNeverSpeedsUp) {
  const graph g = chain(200, 2000);
  const double t1 = simulate(g, opts(1)).time_ns;
  for (unsigned p : {2u, 8u, 64u}) {
    EXPECT_GE(simulate(g, opts(p)).time_ns, t1 * 0.999) << p;
  }
  EXPECT_NEAR(analyse(g, 0).span, analyse(g, 0).work, 1e-6);
}

TEST(Sim, SharedCoresSlowTheWorkersDown) {
  const graph g = fan(64, 100000);
  sim_options o = opts(8);
  o.cores = 2;
  const sim_result shared = simulate(g, o);
  EXPECT_GT(shared.time_ns, simulate(g, opts(2)).time_ns * 0.95);
  EXPECT_GT(shared.time_ns, simulate(g, opts(8)).time_ns * 3);
}

TEST(Sim, FarStealsCostMoreOnATwoPackageMachine) {
  // Two packages of 16 cores: with a cross-package steal 20x a near one, the same DAG takes longer
  // than on a flat machine with near steals only, and less than with far steals everywhere.
  const graph g = fan(512, 20000);
  sim_options flat = opts(32);
  flat.c.steal_ns = 300;
  sim_options two = flat;
  ASSERT_TRUE(parse_levels("package:2 core:16", &two.levels));
  two.steal_ns_levels = {300, 6000};
  sim_options far = flat;
  far.c.steal_ns = 6000;
  const double t_flat = simulate(g, flat).time_ns, t_two = simulate(g, two).time_ns, t_far = simulate(g, far).time_ns;
  EXPECT_GT(t_two, t_flat);
  EXPECT_LT(t_two, t_far);
  std::vector<unsigned> lv;
  EXPECT_FALSE(parse_levels("package:0", &lv));
  EXPECT_FALSE(parse_levels("core", &lv));
  EXPECT_FALSE(parse_levels("", &lv));
  EXPECT_TRUE(parse_levels("package:2 numa:2 core:8", &lv));
  EXPECT_EQ(lv, (std::vector<unsigned>{2, 2, 8}));
}

TEST(Sim, SameSeedSameResult) {
  graph g = traced(2, [] { tree(5); });
  sim_options o = opts(16);
  o.seed = 7;
  const sim_result a = simulate(g, o), b = simulate(g, o);
  EXPECT_EQ(a.time_ns, b.time_ns);
  EXPECT_EQ(a.steals, b.steals);
  EXPECT_EQ(a.moved, b.moved);
}

TEST(Sim, PoliciesAndBadOptions) {
  policy p;
  unsigned k = 0;
  EXPECT_TRUE(parse_policy("chunk:8", &p, &k));
  EXPECT_EQ(p, policy::chunk);
  EXPECT_EQ(k, 8u);
  EXPECT_FALSE(parse_policy("chunk:0", &p, &k));
  EXPECT_FALSE(parse_policy("chunk:", &p, &k));
  EXPECT_FALSE(parse_policy("random", &p, &k));
  const graph g = fan(16, 1000);
  for (policy q : {policy::one, policy::chunk, policy::half, policy::adaptive}) {
    sim_options o = opts(4);
    o.steal = q;
    EXPECT_LT(simulate(g, o).time_ns, simulate(g, opts(1)).time_ns) << static_cast<int>(q);
  }
  EXPECT_THROW(simulate(g, opts(0)), error);
}

TEST(Load, BadTraces) {
  const std::string path = temp_path();
  auto write = [&](const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  auto message = [&]() -> std::string {
    try {
      load(path);
    } catch (const error& e) {
      return e.what();
    }
    return "";
  };
  write("");
  EXPECT_NE(message().find("empty"), std::string::npos);
  write("{\"otherData\":{\"format\":\"plait-trace-2\",\"dag\":true},\"traceEvents\":[{\"ph\":\"X\"");
  EXPECT_NE(message().find("truncated"), std::string::npos);
  write("{\"otherData\":{\"format\":\"plait-trace-1\",\"runtime\":\"libomp\"},\"traceEvents\":[]}");
  EXPECT_NE(message().find("without DAG edges"), std::string::npos);
  write("[1,2]");
  EXPECT_NE(message().find("not a JSON trace"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE([&] {
    try {
      load(path);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string();
  }().find("No such file"), std::string::npos);
}

}  // namespace
