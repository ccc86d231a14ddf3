// Places (omp_get_num_places and kin). Plait reads no OMP_PLACES of its own: a bound team
// (OMP_PROC_BIND true / close / spread / primary at the first level, or PLAIT_PIN=cores) puts its
// members one per CPU of the process's mask. So the place list is that mask, one CPU per place in
// ascending CPU number, while binding is on, and empty otherwise (as libgomp's is with neither
// OMP_PLACES nor OMP_PROC_BIND). A thread's place is the one CPU it is bound to, -1 when its mask
// holds more than one; the place partition is the whole list.
#include "omp_internal.hpp"

#include <sched.h>

#include <cstdlib>
#include <cstring>

namespace plait::omp {

const std::vector<int>& initial_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> v;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) v.push_back(c);
    return v;
  }();
  return cpus;
}

namespace {

// As acquire_pool decides (team.cpp): PLAIT_PIN when set, else the first level's OMP_PROC_BIND.
bool binding() {
  static const bool b = [] {
    if (const char* v = std::getenv("PLAIT_PIN"); v != nullptr) return std::strcmp(v, "cores") == 0;
    return global().icv.bind != 0;
  }();
  return b;
}

int num_places() { return binding() ? static_cast<int>(initial_cpus().size()) : 0; }

}  // namespace
}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

int omp_get_num_places(void) { return num_places(); }

int omp_get_place_num_procs(int place) { return place >= 0 && place < num_places() ? 1 : 0; }

void omp_get_place_proc_ids(int place, int* ids) {
  if (place >= 0 && place < num_places() && ids != nullptr) ids[0] = initial_cpus()[static_cast<std::size_t>(place)];
}

int omp_get_place_num(void) {
  if (num_places() == 0) return -1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1) return -1;
  const std::vector<int>& cpus = initial_cpus();
  for (std::size_t i = 0; i < cpus.size(); ++i)
    if (CPU_ISSET(cpus[i], &set)) return static_cast<int>(i);
  return -1;
}

int omp_get_partition_num_places(void) { return num_places(); }

void omp_get_partition_place_nums(int* place_nums) {
  if (place_nums == nullptr) return;
  const int n = num_places();
  for (int i = 0; i < n; ++i) place_nums[i] = i;
}

}  // extern "C"
