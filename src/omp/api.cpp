// The omp_* user API: thread and team queries, ICV setters and getters, timers, locks.
//
// Locks have the sizes gcc's omp.h fixes on this target: omp_lock_t 4 bytes (a futex word: 0 free,
// 1 held, 2 held with waiters), omp_nest_lock_t 16 bytes (the word, a count, the owning task).
// Setting a lock is not a task scheduling point: a waiting thread sleeps on the futex (the
// runtime's futex_wait / futex_wake, src/sleep.hpp).
#include "omp_internal.hpp"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace plait::omp {
namespace {

struct Lock {
  std::atomic<std::uint32_t> word;  // 0 free, 1 held, 2 held with waiters (maybe)
};
static_assert(sizeof(Lock) == 4, "omp_lock_t is 4 bytes");
struct NestLock {
  Lock lock;
  int count;
  void* owner;
};
static_assert(sizeof(NestLock) == 16, "omp_nest_lock_t is 16 bytes");

void lock_set(Lock* l) {
  std::uint32_t c = 0;
  // acquire: the critical section after the lock sees the previous holder's writes.
  if (l->word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
  if (c != 2) c = l->word.exchange(2, std::memory_order_acquire);
  while (c != 0) {
    detail::futex_wait(&l->word, 2, 0);
    c = l->word.exchange(2, std::memory_order_acquire);
  }
}

void lock_unset(Lock* l) {
  // release: publishes the critical section to the next holder.
  if (l->word.fetch_sub(1, std::memory_order_release) != 1) {
    l->word.store(0, std::memory_order_release);
    detail::futex_wake(&l->word, 1);
  }
}

bool lock_test(Lock* l) {
  std::uint32_t c = 0;
  // acquire: as lock_set.
  return l->word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed);
}

// The owner of a nestable lock is the task that set it.
void* current_task_id() {
  Thread& t = thread_state();
  return t.task != nullptr ? static_cast<void*>(t.task) : static_cast<void*>(&t);
}

const Team* team_at(const Thread& t, int level) {
  for (const Team* tm = t.team; tm != nullptr; tm = tm->parent)
    if (static_cast<int>(tm->level) == level) return tm;
  return nullptr;
}

// nteams-var and teams-thread-limit-var: one per process (device ICVs), first from the
// environment. relaxed: an ICV's value is all that is read; no other data is published with it.
std::atomic<unsigned>& nteams_cell() {
  static std::atomic<unsigned> v{global().nteams};
  return v;
}
std::atomic<unsigned>& teams_thread_limit_cell() {
  static std::atomic<unsigned> v{global().teams_thread_limit};
  return v;
}

}  // namespace

unsigned nteams_var() { return nteams_cell().load(std::memory_order_relaxed); }
unsigned teams_thread_limit_var() { return teams_thread_limit_cell().load(std::memory_order_relaxed); }

}  // namespace plait::omp

namespace plait::omp {
// The nestable lock's operations with the wait id a tool is told (OMPT): the lock's own address,
// or the user's for libomp's layout, whose word points at this lock (kmp_ext.cpp).
void nest_lock_init(void* p, const void* id) {
  auto* l = static_cast<NestLock*>(p);
  l->lock.word.store(0, std::memory_order_relaxed);
  l->count = 0;
  std::atomic_ref<void*>(l->owner).store(nullptr, std::memory_order_relaxed);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::lock_init(ompt::mutex_nest_lock, 0, id);
}
void nest_lock_destroy(void*, const void* id) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::lock_destroy(ompt::mutex_nest_lock, id);
}
void nest_lock_set(void* p, const void* id) {
  auto* l = static_cast<NestLock*>(p);
  void* me = current_task_id();
  // relaxed: only the owner can read itself here (it wrote the field while holding the lock);
  // anyone else reads another value, old or new, and goes to the lock.
  if (std::atomic_ref<void*>(l->owner).load(std::memory_order_relaxed) == me) {
    ++l->count;
    if (PLAIT_UNLIKELY(ompt::enabled)) ompt::nest_lock(ompt::scope_begin, id);
    return;
  }
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_acquire(ompt::mutex_nest_lock, 0, id);
  lock_set(&l->lock);
  std::atomic_ref<void*>(l->owner).store(me, std::memory_order_relaxed);
  l->count = 1;
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_acquired(ompt::mutex_nest_lock, id);
}
void nest_lock_unset(void* p, const void* id) {
  auto* l = static_cast<NestLock*>(p);
  if (--l->count == 0) {
    std::atomic_ref<void*>(l->owner).store(nullptr, std::memory_order_relaxed);
    lock_unset(&l->lock);
    if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_released(ompt::mutex_nest_lock, id);
  } else if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt::nest_lock(ompt::scope_end, id);
  }
}
int nest_lock_test(void* p, const void* id) {
  auto* l = static_cast<NestLock*>(p);
  void* me = current_task_id();
  // relaxed: as in nest_lock_set.
  if (std::atomic_ref<void*>(l->owner).load(std::memory_order_relaxed) == me) {
    if (PLAIT_UNLIKELY(ompt::enabled)) ompt::nest_lock(ompt::scope_begin, id);
    return ++l->count;
  }
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_acquire(ompt::mutex_test_nest_lock, 0, id);
  if (!lock_test(&l->lock)) return 0;
  std::atomic_ref<void*>(l->owner).store(me, std::memory_order_relaxed);
  l->count = 1;
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_acquired(ompt::mutex_test_nest_lock, id);
  return 1;
}

}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

