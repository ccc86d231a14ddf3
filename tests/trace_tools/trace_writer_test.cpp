// The trace writer (src/trace_writer.cpp) on small hand-made traces.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "trace_writer.hpp"

namespace fs = std::filesystem;
using namespace plait::trace;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct tmpdir {
  fs::path p;
  tmpdir() {
    char tmpl[] = "/tmp/plait-trace-test-XXXXXX";
    p = ::mkdtemp(tmpl);
  }
  ~tmpdir() {
    std::error_code ec;
    fs::permissions(p, fs::perms::owner_all, ec);
    fs::remove_all(p, ec);
  }
};

Event E(std::uint64_t t, ev k, std::uint64_t task = 0, std::uint32_t other = 0, std::uint32_t label = 0,
        std::uint64_t aux = 0) {
  return Event{t, task, other, label, k, aux};
}

// Two workers: worker 0 runs task 1 (label "root"), spawns frame children 2 and 3, runs 3
// inline-nested (its join), then waits for 2 (stolen by worker 1, which was idle before). Worker 1
// ends idle at the end.
Trace sample() {
  Trace t;
  t.runtime = "plait";
  t.program = "sample \"quoted\"";
  t.t0_unix_ns = 1700000000000000000ull;
  t.labels = {"", "root", "leaf"};
  t.workers.resize(2);
  t.workers[0] = {E(1000, ev::task_begin, 1, 0, 1), E(1500, ev::spawn, 2, 1, 2), E(1600, ev::spawn, 3, 1, 2),
                  E(1700, ev::task_begin, 3, 0, 2), E(2700, ev::task_end, 3),
                  E(2800, ev::wait_begin, 0, 1, 0, 2), E(4000, ev::wait_end, 0, 1, 0, 2), E(4100, ev::task_end, 1)};
  t.workers[1] = {E(0, ev::idle_begin),          E(1200, ev::steal_fail, 0, 0), E(1800, ev::steal, 2, 0),
                  E(1800, ev::idle_end),         E(1900, ev::task_begin, 2, 0, 2), E(3900, ev::task_end, 2),
                  E(3900, ev::idle_begin),       E(4100, ev::idle_end)};
  return t;
}

}  // namespace

TEST(TraceWriter, CsvIsStudy002TableInTimeOrder) {
  tmpdir d;
  auto p = d.p / "t.csv";
  std::string err;
  ASSERT_TRUE(write_trace(sample(), p.string(), &err)) << err;
  EXPECT_EQ(slurp(p),
            "timestamp_ns,executing_thread,task_id,creating_thread,start\n"
            "1000,0,1,0,1\n"
            "1700,0,3,0,1\n"
            "1900,1,2,0,1\n"
            "2700,0,3,0,0\n"
            "3900,1,2,0,0\n"
            "4100,0,1,0,0\n");
}

TEST(TraceWriter, JsonHasSlicesFlowsAndMetadata) {
  tmpdir d;
  auto p = d.p / "t.json";
  std::string err;
  ASSERT_TRUE(write_trace(sample(), p.string(), &err)) << err;
  std::string s = slurp(p);
  EXPECT_NE(s.find("\"traceEvents\":["), std::string::npos);
  EXPECT_NE(s.find("\"runtime\":\"plait\""), std::string::npos);
  EXPECT_NE(s.find("\"program\":\"sample \\\"quoted\\\"\""), std::string::npos);
  EXPECT_NE(s.find("\"t0_unix_ns\":1700000000000000000"), std::string::npos);
  EXPECT_NE(s.find("\"counters\":{\"tasks\":3,\"spawns\":2,\"steals\":1,\"steal_fails\":1"), std::string::npos);
  // task 3 nested in task 1 on worker 0: ts 1.7 us, dur 1 us, label leaf
  EXPECT_NE(s.find("{\"ph\":\"X\",\"name\":\"leaf\",\"cat\":\"task\",\"pid\":1,\"tid\":0,\"ts\":1.700,\"dur\":1.000,"
                   "\"args\":{\"task\":3,\"creator\":0,\"label\":\"leaf\","),
            std::string::npos);
  // The DAG: 3 was joined inline (where its slice ends), 2 by the wait keyed with its id; the
  // wait is a slice of its own; spawn and join arrows.
  EXPECT_NE(s.find("\"args\":{\"task\":3,\"creator\":0,\"label\":\"leaf\",\"parent\":1,\"spawn\":1.600,"
                   "\"spawn_worker\":0,\"join\":1,\"join_ts\":2.700}"),
            std::string::npos);
  EXPECT_NE(s.find("\"args\":{\"task\":2,\"creator\":0,\"label\":\"leaf\",\"parent\":1,\"spawn\":1.500,"
                   "\"spawn_worker\":0,\"join\":1,\"join_ts\":4.000}"),
            std::string::npos);
  EXPECT_NE(s.find("\"args\":{\"task\":1,\"creator\":0,\"label\":\"root\",\"parent\":0}"), std::string::npos);
  EXPECT_NE(s.find("{\"ph\":\"X\",\"name\":\"wait\",\"cat\":\"wait\",\"pid\":1,\"tid\":0,\"ts\":2.800,\"dur\":1.200,"
                   "\"args\":{\"task\":1}}"),
            std::string::npos);
  EXPECT_NE(s.find("\"format\":\"plait-trace-2\",\"dag\":true"), std::string::npos);
  EXPECT_NE(s.find("{\"ph\":\"s\",\"name\":\"join\",\"cat\":\"dag\",\"pid\":1,\"tid\":1,\"ts\":3.900,"), std::string::npos);
  EXPECT_NE(s.find("\"name\":\"root\",\"cat\":\"task\",\"pid\":1,\"tid\":0,\"ts\":1.000,\"dur\":3.100"), std::string::npos);
  // idle of worker 1 before the steal, and the flow from worker 0 (spawn of 2 at 1.5 us) to worker 1
  EXPECT_NE(s.find("\"name\":\"idle\",\"cat\":\"idle\",\"pid\":1,\"tid\":1,\"ts\":0.000,\"dur\":1.800"), std::string::npos);
  EXPECT_NE(s.find("{\"ph\":\"s\",\"name\":\"steal\",\"cat\":\"steal\",\"pid\":1,\"tid\":0,\"ts\":1.500,\"id\":1}"),
            std::string::npos);
  EXPECT_NE(s.find("{\"ph\":\"f\",\"name\":\"steal\",\"cat\":\"steal\",\"pid\":1,\"tid\":1,\"ts\":1.900,\"bp\":\"e\",\"id\":1}"),
            std::string::npos);
  EXPECT_NE(s.find("\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"worker 1\"}"), std::string::npos);
  // balanced brackets, ends with the closing of the object
  EXPECT_EQ(s.substr(s.size() - 4), "\n]}\n");
}

