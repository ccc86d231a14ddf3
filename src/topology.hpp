// Internal: the machine's topology (hwloc), where workers are placed, and the order in which they
// look at victims. docs/design.md, "Placement and victims".
//
// Places are CPU sets; a pinned worker i runs on place i % places. pin_policy::cores takes one PU
// of every physical core first — cores in the machine's order (package, NUMA node, core), so that
// neighbouring workers share a package and a NUMA node — and the SMT siblings after all cores.
// PLAIT_PLACES (or pool_options::places) names OpenMP's abstract places (threads, cores,
// ll_caches, numa_domains, sockets) or lists CPU sets ("{0,1},{2:4},{8:4:2}").
//
// Victims: a pinned worker looks at its last successful victim first, then at the workers of its
// own core, then its NUMA node, its package, the rest — each ring from a random start. Unpinned
// workers (the default) keep the flat order: the OS moves them, so distances mean nothing.
#pragma once

#include <sched.h>

#include <cstdint>
#include <string>
#include <vector>

namespace plait::detail {

struct Topology {
  struct Pu {
    int os = 0;                   // the CPU number (sched_setaffinity's)
    unsigned core = 0, numa = 0, package = 0, llc = 0;  // logical indices of its ancestors
    unsigned smt = 0;             // its rank among its core's PUs
  };
  std::vector<Pu> pus;  // the usable PUs, in the machine's order
  std::string source;   // "hwloc", "hwloc synthetic ...", "flat (no hwloc)"
};

using Place = std::vector<int>;  // OS CPU numbers

// The machine's topology restricted to `allowed` (null: every PU), or an hwloc synthetic
// description such as "package:2 numa:2 core:8 pu:2" (tests). Without hwloc, or if hwloc fails,
// a flat topology of the allowed CPUs (each its own core, one package). Throws
// std::invalid_argument for a malformed synthetic description.
Topology load_topology(const char* synthetic, const cpu_set_t* allowed);

// pin_policy::cores: one place per PU, physical cores first, SMT siblings last.
std::vector<Place> core_places(const Topology& t);

// PLAIT_PLACES / pool_options::places. Throws std::invalid_argument with one line naming what is
// wrong and what is accepted.
std::vector<Place> parse_places(const std::string& spec, const Topology& t);

// How far apart two places are: 0 the same core, 1 the same NUMA node, 2 the same package,
// 3 farther. (A place spanning several is taken at its first CPU.)
unsigned place_distance(const Topology& t, const Place& a, const Place& b);

// For each of n workers on `places` (worker i on places[i % size]), the other workers ordered by
// distance; ring_end[d] is the end of distance d's ring in that order.
struct VictimOrder {
  std::vector<std::uint32_t> victims;
  std::uint32_t ring_end[4] = {0, 0, 0, 0};
};
std::vector<VictimOrder> victim_orders(const Topology& t, const std::vector<Place>& places, unsigned n);

}  // namespace plait::detail
