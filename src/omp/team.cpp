// Parallel regions, the team barrier, single, critical, atomic and cancellation.
//
// A team of n threads runs on a Plait pool of n workers made for that size (kept for the next
// region of the same size). The thread that starts the region adopts the pool's worker 0 for the
// region's length; members 1..n-1 are the pool's own worker threads, each handed its implicit task
// by mail (Worker::mail: thread i of a team must be worker i). Explicit tasks of the region are
// ordinary Plait tasks on these workers' deques, so any member runs or steals them, and every wait
// is a latch wait that runs tasks meanwhile.
//
// Nested regions. An inner region (a parallel construct met inside a team, or by a thread that is
// a worker of some other Plait pool) gets a team of its own when max-active-levels allows: a pool
// of its size, taken from the same cache, whose worker 0 the encountering thread adopts for the
// region's length (tl_worker goes back to the worker it was on at the end). Pools are used by one
// region at a time, so two inner regions of one size at once run on two pools. An inner region
// that gets one thread (max-active-levels reached, num_threads(1), the thread limit) is a team of
// one off the pools: its explicit tasks run at once.
//
// Threads in use. `threads_in_use` counts the threads of the running regions (the encountering
// thread once, plus the members each region started); thread-limit-var bounds it (a region gets
// at most limit - in use + 1 threads, as libgomp counts its contention group), and while it is
// above the CPUs every busy pool spins only briefly before yielding (libgomp's throttled spin
// count): a waiting member of one team would otherwise take the core of a working member of
// another.
#include "omp_internal.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace plait::omp {

void fatal(const char* fmt, ...) noexcept {
  // What the program printed so far is its own: flushed before the line (as libgomp's exit does).
  std::fflush(stdout);
  std::va_list ap;
  va_start(ap, fmt);
  std::fputs("plait-omp: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::fflush(stderr);
  std::_Exit(2);
}

constinit thread_local ThreadLocal tls __attribute__((tls_model("initial-exec")));

void init_thread_state(Thread& t) noexcept {
  t.icv = global().icv;
  t.icv_set = true;
  display_env_once();
}

// ---- Pools, one per team size ------------------------------------------------------------------

namespace {
struct PoolSlot {
  std::unique_ptr<detail::Pool> pool;
  bool busy = false;
  bool bound = false;  // its workers are pinned to the first level's places (a first-level team's)
};
std::mutex pools_mu;
std::vector<PoolSlot>* pools = nullptr;  // never freed: workers may outlive static destructors
unsigned threads_in_use = 1;             // under pools_mu: the initial thread and every region's members

// Under pools_mu: every busy pool's spin limit for the threads now in use (see the top).
void set_spin_limits() {
  const bool over = threads_in_use > global().num_procs;
  for (PoolSlot& s : *pools)
    if (s.busy) s.pool->spin_limit.store(over ? 16u : s.pool->spin_limit_alone, std::memory_order_relaxed);
}
}  // namespace

static void write_traces_at_exit() noexcept {
  // Idle workers may still record idle events; each buffer is copied under its busy flag
  // (pool::write_trace's way). No region runs: the program is past main.
  std::lock_guard<std::mutex> lk(pools_mu);
  for (PoolSlot& s : *pools) detail::trace_write_now(s.pool.get());
}

// A pool of n workers for a team; `first_level`: a team started outside every team, which a bound
// program pins to its places (an inner team is not bound: its members run where the OS puts them).
static detail::Pool* acquire_pool(unsigned n, bool first_level) {
  const Global& g = global();
  const bool bound = first_level && g.icv.bind != 0 && std::getenv("PLAIT_PIN") == nullptr;
  std::lock_guard<std::mutex> lk(pools_mu);
  if (pools == nullptr) pools = new std::vector<PoolSlot>();
  threads_in_use += n - 1;
  for (PoolSlot& s : *pools) {
    if (!s.busy && s.pool->n == n && s.bound == bound) {
      s.busy = true;
      set_spin_limits();
      return s.pool.get();
    }
  }
  pool_options o;
  o.num_workers = n;
  if (const std::size_t ss = requested_stacksize(); ss != 0) o.stack_size = ss;
  if (g.wait_active) o.idle = idle_policy::spin;
  // Bound (bind-var true, close, spread, primary; places.cpp): member i pinned to the place the
  // policy gives it on the place list. PLAIT_PIN, when set, decides instead (pool_options::from_env).
  if (bound) o.places = team_places(n, g.icv.bind);
  try {
    pools->push_back(PoolSlot{std::make_unique<detail::Pool>(o, /*caller_is_worker0=*/true), true, bound});
  } catch (const std::exception& e) {
    fatal("cannot start a team of %u threads: %s", n, e.what());
  }
  set_spin_limits();
  // PLAIT_TRACE: the pools live as long as the process (workers may outlive static destructors),
  // so their traces are written when it exits normally — one file per pool, numbered from the
  // second pool on as for any PLAIT_TRACE pool; a pool that omp_pause_resource shuts down writes
  // its own at that point (~Pool).
  if (!pools->back().pool->trace.path.empty()) {
    static bool registered = false;
    if (!registered) {
      registered = true;
      std::atexit(&write_traces_at_exit);
    }
  }
  return pools->back().pool.get();
}

// A pinned team (OMP_PROC_BIND, PLAIT_PIN=cores) binds member i to the i-th CPU; member 0 is the
// thread that starts the region, which binds itself to its CPU here, once, and stays bound (as
// libgomp binds the initial thread). Left free, it could share member 1's CPU for milliseconds
// while the other CPU idles.
static void bind_initial_thread(int cpu) {
  static thread_local int bound = -1;
  if (bound == cpu) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0) bound = cpu;
}

