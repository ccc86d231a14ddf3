// Internal: the OpenMP front door — the libgomp ABI (GOMP_* entry points, omp_* API) on Plait's
// scheduler. Built as its own shared library, libplait-omp.so (docs/openmp.md).
//
// The pieces, and where they live:
//   omp_internal.hpp  this file: ICVs, per-thread state, teams, task records
//   icv.cpp           the ICVs and the OMP_* / PLAIT_* environment
//   team.cpp          parallel regions (one Plait pool per team size; the master adopts worker 0,
//                     the other members get their implicit task by mail), the barrier, single,
//                     critical, atomic, cancellation
//   loop.cpp          worksharing loops (long and unsigned long long), ordered, sections
//   task.cpp          explicit tasks, taskwait, taskgroup, dependences (Plait's data-flow engine),
//                     detach, taskloop
//   api.cpp           omp_* queries, locks, timers, the teams ICVs
//   reduction.cpp     task reductions (task_reduction, in_reduction, reduction(task, ...))
//   alloc.cpp         memory allocators (omp_alloc and kin, omp_init_allocator's traits)
//   places.cpp        the place queries, answered from Plait's binding
//   affinity.cpp      affinity format and display, omp_pause_resource
//   target.cpp        target constructs on the host (the only device), the device memory routines
//   fortran.cpp       the Fortran names of the omp_* API (gfortran's omp_lib)
//   init.cpp          loading: the one-runtime-per-process check, libgomp's binding undone
//   unimplemented.cpp every entry point of libgomp no other file defines: one line naming it, exit 2
//                     (generated; empty while every entry point is implemented)
//
// Waiting is the runtime's: every wait here (barrier, taskwait, taskgroup end, a member leaving a
// team) is run_until / group_wait on a latch, so waiting threads run tasks and sleep when there are
// none.
#pragma once

#include "../pool_impl.hpp"
#include "ompt.hpp"

#include <plait/dataflow.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace plait::omp {

// gcc's schedule kinds (gomp-constants.h: GFS_*), and the monotonic flag of GOMP_loop_start.
enum sched : int { sched_runtime = 0, sched_static = 1, sched_dynamic = 2, sched_guided = 3, sched_auto = 4 };
inline constexpr unsigned long sched_monotonic = 0x80000000UL;

// GOMP_task / GOMP_taskloop flags.
inline constexpr unsigned task_untied = 1u << 0, task_final = 1u << 1, task_mergeable = 1u << 2,
                          task_depend = 1u << 3, task_priority = 1u << 4, task_up = 1u << 8,
                          task_grainsize = 1u << 9, task_if = 1u << 10, task_nogroup = 1u << 11,
                          task_reduction = 1u << 12, task_detach = 1u << 13, task_strict = 1u << 14;

// GOMP_cancel kinds.
inline constexpr int cancel_parallel = 1, cancel_loop = 2, cancel_sections = 4, cancel_taskgroup = 8;

// Depend kinds of the second depend-array format and of omp_depend_t objects.
inline constexpr std::uintptr_t dep_in = 1, dep_out = 2, dep_inout = 3, dep_mutexinoutset = 4, dep_inoutset = 5;

// Which ABI the program used (PLAIT_OMP_REPORT_ABI, `plait-omp run`; kmp_team.cpp holds it): bits set at the entry points
// that start work (a region, a worksharing loop outside one, a task outside one).
inline constexpr unsigned abi_gomp = 1, abi_kmp = 2;
extern std::atomic<unsigned> abi_seen;
PLAIT_INLINE void note_abi(unsigned bit) noexcept {
  // relaxed: a report at exit, read after every thread that set it has joined or quiesced.
  if (PLAIT_UNLIKELY((abi_seen.load(std::memory_order_relaxed) & bit) == 0))
    abi_seen.fetch_or(bit, std::memory_order_relaxed);
}

// ---- ICVs (icv.cpp) -------------------------------------------------------------------------

