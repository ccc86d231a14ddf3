// Owner fast-path cost of three deque designs, measured side by side in one process: the figure
// the deque was chosen by (docs/performance.md, "Deque choice"; docs/design.md §8). Each round
// runs, in a fresh random order:
//
//   split   Plait's split deque through the public API: spawn + join of an empty closure on a
//           1-worker pool (slot write, index bump, request poll; no RMW, no fence)
//   chase   a Chase–Lev deque (Lê, Pop, Cohen, Zappa Nardelli 2013, C11 version): push stores
//           bottom with release; take needs a seq_cst fence between storing bottom and loading top
//   mutex   a std::deque under a std::mutex (lock per push and per pop)
//
// Each operation pair is push(task) followed by pop() of the same task — what a spawn followed by
// a join of an unstolen task costs. Prints the median ns per pair over the rounds and each
// design's ratio to split. No thieves run: this is exactly the uncontended case that dominates
// fine-grained fork-join.
#include <plait/plait.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

struct ChaseLev {
  std::vector<std::atomic<void*>> buf;
  std::atomic<std::int64_t> top{0}, bottom{0};
  explicit ChaseLev(std::size_t cap) : buf(cap) {}
  void push(void* x) {
    std::int64_t b = bottom.load(std::memory_order_relaxed);
    buf[static_cast<std::size_t>(b) & (buf.size() - 1)].store(x, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    bottom.store(b + 1, std::memory_order_relaxed);
  }
  void* take() {
    std::int64_t b = bottom.load(std::memory_order_relaxed) - 1;
    bottom.store(b, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the StoreLoad the split deque avoids
    std::int64_t t = top.load(std::memory_order_relaxed);
    void* x = nullptr;
    if (t <= b) {
      x = buf[static_cast<std::size_t>(b) & (buf.size() - 1)].load(std::memory_order_relaxed);
      if (t == b) {
        if (!top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) x = nullptr;
        bottom.store(b + 1, std::memory_order_relaxed);
      }
    } else {
      bottom.store(b + 1, std::memory_order_relaxed);
    }
    return x;
  }
};

struct MutexDeque {
  std::mutex mu;
  std::deque<void*> q;
  void push(void* x) {
    std::lock_guard<std::mutex> lk(mu);
    q.push_back(x);
  }
  void* take() {
    std::lock_guard<std::mutex> lk(mu);
    if (q.empty()) return nullptr;
    void* x = q.back();
    q.pop_back();
    return x;
  }
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

volatile long sink = 0;

// `keep` tasks stay on the deque below the measured pair, so Chase–Lev's take is on its common
// path (t < b, no CAS), as it is during a deep recursion.
template <class D>
double run_deque(D& d, long iters) {
  long task = 1, keep = 7;
  for (int k = 0; k < keep; ++k) d.push(&task);
  double t0 = now();
  for (long i = 0; i < iters; ++i) {
    d.push(&task);
    void* x = d.take();
    sink = sink + (x != nullptr);
  }
  double t = now() - t0;
  for (int k = 0; k < keep; ++k) d.take();
  return t;
}

double run_split(plait::pool& p, long iters) {
  return p.run([iters] {
    double t0 = now();
    for (long i = 0; i < iters; ++i) {
      auto h = plait::spawn([] { return 1L; });
      sink = sink + h.join();
    }
    return now() - t0;
  });
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 20'000'000;
  int rounds = 11;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    char* end = nullptr;
    long v = std::strtol(argv[i + 1], &end, 10);
    if (*end != '\0' || v < 1 || v > 2'000'000'000) {
      std::fprintf(stderr, "deque-micro: %s needs a positive integer, got '%s'\n", a.c_str(), argv[i + 1]);
      return 2;
    }
    if (a == "--iters")
      iters = v;
    else if (a == "--rounds")
      rounds = static_cast<int>(v);
    else {
      std::fprintf(stderr, "deque-micro: unknown option '%s'; accepted: --iters N, --rounds N\n", a.c_str());
      return 2;
    }
  }
  plait::pool pool({.num_workers = 1});
  ChaseLev cl(1024);
  MutexDeque md;
  std::vector<std::string> names = {"split", "chase", "mutex"};
  std::vector<std::vector<double>> ns(3);
  std::mt19937 rng(2026);
  std::vector<int> order = {0, 1, 2};
  for (int r = 0; r < rounds + 1; ++r) {  // round 0 is a warm-up
    std::shuffle(order.begin(), order.end(), rng);
    for (int k : order) {
      double t = k == 0 ? run_split(pool, iters) : k == 1 ? run_deque(cl, iters) : run_deque(md, iters);
      if (r > 0) ns[k].push_back(t * 1e9 / static_cast<double>(iters));
    }
  }
  std::printf("push+pop pair, median of %d interleaved rounds of %ld pairs\n", rounds, iters);
  std::printf("%-6s %10s %10s %10s %8s\n", "deque", "median ns", "min ns", "max ns", "vs split");
  std::vector<double> med(3);
  for (int k = 0; k < 3; ++k) {
    std::sort(ns[k].begin(), ns[k].end());
    med[k] = ns[k][ns[k].size() / 2];
  }
  for (int k = 0; k < 3; ++k)
    std::printf("%-6s %10.2f %10.2f %10.2f %7.2fx\n", names[k].c_str(), med[k], ns[k].front(), ns[k].back(),
                med[k] / med[0]);
  return 0;
}
