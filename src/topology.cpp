// The machine's topology, places and victim order: src/topology.hpp says what and why.
#include "topology.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <tuple>

// hwloc is loaded at run time (dlopen) when a topology is first needed: libplait has no link
// dependency on it, an unpinned pool never loads it, and a machine without it gets a flat
// topology. The header gives the types; the few entry points come from dlsym.
#if __has_include(<hwloc.h>)
#include <hwloc.h>
#include <dlfcn.h>
#define PLAIT_HWLOC_HEADER 1
#endif
#include <unistd.h>

namespace plait::detail {

namespace {

Topology flat(const cpu_set_t* allowed, const char* why) {
  Topology t;
  t.source = why;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (allowed != nullptr && !CPU_ISSET(c, allowed)) continue;
    if (allowed == nullptr && c >= online) break;
    Topology::Pu p;
    p.os = c;
    p.core = static_cast<unsigned>(t.pus.size());
    p.llc = p.core;
    t.pus.push_back(p);
  }
  return t;
}

#if PLAIT_HWLOC_HEADER
struct hwloc_api {
  int (*init)(hwloc_topology_t*);
  int (*set_synthetic)(hwloc_topology_t, const char*);
  int (*load)(hwloc_topology_t);
  void (*destroy)(hwloc_topology_t);
  int (*type_depth)(hwloc_topology_t, hwloc_obj_type_t);
  unsigned (*nbobjs_by_depth)(hwloc_topology_t, int);
  hwloc_obj_t (*obj_by_depth)(hwloc_topology_t, int, unsigned);
  int (*bitmap_first)(hwloc_const_bitmap_t);
  bool ok = false;
};

}  // namespace
}  // namespace plait::detail
// Null in a statically linked program: there dlopen would load a shared libhwloc against another
// copy of libc (a crash when the machine's glibc differs from the one linked in), so a static
// program takes the flat topology.
extern "C" const char _DYNAMIC[] __attribute__((weak));
namespace plait::detail {
namespace {

// The library once per process (never closed: a pool may load a topology at any time).
const hwloc_api& hwloc() {
  static const hwloc_api api = [] {
    hwloc_api a{};
    if (_DYNAMIC == nullptr) return a;
    void* h = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return a;
    auto version = reinterpret_cast<unsigned (*)()>(dlsym(h, "hwloc_get_api_version"));
    // The same major ABI as the header we were compiled with (the struct layouts we read).
    if (version == nullptr || (version() >> 16) != (HWLOC_API_VERSION >> 16)) return a;
    a.init = reinterpret_cast<decltype(a.init)>(dlsym(h, "hwloc_topology_init"));
    a.set_synthetic = reinterpret_cast<decltype(a.set_synthetic)>(dlsym(h, "hwloc_topology_set_synthetic"));
    a.load = reinterpret_cast<decltype(a.load)>(dlsym(h, "hwloc_topology_load"));
    a.destroy = reinterpret_cast<decltype(a.destroy)>(dlsym(h, "hwloc_topology_destroy"));
    a.type_depth = reinterpret_cast<decltype(a.type_depth)>(dlsym(h, "hwloc_get_type_depth"));
    a.nbobjs_by_depth = reinterpret_cast<decltype(a.nbobjs_by_depth)>(dlsym(h, "hwloc_get_nbobjs_by_depth"));
    a.obj_by_depth = reinterpret_cast<decltype(a.obj_by_depth)>(dlsym(h, "hwloc_get_obj_by_depth"));
    a.bitmap_first = reinterpret_cast<decltype(a.bitmap_first)>(dlsym(h, "hwloc_bitmap_first"));
    a.ok = a.init && a.set_synthetic && a.load && a.destroy && a.type_depth && a.nbobjs_by_depth && a.obj_by_depth &&
           a.bitmap_first;
    return a;
  }();
  return api;
}

hwloc_obj_t ancestor(hwloc_obj_t o, hwloc_obj_type_t type) {
  for (hwloc_obj_t p = o->parent; p != nullptr; p = p->parent)
    if (p->type == type) return p;
  return nullptr;
}
#endif

}  // namespace

Topology load_topology(const char* synthetic, const cpu_set_t* allowed) {
#if PLAIT_HWLOC_HEADER
  const hwloc_api& h = hwloc();
  if (!h.ok) {
    if (synthetic != nullptr)
      throw std::invalid_argument("plait: synthetic topologies need hwloc (libhwloc.so.15 not found, or a static program)");
    return flat(allowed, "flat (libhwloc.so.15 not found, or a static program)");
  }
  hwloc_topology_t topo;
  if (h.init(&topo) != 0) return flat(allowed, "flat (hwloc_topology_init failed)");
  if (synthetic != nullptr && h.set_synthetic(topo, synthetic) != 0) {
    h.destroy(topo);
    throw std::invalid_argument(std::string("plait: bad synthetic topology '") + synthetic +
                                "' (hwloc's synthetic syntax, e.g. \"package:2 numa:2 core:8 pu:2\")");
  }
  if (h.load(topo) != 0) {
    h.destroy(topo);
    return flat(allowed, "flat (hwloc_topology_load failed)");
  }
  Topology t;
  t.source = synthetic != nullptr ? std::string("hwloc synthetic \"") + synthetic + "\"" : "hwloc";
  const int depth = h.type_depth(topo, HWLOC_OBJ_PU);
  const unsigned npu = depth >= 0 ? h.nbobjs_by_depth(topo, depth) : 0;
  std::map<unsigned, unsigned> smt_rank;  // core -> PUs seen
  for (unsigned i = 0; i < npu; ++i) {
    hwloc_obj_t pu = h.obj_by_depth(topo, depth, i);
    const int os = static_cast<int>(pu->os_index);
    // Synthetic topologies number their PUs 0..n-1 and are not restricted by our affinity.
    if (synthetic == nullptr && allowed != nullptr && (os >= CPU_SETSIZE || !CPU_ISSET(os, allowed))) continue;
    Topology::Pu p;
    p.os = os;
    hwloc_obj_t core = ancestor(pu, HWLOC_OBJ_CORE);
    hwloc_obj_t pkg = ancestor(pu, HWLOC_OBJ_PACKAGE);
    hwloc_obj_t l3 = ancestor(pu, HWLOC_OBJ_L3CACHE);
    if (l3 == nullptr) l3 = ancestor(pu, HWLOC_OBJ_L2CACHE);
    p.core = core != nullptr ? core->logical_index : i;
    p.package = pkg != nullptr ? pkg->logical_index : 0;
    const int numa = pu->nodeset != nullptr ? h.bitmap_first(pu->nodeset) : -1;
    p.numa = numa >= 0 ? static_cast<unsigned>(numa) : p.package;
    p.llc = l3 != nullptr ? l3->logical_index : p.core;
    p.smt = smt_rank[p.core]++;
    t.pus.push_back(p);
  }
  h.destroy(topo);
  if (t.pus.empty()) return flat(allowed, "flat (hwloc found none of the allowed CPUs)");
  return t;
#else
  if (synthetic != nullptr)
    throw std::invalid_argument("plait: synthetic topologies need hwloc (built without hwloc.h)");
  return flat(allowed, "flat (built without hwloc.h)");
#endif
}

std::vector<Place> core_places(const Topology& t) {
  std::vector<const Topology::Pu*> order;
  for (const auto& p : t.pus) order.push_back(&p);
  // The first PU of every core in the machine's order (package, NUMA node, core), then the second...
  std::stable_sort(order.begin(), order.end(), [](const Topology::Pu* a, const Topology::Pu* b) {
    return std::tie(a->smt, a->package, a->numa, a->core) < std::tie(b->smt, b->package, b->numa, b->core);
  });
  std::vector<Place> out;
  for (const auto* p : order) out.push_back({p->os});
  return out;
}

namespace {

[[noreturn]] void bad_places(const std::string& spec, const std::string& why) {
  throw std::invalid_argument("plait: PLAIT_PLACES '" + spec + "': " + why +
                              " (accepted: threads, cores, ll_caches, numa_domains, sockets, or CPU sets such as "
                              "{0,1},{2:4},{8:4:2})");
}

// Groups the PUs by a key, in the machine's order of first appearance.
template <class Key>
std::vector<Place> group(const Topology& t, Key key) {
  std::vector<Place> out;
  std::map<unsigned, std::size_t> at;
  for (const auto& p : t.pus) {
    auto [it, fresh] = at.emplace(key(p), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(p.os);
  }
  return out;
}

long number(const std::string& spec, const std::string& s, std::size_t& i) {
  std::size_t b = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == b || i - b > 6) bad_places(spec, "expected a number at '" + s.substr(b) + "'");
  return std::strtol(s.substr(b, i - b).c_str(), nullptr, 10);
}

}  // namespace

std::vector<Place> parse_places(const std::string& spec, const Topology& t) {
  std::string s;
  for (char c : spec)
    if (c != ' ' && c != '\t') s.push_back(c);
  if (s.empty()) bad_places(spec, "empty");
  if (s == "threads") return group(t, [](const Topology::Pu& p) { return static_cast<unsigned>(p.os); });
  if (s == "cores") return group(t, [](const Topology::Pu& p) { return p.core; });
  if (s == "ll_caches") return group(t, [](const Topology::Pu& p) { return p.llc; });
  if (s == "numa_domains") return group(t, [](const Topology::Pu& p) { return p.numa; });
  if (s == "sockets") return group(t, [](const Topology::Pu& p) { return p.package; });
  if (s[0] != '{') bad_places(spec, "unknown name");
  std::vector<Place> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '{') bad_places(spec, "expected '{' at '" + s.substr(i) + "'");
    ++i;
    Place pl;
    for (;;) {
      const long a = number(spec, s, i);
      long len = 1, stride = 1;
      if (i < s.size() && s[i] == ':') {
        ++i;
        len = number(spec, s, i);
        if (i < s.size() && s[i] == ':') {
          ++i;
          stride = number(spec, s, i);
        }
      }
      if (len < 1 || stride < 1) bad_places(spec, "a length and a stride must be at least 1");
      for (long k = 0; k < len; ++k) {
        const long c = a + k * stride;
        const bool usable = std::any_of(t.pus.begin(), t.pus.end(), [c](const Topology::Pu& p) { return p.os == c; });
        if (!usable) bad_places(spec, "CPU " + std::to_string(c) + " is not one this process may run on");
        pl.push_back(static_cast<int>(c));
      }
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == '}') {
        ++i;
        break;
      }
      bad_places(spec, "expected ',' or '}'");
    }
    out.push_back(std::move(pl));
    if (i < s.size()) {
      if (s[i] != ',') bad_places(spec, "expected ',' between places");
      ++i;
      if (i == s.size()) bad_places(spec, "a place after the last ','");
    }
  }
  return out;
}

