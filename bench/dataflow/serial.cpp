// Serial elision: every task body as a plain call, in creation order (the baseline of the
// per-task overhead: ns_per_task here is the cost of the bodies and the loop alone).
#include "dataflow/dataflow.hpp"

using namespace dataflow_bench;

int main(int argc, char** argv) {
  return plait_bench::main_guard("dataflow", argc, argv, [](plait_bench::Cli& cli) {
    Options o;
    parse(cli, o);
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      if (o.pattern == "chain") {
        Chain c;
        double t0 = plait_bench::now();
        for (long long i = 0; i < o.tasks; ++i) c.step(i);
        rec.time_s = plait_bench::now() - t0;
        check(rec, o, c);
      } else if (o.pattern == "fanout") {
        Fanout f(o.fanout);
        double t0 = plait_bench::now();
        for (long long r = 0; r < o.rounds; ++r) {
          f.write(r);
          for (long long k = 0; k < o.fanout; ++k) f.read(k);
        }
        rec.time_s = plait_bench::now() - t0;
        check(rec, o, f);
      } else if (o.pattern == "wavefront") {
        Wavefront w(o.blocks, o.block_size);
        double t0 = plait_bench::now();
        for (long long i = 0; i < o.blocks; ++i)
          for (long long j = 0; j < o.blocks; ++j) w.block(i, j);
        rec.time_s = plait_bench::now() - t0;
        check(rec, o, w);
      } else {
        Overhead v(o.tasks, o.deps);
        double t0 = plait_bench::now();
        for (long long i = 0; i < o.tasks; ++i) Overhead::body(v.at(i));
        rec.time_s = plait_bench::now() - t0;
        check(rec, o, v);
      }
    });
  });
}
