// UTS, serial: plain depth-first recursion, the baseline for parallel efficiency.
// One small frame per level (the child being generated); counts accumulate in one struct.
#include "common/rt/serial.hpp"
#include "uts/uts.hpp"

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

struct search : uts::walker_base {
  uts::Counts operator()(kern::rt_serial&, const uts::Tree& tree, const uts::Node& root) const {
    uts::Counts c{1, 0, 0, 0};
    walk(tree, root, c);
    return c;
  }
};

}  // namespace

int main(int argc, char** argv) { return uts::main_for<kern::rt_serial>(argc, argv, search{}); }
