// User-declared reductions in C++: on std::vector (element-wise, initialised from the original's
// size via omp_orig), on a class with operator+ and a non-trivial default state, through a
// combiner function template, and on parallel, for, sections, taskloop and task (in_reduction).
// Integer values only, so any combining order gives the exact answer.
#define TEST_NAME "reduction_cxx"
#include "omp_test.h"
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

struct Hist {
  std::vector<long> bins;
};

void merge(Hist &out, const Hist &in) {
  if (out.bins.size() < in.bins.size()) out.bins.resize(in.bins.size(), 0);
  for (size_t i = 0; i < in.bins.size(); ++i) out.bins[i] += in.bins[i];
}

struct MinMax {
  long lo = 1L << 40, hi = -(1L << 40);
  MinMax operator+(const MinMax &o) const {
    MinMax r;
    r.lo = std::min(lo, o.lo);
    r.hi = std::max(hi, o.hi);
    return r;
  }
};

template <class T>
void add_into(T &out, const T &in) {
  out += in;
}

}  // namespace

#pragma omp declare reduction(vadd : std::vector<long> :                                                 \
    std::transform(omp_out.begin(), omp_out.end(), omp_in.begin(), omp_out.begin(), std::plus<long>())) \
    initializer(omp_priv = std::vector<long>(omp_orig.size(), 0))
#pragma omp declare reduction(hmerge : Hist : merge(omp_out, omp_in)) initializer(omp_priv = Hist{})
#pragma omp declare reduction(+ : MinMax : omp_out = omp_out + omp_in)
#pragma omp declare reduction(tadd : long : add_into(omp_out, omp_in)) initializer(omp_priv = 0)

int main() {
  const int N = 4000;
  std::vector<long> vec(10, 0);
  Hist h;
  MinMax mm;
  long t = 0;
  #pragma omp parallel for reduction(vadd : vec) reduction(hmerge : h) reduction(+ : mm) reduction(tadd : t) \
    schedule(dynamic, 13)
  for (int i = 0; i < N; ++i) {
    vec[static_cast<size_t>(i % 10)] += 1;
    size_t b = static_cast<size_t>(i % 7);
    if (h.bins.size() <= b) h.bins.resize(b + 1, 0);
    h.bins[b] += i;
    MinMax one;
    one.lo = one.hi = i - 3;
    mm = mm + one;
    t += 2;
  }
  for (size_t k = 0; k < 10; ++k) CHECK(vec[k] == N / 10, "vector reduction: bin %zu = %ld", k, vec[k]);
  CHECK(h.bins.size() == 7, "Hist reduction: %zu bins", h.bins.size());
  for (size_t b = 0; b < 7; ++b) {
    long want = 0;
    for (int i = static_cast<int>(b); i < N; i += 7) want += i;
    CHECK(h.bins[b] == want, "Hist reduction: bin %zu = %ld, want %ld", b, h.bins[b], want);
  }
  CHECK(mm.lo == -3 && mm.hi == N - 4, "MinMax reduction: [%ld, %ld]", mm.lo, mm.hi);
  CHECK(t == 2L * N, "template combiner: %ld", t);

  // parallel and sections
  std::vector<long> pv(3, 0);
  int team = 0;
  #pragma omp parallel reduction(vadd : pv)
  {
    #pragma omp single
    team = omp_get_num_threads();
    pv[0] += 1;
    pv[2] += 5;
  }
  CHECK(pv[0] == team && pv[1] == 0 && pv[2] == 5L * team, "parallel vector reduction: %ld %ld %ld", pv[0], pv[1],
        pv[2]);
  MinMax sm;
  #pragma omp parallel sections reduction(+ : sm)
  {
    #pragma omp section
    {
      MinMax a;
      a.lo = a.hi = -50;
      sm = sm + a;
    }
    #pragma omp section
    {
      MinMax a;
      a.lo = a.hi = 70;
      sm = sm + a;
    }
  }
  CHECK(sm.lo == -50 && sm.hi == 70, "sections MinMax: [%ld, %ld]", sm.lo, sm.hi);

  // taskloop and task in_reduction
  std::vector<long> tv(4, 0);
  #pragma omp parallel
  #pragma omp single
  {
    #pragma omp taskloop reduction(vadd : tv) grainsize(50)
    for (int i = 0; i < N; ++i) tv[static_cast<size_t>(i % 4)] += 1;
    #pragma omp taskgroup task_reduction(vadd : tv)
    {
      for (int k = 0; k < 40; ++k) {
        #pragma omp task in_reduction(vadd : tv)
        tv[3] += 100;
      }
    }
  }
  CHECK(tv[0] == N / 4 && tv[1] == N / 4 && tv[2] == N / 4 && tv[3] == N / 4 + 4000,
        "taskloop/task vector reduction: %ld %ld %ld %ld", tv[0], tv[1], tv[2], tv[3]);
  PASS();
}