static void release_pool(detail::Pool* p) {
  std::lock_guard<std::mutex> lk(pools_mu);
  for (PoolSlot& s : *pools)
    if (s.pool.get() == p) {
      s.busy = false;
      threads_in_use -= p->n - 1;
    }
  set_spin_limits();
}

// The threads a region may add to those in use: thread-limit-var (the ICV of a teams region, else
// OMP_THREAD_LIMIT, else the largest team a pool has) minus the threads in use, plus the
// encountering thread, which the new team counts again.
static unsigned threads_available(const Thread& t) {
  unsigned limit = t.icv.thread_limit != 0 ? t.icv.thread_limit : global().thread_limit;
  if (limit == 0 || limit > max_workers) limit = max_workers;
  std::lock_guard<std::mutex> lk(pools_mu);
  return threads_in_use >= limit ? 1 : limit - threads_in_use + 1;
}

// omp_pause_resource: the pools no region uses are shut down (~Pool joins their threads, writes a
// PLAIT_TRACE pool's trace, unmaps its memory); the next region of that size starts a new one. The
// caller is outside every region, so the only pools in use are those of other threads' regions
// (busy). A pool's records are all back in it: a region gives its master's ready records back at
// its end, and its workers' lists die with their threads.
void release_idle_pools() {
  std::vector<std::unique_ptr<detail::Pool>> idle;
  {
    std::lock_guard<std::mutex> lk(pools_mu);
    if (pools == nullptr) return;
    for (auto it = pools->begin(); it != pools->end();) {
      if (!it->busy) {
        idle.push_back(std::move(it->pool));
        it = pools->erase(it);
      } else {
        ++it;
      }
    }
  }
  idle.clear();  // outside the lock: the joins take a while, and other threads may start regions
}

// ---- The barrier -------------------------------------------------------------------------------

// Each member first waits until the subtree of its own implicit task is done (wait_subtree:
// running tasks, its own queued ones first): every explicit task it created, and theirs. A member
// that has seen that will create no task before it leaves the barrier, so once every member has
// arrived, no task of the region is left. Then the arrival: phase k of the barrier uses
// phase[k & 1], a latch of count 1. Every member but the last to arrive waits for it (running
// tasks meanwhile); the last re-arms the other parity's latch for phase k+1 — all members have left
// phase k-1, since they all arrived at k — and opens phase k.
//
// Cancellation. Once the region is cancelled, members leave for its end from wherever they are,
// so phases no longer match: a barrier of a cancelled region returns at once, and the member that
// cancels opens the phase latch it may have left others waiting on (cancel_region). The region's
// end is a different barrier (team_end_barrier: every member's subtree, then one latch counting
// members), so a member that left early and one released from an explicit barrier meet there.
static void barrier_body(Thread& t) noexcept;

