// miniAMR proxy on Plait: the four variants of study 003 Table 1.
//   loop      plait::parallel_for over the blocks with static_partition() per phase
//   loop-dyn  the communication loop with dynamic_partition(dyn_chunk), the rest as loop
//   task-1    a plait::dataflow_group per timestep: a task per face exchange with inout accesses
//             on the group's variables of both blocks, a stencil task per block (inout); at a
//             checksum stage wait(), then plait::parallel_reduce per variable (deterministic)
//   task-2    as task-1, but a checksum task per block (in access) and no wait before them
// The whole simulation is one root task of the adapter's pool; refinement runs serially between
// timesteps inside it, as in the reference.
#include <plait/dataflow.hpp>
#include <plait/parallel_for.hpp>
#include <plait/plait.hpp>

#include "amr/amr.hpp"
#include "common/rt/plait.hpp"

namespace {

void run_loop(amr::Sim& sim, bool dyn) {
  amr::Mesh& m = sim.mesh();
  const amr::Options& o = sim.opt();
  const plait::partitioner comm = dyn ? plait::dynamic_partition(o.dyn_chunk) : plait::static_partition();
  for (long long ts = 0; ts < o.num_tsteps; ++ts) {
    for (long long st = 0; st < o.stages_per_ts; ++st) {
      const long long stage = ts * o.stages_per_ts + st;
      for (int grp = 0; grp < sim.groups(); ++grp) {
        const auto nb = static_cast<std::int64_t>(m.active().size());
        plait::parallel_for(0, nb, [&](std::int64_t bi) { sim.comm_block(static_cast<int>(bi), grp); }, comm);
        plait::parallel_for(
            0, nb, [&](std::int64_t bi) { sim.stencil_block(m.active()[static_cast<std::size_t>(bi)], grp); },
            plait::static_partition());
        if (sim.checksum_stage(stage)) {
          const int v0 = sim.gbegin(grp), v1 = sim.gend(grp);
          plait::parallel_for(0, nb, [&](std::int64_t bi) { sim.block_sums(static_cast<int>(bi), v0, v1); },
                              plait::static_partition());
          for (int v = v0; v < v1; ++v) sim.validate(stage, v, sim.ordered_sum(v));
        }
      }
    }
    sim.end_timestep(ts);
  }
}

// Returns the number of tasks created.
unsigned long long run_tasks(amr::Sim& sim, bool task2) {
  amr::Mesh& m = sim.mesh();
  const amr::Options& o = sim.opt();
  const long long bsize = m.geom().bsize;
  unsigned long long tasks = 0;
  for (long long ts = 0; ts < o.num_tsteps; ++ts) {
    {
      plait::dataflow_group g;
      const int nb = static_cast<int>(m.active().size());
      for (long long st = 0; st < o.stages_per_ts; ++st) {
        const long long stage = ts * o.stages_per_ts + st;
        for (int grp = 0; grp < sim.groups(); ++grp) {
          const int v0 = sim.gbegin(grp), v1 = sim.gend(grp);
          const auto len = static_cast<std::size_t>((v1 - v0) * bsize);
          for (const amr::Op& op : m.ops()) {
            const double* pa = m.block_data(op.a) + v0 * bsize;
            const double* pb = m.block_data(op.b) + v0 * bsize;
            const amr::Op* opp = &op;
            if (op.a == op.b)
              g.run({plait::inout(pa, len)}, [&m, opp, v0, v1] { m.apply(*opp, v0, v1); });
            else
              g.run({plait::inout(pa, len), plait::inout(pb, len)}, [&m, opp, v0, v1] { m.apply(*opp, v0, v1); });
            ++tasks;
          }
          for (int slot : m.active()) {
            const double* pa = m.block_data(slot) + v0 * bsize;
            g.run({plait::inout(pa, len)}, [&sim, slot, grp] { sim.stencil_block(slot, grp); });
            ++tasks;
          }
          if (!sim.checksum_stage(stage)) continue;
          if (!task2) {
            g.wait();
            for (int v = v0; v < v1; ++v) {
              double s = plait::parallel_reduce(
                  std::int64_t{0}, static_cast<std::int64_t>(nb), 0.0,
                  [&](std::int64_t lo, std::int64_t hi, double acc) {
                    for (std::int64_t bi = lo; bi < hi; ++bi)
                      acc += amr::interior_sum(m.geom(), m.var(m.active()[static_cast<std::size_t>(bi)], v));
                    return acc;
                  },
                  [](double a, double b) { return a + b; }, plait::adaptive_partition(),
                  plait::reduce_mode::deterministic);
              sim.validate(stage, v, s);
            }
          } else {
            for (int bi = 0; bi < nb; ++bi) {
              const double* pa = m.block_data(m.active()[static_cast<std::size_t>(bi)]) + v0 * bsize;
              g.run({plait::in(pa, len)}, [&sim, bi, v0, v1] { sim.block_sums(bi, v0, v1); });
              ++tasks;
            }
            g.wait();
            for (int v = v0; v < v1; ++v) sim.validate(stage, v, sim.ordered_sum(v));
          }
        }
      }
      g.wait();
    }
    sim.end_timestep(ts);
  }
  return tasks;
}

}  // namespace

int main(int argc, char** argv) {
  return amr::main_for<kern::rt_plait>(argc, argv, [](kern::rt_plait& rt, amr::Sim& sim, amr::Variant v) {
    return rt.root([&]() -> unsigned long long {
      switch (v) {
        case amr::Variant::loop: run_loop(sim, false); break;
        case amr::Variant::loop_dyn: run_loop(sim, true); break;
        case amr::Variant::task1: return run_tasks(sim, false);
        case amr::Variant::task2: return run_tasks(sim, true);
      }
      return 0;
    });
  });
}