namespace {

// How far apart two PUs are (place_distance's levels).
unsigned pu_distance(const Topology::Pu* a, const Topology::Pu* b) {
  if (a == nullptr || b == nullptr) return 3;
  if (a->core == b->core) return 0;
  if (a->numa == b->numa && a->package == b->package) return 1;
  if (a->package == b->package) return 2;
  return 3;
}

const Topology::Pu* first_pu(const Topology& t, const Place& p) {
  if (p.empty()) return nullptr;
  for (const auto& pu : t.pus)
    if (pu.os == p[0]) return &pu;
  return nullptr;
}

}  // namespace

unsigned place_distance(const Topology& t, const Place& a, const Place& b) {
  return pu_distance(first_pu(t, a), first_pu(t, b));
}

std::vector<VictimOrder> victim_orders(const Topology& t, const std::vector<Place>& places, unsigned n) {
  std::vector<VictimOrder> out(n);
  if (places.empty()) return out;
  // Each place's first PU once (n^2 distances below, not n^2 searches).
  std::vector<const Topology::Pu*> pu(places.size());
  for (std::size_t k = 0; k < places.size(); ++k) pu[k] = first_pu(t, places[k]);
  for (unsigned w = 0; w < n; ++w) {
    const Topology::Pu* mine = pu[w % places.size()];
    std::vector<std::pair<unsigned, std::uint32_t>> by;  // (distance, worker)
    for (unsigned v = 0; v < n; ++v)
      if (v != w) by.emplace_back(pu_distance(mine, pu[v % places.size()]), v);
    std::stable_sort(by.begin(), by.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    VictimOrder& o = out[w];
    for (const auto& [d, v] : by) {
      o.victims.push_back(v);
      for (unsigned e = d; e < 4; ++e) o.ring_end[e] = static_cast<std::uint32_t>(o.victims.size());
    }
  }
  return out;
}

}  // namespace plait::detail
