// OpenMP: `#pragma omp task depend(...)` created by one thread inside the adapter's root task
// (parallel + single), then taskwait (inside the timing). libgomp when built by gcc, libomp when
// built by clang-16.
#include <omp.h>

#include "common/rt/omp.hpp"
#include "dataflow/dataflow.hpp"

using namespace dataflow_bench;

namespace {

// The four patterns for dataflow_bench::main_for (dataflow.hpp), which runs each inside the root task.
struct patterns {
  static void chain(Chain& c, long long n) {
    std::uint64_t* x = &c.x;
    (void)x;  // used only in depend clauses, which gcc's -Wunused-variable does not see
    Chain* cp = &c;
    for (long long i = 0; i < n; ++i) {
#pragma omp task depend(inout : x[0]) firstprivate(cp, i)
      cp->step(i);
    }
#pragma omp taskwait
  }

  static void fanout(Fanout& f, long long rounds, long long k) {
    std::uint64_t* x = &f.x;
    (void)x;
    Fanout* fp = &f;
    for (long long r = 0; r < rounds; ++r) {
#pragma omp task depend(inout : x[0]) firstprivate(fp, r)
      fp->write(r);
      for (long long j = 0; j < k; ++j) {
#pragma omp task depend(in : x[0]) firstprivate(fp, j)
        fp->read(j);
      }
    }
#pragma omp taskwait
  }

  static void wavefront(Wavefront& w) {
    char* t = w.token.data();
    (void)t;
    Wavefront* wp = &w;
    const long long nb = w.nb;
    for (long long i = 0; i < nb; ++i)
      for (long long j = 0; j < nb; ++j) {
        if (i > 0 && j > 0) {
#pragma omp task depend(in : t[(i - 1) * nb + j], t[i * nb + j - 1]) depend(inout : t[i * nb + j]) firstprivate(wp, i, j)
          wp->block(i, j);
        } else if (i > 0) {
#pragma omp task depend(in : t[(i - 1) * nb + j]) depend(inout : t[i * nb + j]) firstprivate(wp, i, j)
          wp->block(i, j);
        } else if (j > 0) {
#pragma omp task depend(in : t[i * nb + j - 1]) depend(inout : t[i * nb + j]) firstprivate(wp, i, j)
          wp->block(i, j);
        } else {
#pragma omp task depend(inout : t[i * nb + j]) firstprivate(wp, i, j)
          wp->block(i, j);
        }
      }
#pragma omp taskwait
  }

  static void overhead(Overhead& v, long long n) {
    switch (v.d) {
      case 1:
        for (long long i = 0; i < n; ++i) {
          long* p = v.at(i);
#pragma omp task depend(inout : p[0]) firstprivate(p)
          Overhead::body(p);
        }
        break;
      case 2:
        for (long long i = 0; i < n; ++i) {
          long* p = v.at(i);
#pragma omp task depend(inout : p[0], p[1]) firstprivate(p)
          Overhead::body(p);
        }
        break;
      default:
        for (long long i = 0; i < n; ++i) {
          long* p = v.at(i);
#pragma omp task depend(inout : p[0], p[1], p[2], p[3]) firstprivate(p)
          Overhead::body(p);
        }
        break;
    }
#pragma omp taskwait
  }
};

}  // namespace

int main(int argc, char** argv) { return main_for<kern::rt_omp, patterns>(argc, argv); }
