// UTS, OpenMP tasks, written as Figure 1 of the seed study (Olivier): inside parallel/single, a
// node generates each child (the SHA-1 work), and every child that itself has children becomes an
// `untied` task with firstprivate(i, nodePtr) writing its subtree counts into shared partial
// results; one `taskwait` per node, then the partial results are summed. The differences from the
// figure: counts are a small struct (nodes, leaves, nodes with children, depth) instead of a node
// count, the child arrays live in `scratch` (no VLAs in C++), and each task compares its thread
// number with its parent's to count moved tasks (seed section 5.3).
//
// Built by gcc as uts-gomp (libgomp) and by clang-16 as uts-libomp (libomp).
#include <omp.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "common/driver.hpp"
#include "uts/common.hpp"

namespace {

const uts::Tree* tree = nullptr;       // shared by all tasks
uts::padded_counter* moved = nullptr;  // moved[t]: tasks that started on thread t, away from their parent
int num_threads = 1;

void count_moved(int parent_thread) {
  const int me = omp_get_thread_num();
  if (me != parent_thread) ++moved[me < num_threads ? me : 0].value;
}

uts::Counts search(const uts::Node* parent, int numChildren) {
  uts::scratch<uts::Node, 8> n(numChildren);
  uts::scratch<uts::Counts, 8> partialCount(numChildren);
  uts::Node* nodePtr;
  int i;
  const int parent_thread = omp_get_thread_num();

  // Recurse on the children of the node
  for (i = 0; i < numChildren; i++) {
    nodePtr = &n[i];

    // The work: granularity x SHA-1, then the child's own number of children
    tree->child(*parent, i, *nodePtr);

    if (nodePtr->nkids > 0) {
      // Traverse the subtree rooted at child i
#pragma omp task untied firstprivate(i, nodePtr) shared(partialCount)
      {
        count_moved(parent_thread);
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

}  // namespace

int main(int argc, char** argv) {
  // Big main-thread stack and OMP_STACKSIZE must be set before libgomp/libomp initialise.
  plait_bench::ensure_stack(argc, argv, uts::main_stack_bytes, uts::omp_stacksize);
  return plait_bench::main_guard("uts", argc, argv, [&](plait_bench::Cli& cli) {
    const uts::Config cfg = uts::configure(cli, argc, argv);
    const uts::Tree t(cfg.params);
    tree = &t;
    num_threads = static_cast<int>(cli.threads);
    auto counters = std::make_unique<uts::padded_counter[]>(static_cast<std::size_t>(num_threads));
    moved = counters.get();
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      for (int k = 0; k < num_threads; ++k) moved[k].value = 0;
      uts::Counts c{};
      const double t0 = plait_bench::now();
      const uts::Node root = t.root();
      if (root.nkids == 0) {
        c = uts::lone_root();
      } else {
#pragma omp parallel num_threads(num_threads)
#pragma omp single
        c = search(&root, root.nkids);
      }
      rec.time_s = plait_bench::now() - t0;
      std::uint64_t total = 0;
      for (int k = 0; k < num_threads; ++k) total += moved[k].value;
      uts::verify(rec, cfg, c);
      uts::report(rec, cfg, c, total, cli.threads);
      rec.stat("omp_stacksize", std::string(std::getenv("OMP_STACKSIZE") ? std::getenv("OMP_STACKSIZE") : ""));
    });
  });
}