// The two most-called queries (a kernel may ask in every task): the thread's state as it is, no
// ICV set-up (neither depends on the ICVs). A team's level is at least 1, and `num` is 0 outside
// every team (a region gives the thread's state back at its end).
int omp_get_num_threads(void) {
  const Team* team = tls.thread.team;
  return team != nullptr ? static_cast<int>(team->n) : 1;
}
int omp_get_thread_num(void) { return static_cast<int>(tls.thread.num); }
int omp_get_max_threads(void) { return static_cast<int>(thread_state().icv.nthreads); }
void omp_set_num_threads(int n) {
  if (n > 0) thread_state().icv.nthreads = static_cast<unsigned>(n);
}
int omp_get_num_procs(void) { return static_cast<int>(global().num_procs); }
int omp_in_parallel(void) { return thread_state().active_level > 0 ? 1 : 0; }
void omp_set_dynamic(int v) { thread_state().icv.dyn = v != 0; }
int omp_get_dynamic(void) { return thread_state().icv.dyn ? 1 : 0; }
void omp_set_nested(int v) { thread_state().icv.max_active_levels = v != 0 ? 255 : 1; }
int omp_get_nested(void) { return thread_state().icv.max_active_levels > 1 ? 1 : 0; }
int omp_get_thread_limit(void) {
  // At most the largest team there is (a pool's max_workers): what a region can be given.
  const unsigned icv = thread_state().icv.thread_limit, l = icv != 0 ? icv : global().thread_limit;
  return static_cast<int>(l == 0 || l > plait::max_workers ? plait::max_workers : l);
}
void omp_set_max_active_levels(int v) {
  if (v >= 0) thread_state().icv.max_active_levels = static_cast<unsigned>(v > 255 ? 255 : v);
}
int omp_get_max_active_levels(void) { return static_cast<int>(thread_state().icv.max_active_levels); }
int omp_get_supported_active_levels(void) { return 255; }
int omp_get_level(void) { return static_cast<int>(thread_state().level); }
int omp_get_active_level(void) { return static_cast<int>(thread_state().active_level); }
int omp_get_ancestor_thread_num(int level) {
  const Thread& t = thread_state();
  if (level < 0 || level > static_cast<int>(t.level)) return -1;
  if (level == static_cast<int>(t.level)) return omp_get_thread_num();
  if (level == 0) return 0;
  const Team* inner = team_at(t, level + 1);
  return inner != nullptr ? static_cast<int>(inner->parent_num) : -1;
}
int omp_get_team_size(int level) {
  const Thread& t = thread_state();
  if (level < 0 || level > static_cast<int>(t.level)) return -1;
  if (level == 0) return 1;
  const Team* tm = team_at(t, level);
  return tm != nullptr ? static_cast<int>(tm->n) : -1;
}
int omp_in_final(void) {
  const Thread& t = thread_state();
  return t.task != nullptr && t.task->final ? 1 : 0;
}
int omp_get_cancellation(void) { return global().cancel ? 1 : 0; }
int omp_get_proc_bind(void) { return thread_state().icv.bind; }
int omp_get_max_task_priority(void) { return global().max_task_priority; }
// A negative device number becomes 0, as libgomp 12 does.
void omp_set_default_device(int d) { thread_state().icv.default_device = d >= 0 ? d : 0; }
int omp_get_default_device(void) { return thread_state().icv.default_device; }
int omp_get_num_devices(void) { return 0; }
int omp_get_device_num(void) { return 0; }
int omp_get_initial_device(void) { return 0; }
int omp_is_initial_device(void) { return 1; }
int omp_get_num_teams(void) { return thread_state().num_teams; }
// A negative value is ignored; 0 is taken (libgomp 12 does both): the next teams construct
// without num_teams then has 3 teams again.
void omp_set_num_teams(int n) {
  if (n >= 0) nteams_cell().store(static_cast<unsigned>(n), std::memory_order_relaxed);  // relaxed: see nteams_cell
}
int omp_get_max_teams(void) { return static_cast<int>(nteams_var()); }
void omp_set_teams_thread_limit(int n) {
  if (n >= 0) teams_thread_limit_cell().store(static_cast<unsigned>(n), std::memory_order_relaxed);  // relaxed: as above
}
int omp_get_teams_thread_limit(void) { return static_cast<int>(teams_thread_limit_var()); }
int omp_get_team_num(void) { return thread_state().team_num; }

