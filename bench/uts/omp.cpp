// UTS, OpenMP tasks, written as Figure 1 of the seed study (Olivier): inside parallel/single, a
// node generates each child (the SHA-1 work), and every child that itself has children becomes an
// `untied` task with firstprivate(i, nodePtr) writing its subtree counts into shared partial
// results; one `taskwait` per node, then the partial results are summed. The differences from the
// figure: counts are a small struct (nodes, leaves, nodes with children, depth) instead of a node
// count, the child arrays live in `scratch` (no VLAs in C++), and each task compares its thread
// number with its parent's to count moved tasks (seed section 5.3; rt_omp::note_moved).
// The parallel region with its single is the adapter's root task (rt_omp::root).
//
// Built by gcc as uts-gomp (libgomp) and by clang-16 as uts-libomp (libomp).
#include <omp.h>

#include <cstddef>
#include <cstdlib>
#include <string>

#include "common/rt/omp.hpp"
#include "uts/uts.hpp"

namespace {

const uts::Tree* tree = nullptr;  // shared by all tasks
kern::rt_omp* rt = nullptr;       // counts moved tasks per thread

uts::Counts search(const uts::Node* parent, int numChildren) {
  uts::scratch<uts::Node, 8> n(numChildren);
  uts::scratch<uts::Counts, 8> partialCount(numChildren);
  uts::Node* nodePtr;
  int i;
  const std::size_t parent_thread = rt->me();

  // Recurse on the children of the node
  for (i = 0; i < numChildren; i++) {
    nodePtr = &n[i];

    // The work: granularity x SHA-1, then the child's own number of children
    tree->child(*parent, i, *nodePtr);

    if (nodePtr->nkids > 0) {
      // Traverse the subtree rooted at child i
#pragma omp task untied firstprivate(i, nodePtr) shared(partialCount)
      {
        rt->note_moved(parent_thread);
        partialCount[i] = search(nodePtr, nodePtr->nkids);
      }
    } else {
      partialCount[i] = uts::leaf_counts(nodePtr->height);
    }
  }

  // Wait for all subtree traversals
#pragma omp taskwait

  // Combine the children's counts into the counts of the subtree rooted at the node
  uts::Counts sub{1, 0, 1, 0};
  for (i = 0; i < numChildren; i++) sub += partialCount[i];
  return sub;
}

struct walk : uts::walker_base {
  uts::Counts operator()(kern::rt_omp& r, const uts::Tree& t, const uts::Node& root) const {
    tree = &t;
    rt = &r;
    return search(&root, root.nkids);
  }
  void stats(plait_bench::Record& rec) const {
    const char* s = std::getenv("OMP_STACKSIZE");
    rec.stat("omp_stacksize", std::string(s ? s : ""));
  }
};

}  // namespace

int main(int argc, char** argv) { return uts::main_for<kern::rt_omp>(argc, argv, walk{}); }
