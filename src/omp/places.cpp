// Places and thread affinity (omp_get_num_places and kin; OMP_PLACES; the proc_bind policies).
//
// The place list is OMP_PLACES (its abstract names — threads, cores, ll_caches, numa_domains,
// sockets — or explicit CPU sets, parsed by the runtime's own place parser, src/topology.cpp,
// restricted to the process's mask), else one place per CPU of the initial mask. A bound team
// (bind-var true, close, spread or primary at the first level: OMP_PROC_BIND, or OMP_PLACES alone,
// which turns binding on as in libgomp) gives member i the place the standard's assignment rules
// say (team_places, below) and the team's pool pins its worker i there; PLAIT_PIN=cores, when set,
// decides instead (one CPU per member, physical cores first). Inner teams are not bound. The
// place queries answer from the list while binding is on (an empty list otherwise, as libgomp's
// with neither variable): a thread's place is the place whose CPUs are exactly its mask.
#include "omp_internal.hpp"

#include "../topology.hpp"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

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

// As acquire_pool decides (team.cpp): PLAIT_PIN when set, else the first level's bind-var.
bool binding() {
  static const bool b = [] {
    if (const char* v = std::getenv("PLAIT_PIN"); v != nullptr) return std::strcmp(v, "cores") == 0;
    return global().icv.bind != 0;
  }();
  return b;
}

}  // namespace

int num_places() { return binding() ? static_cast<int>(place_list().size()) : 0; }

const std::vector<detail::Place>& place_list() {
  static const std::vector<detail::Place> list = [] {
    std::vector<detail::Place> v;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const bool have = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
    if (const char* spec = std::getenv("OMP_PLACES"); spec != nullptr && *spec != '\0') {
      try {
        const detail::Topology topo = detail::load_topology(nullptr, have ? &allowed : nullptr);
        v = detail::parse_places(spec, topo);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "plait-omp: invalid value for environment variable OMP_PLACES='%s' (%s); using one place per CPU\n",
                     spec, e.what());
        v.clear();
      }
    }
    if (v.empty())
      for (int c : initial_cpus()) v.push_back({c});
    return v;
  }();
  return list;
}

std::vector<std::size_t> place_assignment(unsigned T, int bind, std::size_t P) {
  std::vector<std::size_t> at(T, 0);
  if (P == 0 || T == 0 || bind == 2) return at;  // primary (master): every member in the primary's place
  if (T > P) {
    // close and spread alike: P groups of consecutive members, floor(T/P) or ceil(T/P) each (the
    // first T mod P places get one more), the primary's group on the primary's place.
    const std::size_t base = T / P, extra = T % P;
    std::size_t member = 0;
    for (std::size_t p = 0; p < P && member < T; ++p)
      for (std::size_t k = 0; k < base + (p < extra ? 1 : 0); ++k) at[member++] = p;
    return at;
  }
  if (bind == 4) {
    // spread, T <= P: T subpartitions of consecutive places (floor(P/T) or ceil(P/T) each, the
    // first P mod T one more); member i on the first place of subpartition i.
    const std::size_t base = P / T, extra = P % T;
    std::size_t first = 0;
    for (unsigned i = 0; i < T; ++i) {
      at[i] = first;
      first += base + (i < extra ? 1 : 0);
    }
    return at;
  }
  for (unsigned i = 0; i < T; ++i) at[i] = i;  // close (and true), T <= P: consecutive places
  return at;
}

std::string team_places(unsigned n, int bind) {
  const std::vector<std::vector<int>>& list = place_list();
  std::string spec;
  for (std::size_t p : place_assignment(n, bind, list.size())) {
    if (!spec.empty()) spec += ',';
    spec += '{';
    for (std::size_t k = 0; k < list[p].size(); ++k) spec += (k != 0 ? "," : "") + std::to_string(list[p][k]);
    spec += '}';
  }
  return spec;
}

}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

int omp_get_num_places(void) { return num_places(); }

int omp_get_place_num_procs(int place) {
  return place >= 0 && place < num_places() ? static_cast<int>(place_list()[static_cast<std::size_t>(place)].size()) : 0;
}

void omp_get_place_proc_ids(int place, int* ids) {
  if (place < 0 || place >= num_places() || ids == nullptr) return;
  const std::vector<int>& p = place_list()[static_cast<std::size_t>(place)];
  for (std::size_t k = 0; k < p.size(); ++k) ids[k] = p[k];
}

int omp_get_place_num(void) {
  if (num_places() == 0) return -1;
  if (const int p = thread_state().place; p >= 0) return p;  // assigned in a bound team
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  const std::vector<std::vector<int>>& list = place_list();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (static_cast<std::size_t>(CPU_COUNT(&set)) != list[i].size()) continue;
    bool same = true;
    for (int c : list[i]) same = same && CPU_ISSET(c, &set);
    if (same) return static_cast<int>(i);
  }
  return -1;
}

int omp_get_partition_num_places(void) { return num_places(); }

void omp_get_partition_place_nums(int* place_nums) {
  if (place_nums == nullptr) return;
  const int n = num_places();
  for (int i = 0; i < n; ++i) place_nums[i] = i;
}

}  // extern "C"
