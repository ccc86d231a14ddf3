#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "health/health.hpp"

namespace health {

namespace {
constexpr long IA = 16807, IM = 2147483647, IQ = 127773, IR = 2836, MASK = 123459876;
constexpr double AM = 1.0 / IM;

// A token as quoted in an error message: a binary file's bytes escaped, at most 40 of them. A
// token must be a number as a whole; strtoll would stop at a NUL byte inside it, hence the
// comparison of `end` with the token's end.
std::string shown(const std::string& t) { return plait_bench::printable(t, 40); }

// Splits on white space; every token must be a number of the expected kind.
struct reader {
  std::vector<std::string> tok;
  std::size_t at = 0;
  std::string path;
  std::string next(const char* what) {
    if (at >= tok.size())
      throw plait_bench::usage_error("malformed health input '" + path + "': missing " + what);
    return tok[at++];
  }
  long long integer(const char* what, long long lo, long long hi) {
    std::string t = next(what);
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || end != t.c_str() + t.size() || errno)
      throw plait_bench::usage_error("malformed health input '" + path + "': " + what + " '" + shown(t) +
                                     "' is not an integer");
    if (v < lo || v > hi)
      throw plait_bench::usage_error("health input '" + path + "': " + what + " " + shown(t) + " is out of range " +
                                     std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }
  float real(const char* what) {
    std::string t = next(what);
    errno = 0;
    char* end = nullptr;
    float v = std::strtof(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || errno || !std::isfinite(v) || v < 0 || v > 1)
      throw plait_bench::usage_error("malformed health input '" + path + "': " + what + " '" + shown(t) +
                                     "' is not a probability 0..1");
    return v;
  }
};
}  // namespace

input parse_input(const std::string& text, const std::string& path) {
  reader r;
  r.path = path;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!cur.empty()) r.tok.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) r.tok.push_back(cur);
  input in;
  in.levels = static_cast<int>(r.integer("levels", 1, 12));
  in.cities = static_cast<int>(r.integer("cities", 1, 1000));
  in.ratio = static_cast<int>(r.integer("population ratio", 0, 1000));
  in.time = static_cast<int>(r.integer("simulation time", 0, 100000));
  in.assess_time = static_cast<int>(r.integer("assess time", 1, 100000));
  in.convalescence_time = static_cast<int>(r.integer("convalescence time", 1, 100000));
  in.seed = static_cast<long>(r.integer("seed", 0, 1L << 30));
  in.get_sick_p = r.real("get-sick probability");
  in.convalescence_p = r.real("convalescence probability");
  in.realloc_p = r.real("realloc probability");
  static const char* names[8] = {"expected population", "expected hospitals", "expected personnel",
                                 "expected check-ins",  "expected in villages", "expected waiting",
                                 "expected in assessment", "expected inside"};
  for (int i = 0; i < 8; ++i) in.expect[i] = r.integer(names[i], 0, 1LL << 40);
  // villages = 1 + c + ... + c^(levels-1); keep the world to a sane size
  long double villages = 0, pw = 1, people = 0;
  for (int l = in.levels; l >= 1; --l) {
    villages += pw;
    people += pw * std::ldexp(1.0L, l) * in.ratio;
    pw *= in.cities;
  }
  if (villages > 2e7L || people > 2e8L)
    throw plait_bench::usage_error("health input '" + path + "': the village tree is too large (" +
                                   std::to_string(static_cast<long long>(villages)) + " villages)");
  return in;
}

float my_rand(long* seed) {
  // 32-bit generator state as in the reference; the product idum * IM wraps modulo 2^32
  std::int32_t idum = static_cast<std::int32_t>(*seed);
  idum ^= static_cast<std::int32_t>(MASK);
  const std::int32_t k = idum / static_cast<std::int32_t>(IQ);
  idum = static_cast<std::int32_t>(IA * (idum - k * IQ) - IR * k);
  idum ^= static_cast<std::int32_t>(MASK);
  if (idum < 0) idum = static_cast<std::int32_t>(idum + IM);
  *seed = static_cast<std::int32_t>(static_cast<std::uint32_t>(idum) * static_cast<std::uint32_t>(IM));
  return static_cast<float>(AM) * static_cast<float>(idum);
}

