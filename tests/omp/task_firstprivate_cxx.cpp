// firstprivate of C++ objects in tasks (gcc passes a copy function, cpyfn, to GOMP_task when a
// capture has a non-trivial copy constructor): every task sees its own copy made by the copy
// constructor from the object's value at task creation, every copy is destroyed exactly once (live
// count back to zero), copies are independent of the original and of each other; also std::string
// and std::vector captures, a class with an over-aligned member, and objects captured by deferred
// tasks of a region that all threads create.
#define TEST_NAME "task_firstprivate_cxx"
#include "omp_test.h"
#include <omp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

int live;         // objects alive now
int copies;       // copy constructions
int bad_copy;     // a copy that did not copy

struct Tracked {
  int value;
  const Tracked *self;  // points at itself in every valid object
  explicit Tracked(int v) : value(v), self(this) { AT_INC(&live); }
  Tracked(const Tracked &o) : value(o.value), self(this) {
    if (o.self != &o) AT_INC(&bad_copy);  // copied from garbage
    AT_INC(&live);
    AT_INC(&copies);
  }
  Tracked &operator=(const Tracked &) = delete;
  ~Tracked() {
    if (self != this) AT_INC(&bad_copy);  // bitwise-moved without the copy constructor
    self = nullptr;
    AT_DEC(&live);
  }
  bool ok() const { return self == this; }
};

struct alignas(64) Wide {
  double v[8];
  std::string name;
  Wide(double x, const char *n) : name(n) {
    for (double &d : v) d = x;
  }
};

}  // namespace

int main() {
  int bad = 0;
  {
    Tracked t(7);
    std::string s = "plait-omp";
    std::vector<int> vec(100, 3);
    Wide w(2.5, "wide");
    #pragma omp parallel
    #pragma omp single
    {
      for (int i = 0; i < 200; ++i) {
        t.value = i;
        vec[0] = i;
        #pragma omp task firstprivate(t, s, vec, w) shared(bad)
        {
          if (!t.ok() || t.value != i) AT_INC(&bad);
          if (s != "plait-omp") AT_INC(&bad);
          if (vec.size() != 100 || vec[0] != i || vec[99] != 3) AT_INC(&bad);
          if (reinterpret_cast<uintptr_t>(&w) % 64 != 0 || w.v[7] != 2.5 || w.name != "wide") AT_INC(&bad);
          // writes to the copies stay in the copies
          t.value = -1;
          s += "!";
          vec.push_back(1);
          w.name = "changed";
        }
      }
      #pragma omp taskwait
      if (t.value != 199 || s != "plait-omp" || vec.size() != 100 || w.name != "wide") AT_INC(&bad);
    }
    CHECK(copies >= 200, "%d copy constructions for 200 firstprivate captures", copies);
  }
  CHECK(bad == 0, "%d tasks saw a wrong firstprivate copy (or changed the original)", bad);
  CHECK(bad_copy == 0, "%d objects were copied bitwise or from a destroyed object", bad_copy);
  CHECK(live == 0, "%d objects still alive (copies not destroyed, or destroyed twice)", live);

  // every thread creates tasks capturing its own object
  copies = 0;
  #pragma omp parallel shared(bad)
  {
    Tracked mine(omp_get_thread_num());
    for (int i = 0; i < 50; ++i) {
      #pragma omp task firstprivate(mine) shared(bad)
      {
        Tracked inner(mine.value);
        #pragma omp task firstprivate(inner) shared(bad)
        if (!inner.ok() || inner.value < 0 || inner.value >= omp_get_num_threads()) AT_INC(&bad);
      }
    }
    #pragma omp taskwait
  }
  CHECK(bad == 0 && bad_copy == 0, "nested firstprivate copies: %d bad, %d bad copies", bad, bad_copy);
  CHECK(live == 0, "%d objects still alive after the region", live);
  PASS();
}
