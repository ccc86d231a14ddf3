// UTS on Plait, two variants (--variant):
//   spawn  the seed's Figure 1 shape with spawn/join: a node generates its children in order and
//          spawns one task per child that has children, then joins them (last spawned first).
//          Handles cannot be stored in an array, so "spawn child i, go on with children i+1..,
//          join child i" is written as a recursion over the child index; the spawn order is the
//          figure's and the joins are LIFO.
//   group  one plait::task_group per node: run() per child that has children, then wait().
// Moved tasks are the pool's `steals` counter (tasks that ran on another worker than the one
// that spawned them), read by the adapter.
#include <plait/plait.hpp>

#include <string>

#include "common/rt/plait.hpp"
#include "uts/uts.hpp"

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

struct search : uts::walker_base {
  std::string variant = "spawn";
  void add_options(plait_bench::Cli& cli) {
    cli.add_string("variant", &variant,
                   "spawn: one spawn per child with children (seed Fig. 1); group: task_group per node",
                   {"spawn", "group"});
  }
  uts::Counts operator()(kern::rt_plait&, const uts::Tree& t, const uts::Node& root) const {
    tree = &t;
    return variant == "group" ? search_group(root) : search_spawn(root);
  }
  void stats(plait_bench::Record& rec) const { rec.stat("variant", variant); }
};

}  // namespace

int main(int argc, char** argv) { return uts::main_for<kern::rt_plait>(argc, argv, search{}); }