struct Icv {
  unsigned nthreads = 1;       // nthreads-var (first level; nested levels in Global::nthreads_list)
  bool dyn = false;            // dyn-var
  int run_sched = sched_static;  // run-sched-var kind (omp_sched_t values: 1 static, 2 dynamic, 3 guided, 4 auto)
  long run_chunk = 0;          // 0: the kind's default
  unsigned max_active_levels = 1;
  int bind = 0;                // bind-var (omp_proc_bind_t)
  int default_device = 0;      // default-device-var (omp_set_default_device, OMP_DEFAULT_DEVICE)
  unsigned thread_limit = 0;   // thread-limit-var inside a host teams region (its thread_limit clause or
                               // teams-thread-limit-var); 0: OMP_THREAD_LIMIT's value (Global::thread_limit)
};

struct Global {
  Icv icv;                        // the initial task's ICVs
  std::vector<unsigned> nthreads_list;  // OMP_NUM_THREADS as a list (level 1, 2, ...)
  std::vector<int> bind_list;           // OMP_PROC_BIND as a list
  unsigned thread_limit = 0;      // 0: none
  unsigned nteams = 0;            // OMP_NUM_TEAMS: nteams-var's initial value (0: the league size is 3, as libgomp)
  unsigned teams_thread_limit = 0;  // OMP_TEAMS_THREAD_LIMIT: teams-thread-limit-var's initial value (0: none)
  std::size_t stacksize = 0;      // OMP_STACKSIZE in bytes (0: Plait's default)
  bool cancel = false;            // OMP_CANCELLATION
  bool wait_active = false;       // OMP_WAIT_POLICY=active: idle workers never sleep
  unsigned num_procs = 1;
  int target_offload = 0;         // OMP_TARGET_OFFLOAD: target_offload_default / _mandatory / _disabled
  int max_task_priority = 0;
  std::uintptr_t def_allocator = 1;  // OMP_ALLOCATOR: a predefined allocator (1: omp_default_mem_alloc)
  bool display_affinity = false;     // OMP_DISPLAY_AFFINITY
  std::string affinity_format = "level %L thread %i affinity %A";  // OMP_AFFINITY_FORMAT (libgomp's default)
};
inline constexpr int target_offload_default = 0, target_offload_mandatory = 1, target_offload_disabled = 2;
// Read once, at the library's first use (thread-safe: a function-local static).
const Global& global();
// Prints the OMP_DISPLAY_ENV block when asked to (once).
void display_env_once();
void print_env(bool verbose);  // the OMP_DISPLAY_ENV block on stderr
// affinity.cpp: OMP_DISPLAY_AFFINITY's line for the calling member, when it changed since its last.
void display_affinity_on_entry();
// kmp_ext.cpp: the stack size of the threads of pools made from now on (kmp_set_stacksize, else
// OMP_STACKSIZE; 0: Plait's default).
std::size_t requested_stacksize();
// team.cpp: shuts down the teams' pools that no region uses (omp_pause_resource).
void release_idle_pools();
// places.cpp: the CPUs the process started with, ascending (read once, at load).
const std::vector<int>& initial_cpus();
// places.cpp: the place list (OMP_PLACES, else one place per CPU of the initial mask), the place
// of each of a team's T members under bind policy `bind` (omp_proc_bind_t: 1 true, 2 primary,
// 3 close, 4 spread) on P places, and that as pool_options::places for a bound team of n.
const std::vector<std::vector<int>>& place_list();
int num_places();  // the places a thread can be bound to (0: threads are not bound; places.cpp)
std::vector<std::size_t> place_assignment(unsigned T, int bind, std::size_t P);
std::string team_places(unsigned n, int bind);

// omp_alloctrait_t (and Fortran's omp_alloctrait, the same layout): an int-sized key in a
// word-aligned slot, then the value. Read the key as `key & 0xffffffff` (the rest is padding).
struct AllocTrait {
  std::uintptr_t key;
  std::uintptr_t value;
};

// affinity.cpp, for the Fortran entry points (fortran.cpp): the affinity-format ICV, a format's
// expansion for the calling thread (an empty format: the ICV's), and one line on stderr.
std::string affinity_format_icv();
void set_affinity_format_icv(std::string format);
std::string affinity_text(const std::string& format);
void print_affinity_line(const std::string& line);

// ---- Teams, tasks ---------------------------------------------------------------------------

struct Team;
struct Taskgroup;
struct Thread;