void team_barrier(Thread& t, int ompt_kind) noexcept {
  const bool told = PLAIT_UNLIKELY(ompt::enabled);
  if (told) {
    ompt::work_end(t);  // a GOMP single's executor ends before the barrier (ompt::work_begin)
    ompt::sync_region(ompt_kind, ompt::scope_begin, t, nullptr);
  }
  barrier_body(t);
  if (told) ompt::sync_region(ompt_kind, ompt::scope_end, t, nullptr);
}

static void barrier_body(Thread& t) noexcept {
  Team& team = *t.team;
  detail::Worker* w = detail::current_worker();
  if (team.n == 1) {
    wait_subtree(t);
    return;
  }
  // relaxed: see cancel_region; a member that misses the flag here is released by its latch.
  if (team.canceled.load(std::memory_order_relaxed)) return;
  wait_subtree(t);
  const unsigned k = t.bar_phase++;
  detail::CountLatch& cur = team.phase[k & 1];
  // acq_rel: the arrivals are counted once each; the last sees every earlier member's writes
  // through the chain of RMWs (and publishes its own through the latch below).
  if (team.arrived.fetch_add(1, std::memory_order_acq_rel) == team.n - 1) {
    // relaxed: both are read only after the latch below opens (count_down releases).
    team.arrived.store(0, std::memory_order_relaxed);
    team.phase[(k + 1) & 1].reset(1);
    cur.count_down(1);
  } else {
    detail::group_wait(w, &cur, t.task->floor);  // (the implicit task's floor: an inner region's
                                                 // barrier runs none of the enclosing tasks)
  }
}

static void end_barrier_body(Thread& t) noexcept {
  Team& team = *t.team;
  detail::Worker* w = detail::current_worker();
  wait_subtree(t);
  if (w == nullptr) return;  // a team of one off the pools: its tasks ran at once
  team.finish.count_down(1);
  detail::group_wait(w, &team.finish, t.task->floor);
}

void team_end_barrier(Thread& t) noexcept {
  const bool told = PLAIT_UNLIKELY(ompt::enabled);
  if (told) ompt::sync_region(ompt::sync_barrier_implicit_parallel, ompt::scope_begin, t, nullptr);
  end_barrier_body(t);
  if (told) ompt::sync_region(ompt::sync_barrier_implicit_parallel, ompt::scope_end, t, nullptr);
}

// Cancels the region and releases members waiting in the current phase of an explicit barrier.
void cancel_region(Thread& t) noexcept {
  Team& team = *t.team;
  // relaxed: members read it at cancellation points and barriers; those waiting are released by
  // the latch below, whose count_down releases the flag with it.
  if (team.canceled.exchange(true, std::memory_order_relaxed)) return;
  if (team.n > 1) team.phase[t.bar_phase & 1].count_down(1);
}

// ---- Parallel regions --------------------------------------------------------------------------

struct PreWork {  // a worksharing construct set up with the region (GOMP_parallel_loop_*, sections)
  void (*setup)(Thread& t, const void* params) = nullptr;
  const void* params = nullptr;
};

