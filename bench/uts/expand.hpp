// The step every depth-first UTS search repeats per node (uts-serial's recursion, uts-mpi's
// stacks, the unit tests' reference count): generate the children of a node and count them.
#pragma once

#include <cstdint>

#include "uts/common.hpp"

namespace uts {

// Expands `parent`, a node with children: counts it (with_kids) and its children (nodes),
// generates each child in order (the SHA-1 work) and hands a child that has children to
// `inner(kid)`; a leaf is counted here (leaves, depth).
template <class Inner>
inline void expand(const Tree& tree, const Node& parent, Counts& c, Inner&& inner) {
  ++c.with_kids;
  const int n = parent.nkids;
  c.nodes += static_cast<std::uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    Node kid;
    tree.child(parent, i, kid);
    if (kid.nkids > 0) {
      inner(kid);
    } else {
      ++c.leaves;
      if (kid.height > c.depth) c.depth = kid.height;
    }
  }
}

// The plain recursive search below `parent` (one small frame per level: the child being
// generated), counts accumulated in `c`.
inline void walk(const Tree& tree, const Node& parent, Counts& c) {
  expand(tree, parent, c, [&](const Node& kid) { walk(tree, kid, c); });
}

}  // namespace uts
