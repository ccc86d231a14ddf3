// Plait: plait::dataflow_group inside one root task; the group's wait() is inside the timing.
#include <plait/dataflow.hpp>
#include <plait/plait.hpp>

#include "common/plait_counters.hpp"
#include "dataflow/dataflow.hpp"

using namespace dataflow_bench;

namespace {

void chain(Chain& c, long long n) {
  plait::dataflow_group g;
  for (long long i = 0; i < n; ++i) g.run({plait::inout(c.x)}, [&c, i] { c.step(i); });
  g.wait();
}

void fanout(Fanout& f, long long rounds, long long k) {
  plait::dataflow_group g;
  for (long long r = 0; r < rounds; ++r) {
    g.run({plait::inout(f.x)}, [&f, r] { f.write(r); });
    for (long long j = 0; j < k; ++j) g.run({plait::in(f.x)}, [&f, j] { f.read(j); });
  }
  g.wait();
}

void wavefront(Wavefront& w) {
  plait::dataflow_group g;
  for (long long i = 0; i < w.nb; ++i)
    for (long long j = 0; j < w.nb; ++j) {
      auto body = [&w, i, j] { w.block(i, j); };
      if (i > 0 && j > 0) {
        g.run({plait::in(w.tok(i - 1, j)), plait::in(w.tok(i, j - 1)), plait::inout(w.tok(i, j))}, body);
      } else if (i > 0) {
        g.run({plait::in(w.tok(i - 1, j)), plait::inout(w.tok(i, j))}, body);
      } else if (j > 0) {
        g.run({plait::in(w.tok(i, j - 1)), plait::inout(w.tok(i, j))}, body);
      } else {
        g.run({plait::inout(w.tok(i, j))}, body);
      }
    }
  g.wait();
}

void overhead(Overhead& v, long long n) {
  plait::dataflow_group g;
  switch (v.d) {
    case 1:
      for (long long i = 0; i < n; ++i) {
        long* p = v.at(i);
        g.run({plait::inout(p[0])}, [p] { Overhead::body(p); });
      }
      break;
    case 2:
      for (long long i = 0; i < n; ++i) {
        long* p = v.at(i);
        g.run({plait::inout(p[0]), plait::inout(p[1])}, [p] { Overhead::body(p); });
      }
      break;
    default:
      for (long long i = 0; i < n; ++i) {
        long* p = v.at(i);
        g.run({plait::inout(p[0]), plait::inout(p[1]), plait::inout(p[2]), plait::inout(p[3])},
              [p] { Overhead::body(p); });
      }
      break;
  }
  g.wait();
}

}  // namespace

int main(int argc, char** argv) {
  return plait_bench::main_guard("dataflow", argc, argv, [](plait_bench::Cli& cli) {
    Options o;
    parse(cli, o);
    plait::pool_options po;
    po.num_workers = static_cast<unsigned>(cli.threads);
    plait::pool pool(po);
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      pool.reset_counters();
      // Timed inside the root task: the hand-over to a worker is not part of the kernel.
      auto timed = [&](auto&& f) {
        rec.time_s = pool.run([&] {
          double t0 = plait_bench::now();
          f();
          return plait_bench::now() - t0;
        });
      };
      if (o.pattern == "chain") {
        Chain c;
        timed([&] { chain(c, o.tasks); });
        check(rec, o, c);
      } else if (o.pattern == "fanout") {
        Fanout f(o.fanout);
        timed([&] { fanout(f, o.rounds, o.fanout); });
        check(rec, o, f);
      } else if (o.pattern == "wavefront") {
        Wavefront w(o.blocks, o.block_size);
        timed([&] { wavefront(w); });
        check(rec, o, w);
      } else {
        Overhead v(o.tasks, o.deps);
        timed([&] { overhead(v, o.tasks); });
        check(rec, o, v);
      }
      const plait::worker_counters c = pool.total_counters();
      plait_bench::put_counters(rec, c);
      rec.stat("moved_tasks", static_cast<unsigned long long>(c.steals));
    });
  });
}