// A member's implicit task, in two halves around the member's call of the region's function:
// enter saves nothing (the caller keeps `saved`), leave ends the implicit task at the region's
// end barrier and gives the thread its state back.
static void member_enter(Thread& t, Team& team, unsigned num, TaskCtx& implicit, const PreWork& pre) noexcept {
  t.team = &team;
  t.num = num;
  t.level = team.level;
  t.active_level = team.active_level;
  t.icv = team.icv;
  t.team_num = team.league_num;
  t.num_teams = team.league_size;
  t.place = team.places.empty() ? -1 : static_cast<int>(team.places[num]);
  t.ws_seq = 0;
  t.single_seq = 0;
  t.bar_phase = 0;
  t.ws = nullptr;
  t.kmp_red_seq = 0;
  implicit.owner = &t;
  detail::Worker* const w = detail::current_worker();
  if (w != nullptr) implicit.floor = w->dq.head;
  t.task = &implicit;
  // The master adopted worker 0 of the team's pool; every other member is the pool's worker i.
  // (With a tool, no fast paths: every task takes the general ways, where the OMPT hooks are.)
  t.fast_w = team.pool != nullptr && w != nullptr && w->pool == team.pool && !ompt::enabled ? w : nullptr;
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::implicit_task(ompt::scope_begin, t, team);
  if (pre.setup != nullptr) pre.setup(t, pre.params);
  if (PLAIT_UNLIKELY(global().display_affinity)) display_affinity_on_entry();
}

static void member_leave(Thread& t, TaskCtx& implicit, const Thread& saved) noexcept {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_end(t);  // (a construct still open: see team_barrier)
  team_end_barrier(t);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::implicit_task(ompt::scope_end, t, *t.team);
  // The taskgroup a reduction with the task modifier opened for the implicit task (its tasks are
  // done: the barrier waited for them, and each counted the group down before its subtree).
  while (Taskgroup* g = implicit.group) {
    implicit.group = g->prev;
    delete g;
  }
  if (implicit.sched != nullptr) {
    release_child_sched(implicit);  // its tasks are done (the barrier waited for them)
  }
  t = saved;
}

// OMPT: the task that encountered the region, for ompt_get_task_info's ancestors: the master's
// state before it enters (its current task was set by ompt::parallel_begin); an implicit task's
// data is in that saved state while the region runs.
static void ompt_encountering(Team& team, Thread& saved) noexcept {
  TaskCtx* const c = saved.task;
  team.ompt_enc_ctx = c;
  team.ompt_enc_task = c != nullptr && c->is_explicit ? ompt::task_data(c) : &saved.ompt_implicit;
}

// A member's part of the region; `saved`: the thread's state before it, given back at the end.
static void run_member(Thread& t, Team& team, unsigned num, const PreWork& pre, const Thread& saved) noexcept {
  TaskCtx implicit;
  member_enter(t, team, num, implicit, pre);
  team.fn(team.data);
  member_leave(t, implicit, saved);
}
static void run_member(Thread& t, Team& team, unsigned num, const PreWork& pre) noexcept {
  const Thread saved = t;
  run_member(t, team, num, pre, saved);
}

void enter_team_for_task(Thread& t, Team& team, detail::Worker* w) noexcept {
  PLAIT_ASSERT(w != nullptr && w->pool == team.pool);
  t.team = &team;
  t.num = w->index;
  t.level = team.level;
  t.active_level = team.active_level;
  t.icv = team.icv;
  t.team_num = team.league_num;
  t.num_teams = team.league_size;
  t.place = team.places.empty() ? -1 : static_cast<int>(team.places[w->index]);
  t.ws = nullptr;
  t.task = nullptr;  // set by the caller to the task's own context
  t.fast_w = ompt::enabled ? nullptr : w;  // (see member_enter)
}

namespace {
struct MemberArgs {
  Member m;
  const PreWork* pre;
};
}  // namespace

static void member_main(void* d, detail::Worker*) noexcept {
  auto* a = static_cast<MemberArgs*>(d);
  Team* team = a->m.team;
  run_member(thread_state(), *team, a->m.num, *a->pre);
  team->left.count_down(1);  // the last access to the team (the master may free it at 0)
}

// How many threads a parallel construct gets (the standard's algorithm, without dynamic
// adjustment): one past max-active-levels, else the request (or nthreads-var) bounded by the
// threads thread-limit-var leaves (which is at most max_workers: a larger request gets the
// largest team there is, as libgomp gives the threads it can).
static unsigned team_size(const Thread& t, unsigned requested) {
  if (t.active_level >= t.icv.max_active_levels) return 1;
  unsigned n = requested;
  if (n == 0) n = t.icv.nthreads;
  if (n <= 1) return 1;
  const unsigned avail = threads_available(t);
  return n > avail ? avail : n;
}

