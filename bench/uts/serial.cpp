// UTS, serial: plain depth-first recursion, the baseline for parallel efficiency.
// One small frame per level (the child being generated); counts accumulate in one struct.
#include "common/rt/serial.hpp"
#include "uts/expand.hpp"
#include "uts/uts.hpp"

namespace {

struct search : uts::walker_base {
  uts::Counts operator()(kern::rt_serial&, const uts::Tree& tree, const uts::Node& root) const {
    uts::Counts c{1, 0, 0, 0};
    uts::walk(tree, root, c);
    return c;
  }
};

}  // namespace

int main(int argc, char** argv) { return uts::main_for<kern::rt_serial>(argc, argv, search{}); }
