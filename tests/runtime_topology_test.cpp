// Topology (src/topology.cpp): placement by physical core on hwloc synthetic topologies (two
// packages x two NUMA nodes x 8 cores x 2 PUs), OpenMP-style places (names and CPU-set lists, bad
// ones refused with one line), the victim order by distance, and a pinned pool on this machine:
// every worker runs inside its place and looks at victims in that order.
#include "topology.hpp"
#include "pool_impl.hpp"

#include <plait/plait.hpp>

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace plait::detail;

constexpr const char* big = "package:2 numa:2 core:8 pu:2";  // 64 PUs

TEST(Topology, SyntheticMachineHasItsLevels) {
  const Topology t = load_topology(big, nullptr);
  ASSERT_EQ(t.pus.size(), 64u);
  std::set<unsigned> cores, numas, pkgs;
  for (const auto& p : t.pus) cores.insert(p.core), numas.insert(p.numa), pkgs.insert(p.package);
  EXPECT_EQ(cores.size(), 32u);
  EXPECT_EQ(numas.size(), 4u);
  EXPECT_EQ(pkgs.size(), 2u);
  EXPECT_NE(t.source.find("synthetic"), std::string::npos);
}

TEST(Topology, CoresFirstSmtSiblingsLast) {
  const Topology t = load_topology(big, nullptr);
  const std::vector<Place> pl = core_places(t);
  ASSERT_EQ(pl.size(), 64u);
  auto pu = [&](int os) {
    return *std::find_if(t.pus.begin(), t.pus.end(), [os](const Topology::Pu& p) { return p.os == os; });
  };
  std::set<unsigned> first_cores;
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(pu(pl[i][0]).smt, 0u) << i;  // one PU of every core before any sibling
    first_cores.insert(pu(pl[i][0]).core);
    EXPECT_EQ(pu(pl[i][0]).package, i < 16 ? 0u : 1u) << i;  // package by package
    EXPECT_EQ(pu(pl[i][0]).numa % 2, (i / 8) % 2) << i;         // NUMA node by NUMA node inside
  }
  EXPECT_EQ(first_cores.size(), 32u);
  for (std::size_t i = 32; i < 64; ++i) {
    EXPECT_EQ(pu(pl[i][0]).smt, 1u) << i;
    EXPECT_EQ(pu(pl[i][0]).core, pu(pl[i - 32][0]).core) << i;  // the sibling of worker i - 32
  }
}

TEST(Topology, VictimsNearestFirst) {
  const Topology t = load_topology(big, nullptr);
  const std::vector<Place> pl = core_places(t);
  const auto orders = victim_orders(t, pl, 64);
  const VictimOrder& o = orders[0];
  ASSERT_EQ(o.victims.size(), 63u);
  // Worker 0's core sibling is worker 32; then the 14 workers on the 7 other cores of its NUMA
  // node; then the 16 of the other NUMA node of its package; then the 32 of the other package.
  EXPECT_EQ(o.ring_end[0], 1u);
  EXPECT_EQ(o.victims[0], 32u);
  EXPECT_EQ(o.ring_end[1], 15u);
  EXPECT_EQ(o.ring_end[2], 31u);
  EXPECT_EQ(o.ring_end[3], 63u);
  for (std::uint32_t k = 0; k < 63; ++k) {
    const unsigned d = place_distance(t, pl[0], pl[o.victims[k]]);
    const unsigned ring = k < o.ring_end[0] ? 0 : k < o.ring_end[1] ? 1 : k < o.ring_end[2] ? 2 : 3;
    EXPECT_EQ(d, ring) << k;
  }
  // Fewer workers than PUs: only the first places are used, the rings shrink with them.
  const auto few = victim_orders(t, pl, 8);
  EXPECT_EQ(few[0].ring_end[0], 0u);  // no sibling among the first 8 (all on separate cores)
  EXPECT_EQ(few[0].ring_end[1], 7u);  // all 8 on NUMA node 0
}