// Whether the encountering thread is inside a team or a native Plait task already: a region of
// one thread there runs off the pools (its tasks at once). A region started from outside every
// pool gets a pool of its size even for one thread: its tasks are then deferred like any team's.
static bool nested_region(const Thread& t) { return t.team != nullptr || detail::current_worker() != nullptr; }

unsigned region_size(Thread& t, unsigned requested) { return team_size(t, requested); }

// The team of a parallel construct: (up to) `requested` threads running fn(data). Returns whether
// it runs off the pools (a team of one inside a team: no pool, no members to start).
static bool init_team(Thread& t, Team& team, void (*fn)(void*), void* data, unsigned requested) {
  const unsigned n = team_size(t, requested);
  const bool nested = n == 1 && nested_region(t);
  team.n = n;
  team.level = t.level + 1;
  team.active_level = t.active_level + (n > 1 ? 1 : 0);
  team.parent = t.team;
  team.parent_num = t.num;
  team.fn = fn;
  team.data = data;
  team.icv = t.icv;
  team.league_num = t.team_num;
  team.league_size = t.num_teams;
  if (t.level + 1 < global().nthreads_list.size()) team.icv.nthreads = global().nthreads_list[t.level + 1];
  if (t.level + 1 < global().bind_list.size()) team.icv.bind = global().bind_list[t.level + 1];
  team.phase[0].reset(1);
  team.phase[1].reset(1);
  team.finish.reset(n);
  for (unsigned i = 0; i < ws_ring; ++i) team.ws[i].serves.store(i, std::memory_order_relaxed);
  return nested;
}

// The pool for a team that is not nested: its workers 1..n-1 get their member's mail, the calling
// thread adopts worker 0 (the worker it was on, if any, is returned).
static detail::Worker* start_members(Team& team, std::vector<MemberArgs>& args, const PreWork& pre) {
  const unsigned n = team.n;
  detail::Pool* p = acquire_pool(n, team.level == 1);
  if (team.level == 1 && global().icv.bind != 0 && std::getenv("PLAIT_PIN") == nullptr)
    team.places = place_assignment(n, global().icv.bind, place_list().size());
  team.pool = p;
  team.left.reset(n - 1);
  args.resize(n);
  detail::Worker* w0 = &p->workers[0];
  if (p->worker0_cpu >= 0) bind_initial_thread(p->worker0_cpu);
  detail::Worker* const outer = detail::tl_worker;
  detail::tl_worker = w0;
  std::vector<detail::Worker*> to(n);
  std::vector<detail::Mail*> mails(n);
  for (unsigned i = 1; i < n; ++i) {
    args[i].m.mail = detail::Mail{&member_main, &args[i]};
    args[i].m.team = &team;
    args[i].m.num = i;
    args[i].pre = &pre;
    to[i] = &p->workers[i];
    mails[i] = &args[i].m.mail;
  }
  if (n > 1) detail::post_mails(p, to.data() + 1, mails.data() + 1, n - 1);
  return outer;
}

// After the master's own part: waits until no member touches the team any more, and gives the
// pool back.
static void finish_members(Team& team, detail::Worker* outer) {
  detail::Worker* w0 = &team.pool->workers[0];
  // The members leave after the barrier; wait until none touches the team any more.
  detail::group_wait(w0, &team.left, w0->dq.base);
  give_back_ready_records(w0);  // the records this thread keeps are the pool's
  detail::tl_worker = outer;
  release_pool(team.pool);
}

static void parallel(void (*fn)(void*), void* data, unsigned requested, const PreWork& pre) {
  Thread& t = thread_state();
  Team team;
  const bool nested = init_team(t, team, fn, data, requested);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::parallel_begin(t, team, requested, nullptr);
  // (before any member starts: a member may ask for its ancestors at once)
  Thread saved = t;
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt_encountering(team, saved);
  if (nested) {
    run_member(t, team, 0, pre, saved);
  } else {
    std::vector<MemberArgs> args;
    detail::Worker* const outer = start_members(team, args, pre);
    run_member(t, team, 0, pre, saved);
    finish_members(team, outer);
  }
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::parallel_end(t, team, nullptr);
}

