// miniAMR proxy, OpenMP (libgomp with gcc, libomp with clang-16): the four variants of study 003
// Table 1.
//   loop      every phase a `parallel for schedule(static)` (implicit barriers between phases)
//   loop-dyn  the communication loop `schedule(dynamic, dyn_chunk)`, the rest as loop
//   task-1    per timestep one `parallel` + `single`: a task per face exchange with
//             depend(inout) on the group's variables of both blocks, a stencil task per block with
//             depend(inout); at a checksum stage `taskwait`, then a `taskloop` over the blocks
//   task-2    as task-1, but a checksum task per block with depend(in) and no taskwait before it
//             (the taskwait follows the checksum tasks, then the validation)
// Refinement runs serially between timesteps, outside the parallel region, as in the reference.
#include <omp.h>

#include "amr/amr.hpp"
#include "common/rt/omp.hpp"

namespace {

// `nt`: the adapter's thread count, the num_threads of every parallel region.
void run_loop(amr::Sim& sim, bool dyn, int nt) {
  amr::Mesh& m = sim.mesh();
  const amr::Options& o = sim.opt();
  const int chunk = static_cast<int>(o.dyn_chunk);
  for (long long ts = 0; ts < o.num_tsteps; ++ts) {
    for (long long st = 0; st < o.stages_per_ts; ++st) {
      const long long stage = ts * o.stages_per_ts + st;
      for (int grp = 0; grp < sim.groups(); ++grp) {
        const int nb = static_cast<int>(m.active().size());
        const int* act = m.active().data();
        if (dyn) {
#pragma omp parallel for schedule(dynamic, chunk) num_threads(nt)
          for (int bi = 0; bi < nb; ++bi) sim.comm_block(bi, grp);
        } else {
#pragma omp parallel for schedule(static) num_threads(nt)
          for (int bi = 0; bi < nb; ++bi) sim.comm_block(bi, grp);
        }
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int bi = 0; bi < nb; ++bi) sim.stencil_block(act[bi], grp);
        if (sim.checksum_stage(stage)) {
          const int v0 = sim.gbegin(grp), v1 = sim.gend(grp);
#pragma omp parallel for schedule(static) num_threads(nt)
          for (int bi = 0; bi < nb; ++bi) sim.block_sums(bi, v0, v1);
          for (int v = v0; v < v1; ++v) sim.validate(stage, v, sim.ordered_sum(v));
        }
      }
    }
    sim.end_timestep(ts);
  }
}

// Returns the number of tasks created.
unsigned long long run_tasks(amr::Sim& sim, bool task2, int nt) {
  amr::Mesh& m = sim.mesh();
  const amr::Options& o = sim.opt();
  const long long bsize = m.geom().bsize;
  unsigned long long tasks = 0;
  for (long long ts = 0; ts < o.num_tsteps; ++ts) {
#pragma omp parallel num_threads(nt) shared(sim, m, o, tasks)
#pragma omp single
    {
      const int nb = static_cast<int>(m.active().size());
      const std::vector<amr::Op>& ops = m.ops();
      for (long long st = 0; st < o.stages_per_ts; ++st) {
        const long long stage = ts * o.stages_per_ts + st;
        for (int grp = 0; grp < sim.groups(); ++grp) {
          const int v0 = sim.gbegin(grp), v1 = sim.gend(grp);
          const long long len = (v1 - v0) * bsize;
          // Every dependence is one block's whole group section: identical or disjoint, as
          // OpenMP requires of sibling depend items.
          for (const amr::Op& op : ops) {
            [[maybe_unused]] double* pa = m.block_data(op.a) + v0 * bsize;
            [[maybe_unused]] double* pb = m.block_data(op.b) + v0 * bsize;
            const amr::Op* opp = &op;
            if (op.a == op.b) {
#pragma omp task default(shared) firstprivate(opp, v0, v1) depend(inout : pa[0 : len])
              m.apply(*opp, v0, v1);
            } else {
#pragma omp task default(shared) firstprivate(opp, v0, v1) depend(inout : pa[0 : len], pb[0 : len])
              m.apply(*opp, v0, v1);
            }
            ++tasks;
          }
          for (int bi = 0; bi < nb; ++bi) {
            const int slot = m.active()[static_cast<std::size_t>(bi)];
            [[maybe_unused]] double* pa = m.block_data(slot) + v0 * bsize;
#pragma omp task default(shared) firstprivate(slot, grp) depend(inout : pa[0 : len])
            sim.stencil_block(slot, grp);
            ++tasks;
          }
          if (!sim.checksum_stage(stage)) continue;
          if (!task2) {
#pragma omp taskwait
            // unsigned induction variable: clang-16 compares a signed one with its unsigned trip count (-Wsign-compare)
            const std::size_t nbl = static_cast<std::size_t>(nb);
#pragma omp taskloop default(shared) firstprivate(v0, v1)
            for (std::size_t bi = 0; bi < nbl; ++bi) sim.block_sums(static_cast<int>(bi), v0, v1);
          } else {
            for (int bi = 0; bi < nb; ++bi) {
              const int slot = m.active()[static_cast<std::size_t>(bi)];
              [[maybe_unused]] double* pa = m.block_data(slot) + v0 * bsize;
#pragma omp task default(shared) firstprivate(bi, v0, v1) depend(in : pa[0 : len])
              sim.block_sums(bi, v0, v1);
              ++tasks;
            }
#pragma omp taskwait
          }
          for (int v = v0; v < v1; ++v) sim.validate(stage, v, sim.ordered_sum(v));
        }
      }
    }  // end of single and parallel: implicit barrier
    sim.end_timestep(ts);
  }
  return tasks;
}

}  // namespace

int main(int argc, char** argv) {
  return amr::main_for<kern::rt_omp>(argc, argv, [](kern::rt_omp& rt, amr::Sim& sim, amr::Variant v) {
    const int nt = rt.threads();
    switch (v) {
      case amr::Variant::loop: run_loop(sim, false, nt); break;
      case amr::Variant::loop_dyn: run_loop(sim, true, nt); break;
      case amr::Variant::task1: return run_tasks(sim, false, nt);
      case amr::Variant::task2: return run_tasks(sim, true, nt);
    }
    return 0ULL;
  });
}
