// Plait: plait::dataflow_group inside one root task; the group's wait() is inside the timing.
#include <plait/dataflow.hpp>
#include <plait/plait.hpp>

#include "common/rt/plait.hpp"
#include "dataflow/dataflow.hpp"

using namespace dataflow_bench;

namespace {

// The four patterns for dataflow_bench::main_for (dataflow.hpp), which runs each inside the root task.
struct patterns {
  static void chain(Chain& c, long long n) {
    plait::dataflow_group g;
    for (long long i = 0; i < n; ++i) g.run({plait::inout(c.x)}, [&c, i] { c.step(i); });
    g.wait();
  }

  static void fanout(Fanout& f, long long rounds, long long k) {
    plait::dataflow_group g;
    for (long long r = 0; r < rounds; ++r) {
      g.run({plait::inout(f.x)}, [&f, r] { f.write(r); });
      for (long long j = 0; j < k; ++j) g.run({plait::in(f.x)}, [&f, j] { f.read(j); });
    }
    g.wait();
  }

  static void wavefront(Wavefront& w) {
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

  static void overhead(Overhead& v, long long n) {
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
};

}  // namespace

int main(int argc, char** argv) { return main_for<kern::rt_plait, patterns>(argc, argv); }