// ---- The GOMP_1.0 split form -------------------------------------------------------------------
//
// GOMP_parallel_start (and the combined loop and sections forms) start the team and return; the
// program then calls fn(data) itself, as member 0, and GOMP_parallel_end closes the region. What
// parallel() keeps on its stack lives here, on the heap, from one call to the other; a thread's
// open regions form a stack (a region opened inside another closes first).
namespace {
struct OpenRegion {
  Team team;
  std::vector<MemberArgs> args;
  PreWork pre;
  alignas(std::max_align_t) unsigned char params[64];  // a copy of the setup's parameters
  Thread saved;                                        // the master's state before the region
  TaskCtx implicit;                                    // the master's implicit task
  detail::Worker* outer = nullptr;
  bool nested = false;
  OpenRegion* prev = nullptr;
};
thread_local OpenRegion* open_regions = nullptr;
}  // namespace

void parallel_start_with(void (*fn)(void*), void* data, unsigned n, void (*setup)(Thread&, const void*),
                         const void* params, std::size_t params_bytes) {
  Thread& t = thread_state();
  PLAIT_ASSERT(params_bytes <= sizeof(OpenRegion::params));
  auto* r = new OpenRegion;
  if (params_bytes != 0) std::memcpy(r->params, params, params_bytes);
  r->pre = PreWork{setup, params_bytes != 0 ? r->params : params};
  r->nested = init_team(t, r->team, fn, data, n);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::parallel_begin(t, r->team, n, nullptr);
  r->saved = t;
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt_encountering(r->team, r->saved);  // (before the members start)
  if (!r->nested) r->outer = start_members(r->team, r->args, r->pre);
  member_enter(t, r->team, 0, r->implicit, r->pre);
  r->prev = open_regions;
  open_regions = r;
}

void parallel_end() {
  OpenRegion* r = open_regions;
  Thread& t = thread_state();
  if (r == nullptr || t.team != &r->team || t.num != 0)
    fatal("GOMP_parallel_end called without a matching GOMP_parallel_start on this thread");
  open_regions = r->prev;
  member_leave(t, r->implicit, r->saved);
  if (!r->nested) finish_members(r->team, r->outer);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::parallel_end(t, r->team, nullptr);
  delete r;
}

void parallel_with(void (*fn)(void*), void* data, unsigned n, void (*setup)(Thread&, const void*), const void* params) {
  PreWork pre{setup, params};
  parallel(fn, data, n, pre);
}

}  // namespace plait::omp

using namespace plait::omp;
namespace detail = plait::detail;

extern "C" {

void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned /*flags: proc_bind*/) {
  note_abi(abi_gomp);
  parallel_with(fn, data, num_threads, nullptr, nullptr);
}

void GOMP_barrier(void) {
  Thread& t = thread_state();
  if (t.team != nullptr) team_barrier(t, ompt::sync_barrier_explicit);
}

bool GOMP_barrier_cancel(void) {
  Thread& t = thread_state();
  if (t.team == nullptr) return false;
  team_barrier(t);
  // relaxed: the barrier ordered the cancelling member's store before us.
  return t.team->canceled.load(std::memory_order_relaxed);
}

// OMPT: the executor's construct stays open until the thread's next construct, barrier or
// implicit-task end (gcc calls nothing at its end; __kmpc_end_single and GOMP_single_copy_end
// end it); the others' begins and ends at once.
static bool single_told(Thread& t, bool mine) noexcept {
  if (mine) {
    ompt::work_begin(t, ompt::work_single_executor, 1);
  } else {
    ompt::work(ompt::work_single_other, ompt::scope_begin, t, 1);
    ompt::work(ompt::work_single_other, ompt::scope_end, t, 1);
  }
  return mine;
}

