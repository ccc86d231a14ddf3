// Serial elision: every task body as a plain call, in creation order (the baseline of the
// per-task overhead: ns_per_task here is the cost of the bodies and the loop alone).
#include "common/rt/serial.hpp"
#include "dataflow/dataflow.hpp"

using namespace dataflow_bench;

namespace {

// The four patterns for dataflow_bench::main_for (dataflow.hpp).
struct patterns {
  static void chain(Chain& c, long long n) {
    for (long long i = 0; i < n; ++i) c.step(i);
  }

  static void fanout(Fanout& f, long long rounds, long long k) {
    for (long long r = 0; r < rounds; ++r) {
      f.write(r);
      for (long long j = 0; j < k; ++j) f.read(j);
    }
  }

  static void wavefront(Wavefront& w) {
    for (long long i = 0; i < w.nb; ++i)
      for (long long j = 0; j < w.nb; ++j) w.block(i, j);
  }

  static void overhead(Overhead& v, long long n) {
    for (long long i = 0; i < n; ++i) Overhead::body(v.at(i));
  }
};

}  // namespace

int main(int argc, char** argv) { return main_for<kern::rt_serial, patterns>(argc, argv); }
