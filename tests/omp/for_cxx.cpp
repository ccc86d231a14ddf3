// Worksharing loops in C++: random-access iterators as loop variables (std::vector and a raw
// pointer range), and class-type data-sharing clauses counted exactly: private makes one
// default-constructed object per implicit task, firstprivate one copy per implicit task,
// lastprivate copy-assigns the sequentially last iteration's object to the original, every object
// made is destroyed exactly once; a loop inside a member function over the object's own data.
#define TEST_NAME "for_cxx"
#include "omp_test.h"
#include <omp.h>

#include <numeric>
#include <string>
#include <vector>

namespace {

int ctor, copy_ctor, assign, dtor;

struct Counted {
  long v = -1;
  std::string tag = "fresh";
  Counted() { AT_INC(&ctor); }
  Counted(const Counted &o) : v(o.v), tag(o.tag) { AT_INC(&copy_ctor); }
  Counted &operator=(const Counted &o) {
    v = o.v;
    tag = o.tag;
    AT_INC(&assign);
    return *this;
  }
  ~Counted() { AT_INC(&dtor); }
};

void reset() { ctor = copy_ctor = assign = dtor = 0; }

struct Grid {
  std::vector<double> cells;
  explicit Grid(int n) : cells(static_cast<size_t>(n), 0.0) {}
  void fill() {
    #pragma omp parallel for schedule(dynamic, 8)
    for (size_t i = 0; i < cells.size(); ++i) cells[i] = static_cast<double>(i) * 0.5;
  }
};

}  // namespace

int main() {
  const int N = 5000;
  std::vector<int> v(N);
  std::iota(v.begin(), v.end(), 0);
  std::vector<int> hits(N, 0);

  // iterator loop variable
  #pragma omp parallel for schedule(dynamic, 7)
  for (std::vector<int>::iterator it = v.begin(); it < v.end(); ++it) AT_INC(&hits[static_cast<size_t>(*it)]);
  for (int i = 0; i < N; ++i) CHECK(hits[static_cast<size_t>(i)] == 1, "iterator loop: %d ran %d times", i, hits[i]);

  // const_iterator with a step, static chunk, inside a region
  long sum = 0;
  #pragma omp parallel
  {
    #pragma omp for schedule(static, 3) reduction(+ : sum)
    for (std::vector<int>::const_iterator it = v.cbegin(); it < v.cend(); it += 2) sum += *it;
  }
  CHECK(sum == static_cast<long>(N / 2) * (N - 2) / 2, "iterator loop step 2 sum %ld", sum);

  // pointer range
  int *base = v.data();
  long psum = 0;
  #pragma omp parallel for reduction(+ : psum) schedule(guided)
  for (int *p = base + N - 1; p >= base; --p) psum += *p;
  CHECK(psum == static_cast<long>(N) * (N - 1) / 2, "pointer loop sum %ld", psum);

  int team = 0;
  #pragma omp parallel
  #pragma omp single
  team = omp_get_num_threads();

  // private: one default construction and one destruction per implicit task
  reset();
  {
    Counted c;
    c.v = 99;
    reset();
    int bad = 0;
    #pragma omp parallel for private(c) schedule(static)
    for (int i = 0; i < N; ++i) {
      if (c.tag != "fresh" && c.tag != "used") AT_INC(&bad);
      c.tag = "used";
      c.v = i;
    }
    CHECK(bad == 0, "private objects were not default-constructed");
    CHECK(ctor == team && dtor == team && copy_ctor == 0, "private: %d constructions, %d destructions, %d copies "
          "for a team of %d", ctor, dtor, copy_ctor, team);
    CHECK(c.v == 99, "private leaked into the original: %ld", c.v);

    // firstprivate: one copy per implicit task
    reset();
    c.tag = "orig";
    #pragma omp parallel for firstprivate(c) schedule(dynamic)
    for (int i = 0; i < N; ++i) {
      if (c.tag != "orig") AT_INC(&bad);
      c.v = i;
    }
    CHECK(bad == 0, "firstprivate objects were not copies of the original");
    CHECK(copy_ctor == team && dtor == team, "firstprivate: %d copies, %d destructions for a team of %d", copy_ctor,
          dtor, team);

    // lastprivate: the last iteration's object assigned back once
    reset();
    #pragma omp parallel for lastprivate(c) schedule(guided)
    for (int i = 0; i < N; ++i) {
      c.v = i;
      c.tag = "last";
    }
    CHECK(c.v == N - 1 && c.tag == "last", "lastprivate: v %ld tag %s", c.v, c.tag.c_str());
    CHECK(assign == 1 && ctor == team && dtor == team, "lastprivate: %d assignments, %d constructions, %d "
          "destructions for a team of %d", assign, ctor, dtor, team);
  }

  Grid g(3000);
  g.fill();
  for (size_t i = 0; i < g.cells.size(); ++i)
    CHECK(g.cells[i] == static_cast<double>(i) * 0.5, "member-function loop: cell %zu = %g", i, g.cells[i]);
  PASS();
}