TEST(TraceWriter, UnfinishedTaskIsClosedAndMarked) {
  tmpdir d;
  Trace t;
  t.runtime = "plait";
  t.labels = {""};
  t.workers = {{E(10, ev::task_begin, 7, 0), E(50, ev::spawn, 8)}};
  auto p = d.p / "u.json";
  std::string err;
  ASSERT_TRUE(write_trace(t, p.string(), &err)) << err;
  EXPECT_NE(slurp(p).find("\"ts\":0.010,\"dur\":0.040,\"args\":{\"task\":7,\"creator\":0,\"unfinished\":1,"),
            std::string::npos);
}

TEST(TraceWriter, RejectsUnknownExtensionAndMissingDirectory) {
  tmpdir d;
  std::string err;
  EXPECT_FALSE(check_trace_path((d.p / "t.txt").string(), &err));
  EXPECT_NE(err.find(".csv, .json"), std::string::npos) << err;
  EXPECT_FALSE(write_trace(sample(), (d.p / "t.txt").string(), &err));
  EXPECT_FALSE(check_trace_path((d.p / "nope" / "t.json").string(), &err));
  EXPECT_NE(err.find("nope"), std::string::npos) << err;
  EXPECT_FALSE(check_trace_path(d.p.string() + "/", &err));
  fs::create_directory(d.p / "dir.json");
  EXPECT_FALSE(check_trace_path((d.p / "dir.json").string(), &err));
  EXPECT_TRUE(check_trace_path((d.p / "ok.json").string(), &err)) << err;
  EXPECT_TRUE(fs::is_empty(d.p / "dir.json"));
}

TEST(TraceWriter, UnwritableDirectoryLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write anywhere";
  tmpdir d;
  fs::create_directory(d.p / "ro");
  fs::permissions(d.p / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  std::string err;
  EXPECT_FALSE(write_trace(sample(), (d.p / "ro" / "t.csv").string(), &err));
  EXPECT_NE(err.find("not writable"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(d.p / "ro"));
}

TEST(TraceWriter, ReplacesAnOldFileAtomicallyAndLeavesNoTemporary) {
  tmpdir d;
  auto p = d.p / "t.csv";
  { std::ofstream(p) << "old"; }
  std::string err;
  ASSERT_TRUE(write_trace(sample(), p.string(), &err)) << err;
  EXPECT_EQ(slurp(p).rfind("timestamp_ns,", 0), 0u);
  int n = 0;
  for (auto& e : fs::directory_iterator(d.p)) (void)e, ++n;
  EXPECT_EQ(n, 1);
}

TEST(TraceWriter, ManyEventsWriteQuickly) {
  tmpdir d;
  Trace t;
  t.runtime = "plait";
  t.labels = {""};
  t.workers.resize(4);
  std::uint64_t id = 1;
  for (auto& w : t.workers) {
    w.reserve(200000);
    for (std::uint64_t i = 0; i < 100000; ++i, ++id) {
      w.push_back(E(i * 10, ev::task_begin, id, 0));
      w.push_back(E(i * 10 + 5, ev::task_end, id));
    }
  }
  std::string err;
  ASSERT_TRUE(write_trace(t, (d.p / "big.json").string(), &err)) << err;
  ASSERT_TRUE(write_trace(t, (d.p / "big.csv").string(), &err)) << err;
  std::ifstream in(d.p / "big.csv");
  std::string line;
  std::size_t lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 1u + 800000u);
}
