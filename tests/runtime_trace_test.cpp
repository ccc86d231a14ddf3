// Tracing: a traced pool runs random task trees (spawn and task_group) at 1, 2 and 8 workers and
// every steal policy; the CSV it writes is checked: every begin has its end on the same worker
// (properly nested), timestamps never go back per worker, every task id begins exactly once, and
// the task count equals the spawns plus the roots. The JSON is checked for its shape (the Python
// tests parse it fully), an unwritable path is reported and the program runs on, and tracing off
// leaves no file.
#include "test_util.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

using plait_test::RandomTree;
using plait_test::TreeResult;

TreeResult mixed_children(const RandomTree& t, std::uint64_t id, unsigned depth, unsigned i, unsigned k);
TreeResult mixed_tree(const RandomTree& t, std::uint64_t id, unsigned depth) {
  TreeResult r{1, t.payload(id)};
  if (depth == 2) {
    // A task_group level too: detached children, also stealable in chunks.
    plait::task_group g;
    std::atomic<std::uint64_t> nodes{0}, sum{0};
    unsigned k = t.children(id, depth);
    for (unsigned i = 0; i < k; ++i)
      g.run([&, i] {
        TreeResult c = mixed_tree(t, RandomTree::child_id(id, i), depth + 1);
        nodes += c.nodes;
        sum += c.sum;
      });
    g.wait();
    return {r.nodes + nodes.load(), r.sum + sum.load()};
  }
  TreeResult c = mixed_children(t, id, depth, 0, t.children(id, depth));
  return {r.nodes + c.nodes, r.sum + c.sum};
}
TreeResult mixed_children(const RandomTree& t, std::uint64_t id, unsigned depth, unsigned i, unsigned k) {
  if (i == k) return {};
  auto h = plait::spawn([&t, id, depth, i] { return mixed_tree(t, RandomTree::child_id(id, i), depth + 1); });
  TreeResult rest = mixed_children(t, id, depth, i + 1, k);
  TreeResult mine = h.join();
  return {rest.nodes + mine.nodes, rest.sum + mine.sum};
}

std::string temp_path(const std::string& ext) {
  static std::atomic<int> n{0};
  return ::testing::TempDir() + "plait_trace_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ext;
}

struct Row {
  std::uint64_t t, worker, task, creator;
  int start;
};

std::vector<Row> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<Row> rows;
  EXPECT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "timestamp_ns,executing_thread,task_id,creating_thread,start");
  while (std::getline(in, line)) {
    Row r{};
    char c1, c2, c3, c4;
    std::istringstream ss(line);
    ss >> r.t >> c1 >> r.worker >> c2 >> r.task >> c3 >> r.creator >> c4 >> r.start;
    EXPECT_FALSE(ss.fail()) << line;
    rows.push_back(r);
  }
  return rows;
}

const plait::steal_policy policies[] = {plait::steal_policy::one, plait::steal_policy::half};

class Trace : public ::testing::TestWithParam<std::tuple<unsigned, int>> {};

TEST_P(Trace, CsvIsWellFormedForRandomTrees) {
  const unsigned workers = std::get<0>(GetParam());
  std::string path = temp_path(".csv");
  std::uint64_t nodes = 0, spawns = 0;
  const int roots = 30;
  {
    plait::pool_options o{.num_workers = workers};
    o.steal = policies[std::get<1>(GetParam())];
    o.trace_path = path;
    plait::pool p(o);
    ASSERT_TRUE(p.tracing());
    for (int s = 0; s < roots; ++s) {
      RandomTree t{plait_test::mix(static_cast<std::uint64_t>(s) + 5), 6, 4};
      TreeResult want = plait_test::serial_tree(t, 1, 0);
      TreeResult got = p.run([&] { return mixed_tree(t, 1, 0); });
      ASSERT_EQ(got, want);
      nodes += want.nodes;
    }
    spawns = p.total_counters().spawns;
  }
  std::vector<Row> rows = read_csv(path);
  std::map<std::uint64_t, std::vector<std::uint64_t>> open;  // per worker: stack of open tasks
  std::map<std::uint64_t, std::uint64_t> last_t;
  std::set<std::uint64_t> begun;
  std::uint64_t begins = 0;
  for (const Row& r : rows) {
    ASSERT_LT(r.worker, workers);
    ASSERT_LT(r.creator, workers);
    ASSERT_GE(r.t, last_t[r.worker]) << "time went back on worker " << r.worker;
    last_t[r.worker] = r.t;
    if (r.start == 1) {
      ASSERT_TRUE(begun.insert(r.task).second) << "task " << r.task << " began twice";
      open[r.worker].push_back(r.task);
      ++begins;
    } else {
      ASSERT_EQ(r.start, 0);
      ASSERT_FALSE(open[r.worker].empty()) << "end without begin";
      ASSERT_EQ(open[r.worker].back(), r.task) << "begin/end not nested on worker " << r.worker;
      open[r.worker].pop_back();
    }
  }
  for (auto& [w, st] : open) EXPECT_TRUE(st.empty()) << "worker " << w << " has tasks that never ended";
  // Every tree node is a task (spawned or a group child) and every root is one.
  EXPECT_EQ(begins, nodes);
#if PLAIT_COUNTERS
  if (policies[std::get<1>(GetParam())] == plait::steal_policy::one) {
    EXPECT_EQ(begins, spawns + roots);
  }
#else
  (void)spawns;
#endif
  std::remove(path.c_str());
}

