// UTS, oneTBB: one tbb::task_group per node with children; each child that has children is a
// task_group::run, then wait(). Moved tasks: a task reports its parent's arena slot to the adapter
// (rt_tbb::note_moved), which counts a difference in a per-thread padded counter.
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <cstddef>

#include "common/rt/tbb.hpp"
#include "uts/uts.hpp"

namespace {

const uts::Tree* tree = nullptr;
kern::rt_tbb* rt = nullptr;

uts::Counts search(const uts::Node& parent) {
  const int n = parent.nkids;
  uts::scratch<uts::Node, 8> kids(n);
  uts::scratch<uts::Counts, 8> part(n);
  const std::size_t parent_thread = rt->me();
  uts::Counts sub{1, 0, 1, 0};
  tbb::task_group g;
  for (int i = 0; i < n; ++i) {
    uts::Node* kid = &kids[i];
    tree->child(parent, i, *kid);
    if (kid->nkids > 0) {
      uts::Counts* out = &part[i];
      g.run([kid, out, parent_thread] {
        rt->note_moved(parent_thread);
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

struct walk : uts::walker_base {
  uts::Counts operator()(kern::rt_tbb& r, const uts::Tree& t, const uts::Node& root) const {
    tree = &t;
    rt = &r;
    return search(root);
  }
};

}  // namespace

int main(int argc, char** argv) { return uts::main_for<kern::rt_tbb>(argc, argv, walk{}); }
