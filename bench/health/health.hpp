// Health (BOTS health, after Olden): a simulation of a country's health system. Villages form a
// tree (`levels` deep, `cities` children each) and each has a hospital with 2^level personnel and
// a population of 2^level * ratio patients. Every time step visits the tree bottom-up: each
// village's child villages are simulated as tasks while the village updates its own hospital
// (patients inside -> home after convalescence; assessed patients -> convalescence, home, or up
// to the parent's hospital; waiting patients -> assessment when personnel is free); after the
// taskwait it admits the patients sent up by its children (in patient-id order, so the result
// does not depend on the schedule) and its healthy population may fall sick. Patients draw from
// their own random stream (the Park-Miller style generator of the reference).
//
// Cut-off = village depth below the root at which the children are no longer tasks (manual), or
// undeferred (if) / final (final). Input: a BOTS health file; the 8 integers after the parameters
// (population, hospitals, personnel, check-ins, in villages, waiting, in assessment, inside) must
// equal the simulation's totals exactly.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/rt/common.hpp"

namespace health {

struct input {
  int levels = 0, cities = 0, ratio = 0, time = 0, assess_time = 0, convalescence_time = 0;
  long seed = 0;
  float get_sick_p = 0, convalescence_p = 0, realloc_p = 0;
  long long expect[8] = {};
  double avg_stay = -1;
};
// Parses a BOTS health input; throws usage_error (one line) on malformed or out-of-range content.
input parse_input(const std::string& text, const std::string& path);

struct village;
struct patient {
  int id = 0;
  long seed = 0;
  int time = 0, time_left = 0, hosps_visited = 0;
  village* home = nullptr;
  patient *back = nullptr, *forward = nullptr;
};

// Doubly linked list; add() appends at the tail by walking the list, as the reference does.
struct plist {
  patient* head = nullptr;
  void add(patient* p) {
    p->forward = nullptr;
    if (!head) {
      head = p;
      p->back = nullptr;
      return;
    }
    patient* t = head;
    while (t->forward) t = t->forward;
    t->forward = p;
    p->back = t;
  }
  void remove(patient* p) {
    if (p->back)
      p->back->forward = p->forward;
    else
      head = p->forward;
    if (p->forward) p->forward->back = p->back;
  }
};

struct hospital {
  int personnel = 0, free_personnel = 0;
  plist waiting, assess, inside, realloc;
  std::mutex realloc_lock;  // guards `realloc`, which the children fill concurrently
};

struct village {
  int id = 0, level = 0;
  long seed = 0;
  village* back = nullptr;
  std::vector<village*> children;
  plist population;
  hospital hosp;
};

struct world {
  std::vector<std::unique_ptr<village>> villages;
  std::vector<patient> patients;
  village* top = nullptr;
};

world build(const input& in);
float my_rand(long* seed);

struct totals {
  long long v[8] = {};  // population, hospitals, personnel, check-ins, village, waiting, assess, inside
  long long total_time = 0;
};
totals results(const world& w);

void check_inside(village* v);
void check_assess(village* v, const input& in);
void check_waiting(village* v, const input& in);
void check_realloc(village* v, const input& in);
void check_population(village* v, const input& in);

template <class RT>
void sim_village(RT& rt, village* v, const input& in, int cutoff) {
  const int depth = in.levels - v->level;
  if (depth >= cutoff && rt.manual()) {
    for (village* c : v->children) sim_village(rt, c, in, cutoff);
    check_inside(v);
    check_assess(v, in);
    check_waiting(v, in);
  } else {
    typename RT::group g(rt, depth >= cutoff, depth + 1 >= cutoff);
    for (village* c : v->children) g.run([&rt, c, &in, cutoff] { sim_village(rt, c, in, cutoff); });
    check_inside(v);
    check_assess(v, in);
    check_waiting(v, in);
    g.wait();
  }
  check_realloc(v, in);
  check_population(v, in);
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("health", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, true);
    std::string size = "ci", path, cutoff_s = "coarse";
    bool inject = false;
    cli.add_string("size", &size,
                   "BOTS input class from ../shared/data/bots/health: ci and test (test.input), small, medium, large",
                   {"ci", "test", "small", "medium", "large"});
    cli.add_string("input", &path, "a BOTS health input file (overrides --size)");
    cli.add_string("cutoff", &cutoff_s,
                   "village depth from which children are not tasks: coarse (2, BOTS default), fine (levels: every "
                   "level spawns), or 0..64");
    cli.add_inject_error(&inject);
    cli.parse();
    const std::string file =
        kern::resolve_bots_input(path, "health", (size == "ci" ? std::string("test") : size) + ".input");
    const input in = parse_input(kern::read_file_or_throw(file), file);
    const int cutoff = static_cast<int>(kern::parse_cutoff("cutoff", cutoff_s, 2, in.levels, 0, 64));

    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      world w = build(in);
      rt.reset_stats();
      double t0 = plait_bench::now();
      rt.root([&] {
        for (int t = 0; t < in.time; ++t) sim_village(rt, w.top, in, cutoff);
      });
      rec.time_s = plait_bench::now() - t0;
      totals r = results(w);
      if (inject) r.v[3] += 1;
      static const char* names[8] = {"population", "hospitals", "personnel", "check-ins",
                                     "in villages", "waiting",   "in assessment", "inside"};
      std::string bad;
      for (int i = 0; i < 8; ++i)
        if (r.v[i] != in.expect[i]) bad += (bad.empty() ? "" : ", ") + std::string(names[i]);
      rec.check(bad.empty(), bad.empty() ? "the 8 totals equal the input file's expected values"
                                         : "totals differ from the input file's expected values: " + bad);
      rec.stat("checkins", r.v[3]);
      rec.stat("avg_stay", r.v[0] ? static_cast<double>(r.total_time) / static_cast<double>(r.v[0]) : 0.0);
      rec.stat("cutoff_value", static_cast<long long>(cutoff));
      rec.stat("input", file);
      rt.stats(rec);
    });
  });
}

}  // namespace health