// A count of a task's unfinished children (or of its unfinished subtree), kept so that a task whose
// children all run on its own thread touches no atomic.
//
// Explicit tasks are tied: one thread runs a task's whole body, its owner (`TaskCtx::owner`). The
// owner adds every child (`local += 1`), and a child that finishes on the owner's thread takes
// itself off `local` again: plain accesses, since only the owner's thread reads or writes
// `local` and `flushed`. A child that finishes on another thread counts down `remote` instead,
// a CountLatch that starts at `bias`, so that it never reaches zero (and never wakes anyone)
// while the owner still keeps part of the count. The count is local + (remote - bias):
//
//   settled()  the owner's test that nothing is outstanding, with no RMW: remote can only fall,
//              so a stale read can only make the sum larger (the owner then flushes and waits).
//   flush()    before the owner waits (taskwait, a barrier) or leaves the count to others (a task
//              whose body ended with children outstanding): one RMW moves local - bias into
//              `remote`, which then holds the exact count; from then on finishers on the owner's
//              thread count it down too (`flushed`). Returns the count after the move.
//   rearm()    once the owner saw zero, it takes the count back (nothing is outstanding, nobody
//              touches `remote`): remote = bias, flushed = false.
//
// A finisher on the owner's thread learns whether it is one from the task's `owner` (written
// before any child existed, so visible to every finisher through the publication of the child).
//
// The fields, in two orders (OwnedFields): TaskCtx puts its `kids` count's `local` last and its
// `sub` count's first, so that the two are one 8-byte word (TaskCtx::add_locals: a child's creation
// and its end on the owner's thread change both with one add).
//   local    owner's thread only (a task has fewer than 2^31 live children)
//   flushed  owner's thread only: 0 or 1
//   remote   the latch
inline constexpr std::int64_t owned_bias = std::int64_t{1} << 46;  // < CountLatch::sleeper
template <bool LocalLast>
struct OwnedFields;
template <>
struct OwnedFields<false> {
  std::int32_t local;
  std::int32_t flushed;
  detail::CountLatch remote;
  explicit OwnedFields(std::int32_t n) noexcept : local(n), flushed(0), remote(owned_bias) {}
};
template <>
struct OwnedFields<true> {
  detail::CountLatch remote;
  std::int32_t flushed;
  std::int32_t local;
  explicit OwnedFields(std::int32_t n) noexcept : remote(owned_bias), flushed(0), local(n) {}
};

template <bool LocalLast>
struct BasicOwnedCount : OwnedFields<LocalLast> {
  static constexpr std::int64_t bias = owned_bias;
  using OwnedFields<LocalLast>::local;
  using OwnedFields<LocalLast>::flushed;
  using OwnedFields<LocalLast>::remote;

  explicit BasicOwnedCount(std::int32_t n = 0) noexcept : OwnedFields<LocalLast>(n) {}
  // The owner's test that the count is zero. acquire (count_acquire): the finished children's
  // effects are visible when it says so. While the owner keeps the count (not flushed), `local`
  // is the count plus the children that finished on other threads, so local == 0 means that none
  // did and nothing is outstanding: no load of `remote`, nothing to acquire.
  bool settled() const noexcept {
    PLAIT_ASSERT(!flushed);
    return local == 0 || local + (remote.count_acquire() - bias) == 0;
  }
  // The owner moves its part into `remote`; returns the count now in it.
  std::int64_t flush() noexcept {
    PLAIT_ASSERT(!flushed);
    flushed = 1;
    const std::int64_t n = local;
    local = 0;
    return remote.add_fetch(n - bias);
  }
  // After the owner saw zero: the count is the owner's again.
  void rearm() noexcept {
    PLAIT_ASSERT(flushed && remote.count() == 0);
    remote.reset(bias);
    flushed = 0;
  }
  // One counted child finished; `on_owner`: on the owner's thread. Returns whether this made a
  // flushed count zero (the caller then does what the owner left to the last finisher).
  bool finish_one(bool on_owner) noexcept {
    if (on_owner && !flushed) {
      --local;
      return false;
    }
    return remote.count_down(1);
  }
};
using OwnedCount = BasicOwnedCount<false>;  // local first
using KidsCount = BasicOwnedCount<true>;    // local last

