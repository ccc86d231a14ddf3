// Floorplan (BOTS floorplan): place a chain of cells, each with several alternative shapes, on a
// 64 x 64 board so that the bounding footprint has minimum area (branch and bound). Each cell is
// placed to the right of its `left` neighbour and/or below its `above` neighbour; for every shape
// and every admissible north-west corner a task copies the board and the cell positions, lays the
// cell down and, if the footprint is still below the best area found so far, recurses on the next
// cell. The best area is shared (atomic reads, updates under a lock), so pruning and the number of
// nodes depend on the schedule, the minimum area does not.
//
// Cut-off = recursion level from which the search is serial (manual) or the tasks are undeferred
// (if) / final (final). Verification: the minimum area equals the expected value, the last number
// of the input file (input.5 / .15 / .20: 216, 713, 896). A file without it is bad input (exit 2):
// a search checked only against another search of the same code would check nothing in the
// serial binary.
#pragma once

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "common/rt/common.hpp"

namespace floorplan {

constexpr int ROWS = 64, COLS = 64, MAX_CELLS = 64;
using board = std::array<std::array<char, COLS>, ROWS>;

struct shape {
  int rows, cols;
};
struct cell_def {
  std::vector<shape> alt;
  int left = 0, above = 0, next = 0;
};
// The placement of every cell; copied by each task.
struct pos {
  int top = 0, bot = 0, lhs = 0, rhs = 0;
};
using positions = std::array<pos, MAX_CELLS + 1>;

struct problem {
  int n = 0;
  std::vector<cell_def> cells;  // index 0 is the origin sentinel
  int expected = -1;  // the minimum area, the file's last number (required)
};
problem parse_input(const std::string& text, const std::string& path);

// The number of visited placements, counted per thread: every task counts one, and one shared
// atomic counter made the workers fight over its cache line 19 M times per run (input.15, fine
// cut-off). That measured the line's ping-pong rather than the runtime, and bimodally so: a
// 2-thread Plait run took 0.85-0.95 s or 1.5-1.6 s, for whole processes at a time (TBB's runs
// showed the same modes); without the shared counter every run took 0.79-0.86 s. Each thread
// owns one slot (its own 128-byte block), so a count is a plain load and store; threads beyond
// the slots share the last one through an atomic add.
class node_counter {
 public:
  void add() noexcept {
    const unsigned i = my_slot();
    std::atomic<long long>& v = slots_[i].v;
    if (i + 1 < kSlots)
      v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // this thread's only
    else
      v.fetch_add(1, std::memory_order_relaxed);
  }
  // After the search has completed (the runtime's join orders every add before this).
  long long total() const noexcept {
    long long t = 0;
    for (const slot& s : slots_) t += s.v.load(std::memory_order_relaxed);
    return t;
  }

