// plait-dag: the task DAG of a Plait trace — check it, measure work and span, simulate work
// stealing on P workers. docs/scaling.md; plait-bench scale / simulate / trace check call it.
//
//   plait-dag check TRACE [--json]
//   plait-dag workspan TRACE [--costs FILE | --burden NS] [--json]
//   plait-dag simulate TRACE --workers LIST [--steal one|chunk:K|half|adaptive] [--costs FILE]
//                      [--cores C] [--contention X] [--seed N] [--json]
//
// LIST: "1,2,4,8" or a range "A..B" (A, the powers of two between, and B). Bad input: one line
// "plait-dag: error: ..." on stderr, exit status 2.
#include "dag.hpp"
#include "sim.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace plait::dag;

namespace {

const char* usage =
    "usage: plait-dag check TRACE [--json]\n"
    "       plait-dag workspan TRACE [--costs FILE | --burden NS] [--json]\n"
    "       plait-dag simulate TRACE --workers LIST [--steal one|chunk:K|half|adaptive] [--costs FILE]\n"
    "                          [--cores C] [--contention X] [--seed N] [--topology \"package:2 numa:2 core:8\"\n"
    "                          --steal-ns-levels A,B,C] [--json]\n"
    "LIST: 1,2,4,8 or A..B (A, the powers of two between, B), each 1..4096\n";

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "plait-dag: error: %s\n", msg.c_str());
  std::exit(2);
}

unsigned long parse_uint(const std::string& s, const char* what, unsigned long lo, unsigned long hi) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
    bad(std::string(what) + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + " (got '" + s + "')");
  const unsigned long v = std::stoul(s);
  if (v < lo || v > hi)
    bad(std::string(what) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + " (got " + s + ")");
  return v;
}

double parse_nonneg(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0)
    bad(std::string(what) + " must be a number >= 0 (got '" + s + "')");
  return v;
}

std::vector<unsigned> parse_workers(const std::string& s) {
  std::vector<unsigned> out;
  if (auto dots = s.find(".."); dots != std::string::npos) {
    const auto a = static_cast<unsigned>(parse_uint(s.substr(0, dots), "--workers", 1, 4096));
    const auto b = static_cast<unsigned>(parse_uint(s.substr(dots + 2), "--workers", 1, 4096));
    if (b < a) bad("--workers A..B needs A <= B (got " + s + ")");
    out.push_back(a);
    for (unsigned p = 1; p < b; p *= 2)
      if (p > a) out.push_back(p);
    if (b != a) out.push_back(b);
  } else {
    std::size_t pos = 0;
    while (pos <= s.size()) {
      const std::size_t c = s.find(',', pos);
      out.push_back(static_cast<unsigned>(parse_uint(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos), "--workers", 1, 4096)));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  }
  return out;
}

