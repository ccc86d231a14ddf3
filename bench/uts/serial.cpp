// UTS, serial: plain depth-first recursion, the baseline for parallel efficiency.
// One small frame per level (the child being generated); counts accumulate in one struct.
#include "common/driver.hpp"
#include "uts/common.hpp"

namespace {

void walk(const uts::Tree& tree, const uts::Node& parent, uts::Counts& c) {
  ++c.with_kids;
  const int n = parent.nkids;
  c.nodes += static_cast<std::uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    uts::Node kid;
    tree.child(parent, i, kid);
    if (kid.nkids > 0) {
      walk(tree, kid, c);
    } else {
      ++c.leaves;
      if (kid.height > c.depth) c.depth = kid.height;
    }
  }
}

uts::Counts search(const uts::Tree& tree) {
  const uts::Node root = tree.root();
  if (root.nkids == 0) return uts::lone_root();
  uts::Counts c{1, 0, 0, 0};
  walk(tree, root, c);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  plait_bench::ensure_stack(argc, argv, uts::main_stack_bytes, uts::omp_stacksize);
  return plait_bench::main_guard("uts", argc, argv, [&](plait_bench::Cli& cli) {
    const uts::Config cfg = uts::configure(cli, argc, argv);
    const uts::Tree tree(cfg.params);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      const double t0 = plait_bench::now();
      const uts::Counts c = search(tree);
      rec.time_s = plait_bench::now() - t0;
      uts::verify(rec, cfg, c);
      uts::report(rec, cfg, c, 0, 1);
    });
  });
}