namespace {
struct builder {
  const input& in;
  world& w;
  int next_pid = 0;
  village* make(village* back, int level, int vid) {
    w.villages.push_back(std::make_unique<village>());
    village* v = w.villages.back().get();
    v->back = back;
    v->level = level;
    v->id = vid;
    v->seed = static_cast<std::int32_t>(static_cast<std::uint32_t>(vid) * static_cast<std::uint32_t>(IQ + in.seed));
    const int personnel = 1 << level;
    const long long population = static_cast<long long>(personnel) * in.ratio;
    for (long long i = 0; i < population; ++i) {
      patient& p = w.patients[static_cast<std::size_t>(next_pid)];
      p.id = next_pid++;
      p.seed = v->seed;
      my_rand(&v->seed);
      p.home = v;
      v->population.add(&p);
    }
    v->hosp.personnel = personnel;
    v->hosp.free_personnel = personnel;
    if (level > 1) {
      // children are created last to first (this fixes the patient ids) and visited first to last
      v->children.assign(static_cast<std::size_t>(in.cities), nullptr);
      for (int i = in.cities; i > 0; --i)
        v->children[static_cast<std::size_t>(i - 1)] = make(v, level - 1, vid * in.cities + i);
    }
    return v;
  }
};
}  // namespace

world build(const input& in) {
  world w;
  long long people = 0, pw = 1;
  for (int l = in.levels; l >= 1; --l) {
    people += pw * (1LL << l) * in.ratio;
    pw *= in.cities;
  }
  w.patients.resize(static_cast<std::size_t>(people));
  builder b{in, w};
  w.top = b.make(nullptr, in.levels, 0);
  return w;
}

static void put_in_hosp(hospital& h, patient* p, const input& in) {
  p->hosps_visited++;
  if (h.free_personnel > 0) {
    h.free_personnel--;
    h.assess.add(p);
    p->time_left = in.assess_time;
    p->time += p->time_left;
  } else {
    h.waiting.add(p);
  }
}

// Calls f(cur) on every patient cur of l, in order; f may take cur off l.
template <class F>
static void each_patient(plist& l, F f) {
  patient* p = l.head;
  while (p) {
    patient* cur = p;
    p = p->forward;
    f(cur);
  }
}

// cur leaves the hospital's list `from` for the village's population; a member of staff is free again.
static void discharge(village* v, plist& from, patient* cur) {
  v->hosp.free_personnel++;
  from.remove(cur);
  v->population.add(cur);
}

void check_inside(village* v) {
  each_patient(v->hosp.inside, [v](patient* cur) {
    if (--cur->time_left == 0) discharge(v, v->hosp.inside, cur);
  });
}

void check_assess(village* v, const input& in) {
  each_patient(v->hosp.assess, [v, &in](patient* cur) {
    if (--cur->time_left != 0) return;
    if (my_rand(&cur->seed) < in.convalescence_p) {
      if (my_rand(&cur->seed) > in.realloc_p || v->level == in.levels) {
        v->hosp.assess.remove(cur);
        v->hosp.inside.add(cur);
        cur->time_left = in.convalescence_time;
        cur->time += cur->time_left;
      } else {
        v->hosp.free_personnel++;
        v->hosp.assess.remove(cur);
        std::lock_guard<std::mutex> lk(v->back->hosp.realloc_lock);  // the parent's list, the parent's lock
        v->back->hosp.realloc.add(cur);
      }
    } else {
      discharge(v, v->hosp.assess, cur);
    }
  });
}

void check_waiting(village* v, const input& in) {
  each_patient(v->hosp.waiting, [v, &in](patient* cur) {
    if (v->hosp.free_personnel > 0) {
      v->hosp.free_personnel--;
      cur->time_left = in.assess_time;
      cur->time += cur->time_left;
      v->hosp.waiting.remove(cur);
      v->hosp.assess.add(cur);
    } else {
      cur->time++;
    }
  });
}

void check_realloc(village* v, const input& in) {
  while (patient* first = v->hosp.realloc.head) {
    patient* lowest = first;
    for (patient* p = first; p; p = p->forward)
      if (p->id < lowest->id) lowest = p;
    v->hosp.realloc.remove(lowest);
    put_in_hosp(v->hosp, lowest, in);
  }
}

void check_population(village* v, const input& in) {
  patient* p = v->population.head;
  while (p) {
    patient* cur = p;
    p = p->forward;
    if (my_rand(&cur->seed) < in.get_sick_p) {
      v->population.remove(cur);
      put_in_hosp(v->hosp, cur, in);
    }
  }
}

totals results(const world& w) {
  totals t;
  for (auto& vp : w.villages) {
    const village& v = *vp;
    t.v[1] += 1;
    t.v[2] += v.hosp.personnel;
    auto count = [&t](const plist& l, int slot) {
      for (const patient* p = l.head; p; p = p->forward) {
        t.v[0] += 1;
        t.v[slot] += 1;
        t.v[3] += p->hosps_visited;
        t.total_time += p->time;
      }
    };
    count(v.population, 4);
    count(v.hosp.waiting, 5);
    count(v.hosp.assess, 6);
    count(v.hosp.inside, 7);
  }
  return t;
}

}  // namespace health
