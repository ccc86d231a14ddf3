// UTS, oneTBB: one tbb::task_group per node with children; each child that has children is a
// task_group::run, then wait(). Moved tasks: a task compares tbb::this_task_arena::
// current_thread_index() with its parent's and counts a difference in a per-thread padded counter.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <memory>

#include "common/driver.hpp"
#include "uts/common.hpp"

namespace {

const uts::Tree* tree = nullptr;
uts::padded_counter* moved = nullptr;
int num_slots = 1;

uts::Counts search(const uts::Node& parent) {
  const int n = parent.nkids;
  uts::scratch<uts::Node, 8> kids(n);
  uts::scratch<uts::Counts, 8> part(n);
  const int parent_thread = tbb::this_task_arena::current_thread_index();
  uts::Counts sub{1, 0, 1, 0};
  tbb::task_group g;
  for (int i = 0; i < n; ++i) {
    uts::Node* kid = &kids[i];
    tree->child(parent, i, *kid);
    if (kid->nkids > 0) {
      uts::Counts* out = &part[i];
      g.run([kid, out, parent_thread] {
        const int me = tbb::this_task_arena::current_thread_index();
        if (me != parent_thread) ++moved[me >= 0 && me < num_slots ? me : 0].value;
        *out = search(*kid);
      });
    } else {
      part[i] = uts::leaf_counts(kid->height);
    }
  }
  g.wait();
  for (int i = 0; i < n; ++i) sub += part[i];
  return sub;
}

}  // namespace

int main(int argc, char** argv) {
  plait_bench::ensure_stack(argc, argv, uts::main_stack_bytes, uts::omp_stacksize);
  return plait_bench::main_guard("uts", argc, argv, [&](plait_bench::Cli& cli) {
    const uts::Config cfg = uts::configure(cli, argc, argv);
    const uts::Tree t(cfg.params);
    tree = &t;
    const int threads = static_cast<int>(cli.threads);
    // Worker stacks for deep trees (T3L: 17,844 levels); the main thread's is RLIMIT_STACK.
    tbb::global_control stack(tbb::global_control::thread_stack_size, uts::worker_stack_bytes);
    tbb::global_control par(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    tbb::task_arena arena(threads);
    num_slots = threads;
    auto counters = std::make_unique<uts::padded_counter[]>(static_cast<std::size_t>(num_slots));
    moved = counters.get();
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      for (int k = 0; k < num_slots; ++k) moved[k].value = 0;
      uts::Counts c{};
      const double t0 = plait_bench::now();
      arena.execute([&] {
        const uts::Node root = t.root();
        c = root.nkids == 0 ? uts::lone_root() : search(root);
      });
      rec.time_s = plait_bench::now() - t0;
      std::uint64_t total = 0;
      for (int k = 0; k < num_slots; ++k) total += moved[k].value;
      uts::verify(rec, cfg, c);
      uts::report(rec, cfg, c, total, cli.threads);
    });
  });
}