// What taskwait, taskgroup and the barrier wait for, per task. An implicit task's context lives
// on its thread's stack for the length of the region; an explicit task's lives in its record.
//   kids  children not complete: taskwait waits for zero.
//   sub   the subtree: children whose own subtree is not done, plus, for an explicit task, 1 until
//         the task itself is complete. An explicit task's record is freed, and its parent's `sub`
//         counted down, when its `sub` reaches zero (`subtree_done`); a member's barrier waits for
//         its implicit task's `sub` to reach zero: then no task of its subtree is left, and once
//         every member has seen that of its own, no task of the region is.
// What a task keeps for scheduling its children beyond the counts, made at the first child that
// needs it (task.cpp): the dependence group of its dependent children, and the priority queue of
// its children once one of them had a priority (task.cpp, "Priorities"). While a task has one, its
// `sub` holds 1 more (its end then takes the general way, which waits for the group); the object
// lives until the task's subtree is done (an implicit task's: the region's end), since tickets of
// the queue may be run by other threads until the last child was taken.
struct PrioQueue;
struct ChildSched {
  plait::dataflow_group* deps = nullptr;  // siblings ordered by depend clauses
  // The children by priority (task.cpp), one queue per taskgroup the children were made in, the
  // innermost last: a taskgroup's end runs only what lies above its floor, so its tasks must not
  // share tickets with the task's earlier children (task.cpp, "Priorities").
  std::vector<std::pair<const Taskgroup*, PrioQueue*>> prio;
};

struct TaskCtx {
  KidsCount kids;   // ... kids.local, then
  OwnedCount sub;   // sub.local ...: one 8-byte word (add_locals)
  // The thread that runs (ran) the body: an explicit task's maker from its making (task.cpp's
  // ready records), set again by a thread that takes the task to run it elsewhere.
  const Thread* owner;
  TaskCtx* parent;
  Taskgroup* group;              // the innermost taskgroup of this task (new children count in it)
  ChildSched* sched;             // dependences and priorities of the children, made on first use
  // The deque head when the task started: its waits run only slots above it (its own children
  // and theirs). Running an enclosing task's queued siblings inside a nested wait would nest one
  // frame per task and overflow the stack.
  std::uint32_t floor;
  bool is_explicit;
  bool final;
  // Why new children take the general way (next to `final`, so that GOMP_task's fast path tests
  // both with one load: plain_children). Owner's thread only. mode_prio: every new child goes
  // through the priority queue (one of them had a priority); mode_on_stack: the context of an
  // undeferred task run on its creator's stack (task.cpp, run_included), which a deferred child
  // first moves into a record.
  std::uint8_t mode;
  static constexpr std::uint8_t mode_prio = 1, mode_on_stack = 2;

  // An implicit task (or the initial task): no parent, not started.
  TaskCtx() noexcept
      : owner(nullptr), parent(nullptr), group(nullptr), sched(nullptr), floor(0), is_explicit(false), final(false),
        mode(0) {}
  // An explicit task's context in its record (task.cpp): `sub` holds the task itself until it is
  // complete. The maker writes `owner` (itself), `floor` is written when the body starts.
  struct explicit_task {};
  TaskCtx(explicit_task, TaskCtx* p, Taskgroup* g, bool fin) noexcept
      : sub(1), parent(p), group(g), sched(nullptr), is_explicit(true), final(fin), mode(0) {}

  // Neither final nor in a mode: a new child may take GOMP_task's fast path (one 16-bit load).
  PLAIT_INLINE bool plain_children() const noexcept {
    std::uint16_t v;
    std::memcpy(&v, &final, sizeof v);
    return v == 0;
  }

  // Adds d to both local counts, kids.local and sub.local (the owner's thread only, neither
  // count flushed): one add on the word they share. Neither half leaves 0..2^31-1, so no carry or
  // borrow crosses from one into the other.
  PLAIT_INLINE void add_locals(std::int32_t d) noexcept {
    PLAIT_ASSERT(!kids.flushed && !sub.flushed && kids.local + d >= 0 && sub.local + d >= 0);
    unsigned char* const p = reinterpret_cast<unsigned char*>(&kids.local);
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    v += static_cast<std::uint64_t>(static_cast<std::int64_t>(d) * 0x100000001ll);  // d in each half
    std::memcpy(p, &v, sizeof v);
  }
};
static_assert(std::is_standard_layout_v<TaskCtx>);
static_assert(offsetof(TaskCtx, mode) == offsetof(TaskCtx, final) + 1 && sizeof(TaskCtx) == 72,
              "final and mode are one 16-bit word; the context stays 72 bytes");
