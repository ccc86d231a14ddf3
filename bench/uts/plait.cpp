// UTS on Plait, two variants (--variant):
//   spawn  the seed's Figure 1 shape with spawn/join: a node generates its children in order and
//          spawns one task per child that has children, then joins them (last spawned first).
//          Handles cannot be stored in an array, so "spawn child i, go on with children i+1..,
//          join child i" is written as a recursion over the child index; the spawn order is the
//          figure's and the joins are LIFO.
//   group  one plait::task_group per node: run() per child that has children, then wait().
// Moved tasks are the pool's `steals` counter (tasks that ran on another worker than the one
// that spawned them).
#include <plait/plait.hpp>

#include <stdexcept>

#include "common/driver.hpp"
#include "common/plait_counters.hpp"
#include "uts/common.hpp"

namespace {

const uts::Tree* tree = nullptr;

// ---- spawn / join ---------------------------------------------------------------------------

uts::Counts search_spawn(const uts::Node& parent);

// Counts of the subtrees of parent's children i, i+1, ...
uts::Counts children_from(const uts::Node& parent, int i) {
  uts::Counts c{0, 0, 0, 0};
  for (; i < parent.nkids; ++i) {
    uts::Node kid;
    tree->child(parent, i, kid);
    if (kid.nkids > 0) {
      auto h = plait::spawn([&kid] { return search_spawn(kid); });
      c += children_from(parent, i + 1);
      c += h.join();
      return c;
    }
    c += uts::leaf_counts(kid.height);
  }
  return c;
}

uts::Counts search_spawn(const uts::Node& parent) {
  uts::Counts c{1, 0, 1, 0};
  c += children_from(parent, 0);
  return c;
}

// ---- task_group -----------------------------------------------------------------------------

uts::Counts search_group(const uts::Node& parent) {
  const int n = parent.nkids;
  uts::scratch<uts::Node, 8> kids(n);
  uts::scratch<uts::Counts, 8> part(n);
  uts::Counts sub{1, 0, 1, 0};
  plait::task_group g;
  for (int i = 0; i < n; ++i) {
    uts::Node* kid = &kids[i];
    tree->child(parent, i, *kid);
    if (kid->nkids > 0) {
      uts::Counts* out = &part[i];
      g.run([kid, out] { *out = search_group(*kid); });
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
    std::string variant = "spawn";
    cli.add_string("variant", &variant,
                   "spawn: one spawn per child with children (seed Fig. 1); group: task_group per node",
                   {"spawn", "group"});
    const uts::Config cfg = uts::configure(cli, argc, argv);
    const uts::Tree t(cfg.params);
    tree = &t;
    plait::pool_options opts;
    opts.num_workers = static_cast<unsigned>(cli.threads);
    // stack_size 0: PLAIT_STACK_SIZE or 1 GiB per worker, enough for T3L (17,844 levels). A
    // malformed PLAIT_* variable is a std::invalid_argument, which main_guard maps to exit 2.
    plait::pool pool(opts);
    const bool group = variant == "group";
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      pool.reset_counters();
      const double t0 = plait_bench::now();
      const uts::Counts c = pool.run([&] {
        const uts::Node root = t.root();
        if (root.nkids == 0) return uts::lone_root();
        return group ? search_group(root) : search_spawn(root);
      });
      rec.time_s = plait_bench::now() - t0;
      const plait::worker_counters k = pool.total_counters();
      uts::verify(rec, cfg, c);
      uts::report(rec, cfg, c, k.steals, cli.threads);
      rec.stat("variant", variant);
      plait_bench::put_counters(rec, k);  // (moved_tasks: uts::report, from k.steals)
    });
  });
}