TEST_P(Trace, JsonHasOneSlicePerTask) {
  std::string path = temp_path(".json");
  {
    plait::pool_options o{.num_workers = std::get<0>(GetParam())};
    o.steal = policies[std::get<1>(GetParam())];
    o.trace_path = path;
    plait::pool p(o);
    p.run([] {
      plait::task_group g;
      for (int i = 0; i < 100; ++i) {
        plait::label_next_task("leaf");
        g.run([] {});
      }
      g.wait();
    });
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string js = ss.str();
  ASSERT_FALSE(js.empty());
  EXPECT_EQ(js.front(), '{');
  EXPECT_NE(js.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(js.find("\"leaf\""), std::string::npos);  // the label made it into the file
  std::size_t slices = 0;
  for (std::size_t at = 0; (at = js.find("\"cat\":\"task\"", at)) != std::string::npos; ++at) ++slices;
  EXPECT_EQ(slices, 101u);  // 100 children + the root
  std::remove(path.c_str());
}

// Mixed spawn/join and task groups: children added between a spawn and its join (the join runs
// them first) and children queued below a handle that is still unjoined when the group waits (the
// wait runs them in place and leaves tombstones, which may be stolen, also in chunks). Every task
// must still begin exactly once, end on its worker properly nested, and be counted.
TEST_P(Trace, CsvIsWellFormedWhenGroupsAndSpawnsMix) {
  const unsigned workers = std::get<0>(GetParam());
  std::string path = temp_path(".csv");
  const int roots = 200, per = 6;
  std::atomic<int> ran{0};
  {
    plait::pool_options o{.num_workers = workers};
    o.steal = policies[std::get<1>(GetParam())];
    o.trace_path = path;
    plait::pool p(o);
    for (int s = 0; s < roots; ++s) {
      p.run([&] {
        plait::task_group g;
        for (int i = 0; i < per; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });
        auto h = plait::spawn([&] {  // a handle above the children, joined after the wait
          ran.fetch_add(1, std::memory_order_relaxed);
          return 1;
        });
        auto h2 = plait::spawn([&] {
          ran.fetch_add(1, std::memory_order_relaxed);
          return 1;
        });
        for (int i = 0; i < per; ++i) g.run([&] { ran.fetch_add(1, std::memory_order_relaxed); });  // above h2
        int a = h2.join();  // runs the children above it first
        g.wait();           // the children below h: in place
        a += h.join();
        EXPECT_EQ(a, 2);
      });
    }
  }
  ASSERT_EQ(ran.load(), roots * (2 * per + 2));
  std::vector<Row> rows = read_csv(path);
  std::map<std::uint64_t, std::vector<std::uint64_t>> open;
  std::set<std::uint64_t> begun;
  for (const Row& r : rows) {
    ASSERT_LT(r.worker, workers);
    if (r.start == 1) {
      ASSERT_TRUE(begun.insert(r.task).second) << "task " << r.task << " began twice";
      open[r.worker].push_back(r.task);
    } else {
      ASSERT_FALSE(open[r.worker].empty()) << "end without begin";
      ASSERT_EQ(open[r.worker].back(), r.task) << "begin/end not nested on worker " << r.worker;
      open[r.worker].pop_back();
    }
  }
  for (auto& [w, st] : open) EXPECT_TRUE(st.empty()) << "worker " << w << " has tasks that never ended";
  EXPECT_EQ(begun.size(), static_cast<std::size_t>(roots * (2 * per + 3)));  // + the root
  std::remove(path.c_str());
}

std::string name(const ::testing::TestParamInfo<std::tuple<unsigned, int>>& info) {
  return "w" + std::to_string(std::get<0>(info.param)) + (std::get<1>(info.param) ? "_half" : "_one");
}
INSTANTIATE_TEST_SUITE_P(Runtime, Trace, ::testing::Combine(::testing::Values(1u, 2u, 8u), ::testing::Range(0, 2)),
                         name);

// A pool of `workers` asked to trace to `path`, which it refuses: it does not trace, and a root
// still runs. Returns what it wrote on stderr.
std::string refused_trace(unsigned workers, const std::string& path) {
  ::testing::internal::CaptureStderr();
  plait::pool_options o{.num_workers = workers};
  o.trace_path = path;
  {
    plait::pool p(o);
    EXPECT_FALSE(p.tracing());
    EXPECT_EQ(p.run([] { return 42; }), 42);
  }
  return ::testing::internal::GetCapturedStderr();
}

TEST(TraceApi, UnwritablePathIsReportedAndTheProgramRunsOn) {
  const std::string err = refused_trace(2, "/nonexistent-dir/trace.json");
  EXPECT_NE(err.find("plait: cannot write trace /nonexistent-dir/trace.json"), std::string::npos) << err;
  EXPECT_NE(err.find("tracing is off"), std::string::npos) << err;
}

// A directory whose permission bits allow writing but which refuses new files (/proc): refused
// when tracing turns on, not after the whole run.
TEST(TraceApi, ADirectoryThatRefusesFilesIsReportedAtTheStart) {
  const std::string err = refused_trace(1, "/proc/plait-trace.json");
  EXPECT_NE(err.find("plait: cannot write trace /proc/plait-trace.json: cannot create a file in '/proc'"), std::string::npos)
      << err;
  EXPECT_NE(err.find("tracing is off"), std::string::npos) << err;
}

TEST(TraceApi, UnknownExtensionIsReported) {
  const std::string err = refused_trace(1, temp_path(".txt"));
  EXPECT_NE(err.find(".csv"), std::string::npos) << err;
}

TEST(TraceApi, WriteOnDemandAndNotTracingIsALogicError) {
  plait::pool_options o{.num_workers = 2};
  std::string path = temp_path(".csv"), now = temp_path(".csv");
  o.trace_path = path;
  {
    plait::pool p(o);
    p.run([] {
      auto h = plait::spawn([] { return 1; });
      return h.join();
    });
    p.write_trace(now);
    EXPECT_THROW(p.write_trace("/nonexistent-dir/x.csv"), std::runtime_error);
  }
  EXPECT_EQ(read_csv(now).size(), 4u);  // root and child, begin and end
  std::remove(path.c_str());
  std::remove(now.c_str());
  plait::pool q(plait::pool_options{.num_workers = 1});
  EXPECT_FALSE(q.tracing());
  EXPECT_THROW(q.write_trace(now), std::logic_error);
}

// The default pool is never destroyed; under PLAIT_TRACE its trace is written at a normal exit.
// The death-test child is a fresh process (threadsafe style re-runs the binary), so its default
// pool is created there with the variable set.
TEST(TraceApiDeathTest, DefaultPoolTraceIsWrittenAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The child runs this body again from the start: it takes the path from the environment.
  if (std::getenv("PLAIT_TEST_DEFAULT_TRACE") == nullptr)
    setenv("PLAIT_TEST_DEFAULT_TRACE", temp_path(".csv").c_str(), 1);
  const std::string path = std::getenv("PLAIT_TEST_DEFAULT_TRACE");
  std::remove(path.c_str());
  EXPECT_EXIT(
      {
        setenv("PLAIT_TRACE", path.c_str(), 1);
        int r = plait::run([] {
          auto h = plait::spawn([] { return 1; });
          return h.join() + 1;
        });
        std::exit(r == 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  auto rows = read_csv(path);
  EXPECT_GE(rows.size(), 4u) << path;  // the root and its child, begin and end
  std::remove(path.c_str());
  unsetenv("PLAIT_TEST_DEFAULT_TRACE");
}

}  // namespace