static_assert(offsetof(TaskCtx, sub) == offsetof(TaskCtx, kids) + sizeof(KidsCount) &&
                  offsetof(KidsCount, local) + sizeof(std::int32_t) == sizeof(KidsCount) &&
                  offsetof(OwnedCount, local) == 0,
              "kids.local and sub.local are adjacent: one 8-byte word");

struct Taskgroup {
  detail::CountLatch pending;    // tasks of the group's set not finished
  std::uint32_t floor = 0;       // the deque head at the taskgroup's start (its end runs slots above)
  // The enclosing taskgroup: of the same task, or, for a task's first, the one the task was made in.
  Taskgroup* prev = nullptr;
  // A worksharing construct's own group for its task reductions (loop.cpp, ws_task_reductions):
  // no taskgroup region of the program, so `cancel taskgroup` inside it cancels `prev`.
  bool workshare = false;
  std::atomic<bool> canceled{false};
  // The task reductions its tasks see (reduction.cpp): the compiler's block registered last in
  // this taskgroup or an enclosing one, null if none.
  std::uintptr_t* reductions = nullptr;
  // libomp's task reductions registered in this taskgroup (kmp_task.cpp), null if none; `kmp_red_own`:
  // this taskgroup's end combines and frees them (a reduction with the task modifier is ended by
  // its construct instead).
  void* kmp_red = nullptr;
  bool kmp_red_own = false;
};

// One worksharing construct (a loop or sections) shared by the team; a ring of them lets threads
// run ahead through `nowait` constructs.
struct Doacross;
struct WorkShare {
  // The construct number this slot serves next (slot i first serves construct i, then i + ring);
  // a thread arriving at construct k waits until `serves == k`.
  std::atomic<std::uint64_t> serves{0};
  // 0: not set up for `serves` yet; 1: being set up; 2: ready.
  std::atomic<int> state{0};
  std::atomic<unsigned> finished{0};  // threads done with it; the last frees the slot
  // Loop: the logical iteration space is 0..n-1 (iteration i is start + i * incr; for unsigned
  // long long loops ustart + i * uincr, modulo 2^64, which also covers downward loops).
  long start = 0, incr = 1;
  unsigned long long ustart = 0, uincr = 1;
  std::int64_t n = 0;
  std::int64_t chunk = 1;
  int kind = sched_static;
  alignas(cache_line) std::atomic<std::int64_t> next{0};  // dynamic/guided: first unassigned iteration
  alignas(cache_line) std::atomic<std::int64_t> ordered_next{0};  // next logical iteration allowed in `ordered`
  std::atomic<bool> canceled{false};
  // A doacross loop (ordered(n) with depend(sink/source)), else null: see loop.cpp, "Doacross".
  Doacross* doacross = nullptr;
  // Task reductions of the construct (the task modifier): the first member to register allocates
  // the team's private copies (red_state 0 -> 1 -> 2), the others share them through red_first.
  std::atomic<int> red_state{0};
  std::uintptr_t* red_first = nullptr;
  // Team memory of the construct (lastprivate(conditional:), scan): see loop.cpp, team_memory_init.
  void* mem_buf = nullptr;
  std::size_t mem_cap = 0;
};
inline constexpr unsigned ws_ring = 8;

struct Member;

struct Team {
  detail::Pool* pool = nullptr;
  unsigned n = 1;
  unsigned level = 0;         // nesting level of this region (1 for the outermost parallel)
  unsigned active_level = 0;  // active (more than one thread) regions enclosing, this one included
  Team* parent = nullptr;
  unsigned parent_num = 0;    // the master's thread number in the parent team
  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  Icv icv;                    // the members' ICVs at the start
  int league_num = 0, league_size = 1;  // the host league's team the region runs in (Thread::team_num)
  std::vector<std::size_t> places;      // a bound first-level team: member i's place; else empty

  // Barrier: arrivals of the current phase, and one latch per phase parity (see team_barrier).
  alignas(cache_line) std::atomic<unsigned> arrived{0};
  detail::CountLatch phase[2];
  // Members that have not reached the region's end (its implicit barrier waits for 0).
  alignas(cache_line) detail::CountLatch finish;
  // Members other than the master still inside the team (the master frees the team after 0).
  alignas(cache_line) detail::CountLatch left;