TEST(Topology, NamedPlaces) {
  const Topology t = load_topology(big, nullptr);
  EXPECT_EQ(parse_places("threads", t).size(), 64u);
  const auto cores = parse_places("cores", t);
  ASSERT_EQ(cores.size(), 32u);
  EXPECT_EQ(cores[0].size(), 2u);
  EXPECT_EQ(parse_places("numa_domains", t).size(), 4u);
  const auto sockets = parse_places("sockets", t);
  ASSERT_EQ(sockets.size(), 2u);
  EXPECT_EQ(sockets[1].size(), 32u);
  EXPECT_EQ(parse_places(" sockets ", t).size(), 2u);
}

TEST(Topology, ListedPlaces) {
  const Topology t = load_topology(big, nullptr);
  const auto p = parse_places("{0,1},{2:4},{8:4:2}", t);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], (Place{0, 1}));
  EXPECT_EQ(p[1], (Place{2, 3, 4, 5}));
  EXPECT_EQ(p[2], (Place{8, 10, 12, 14}));
  for (const char* bad : {"", "{", "{0", "{0:0}", "{99}", "{0},", "{0}{1}", "cpus", "{a}", "{0:2:0}"}) {
    try {
      parse_places(bad, t);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("PLAIT_PLACES"), std::string::npos) << m;
      EXPECT_NE(m.find("accepted: threads, cores"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
}

TEST(Topology, BadSyntheticDescription) {
  EXPECT_THROW(load_topology("package:zero", nullptr), std::invalid_argument);
}

TEST(Topology, ThisMachine) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const Topology t = load_topology(nullptr, &allowed);
  EXPECT_EQ(t.pus.size(), static_cast<std::size_t>(CPU_COUNT(&allowed)));
  EXPECT_EQ(core_places(t).size(), t.pus.size());
}

// A pinned pool: every task runs inside its worker's place, and the workers' victim orders are set.
void check_pinned(plait::pool_options o, const std::string& places_env) {
  if (!places_env.empty()) setenv("PLAIT_PLACES", places_env.c_str(), 1);
  std::set<std::vector<int>> masks;
  std::mutex mu;
  {
    plait::pool p(o);
    p.run([&] {
      plait::task_group g;
      for (int i = 0; i < 200; ++i)
        g.run([&] {
          cpu_set_t s;
          pthread_getaffinity_np(pthread_self(), sizeof s, &s);
          std::vector<int> cpus;
          for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &s)) cpus.push_back(c);
          std::lock_guard<std::mutex> lk(mu);
          masks.insert(cpus);
        });
      g.wait();
    });
    const Pool* impl = p.impl();
    for (unsigned i = 0; i < impl->n; ++i) {
      const VictimOrder* v = impl->workers[i].vorder;
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(v->victims.size(), impl->n - 1);
    }
  }
  if (!places_env.empty()) unsetenv("PLAIT_PLACES");
  for (const auto& m : masks) EXPECT_EQ(m.size(), 1u);  // each worker on one CPU
}

TEST(Topology, PinnedPoolByCores) {
  plait::pool_options o{.num_workers = 2};
  o.pin = plait::pin_policy::cores;
  check_pinned(o, "");
}

TEST(Topology, PinnedPoolByPlaces) {
  plait::pool_options o{.num_workers = 2};
  check_pinned(o, "threads");
}

TEST(Topology, BadPlacesStopThePool) {
  setenv("PLAIT_PLACES", "{0", 1);
  EXPECT_THROW(plait::pool p(plait::pool_options{.num_workers = 2}), std::invalid_argument);
  unsetenv("PLAIT_PLACES");
}

TEST(Topology, UnpinnedPoolKeepsTheFlatOrder) {
  plait::pool p(plait::pool_options{.num_workers = 2});
  for (unsigned i = 0; i < p.impl()->n; ++i) EXPECT_EQ(p.impl()->workers[i].vorder, nullptr);
}

}  // namespace
