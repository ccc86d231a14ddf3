// Load-time checks of the OpenMP front door: say which runtime runs the program (when asked), and
// refuse a process in which another OpenMP runtime answers the libgomp entry points first.
#include "kmp_internal.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

// libgomp stays loaded when this library is preloaded into a gcc-built program (the program needs
// it), and its constructor runs before ours. Reading OMP_PROC_BIND it binds the initial thread to
// the first of its places; every thread this runtime starts from that thread would inherit that one
// CPU, and a team would run at one thread's speed. So if libgomp is here and bound the thread, give
// the initial thread back the union of libgomp's places — the CPUs the process was started with, as
// libgomp computed them — asking libgomp itself (its own symbols, through its handle). A thread
// started from it then gets the whole mask (and with OMP_PROC_BIND, worker i its own CPU: team.cpp).
static void undo_libgomp_binding() {
  // (OMP_PROC_BIND or OMP_PLACES set: libgomp binds; without them it has no places, and nothing
  // changes here.)
  if (std::getenv("OMP_PROC_BIND") == nullptr && std::getenv("OMP_PLACES") == nullptr) return;
  void* h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return;
  using num_places_fn = int (*)();
  using place_num_procs_fn = int (*)(int);
  using place_proc_ids_fn = void (*)(int, int*);
  auto num_places = reinterpret_cast<num_places_fn>(dlsym(h, "omp_get_num_places"));
  auto place_num_procs = reinterpret_cast<place_num_procs_fn>(dlsym(h, "omp_get_place_num_procs"));
  auto place_proc_ids = reinterpret_cast<place_proc_ids_fn>(dlsym(h, "omp_get_place_proc_ids"));
  const void* ours = reinterpret_cast<void*>(&anchor);
  // (dlsym through libgomp's handle finds libgomp's own definitions; make sure they are not ours)
  if (num_places != nullptr && place_num_procs != nullptr && place_proc_ids != nullptr &&
      base_of(reinterpret_cast<void*>(num_places)) != base_of(const_cast<void*>(ours))) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int n = num_places();
    for (int p = 0; p < n; ++p) {
      const int k = place_num_procs(p);
      if (k <= 0 || k > CPU_SETSIZE) continue;
      std::vector<int> ids(static_cast<std::size_t>(k));
      place_proc_ids(p, ids.data());
      for (int c : ids)
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    }
    if (CPU_COUNT(&set) > 0) pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  dlclose(h);
}

// PLAIT_OMP_REPORT_ABI=1 (plait-omp run): at a normal exit, which ABI the program started work
// through (a region, a loop or a task outside one; note_abi), on stderr.
static void report_abi() {
  // relaxed: every thread that noted an ABI has finished its work by exit.
  const unsigned seen = abi_seen.load(std::memory_order_relaxed);
  const char* what = seen == (abi_gomp | abi_kmp) ? "libgomp's (GOMP_*) and libomp's (__kmpc_*)"
                     : seen == abi_gomp           ? "libgomp's (GOMP_*)"
                     : seen == abi_kmp            ? "libomp's (__kmpc_*)"
                                                  : "none (no parallel region, loop or task)";
  std::fprintf(stderr, "plait-omp: OpenMP ABI used: %s\n", what);
}

// Runs when the library is loaded (by the dynamic linker, before main).
__attribute__((constructor)) static void plait_omp_loaded() {
  // Which GOMP_parallel does a lookup in the global scope find? With LD_PRELOAD or when the
  // program links this library, it is ours, and libgomp (still loaded as the program's dependency
  // when preloaded) is never called. If it is another object's, calls from the program go there
  // while whoever binds to us comes here: two runtimes, two thread pools, wrong answers in any code
  // that shares locks or teams across them. Stop with one line instead.
  // (&GOMP_parallel itself would not do: taken here, it resolves through the global scope too.)
  // The same for libomp's ABI: a clang-built program's calls bind __kmpc_fork_call@VERSION.
  void* ours = reinterpret_cast<void*>(&anchor);
  const struct {
    const char* name;
    void* found;
    const char* how;
  } firsts[] = {
      {"GOMP_parallel", dlsym(RTLD_DEFAULT, "GOMP_parallel"), "-fopenmp's libgomp"},
      {"__kmpc_fork_call", dlvsym(RTLD_DEFAULT, "__kmpc_fork_call", "VERSION"), "-fopenmp's libomp"},
  };
  for (const auto& f : firsts) {
    if (f.found != nullptr && base_of(f.found) != base_of(ours)) {
      std::fprintf(stderr,
                   "plait-omp: another OpenMP runtime (%s) answers %s before libplait-omp (%s): this process would "
                   "mix two runtimes; load libplait-omp first (LD_PRELOAD, or link it instead of %s)\n",
                   object_of(f.found), f.name, object_of(ours), f.how);
      std::_Exit(2);
    }
  }
  undo_libgomp_binding();
  initial_cpus();  // the process's CPUs, before any team binds a thread (places.cpp)
  if (const char* v = std::getenv("PLAIT_OMP_ANNOUNCE"); v != nullptr && std::strcmp(v, "1") == 0)
    std::fprintf(stderr, "plait-omp: OpenMP runtime: Plait (%s)\n", object_of(ours));
  if (const char* v = std::getenv("PLAIT_OMP_REPORT_ABI"); v != nullptr && std::strcmp(v, "1") == 0)
    std::atexit(&report_abi);
  ompt::start_tool();  // a tool (OMPT), if the process has one: before any OpenMP event
}

}  // namespace plait::omp