  alignas(cache_line) std::atomic<std::uint64_t> single{0};  // singles claimed so far
  void* copyprivate = nullptr;
  std::atomic<bool> canceled{false};  // cancel parallel
  // libomp's ABI: `cancel for` / `cancel sections` of the team's current construct (its static
  // loops have no worksharing slot); cleared by the cancel barrier that ends it (kmp_team.cpp).
  std::atomic<bool> kmp_ws_canceled{false};
  // libomp's ABI: the task reductions of a construct with the task modifier, shared by the
  // members (kmp_task.cpp); one per parity of the construct's number (Thread::kmp_red_seq).
  std::atomic<void*> kmp_red_mod[2] = {nullptr, nullptr};

  WorkShare ws[ws_ring];
  Member* members = nullptr;

  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;
  ~Team() {
    for (WorkShare& w : ws) std::free(w.mem_buf);
  }
  ompt::data_t ompt_parallel{};  // OMPT (ompt.hpp): the tool's data of this parallel region
  // OMPT: the task that encountered the region (ompt_get_task_info's ancestors) and its data, which
  // for an implicit task lives in the master's saved state while the region runs (set by the
  // master before its members start; read-only then).
  TaskCtx* ompt_enc_ctx = nullptr;
  ompt::data_t* ompt_enc_task = nullptr;
};

struct Member {
  detail::Mail mail;
  Team* team;
  unsigned num;
};

// Per-thread state. A thread outside every region has team == nullptr and runs the initial
// task; inside a region it is member `num` of `team`.
struct Thread {
  Team* team = nullptr;
  unsigned num = 0;
  unsigned level = 0;          // omp_get_level: enclosing parallel regions, inactive ones included
  unsigned active_level = 0;   // omp_get_active_level
  TaskCtx* task = nullptr;     // the task this thread runs now
  // The thread's worker while it is a member of a team on that worker's pool (the tasks' fast
  // paths: GOMP_task may defer onto it, GOMP_taskwait run from it), else null. Set with `team`
  // (run_member, enter_team_for_task); a nested team of one, off the pools, has none.
  detail::Worker* fast_w = nullptr;
  Icv icv;
  bool icv_set = false;        // icv was initialised from the global ICVs
  std::uint64_t ws_seq = 0;    // worksharing constructs this thread has entered in `team`
  std::uint64_t single_seq = 0;
  unsigned bar_phase = 0;
  // The loop this thread is in: its slot, and for static schedules its own position.
  WorkShare* ws = nullptr;
  std::int64_t static_next = 0;   // static: index of the next chunk of this thread
  std::int64_t ord_iter = 0;      // ordered: the logical iteration this thread is at
  std::int64_t ord_end = 0;       // ordered: end of this thread's current chunk
  // The host league this thread's task belongs to (GOMP_teams_reg, GOMP_teams4: omp_get_team_num,
  // omp_get_num_teams): set by the teams construct on its initial thread, and handed by a
  // parallel region inside a team to every member (Team::league_num).
  int team_num = 0;
  int num_teams = 1;
  // The place this thread was assigned in a bound first-level team (omp_get_place_num), -1 when
  // none: the place is then the one whose CPUs are its mask.
  int place = -1;
  // libomp's ABI (kmp_loop.cpp): the dispatch loop this thread is in, as the program wrote it
  // (first value, increment, trip count; the schedule runs over its logical iterations), and the
  // worksharing slot of its doacross loop nest. Part of Thread, so that a nested region inside
  // the loop's body does not overwrite them.
  std::uint64_t kmp_lb = 0;
  std::int64_t kmp_st = 1;
  std::int64_t kmp_n = 0;
  bool kmp_ordered = false;
  WorkShare* kmp_doacross = nullptr;
  std::uint32_t kmp_red_seq = 0;  // constructs with task-modifier reductions met in `team`
  // OMPT (ompt.hpp): the tool's data of this thread's implicit task in `team` (or of the initial
  // task outside every region); saved and restored with the rest around a region.
  ompt::data_t ompt_implicit{};
  // OMPT: the worksharing construct open on this thread (ompt::work_*), 0 when none, and its count.
  std::uint8_t ompt_work = 0;
  std::uint64_t ompt_work_count = 0;
};