bool GOMP_single_start(void) {
  Thread& t = thread_state();
  if (t.team == nullptr || t.team->n == 1) return PLAIT_UNLIKELY(ompt::enabled) ? single_told(t, true) : true;
  std::uint64_t s = t.single_seq++;
  // acq_rel: one member wins each single (the first to arrive); the counter only grows.
  const bool mine =
      t.team->single.compare_exchange_strong(s, s + 1, std::memory_order_acq_rel, std::memory_order_relaxed);
  return PLAIT_UNLIKELY(ompt::enabled) ? single_told(t, mine) : mine;
}

void* GOMP_single_copy_start(void) {
  Thread& t = thread_state();
  if (GOMP_single_start()) return nullptr;
  team_barrier(t);  // the winner stores the pointer, then arrives here
  return t.team->copyprivate;
}

void GOMP_single_copy_end(void* data) {
  Thread& t = thread_state();
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_end(t);
  if (t.team == nullptr || t.team->n == 1) return;
  t.team->copyprivate = data;  // read by the others after the barrier (ordered by it)
  team_barrier(t);
}

// critical and atomic: plain mutexes. Neither is a task scheduling point, so a holder never runs
// another task that could ask for the same lock.
static std::mutex critical_mu;
static std::mutex atomic_mu;

// Takes and gives back the mutex of a critical or atomic region; with a tool attached (OMPT) it is
// told, the mutex's address the wait id.
static void region_lock(std::mutex& m, int ompt_kind) {
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt::mutex_acquire(ompt_kind, 0, &m);
    m.lock();
    ompt::mutex_acquired(ompt_kind, &m);
    return;
  }
  m.lock();
}
static void region_unlock(std::mutex& m, int ompt_kind) {
  m.unlock();
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_released(ompt_kind, &m);
}

void GOMP_critical_start(void) { region_lock(critical_mu, ompt::mutex_critical); }
void GOMP_critical_end(void) { region_unlock(critical_mu, ompt::mutex_critical); }