// omp_sched_t: 1 static, 2 dynamic, 3 guided, 4 auto; | 0x80000000 monotonic.
void omp_set_schedule(int kind, int chunk) {
  Thread& t = thread_state();
  const int k = kind & 0x7fffffff;
  if (k < 1 || k > 4) return;
  t.icv.run_sched = k;
  t.icv.run_chunk = chunk < 1 ? 0 : chunk;
}
void omp_get_schedule(int* kind, int* chunk) {
  const Thread& t = thread_state();
  *kind = t.icv.run_sched;
  *chunk = t.icv.run_chunk < 1 ? (t.icv.run_sched == 1 ? 0 : 1) : static_cast<int>(t.icv.run_chunk);
}

double omp_get_wtime(void) { return static_cast<double>(plait::detail::now_ns()) * 1e-9; }
double omp_get_wtick(void) {
  timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// With a tool attached (OMPT), each lock operation tells it (ompt.hpp): the lock's address is its
// wait id; a nestable lock its owner takes again or keeps is a nest_lock scope.
void omp_init_lock(void* l) {
  static_cast<Lock*>(l)->word.store(0, std::memory_order_relaxed);
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::lock_init(ompt::mutex_lock, 0, l);
}
void omp_destroy_lock(void* l) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::lock_destroy(ompt::mutex_lock, l);
}
void omp_set_lock(void* l) {
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt::mutex_acquire(ompt::mutex_lock, 0, l);
    lock_set(static_cast<Lock*>(l));
    ompt::mutex_acquired(ompt::mutex_lock, l);
    return;
  }
  lock_set(static_cast<Lock*>(l));
}
void omp_unset_lock(void* l) {
  lock_unset(static_cast<Lock*>(l));
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::mutex_released(ompt::mutex_lock, l);
}
int omp_test_lock(void* l) {
  if (PLAIT_UNLIKELY(ompt::enabled)) {
    ompt::mutex_acquire(ompt::mutex_test_lock, 0, l);
    const bool got = lock_test(static_cast<Lock*>(l));
    if (got) ompt::mutex_acquired(ompt::mutex_test_lock, l);
    return got ? 1 : 0;
  }
  return lock_test(static_cast<Lock*>(l)) ? 1 : 0;
}

void omp_init_nest_lock(void* p) { nest_lock_init(p, p); }
void omp_destroy_nest_lock(void* p) { nest_lock_destroy(p, p); }
void omp_set_nest_lock(void* p) { nest_lock_set(p, p); }
void omp_unset_nest_lock(void* p) { nest_lock_unset(p, p); }
int omp_test_nest_lock(void* p) { return nest_lock_test(p, p); }

void omp_display_env(int verbose) { print_env(verbose != 0); }

// The error directive (OpenMP 5.1) at execution time: `msglen` is the message's length, or
// (size_t)-1 for a NUL-terminated one (what gcc passes).
static int message_len(const char* msg, std::size_t msglen) {
  if (msg == nullptr) return 0;
  const std::size_t n = msglen == static_cast<std::size_t>(-1) ? std::strlen(msg) : msglen;
  return n > 4096 ? 4096 : static_cast<int>(n);
}

void GOMP_warning(const char* msg, std::size_t msglen) {
  std::fprintf(stderr, "plait-omp: error directive encountered: %.*s\n", message_len(msg, msglen), msg != nullptr ? msg : "");
  std::fflush(stderr);
}

void GOMP_error(const char* msg, std::size_t msglen) {
  std::fprintf(stderr, "plait-omp: fatal error: error directive encountered: %.*s\n", message_len(msg, msglen),
               msg != nullptr ? msg : "");
  std::fflush(stderr);
  std::exit(EXIT_FAILURE);
}

}  // extern "C"