// team.cpp: the calling thread's state. Inline: GOMP_task asks for it on every call.
// With it, the task records the thread keeps ready for new tasks (task.cpp): one thread-local
// block, so that one address serves both on the task paths, but not part of Thread, which a region
// saves and restores whole.
struct ReadyRecords {
  void* head = nullptr;  // task.cpp's TaskRec
};
struct ThreadLocal {
  Thread thread;
  ReadyRecords ready;
  // OMPT (ompt.hpp): the tool's data of this thread, and whether its thread_begin was delivered.
  ompt::data_t ompt_thread{};
  bool ompt_begun = false;
  // libomp's ABI: this thread's global thread number, -1 until its first use (kmp_team.cpp).
  // Here, not in a thread_local of its own: the library's other thread-locals cost a call of
  // __tls_get_addr per access, and clang's code asks for the number on every task.
  std::int32_t gtid = -1;
};
extern constinit thread_local ThreadLocal tls __attribute__((tls_model("initial-exec")));
PLAIT_COLD void init_thread_state(Thread& t) noexcept;  // the ICVs, on a thread's first use
PLAIT_INLINE Thread& thread_state() noexcept {
  Thread& t = tls.thread;
  if (PLAIT_UNLIKELY(!t.icv_set)) init_thread_state(t);
  return t;
}

// team.cpp
// The region's end: every member arrives, then every explicit task of the region is done.
void team_end_barrier(Thread& t) noexcept;
// A parallel region of (up to) n threads running fn(data); setup(t, params), if given, runs in each
// member before fn (the worksharing construct of a combined parallel loop or sections).
void parallel_with(void (*fn)(void*), void* data, unsigned n, void (*setup)(Thread&, const void*), const void* params);
// The GOMP_1.0 split form of the same: starts the team and makes the caller member 0 (setup run),
// then returns; the caller runs fn(data) and closes the region with parallel_end. The setup's
// parameters (params_bytes of them, at most 64) are copied: the members may read them later.
void parallel_start_with(void (*fn)(void*), void* data, unsigned n, void (*setup)(Thread&, const void*),
                         const void* params, std::size_t params_bytes);
// Closes the calling thread's innermost region opened by parallel_start_with (its end barrier, as
// parallel_with's); a thread with none open stops the program with one line.
void parallel_end();
// The barrier of t's team (tasks of the region included); ompt_kind: what a tool is told it is
// (ompt::sync_*: explicit for the barrier construct, else an implicit one of a worksharing construct).
void team_barrier(Thread& t, int ompt_kind = ompt::sync_barrier_implicit_workshare) noexcept;
[[noreturn]] void fatal(const char* fmt, ...) noexcept __attribute__((format(printf, 1, 2)));
// How many threads a parallel construct asking for `requested` gets on t (max-active-levels, and
// the threads thread-limit-var leaves: team.cpp).
unsigned region_size(Thread& t, unsigned requested);

// task.cpp: the innermost taskgroup of t's current task (its own, or the one it was made in).
Taskgroup* innermost_taskgroup(Thread& t) noexcept;

// loop.cpp, for libomp's ABI (kmp_loop.cpp): a dispatch loop over the logical iterations 0..n-1
// (kind and chunk as GOMP's, `ordered` as GOMP_loop_ordered_*), its chunks [lo, hi) one after the
// other (false: none left, and the thread has left the loop), and a doacross nest's slot
// (counts: the trip counts of the ordered loops, outermost first), its posts and waits by 0-based
// indices, and its end.
void dispatch_start_logical(std::int64_t n, int kind, std::int64_t chunk, bool ordered);
bool dispatch_next_logical(bool ordered, std::int64_t* lo, std::int64_t* hi);
WorkShare* doacross_nest_start(unsigned dims, const std::uint64_t* counts);
void doacross_nest_post(WorkShare& s, const std::uint64_t* idx);
void doacross_nest_wait(WorkShare& s, const std::uint64_t* idx);
void doacross_nest_end(WorkShare* s);

