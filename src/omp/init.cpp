// Load-time checks of the OpenMP front door: say which runtime runs the program (when asked), and
// refuse a process in which another OpenMP runtime answers the libgomp entry points first.
#include "omp_internal.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace plait::omp {

static const char* object_of(void* addr) {
  Dl_info info;
  if (dladdr(addr, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return "an unknown object";
}

static void* base_of(void* addr) {
  Dl_info info;
  return dladdr(addr, &info) != 0 ? info.dli_fbase : nullptr;
}

static void anchor() {}  // a function of this library that nothing can interpose

// Runs when the library is loaded (by the dynamic linker, before main).
__attribute__((constructor)) static void plait_omp_loaded() {
  // Which GOMP_parallel does a lookup in the global scope find? With LD_PRELOAD or when the
  // program links this library, it is ours, and libgomp (still loaded as the program's dependency
  // when preloaded) is never called. If it is another object's, calls from the program go there
  // while whoever binds to us comes here: two runtimes, two thread pools, wrong answers in any code
  // that shares locks or teams across them. Stop with one line instead.
  // (&GOMP_parallel itself would not do: taken here, it resolves through the global scope too.)
  void* found = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  void* ours = reinterpret_cast<void*>(&anchor);
  if (found != nullptr && base_of(found) != base_of(ours)) {
    std::fprintf(stderr,
                 "plait-omp: another OpenMP runtime (%s) answers GOMP_parallel before libplait-omp (%s): this "
                 "process would mix two runtimes; load libplait-omp first (LD_PRELOAD, or link it instead of "
                 "-fopenmp's libgomp)\n",
                 object_of(found), object_of(ours));
    std::_Exit(2);
  }
  if (const char* v = std::getenv("PLAIT_OMP_ANNOUNCE"); v != nullptr && std::strcmp(v, "1") == 0)
    std::fprintf(stderr, "plait-omp: OpenMP runtime: Plait (%s)\n", object_of(ours));
}

}  // namespace plait::omp