void put_costs(const costs& c) {
  std::printf("{\"spawn_ns\":%.3f,\"steal_ns\":%.3f,\"steal_fail_ns\":%.3f,\"wake_ns\":%.3f,\"spin_ns\":%.1f,\"trace_task_ns\":%.3f,"
              "\"trace_ns\":%.3f,\"source\":\"%s\"}",
              c.spawn_ns, c.steal_ns, c.steal_fail_ns, c.wake_ns, c.spin_ns, c.trace_task_ns, c.trace_ns, c.source.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.empty() || a[0] == "--help" || a[0] == "-h") {
    std::fputs(usage, a.empty() ? stderr : stdout);
    return a.empty() ? 2 : 0;
  }
  const std::string cmd = a[0];
  if (cmd != "check" && cmd != "workspan" && cmd != "simulate") bad("unknown command '" + cmd + "' (accepted: check, workspan, simulate)");
  if (a.size() < 2 || a[1].rfind("--", 0) == 0) bad(cmd + " needs a trace file (plait-dag " + cmd + " TRACE ...)");
  const std::string path = a[1];
  bool json = false;
  std::string costs_path, workers = "", steal = "one";
  double burden = -1, contention = 0;
  unsigned cores = 0;
  std::uint64_t seed = 1;
  std::string topology, steal_levels;
  for (std::size_t i = 2; i < a.size(); ++i) {
    const std::string& o = a[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= a.size()) bad(o + " needs a value");
      return a[++i];
    };
    if (o == "--json") json = true;
    else if (o == "--costs" && cmd != "check") costs_path = val();
    else if (o == "--burden" && cmd == "workspan") burden = parse_nonneg(val(), "--burden");
    else if (o == "--workers" && cmd == "simulate") workers = val();
    else if (o == "--steal" && cmd == "simulate") steal = val();
    else if (o == "--cores" && cmd == "simulate") cores = static_cast<unsigned>(parse_uint(val(), "--cores", 1, 4096));
    else if (o == "--contention" && cmd == "simulate") contention = parse_nonneg(val(), "--contention");
    else if (o == "--seed" && cmd == "simulate") seed = parse_uint(val(), "--seed", 0, 999999999999ul);
    else if (o == "--topology" && cmd == "simulate") topology = val();
    else if (o == "--steal-ns-levels" && cmd == "simulate") steal_levels = val();
    else bad("unknown option '" + o + "' for " + cmd + " (see plait-dag --help)");
  }
  sim_options so;
  std::vector<unsigned> ps;
  if (cmd == "simulate") {
    if (workers.empty()) bad("simulate needs --workers LIST (e.g. 1..64)");
    ps = parse_workers(workers);
    if (!parse_policy(steal, &so.steal, &so.chunk)) bad("--steal must be one, half, adaptive or chunk:K with K >= 1 (got '" + steal + "')");
    if (!topology.empty() && !parse_levels(topology, &so.levels))
      bad("--topology must be levels NAME:COUNT, outermost first, counts 1..4096 (e.g. \"package:2 numa:2 core:8\"; got '" + topology + "')");
    if (!steal_levels.empty()) {
      if (so.levels.empty()) bad("--steal-ns-levels needs --topology");
      std::size_t pos = 0;
      while (pos <= steal_levels.size()) {
        const std::size_t c = steal_levels.find(',', pos);
        so.steal_ns_levels.push_back(parse_nonneg(steal_levels.substr(pos, c == std::string::npos ? std::string::npos : c - pos), "--steal-ns-levels"));
        if (c == std::string::npos) break;
        pos = c + 1;
      }
      if (so.steal_ns_levels.size() != so.levels.size())
        bad("--steal-ns-levels needs one cost per --topology level (" + std::to_string(so.levels.size()) + ", got " +
            std::to_string(so.steal_ns_levels.size()) + ")");
    }
  }
  try {
    costs c;
    if (!costs_path.empty()) c = load_costs(costs_path);
    const auto t0 = std::chrono::steady_clock::now();
    graph g = load(path);
    remove_trace_cost(g, c.trace_task_ns, c.trace_ns);  // 0 unless a cost model says what tracing costs
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (cmd == "check") {
      const std::size_t edges = check(g);
      if (json)
        std::printf("{\"trace\":\"%s\",\"ok\":true,\"tasks\":%zu,\"roots\":%zu,\"edges\":%zu,\"unjoined\":%zu}\n", path.c_str(),
                    g.tasks.size(), g.roots.size(), edges, g.unjoined);
      else
        std::printf("%s: DAG ok: %zu tasks, %zu roots, %zu edges checked, %zu tasks nobody joins\n", path.c_str(),
                    g.tasks.size(), g.roots.size(), edges, g.unjoined);
      return 0;
    }
    if (cmd == "workspan") {
      if (burden < 0) burden = c.steal_ns;
      std::vector<region> regions;
      const work_span ws = analyse(g, burden, &regions);
      // Tasks that spawn nothing (calibration: on fib their work is what tracing adds per task).
      double leaf_work = 0;
      std::size_t leaves = 0;
      for (const task& t : g.tasks)
        if (t.points.empty()) leaf_work += t.work, ++leaves;
      if (json) {
        std::printf("{\"trace\":\"%s\",\"tasks\":%zu,\"work_ns\":%.1f,\"span_ns\":%.1f,\"parallelism\":%.4f,"
                    "\"burden_ns\":%.3f,\"burdened_span_ns\":%.1f,\"burdened_parallelism\":%.4f,\"trace_ns\":%.1f,\"unjoined\":%zu,\"leaves\":%zu,\"leaf_work_ns\":%.1f,\"regions\":[",
                    path.c_str(), g.tasks.size(), ws.work, ws.span, ws.parallelism(), burden, ws.burdened_span,
                    ws.burdened_parallelism(), g.trace_ns, g.unjoined, leaves, leaf_work);
        for (std::size_t i = 0; i < regions.size(); ++i) {
          const region& r = regions[i];
          std::printf("%s{\"label\":\"%s\",\"instances\":%zu,\"work_ns\":%.1f,\"span_ns\":%.1f,\"parallelism\":%.4f,\"burdened_span_ns\":%.1f}",
                      i ? "," : "", r.label.c_str(), r.instances, r.ws.work, r.ws.span, r.ws.parallelism(), r.ws.burdened_span);
        }
        std::printf("]}\n");
      } else {
        std::printf("%s: %zu tasks\n  work           %12.3f ms\n  span           %12.3f ms\n  parallelism    %12.2f\n"
                    "  burdened span  %12.3f ms  (%.0f ns per spawn and data-flow edge)\n  burdened par.  %12.2f\n",
                    path.c_str(), g.tasks.size(), ws.work / 1e6, ws.span / 1e6, ws.parallelism(), ws.burdened_span / 1e6,
                    burden, ws.burdened_parallelism());
        for (const region& r : regions)
          std::printf("  region %-12s %zu instances: work %.3f ms, span %.3f ms, parallelism %.2f\n", r.label.c_str(),
                      r.instances, r.ws.work / 1e6, r.ws.span / 1e6, r.ws.parallelism());
      }
      return 0;
    }
    so.c = c;
    so.cores = cores;
    so.contention = contention;
    so.seed = seed;
    std::vector<sim_result> rows;
    std::vector<double> secs;
    for (unsigned p : ps) {
      so.workers = p;
      const auto s0 = std::chrono::steady_clock::now();
      rows.push_back(simulate(g, so));
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
    }
    // Speed-up and efficiency against the simulated one-worker time when it is in the list, else
    // against the work (the one-worker time without scheduling costs).
    double t1 = rows[0].work_ns;
    for (const sim_result& r : rows)
      if (r.workers == 1) t1 = r.time_ns;
    if (json) {
      std::printf("{\"trace\":\"%s\",\"tasks\":%zu,\"work_ns\":%.1f,\"steal\":\"%s\",\"cores\":%u,\"contention\":%.4f,\"seed\":%llu,\"load_s\":%.3f,"
                  "\"topology\":\"%s\",\"steal_ns_levels\":\"%s\",\"costs\":",
                  path.c_str(), g.tasks.size(), rows[0].work_ns, steal.c_str(), cores, contention,
                  static_cast<unsigned long long>(seed), load_s, topology.c_str(), steal_levels.c_str());
      put_costs(c);
      std::printf(",\"rows\":[");
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const sim_result& r = rows[i];
        const double secs_run = r.time_ns / 1e9;
        std::printf("%s{\"workers\":%u,\"time_ns\":%.1f,\"speedup\":%.4f,\"efficiency\":%.4f,\"steals\":%llu,\"steal_attempts\":%llu,"
                    "\"moved\":%llu,\"moved_per_thread_per_s\":%.1f,\"sleeps\":%llu,\"sim_s\":%.3f}",
                    i ? "," : "", r.workers, r.time_ns, t1 / r.time_ns, t1 / r.time_ns / r.workers,
                    static_cast<unsigned long long>(r.steals), static_cast<unsigned long long>(r.steal_attempts),
                    static_cast<unsigned long long>(r.moved), secs_run > 0 ? static_cast<double>(r.moved) / r.workers / secs_run : 0.0,
                    static_cast<unsigned long long>(r.sleeps), secs[i]);
      }
      std::printf("]}\n");
    } else {
      std::printf("%s: %zu tasks, work %.3f ms, steal %s, costs from %s (spawn %.0f ns, steal %.0f ns, failed look %.0f ns, wake %.0f ns)\n",
                  path.c_str(), g.tasks.size(), rows[0].work_ns / 1e6, steal.c_str(), c.source.c_str(), c.spawn_ns, c.steal_ns,
                  c.steal_fail_ns, c.wake_ns);
      std::printf("%8s %12s %9s %11s %10s %12s\n", "workers", "time_ms", "speedup", "efficiency", "steals", "moved/thr/s");
      for (const sim_result& r : rows) {
        const double secs_run = r.time_ns / 1e9;
        std::printf("%8u %12.3f %9.2f %10.1f%% %10llu %12.0f\n", r.workers, r.time_ns / 1e6, t1 / r.time_ns,
                    100.0 * t1 / r.time_ns / r.workers, static_cast<unsigned long long>(r.steals),
                    secs_run > 0 ? static_cast<double>(r.moved) / r.workers / secs_run : 0.0);
      }
    }
  } catch (const error& e) {
    bad(e.what());
  } catch (const std::bad_alloc&) {
    bad("out of memory reading " + path);
  }
  return 0;
}