// task.cpp, for libomp's ABI (kmp_task.cpp): an undeferred task whose body the compiler calls
// itself between two entry points (__kmpc_omp_task_begin_if0 / _complete_if0). `frame` lives until
// the end (the task's own context while its body runs; it must not move).
struct IncludedFrame {
  alignas(TaskCtx) unsigned char ctx[sizeof(TaskCtx)];
  TaskCtx* saved;
  detail::Worker* w;
  ompt::data_t ompt_task;  // OMPT: the tool's data of the undeferred task
};
// api.cpp: the nestable lock (gcc's layout) with the wait id a tool is told: its own address, or
// the user's lock word of libomp's layout that points at it (kmp_ext.cpp).
void nest_lock_init(void* lock, const void* id);
void nest_lock_destroy(void* lock, const void* id);
void nest_lock_set(void* lock, const void* id);
void nest_lock_unset(void* lock, const void* id);
int nest_lock_test(void* lock, const void* id);
void included_begin(IncludedFrame& frame, bool final) noexcept;
void included_end(IncludedFrame& frame) noexcept;
// task.cpp, for kmp_task.cpp: a task descriptor of libomp's ABI inside a common task record
// (see there; descriptor_alloc_fast in kmp_internal.hpp makes one). descriptor_record_submit: counts and
// pushes it as GOMP_task's fast path does, or false when that path's conditions do not hold (the
// record is then memory only). descriptor_record_discard: gives back the memory of a record never
// submitted, from any thread of its team's pool, or any other (the pool's depot).
bool descriptor_record_submit(void* task) noexcept;
void descriptor_record_discard(void* task) noexcept;
detail::Pool* descriptor_record_pool(void* task) noexcept;  // whose allocator made the record
// kmp_task.cpp: the GOMP event behind an event handle of libomp's ABI (an odd value: see there),
// once the handle is fulfilled.
void* libomp_event_fulfilled(void* handle) noexcept;

// Whether a task of group g is discarded: g or any taskgroup enclosing it was cancelled. A
// taskgroup's set holds every task made inside the region, at any depth (nested taskgroups, tasks
// of tasks), so cancelling it discards theirs too. relaxed: cancellation flags; a task that
// starts just before the cancel runs, as the standard allows.
PLAIT_INLINE bool group_canceled(const Taskgroup* g) noexcept {
  for (; g != nullptr; g = g->prev)
    if (g->canceled.load(std::memory_order_relaxed)) return true;
  return false;
}

}  // namespace plait::omp

// Entry points the runtime also calls itself.
extern "C" {
void GOMP_barrier(void);
void GOMP_taskgroup_start(void);
void GOMP_taskgroup_end(void);
void GOMP_taskgroup_reduction_register(std::uintptr_t* data);
}

namespace plait::omp {

// reduction.cpp: task reductions. Registers the compiler's block `data` (a chain of blocks) for
// nthreads threads on top of `old` (the enclosing registration, or null): allocates the private
// copies, or takes them from `shared` (another member's registration of the same worksharing
// construct), and indexes the original list items.
void register_task_reductions(std::uintptr_t* data, std::uintptr_t* old, const std::uintptr_t* shared,
                              unsigned nthreads);
// Frees the private copies of `data`'s registration and its index.
void unregister_task_reductions(std::uintptr_t* data) noexcept;
// Frees the index alone (a member that shares another's private copies).
void forget_task_reductions(std::uintptr_t* data) noexcept;
// loop.cpp: scope with a reduction(task, ...): registers as a worksharing construct's.
void scope_task_reductions(std::uintptr_t* reductions);

// nteams-var and teams-thread-limit-var (device ICVs: one per process, set by omp_set_num_teams
// and omp_set_teams_thread_limit, first read from the environment).
unsigned nteams_var();
unsigned teams_thread_limit_var();

// Makes t a member of `team` for the length of one explicit task of the team that worker w (the
// pool's worker i, so member i) runs from outside the region (task.cpp, run_body). The caller
// saves t before and restores it after.
void enter_team_for_task(Thread& t, Team& team, detail::Worker* w) noexcept;

// task.cpp
// Waits (running tasks) until the subtree of the calling member's implicit task is done: every
// explicit task it created, and theirs, is complete. The barriers' first step.
void wait_subtree(Thread& t) noexcept;
// A task's ChildSched, once its children are all done: the dependence group settled and freed, the
// priority queues (empty) freed.
void release_child_sched(TaskCtx& c) noexcept;
// The end of taskgroup g of task c: the priority queue of its children (empty now) goes.
void end_taskgroup_queue(TaskCtx& c, const Taskgroup* g) noexcept;
// The calling thread's ready task records (task.cpp) go back to worker w's allocator: the thread
// adopted w, worker 0 of a pool, for a region that has ended.
void give_back_ready_records(detail::Worker* w) noexcept;

}  // namespace plait::omp
