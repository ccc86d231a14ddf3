// UTS: the benchmark around the tree search, shared by every runtime: main_for<adapter>(walker).
//
// The search itself is written per runtime, in <runtime>.cpp, with the runtime's own task
// constructs (docs/uts.md: OpenMP is the seed's Figure 1 with untied tasks, Plait has a
// spawn/join and a task_group version). Everything around it goes through the adapter
// (bench/common/rt/): the pool or arena and its worker stacks, the root task, the repetitions,
// the moved-task count and the runtime's counters.
#pragma once

#include "common/driver.hpp"
#include "common/rt/common.hpp"
#include "uts/common.hpp"

namespace uts {

// What a runtime's search provides; a walker derives from this and defines
//   Counts operator()(RT& rt, const Tree& tree, const Node& root)
// which searches below a root that has children, inside the root task. TBB and OpenMP searches
// count their moved tasks through rt.me() and rt.note_moved() (rt/common.hpp); Plait counts them
// itself.
struct walker_base {
  // Options of the runtime's own, registered before the UTS options.
  void add_options(plait_bench::Cli&) {}
  // Statistics of the runtime's own, after the shared ones.
  void stats(plait_bench::Record&) const {}
};

template <class RT, class Walker>
int main_for(int argc, char** argv, Walker walk) {
  // Big main-thread stack and OMP_STACKSIZE: both must be set before libgomp/libomp initialise.
  plait_bench::ensure_stack(argc, argv, main_stack_bytes, omp_stacksize);
  return plait_bench::main_guard("uts", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);  // no OpenMP cut-off variants: UTS has no cut-off
    walk.add_options(cli);
    const Config cfg = configure(cli, argc, argv);
    const Tree tree(cfg.params);
    // Worker stacks for deep trees (T3L: 17,844 levels); the main thread's is RLIMIT_STACK.
    rt.set_worker_stack(worker_stack_bytes);
    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      rt.reset_stats();
      const double t0 = plait_bench::now();
      const Counts c = rt.root([&] {
        const Node root = tree.root();
        return root.nkids == 0 ? lone_root() : walk(rt, tree, root);
      });
      rec.time_s = plait_bench::now() - t0;
      verify(rec, cfg, c);
      report(rec, cfg, c, rt.moved_tasks(), cli.threads);
      walk.stats(rec);
      rt.counters(rec);
    });
  });
}

}  // namespace uts
