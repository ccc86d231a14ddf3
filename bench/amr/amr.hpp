// miniAMR proxy: the benchmark around one simulation, shared by every runtime:
// main_for<adapter>(run).
//
// The variants' parallel code is written per runtime, in <runtime>.cpp: Plait runs the whole
// simulation as one root task with parallel_for / parallel_reduce / dataflow_group inside, OpenMP
// opens a parallel region per loop or per timestep, with refinement serial in between (docs/amr.md).
// `run(rt, sim, variant)` is that code: it runs one simulation on `sim` and returns the number of
// tasks it created (0 for the loop variants). Everything around it goes through the adapter
// (bench/common/rt/): the pool, the repetitions, the timing and the runtime's counters.
#pragma once

#include <string>

#include "amr/common.hpp"
#include "common/driver.hpp"
#include "common/rt/common.hpp"

namespace amr {

template <class RT, class Run>
int main_for(int argc, char** argv, Run run) {
  return plait_bench::main_guard("amr", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);  // amr's --variant is its own (study 003's four), not OpenMP's cut-off styles
    Options o;
    add_options(cli, o, argc, argv);
    cli.parse();
    finish_options(o);
    const Variant var = parse_variant(o.variant);
    rt.start(cli.threads);
    Sim sim(o);
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      sim.reset();  // not timed: initial mesh and values
      rt.reset_stats();
      const double t0 = plait_bench::now();
      const unsigned long long tasks = run(rt, sim, var);
      rec.time_s = plait_bench::now() - t0;
      sim.finish();
      sim.verify(rec);
      rec.stat("variant", std::string(variant_name(var)));
      if constexpr (RT::parallel) rec.stat("tasks", tasks);
      kern::runtime_stats(rt, rec);
    });
  });
}

}  // namespace amr