 private:
  static constexpr unsigned kSlots = 64;
  struct alignas(128) slot {
    std::atomic<long long> v{0};
  };
  static unsigned my_slot() noexcept {
    static std::atomic<unsigned> next{0};
    thread_local const unsigned mine = [] {
      unsigned k = next.fetch_add(1, std::memory_order_relaxed);
      return k < kSlots - 1 ? k : kSlots - 1;
    }();
    return mine;
  }
  slot slots_[kSlots];
};

struct shared_best {
  std::atomic<int> area{ROWS * COLS};
  std::mutex lock;
  board best{};
  int fp[2] = {0, 0};
  node_counter nodes;
  void offer(int a, const board& b, int f0, int f1) {
    if (a >= area.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lk(lock);
    if (a < area.load(std::memory_order_relaxed)) {
      area.store(a, std::memory_order_relaxed);
      best = b;
      fp[0] = f0;
      fp[1] = f1;
    }
  }
};

// All admissible north-west corners of cell `id` in shape `s`; returns their number.
int starts(const problem& pr, int id, int s, const positions& P, int (*nws)[2]);
// Marks the cell's rectangle on the board; false if it leaves the board or overlaps.
bool lay_down(int id, board& b, const pos& p);
void search_serial(const problem& pr, int id, const int fp[2], const board& b, positions& P, shared_best& best);

template <class RT>
void search(RT& rt, const problem& pr, int id, const int fp[2], const board& b, const positions& P, int level,
            int cutoff, shared_best& best) {
  const cell_def& c = pr.cells[static_cast<std::size_t>(id)];
  typename RT::group g(rt, level >= cutoff, level + 1 >= cutoff);
  for (int s = 0; s < static_cast<int>(c.alt.size()); ++s) {
    int nws[ROWS + COLS + 2][2];
    const int nn = starts(pr, id, s, P, nws);
    for (int j = 0; j < nn; ++j) {
      const int top = nws[j][0], lhs = nws[j][1];
      g.run([&rt, &pr, id, fp, &b, &P, level, cutoff, &best, &c, s, top, lhs] {
        positions Q = P;
        pos& q = Q[static_cast<std::size_t>(id)];
        q.top = top;
        q.bot = top + c.alt[static_cast<std::size_t>(s)].rows - 1;
        q.lhs = lhs;
        q.rhs = lhs + c.alt[static_cast<std::size_t>(s)].cols - 1;
        board nb = b;
        best.nodes.add();
        if (!lay_down(id, nb, q)) return;
        const int nfp[2] = {std::max(fp[0], q.bot + 1), std::max(fp[1], q.rhs + 1)};
        const int area = nfp[0] * nfp[1];
        if (c.next == 0) {
          best.offer(area, nb, nfp[0], nfp[1]);
        } else if (area < best.area.load(std::memory_order_relaxed)) {
          if (level + 1 >= cutoff && rt.manual())
            search_serial(pr, c.next, nfp, nb, Q, best);
          else
            search(rt, pr, c.next, nfp, nb, Q, level + 1, cutoff, best);
        }
      });
    }
  }
  g.wait();
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("floorplan", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, true);
    std::string size = "ci", path, cutoff_s = "coarse";
    bool inject = false;
    cli.add_string("size", &size,
                   "BOTS input class from ../shared/data/bots/floorplan: ci and test (input.5), small (input.15), "
                   "medium (input.20)",
                   {"ci", "test", "small", "medium"});
    cli.add_string("input", &path, "a BOTS floorplan input file (overrides --size)");
    cli.add_string("cutoff", &cutoff_s,
                   "recursion level from which the search is serial: coarse (5), fine (cells: every level "
                   "spawns), or 0..64");
    cli.add_inject_error(&inject);
    cli.parse();
    const std::string name = size == "small" ? "input.15" : size == "medium" ? "input.20" : "input.5";
    const std::string file = kern::resolve_bots_input(path, "floorplan", name);
    const problem pr = parse_input(kern::read_file_or_throw(file), file);
    const int cutoff = static_cast<int>(kern::parse_cutoff("cutoff", cutoff_s, 5, pr.n, 0, 64));
    const int expected = pr.expected;  // parse_input refuses a file without it

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      shared_best best;
      positions P{};
      P[0] = pos{0, 0, -1, -1};  // the origin sentinel: left of column 0, top row 0
      const int fp0[2] = {0, 0};
      board b{};
      rt.reset_stats();
      double t0 = plait_bench::now();
      if constexpr (RT::parallel)
        rt.root([&] { search(rt, pr, 1, fp0, b, P, 0, cutoff, best); });
      else
        search_serial(pr, 1, fp0, b, P, best);
      rec.time_s = plait_bench::now() - t0;
      int area = best.area.load();
      if (inject) area += 1;
      rec.check(area == expected, "minimum area = " + std::to_string(expected) + " (from the input file)");
      rec.stat("area", static_cast<long long>(area));
      rec.stat("nodes", best.nodes.total());
      rec.stat("cutoff_value", static_cast<long long>(cutoff));
      rec.stat("input", file);
      rt.stats(rec);
    });
  });
}

}  // namespace floorplan