// Named critical: gcc passes a pointer-sized slot per name (zero-initialised, shared by every
// user of the name); the first user installs a mutex there.
static std::mutex* named_mutex(void** slot) {
  // acquire: pairs with the release CAS that installed the mutex.
  auto* a = reinterpret_cast<std::atomic<std::mutex*>*>(slot);
  std::mutex* m = a->load(std::memory_order_acquire);
  if (m != nullptr) return m;
  auto* fresh = new std::mutex;
  // acq_rel: publishes the new mutex, or reads the winner's.
  if (a->compare_exchange_strong(m, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) return fresh;
  delete fresh;
  return m;
}
void GOMP_critical_name_start(void** pptr) { region_lock(*named_mutex(pptr), ompt::mutex_critical); }
void GOMP_critical_name_end(void** pptr) { region_unlock(*named_mutex(pptr), ompt::mutex_critical); }

void GOMP_atomic_start(void) { region_lock(atomic_mu, ompt::mutex_atomic); }
void GOMP_atomic_end(void) { region_unlock(atomic_mu, ompt::mutex_atomic); }

// OMPT's construct flag for GOMP's cancellation kind (the two number loops and sections the other way).
static int ompt_construct(int which) {
  return (which & cancel_parallel) != 0 ? ompt::cancel_parallel
         : (which & cancel_loop) != 0   ? ompt::cancel_loop
         : (which & cancel_sections) != 0 ? ompt::cancel_sections
                                          : ompt::cancel_taskgroup;
}

static bool cancellation_point(int which);

bool GOMP_cancellation_point(int which) {
  const bool yes = cancellation_point(which);
  if (yes && PLAIT_UNLIKELY(ompt::enabled)) ompt::cancel(thread_state(), ompt_construct(which) | ompt::cancel_detected);
  return yes;
}

static bool cancellation_point(int which) {
  if (!global().cancel) return false;
  Thread& t = thread_state();
  // relaxed: a flag read at a cancellation point; the construct's end orders the rest.
  if (which & cancel_parallel) return t.team != nullptr && t.team->canceled.load(std::memory_order_relaxed);
  if (which & (cancel_loop | cancel_sections)) return t.ws != nullptr && t.ws->canceled.load(std::memory_order_relaxed);
  if (which & cancel_taskgroup) {
    for (TaskCtx* c = t.task; c != nullptr; c = c->parent)
      if (c->group != nullptr) return group_canceled(c->group);
    return false;
  }
  return false;
}

bool GOMP_cancel(int which, bool do_cancel) {
  if (!global().cancel) return false;
  if (!do_cancel) return GOMP_cancellation_point(which);
  Thread& t = thread_state();
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::cancel(t, ompt_construct(which) | ompt::cancel_activated);
  // relaxed: as above.
  if (which & cancel_parallel) {
    if (t.team != nullptr) cancel_region(t);
    return true;
  }
  if (which & (cancel_loop | cancel_sections)) {
    if (t.ws != nullptr) t.ws->canceled.store(true, std::memory_order_relaxed);
    return true;
  }
  if (which & cancel_taskgroup) {
    for (TaskCtx* c = t.task; c != nullptr; c = c->parent) {
      if (c->group != nullptr) {
        // The innermost taskgroup region: a worksharing construct's own group is none (libgomp
        // cancels its enclosing one too).
        Taskgroup* g = c->group->workshare && c->group->prev != nullptr ? c->group->prev : c->group;
        g->canceled.store(true, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }
  return false;
}

}  // extern "C"

extern "C" void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads) {
  note_abi(abi_gomp);
  parallel_start_with(fn, data, num_threads, nullptr, nullptr, 0);
}

extern "C" void GOMP_parallel_end(void) { parallel_end(); }

// ---- scope, teams on the host ------------------------------------------------------------------

extern "C" void GOMP_scope_start(std::uintptr_t* reductions) {
  // The scope construct itself needs nothing from the runtime (its barrier is a GOMP_barrier);
  // a reduction with the task modifier registers as a worksharing construct's does.
  if (reductions != nullptr) scope_task_reductions(reductions);
}

// parallel with a reduction(task, ...): the team's private copies registered for the region's
// size before it starts, each member's implicit task in a taskgroup that sees them (its tasks
// take part through in_reduction); the caller combines the copies of the returned number of
// threads and unregisters.
static void open_reduction_group(Thread& t, const void* data) {
  GOMP_taskgroup_start();
  innermost_taskgroup(t)->reductions = static_cast<std::uintptr_t*>(const_cast<void*>(data));
}

extern "C" unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                             unsigned /*flags: proc_bind*/) {
  Thread& t = thread_state();
  note_abi(abi_gomp);
  std::uintptr_t* rdata;
  std::memcpy(&rdata, data, sizeof rdata);  // the block's address is the first word of the region's data
  const unsigned n = region_size(t, num_threads);
  register_task_reductions(rdata, nullptr, nullptr, n);
  parallel_with(fn, data, n, &open_reduction_group, rdata);
  return n;
}

// teams on the host: the league's teams run one after another on the calling thread, each the
// initial thread of its own team (a parallel construct inside one gets a team as usual). Without
// a num_teams clause the league has nteams-var teams, or 3 when that is 0 (libgomp's choice);
// without a thread_limit clause teams-thread-limit-var bounds the teams' parallel regions, when
// set. Both as libgomp 12 does on the host.
extern "C" void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit,
                               unsigned /*flags*/) {
  note_abi(abi_gomp);
  if (num_teams == 0) num_teams = nteams_var() != 0 ? nteams_var() : 3;
  if (thread_limit == 0) thread_limit = teams_thread_limit_var();
  // an ICV: the teams' parallel regions hand it to their members with the others
  Thread& t = thread_state();
  const unsigned outer_limit = t.icv.thread_limit;
  if (thread_limit != 0) t.icv.thread_limit = thread_limit;
  for (unsigned i = 0; i < num_teams; ++i) {
    t.team_num = static_cast<int>(i);
    t.num_teams = static_cast<int>(num_teams);
    fn(data);
  }
  t.team_num = 0;
  t.num_teams = 1;
  t.icv.thread_limit = outer_limit;
}
