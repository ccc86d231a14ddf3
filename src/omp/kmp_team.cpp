// libomp's ABI: parallel regions, teams, the pushed clauses, the barrier, single, master/masked,
// critical, reductions, copyprivate, flush, cancellation, threadprivate, the error directive and
// the thread queries — each on team.cpp's teams, latches and locks (kmp_internal.hpp).
//
// fork/join. __kmpc_fork_call(loc, argc, microtask, args...) runs microtask(&gtid, &tid, args...)
// on every member: the arguments are pointer-sized (pointers to shared variables, or scalars passed
// by value), as many as the compiler captured. They are read from the varargs once, into an array,
// and each member calls the microtask through plait_kmp_invoke_microtask, which puts the first four
// in registers and the rest on the stack (x86-64 System V), as libomp's own invoker does. gtid and
// tid live in the invoker's frame for the microtask's length (the compiler may keep the pointers).
//
// Reductions. __kmpc_reduce[_nowait] answers 2 (each member combines atomically) when the compiler
// generated the atomic path (KMP_IDENT_ATOMIC_REDUCE in the location's flags), else 1 under the
// reduction's lock, which the matching __kmpc_end_reduce[_nowait] releases; a team of one gets 1
// without a lock. libomp chooses the same for teams of up to 4 and a tree beyond; a tree would
// only change the order of the combinations (which the standard leaves unspecified).
//
// Cancellation. `cancel parallel` and `cancel taskgroup` are GOMP's. `cancel for` and `cancel
// sections` mark the team (Team::kmp_ws_canceled): libomp's compilers share static loops out with
// no worksharing slot to mark, and end the construct with __kmpc_cancel_barrier, which clears the
// mark once every member has seen it.
#include "kmp_internal.hpp"

#include "../hooks.hpp"

#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

extern "C" {
void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit, unsigned flags);
bool GOMP_single_start(void);
void GOMP_critical_name_start(void** pptr);
void GOMP_critical_name_end(void** pptr);
bool GOMP_cancel(int which, bool do_cancel);
bool GOMP_cancellation_point(int which);
void GOMP_warning(const char* msg, std::size_t msglen);
void GOMP_error(const char* msg, std::size_t msglen);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_in_parallel(void);
}

// void plait_kmp_invoke_microtask(kmpc_micro fn, kmp_int32* gtid, kmp_int32* tid, long argc, void** argv):
// fn(gtid, tid, argv[0], ..., argv[argc - 1]). argv holds at least four entries (the first four
// are loaded into rdx, rcx, r8, r9 whatever argc); argv[4..argc-1] are pushed, last first, so that
// argv[4] is at the lowest address, with the stack 16-byte aligned at the call.
__asm__(R"(
  .text
  .p2align 4
  .globl plait_kmp_invoke_microtask
  .hidden plait_kmp_invoke_microtask
  .type plait_kmp_invoke_microtask, @function
plait_kmp_invoke_microtask:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  movq %rdi, %r11
  movq %r8, %r10
  movq %rcx, %rax
  subq $4, %rax
  jle 2f
  testq $1, %rax
  jz 1f
  subq $8, %rsp
1:
  pushq 24(%r10,%rax,8)
  decq %rax
  jnz 1b
2:
  movq %rsi, %rdi
  movq %rdx, %rsi
  movq 24(%r10), %r9
  movq 16(%r10), %r8
  movq 8(%r10), %rcx
  movq 0(%r10), %rdx
  xorl %eax, %eax
  callq *%r11
  movq %rbp, %rsp
  popq %rbp
  .cfi_def_cfa %rsp, 8
  ret
  .cfi_endproc
  .size plait_kmp_invoke_microtask, .-plait_kmp_invoke_microtask
)");

namespace plait::omp {

extern "C" void plait_kmp_invoke_microtask(kmpc_micro fn, kmp_int32* gtid, kmp_int32* tid, long argc, void** argv);

std::atomic<unsigned> abi_seen{0};

namespace {
// relaxed: a counter handing out distinct numbers; nothing is published with it.
std::atomic<kmp_int32> next_gtid{0};
}  // namespace

kmp_int32 assign_global_tid() noexcept {
  if (tls.gtid < 0) tls.gtid = next_gtid.fetch_add(1, std::memory_order_relaxed);
  return tls.gtid;
}

kmp_int32 known_threads() noexcept { return next_gtid.load(std::memory_order_relaxed); }

namespace {

// The thread that loads the library gets number 0 (libomp's initial thread; threadprivate's
// original copy belongs to it).
__attribute__((constructor)) void kmp_loaded() { global_tid(); }

// What __kmpc_push_* left for the calling thread's next fork (consumed by it).
struct Pushed {
  kmp_int32 nthreads = 0;
  kmp_int32 nteams = 0;
  kmp_int32 thread_limit = 0;
};
thread_local Pushed pushed;

struct Fork {
  kmpc_micro micro;
  long argc;
  void** argv;
};

void run_microtask(void* d) {
  auto* f = static_cast<Fork*>(d);
  kmp_int32 gtid = global_tid();
  kmp_int32 tid = static_cast<kmp_int32>(tls.thread.num);
  plait_kmp_invoke_microtask(f->micro, &gtid, &tid, f->argc, f->argv);
}

// A fork's microtask and its arguments: up to 12 in `small`, else in `big` (padded to four
// entries at least: plait_kmp_invoke_microtask passes four).
struct ForkArgs {
  void* small[16] = {};
  std::vector<void*> big;
  Fork f;
  ForkArgs(kmpc_micro micro, kmp_int32 argc) : f{micro, argc, small} {
    if (argc < 0) fatal("__kmpc_fork_call: a negative argument count (%d)", argc);
    if (argc > 12) {
      big.assign(static_cast<std::size_t>(argc) + 4, nullptr);
      f.argv = big.data();
    }
  }
  ForkArgs(const ForkArgs&) = delete;  // (f.argv may point into small)
  ForkArgs& operator=(const ForkArgs&) = delete;
};

// __kmpc_fork_call and __kmpc_fork_teams after their va_start: the region, or the league of
// teams, with the sizes the program pushed before (consumed).
void fork_va(kmpc_micro microtask, kmp_int32 argc, std::va_list ap, bool teams) {
  note_abi(abi_kmp);
  ForkArgs a(microtask, argc);
  for (kmp_int32 i = 0; i < argc; ++i) a.f.argv[i] = va_arg(ap, void*);
  if (!teams) {
    const kmp_int32 n = pushed.nthreads;
    pushed.nthreads = 0;
    parallel_with(&run_microtask, &a.f, n > 0 ? static_cast<unsigned>(n) : 0u, nullptr, nullptr);
    return;
  }
  const Pushed p = pushed;
  pushed.nteams = pushed.thread_limit = 0;
  GOMP_teams_reg(&run_microtask, &a.f, p.nteams > 0 ? static_cast<unsigned>(p.nteams) : 0u,
                 p.thread_limit > 0 ? static_cast<unsigned>(p.thread_limit) : 0u, 0);
}

// A reduction's lock was taken by this thread (__kmpc_reduce*: answer 1 in a team).
thread_local bool reduce_locked = false;

// ---- threadprivate (clang's -fno-openmp-use-tls; native TLS otherwise) ----
struct TpReg {
  void* (*ctor)(void*) = nullptr;
  void* (*cctor)(void*, void*) = nullptr;
  void (*dtor)(void*) = nullptr;
  std::vector<unsigned char> image;  // the variable's bytes when a thread first asked for a copy
  bool has_image = false;
};
std::mutex tp_mu;
std::unordered_map<void*, TpReg>* tp_regs = nullptr;  // under tp_mu; never freed (threads may outlive statics)

struct TpThread {
  std::unordered_map<void*, void*> copies;  // the variable's address -> this thread's copy
  ~TpThread() {
    for (auto& [var, copy] : copies) {
      if (copy == var) continue;  // the initial thread's: the variable itself
      void (*dtor)(void*) = nullptr;
      {
        std::lock_guard<std::mutex> lk(tp_mu);
        if (tp_regs != nullptr)
          if (auto it = tp_regs->find(var); it != tp_regs->end()) dtor = it->second.dtor;
      }
      if (dtor != nullptr) dtor(copy);
      std::free(copy);
    }
  }
};
thread_local TpThread tp_thread;

// The variable's initial bytes are taken once, under tp_mu, by whichever thread asks first — the
// initial thread too, whose copy is the variable itself: it changes the variable only after
// asking, so no other thread ever reads the variable while it is written.
void capture_image(TpReg& r, void* data, std::size_t size) {
  if (!r.has_image) {
    r.image.assign(static_cast<unsigned char*>(data), static_cast<unsigned char*>(data) + size);
    r.has_image = true;
  }
}

void* threadprivate_copy(void* data, std::size_t size) {
  if (auto it = tp_thread.copies.find(data); it != tp_thread.copies.end()) return it->second;
  if (global_tid() == 0) {  // the initial thread's copy is the variable itself
    {
      std::lock_guard<std::mutex> lk(tp_mu);
      if (tp_regs == nullptr) tp_regs = new std::unordered_map<void*, TpReg>();
      TpReg& r = (*tp_regs)[data];
      if (r.ctor == nullptr && r.cctor == nullptr) capture_image(r, data, size);
    }
    tp_thread.copies.emplace(data, data);
    return data;
  }
  void* p = std::aligned_alloc(64, (size + 63) / 64 * 64 + (size == 0 ? 64 : 0));
  if (p == nullptr) fatal("out of memory for a threadprivate copy of %zu bytes", size);
  void* (*ctor)(void*) = nullptr;
  void* (*cctor)(void*, void*) = nullptr;
  {
    std::lock_guard<std::mutex> lk(tp_mu);
    if (tp_regs == nullptr) tp_regs = new std::unordered_map<void*, TpReg>();
    TpReg& r = (*tp_regs)[data];
    ctor = r.ctor;
    cctor = r.cctor;
    if (ctor == nullptr && cctor == nullptr) {
      capture_image(r, data, size);
      std::memcpy(p, r.image.data(), size < r.image.size() ? size : r.image.size());
    }
  }
  if (ctor != nullptr) ctor(p);
  else if (cctor != nullptr) cctor(p, data);
  tp_thread.copies.emplace(data, p);
  return p;
}

}  // namespace
}  // namespace plait::omp

using namespace plait::omp;

extern "C" {

// ---- threads and teams -----------------------------------------------------------------------

kmp_int32 __kmpc_global_thread_num(ident_t*) {
  note_abi(abi_kmp);
  return global_tid();
}
kmp_int32 __kmpc_global_num_threads(ident_t*) { return next_gtid.load(std::memory_order_relaxed); }
kmp_int32 __kmpc_bound_thread_num(ident_t*) { return omp_get_thread_num(); }
kmp_int32 __kmpc_bound_num_threads(ident_t*) { return omp_get_num_threads(); }
kmp_int32 __kmpc_in_parallel(ident_t*) { return omp_in_parallel(); }
kmp_int32 __kmpc_ok_to_fork(ident_t*) { return 1; }
void __kmpc_begin(ident_t*, kmp_int32) {}
void __kmpc_end(ident_t*) {}

void __kmpc_push_num_threads(ident_t*, kmp_int32, kmp_int32 num_threads) { pushed.nthreads = num_threads; }
void __kmpc_pop_num_threads(ident_t*, kmp_int32) { pushed.nthreads = 0; }
// proc_bind(...) of the next region: the GOMP entry points ignore the clause too (the binding of a
// team follows OMP_PROC_BIND: docs/openmp.md).
void __kmpc_push_proc_bind(ident_t*, kmp_int32, int) {}
void __kmpc_push_num_teams(ident_t*, kmp_int32, kmp_int32 num_teams, kmp_int32 num_threads) {
  pushed.nteams = num_teams;
  pushed.thread_limit = num_threads;
}
void __kmpc_push_num_teams_51(ident_t*, kmp_int32, kmp_int32 lb, kmp_int32 ub, kmp_int32 num_threads) {
  pushed.nteams = ub > 0 ? ub : lb;  // num_teams(lb:ub): the league may have up to ub teams
  pushed.thread_limit = num_threads;
}

void __kmpc_fork_call(ident_t*, kmp_int32 argc, kmpc_micro microtask, ...) {
  std::va_list ap;
  va_start(ap, microtask);
  fork_va(microtask, argc, ap, /*teams=*/false);
  va_end(ap);
}

void __kmpc_fork_call_if(ident_t*, kmp_int32 argc, kmpc_micro microtask, kmp_int32 cond, void* args) {
  // (OpenMPIRBuilder's form: the arguments come as one array of pointers)
  note_abi(abi_kmp);
  ForkArgs a(microtask, argc);
  if (argc > 0) std::memcpy(a.f.argv, args, static_cast<std::size_t>(argc) * sizeof(void*));
  const kmp_int32 n = pushed.nthreads;
  pushed.nthreads = 0;
  parallel_with(&run_microtask, &a.f, cond != 0 ? (n > 0 ? static_cast<unsigned>(n) : 0u) : 1u, nullptr, nullptr);
}

// teams on the host: GOMP_teams_reg's league (one team after another on this thread), each team's
// initial thread calling the microtask with thread number 0.
void __kmpc_fork_teams(ident_t*, kmp_int32 argc, kmpc_micro microtask, ...) {
  std::va_list ap;
  va_start(ap, microtask);
  fork_va(microtask, argc, ap, /*teams=*/true);
  va_end(ap);
}

// parallel if(0): the compiler calls the outlined function itself between these two, as member 0
// of a team of one.
static void serialized_body(void*) {}
void __kmpc_serialized_parallel(ident_t*, kmp_int32) {
  note_abi(abi_kmp);
  pushed.nthreads = 0;  // consumed (libomp 16 leaves it for the next region: a known fault of its)
  parallel_start_with(&serialized_body, nullptr, 1, nullptr, nullptr, 0);
}
void __kmpc_end_serialized_parallel(ident_t*, kmp_int32) { parallel_end(); }

// ---- synchronisation -------------------------------------------------------------------------

void __kmpc_barrier(ident_t* loc, kmp_int32) {
  Thread& t = thread_state();
  // (KMP_IDENT_BARRIER_EXPL: the barrier construct; else an implicit barrier of a worksharing one)
  if (t.team != nullptr)
    team_barrier(t, loc != nullptr && (loc->flags & 0x20) != 0 ? ompt::sync_barrier_explicit
                                                              : ompt::sync_barrier_implicit_workshare);
}

// The primary thread returns 1 with the others held until it calls __kmpc_end_barrier_master.
kmp_int32 __kmpc_barrier_master(ident_t*, kmp_int32) {
  Thread& t = thread_state();
  if (t.team == nullptr) return 1;
  team_barrier(t);
  if (t.num == 0) return 1;
  team_barrier(t);  // released by the primary's __kmpc_end_barrier_master
  return 0;
}
void __kmpc_end_barrier_master(ident_t* loc, kmp_int32 gtid) { __kmpc_barrier(loc, gtid); }
kmp_int32 __kmpc_barrier_master_nowait(ident_t*, kmp_int32) {
  Thread& t = thread_state();
  if (t.team == nullptr) return 1;
  team_barrier(t);
  return t.num == 0 ? 1 : 0;
}

kmp_int32 __kmpc_single(ident_t*, kmp_int32) { return GOMP_single_start() ? 1 : 0; }
void __kmpc_end_single(ident_t*, kmp_int32) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_end(thread_state());
}
// (With a tool attached, the executing thread's region is told: OMPT's masked callback.)
kmp_int32 __kmpc_master(ident_t*, kmp_int32) {
  const bool mine = tls.thread.num == 0;
  if (mine && PLAIT_UNLIKELY(ompt::enabled)) ompt::masked(ompt::scope_begin, thread_state());
  return mine ? 1 : 0;
}
void __kmpc_end_master(ident_t*, kmp_int32) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::masked(ompt::scope_end, thread_state());
}
kmp_int32 __kmpc_masked(ident_t*, kmp_int32, kmp_int32 filter) {
  const bool mine = static_cast<kmp_int32>(tls.thread.num) == filter;
  if (mine && PLAIT_UNLIKELY(ompt::enabled)) ompt::masked(ompt::scope_begin, thread_state());
  return mine ? 1 : 0;
}
void __kmpc_end_masked(ident_t*, kmp_int32) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::masked(ompt::scope_end, thread_state());
}

// A critical name's 32 bytes: the first 8 hold the mutex GOMP's named critical installs there.
void __kmpc_critical(ident_t*, kmp_int32, kmp_critical_name* crit) {
  GOMP_critical_name_start(reinterpret_cast<void**>(crit));
}
void __kmpc_critical_with_hint(ident_t*, kmp_int32, kmp_critical_name* crit, kmp_uint32) {
  GOMP_critical_name_start(reinterpret_cast<void**>(crit));  // a hint may be ignored (OpenMP 5.1, 2.19.12)
}
void __kmpc_end_critical(ident_t*, kmp_int32, kmp_critical_name* crit) {
  GOMP_critical_name_end(reinterpret_cast<void**>(crit));
}

// A full fence (ThreadSanitizer builds: a seq_cst RMW, which it models).
void __kmpc_flush(ident_t*) { plait::detail::store_load_fence(); }

// ---- reductions (see the top of the file) ----------------------------------------------------

kmp_int32 __kmpc_reduce_nowait(ident_t* loc, kmp_int32, kmp_int32, std::size_t, void*, void (*)(void*, void*),
                               kmp_critical_name* lck) {
  const Thread& t = thread_state();
  if (t.team == nullptr || t.team->n == 1) return 1;
  if (loc != nullptr && (loc->flags & ident_atomic_reduce) != 0) return 2;
  GOMP_critical_name_start(reinterpret_cast<void**>(lck));
  reduce_locked = true;
  return 1;
}
void __kmpc_end_reduce_nowait(ident_t*, kmp_int32, kmp_critical_name* lck) {
  if (reduce_locked) {
    reduce_locked = false;
    GOMP_critical_name_end(reinterpret_cast<void**>(lck));
  }
}
kmp_int32 __kmpc_reduce(ident_t* loc, kmp_int32 gtid, kmp_int32 num_vars, std::size_t size, void* data,
                        void (*func)(void*, void*), kmp_critical_name* lck) {
  return __kmpc_reduce_nowait(loc, gtid, num_vars, size, data, func, lck);
}
// (after answer 1 or 2: the reduction's end is a barrier)
void __kmpc_end_reduce(ident_t* loc, kmp_int32 gtid, kmp_critical_name* lck) {
  __kmpc_end_reduce_nowait(loc, gtid, lck);
  __kmpc_barrier(loc, gtid);
}

// copyprivate after a single: the member that ran it (didit) publishes its pointers, the others
// copy from them, and a second barrier keeps the source alive until they have.
void __kmpc_copyprivate(ident_t*, kmp_int32, std::size_t, void* cpy_data, void (*cpy_func)(void*, void*),
                        kmp_int32 didit) {
  Thread& t = thread_state();
  if (t.team == nullptr || t.team->n == 1) return;
  if (didit != 0) t.team->copyprivate = cpy_data;  // read by the others after the barrier (ordered by it)
  team_barrier(t);
  if (didit == 0) cpy_func(cpy_data, t.team->copyprivate);
  team_barrier(t);
}
void* __kmpc_copyprivate_light(ident_t*, kmp_int32, void* cpy_data) {
  Thread& t = thread_state();
  if (t.team == nullptr || t.team->n == 1) return cpy_data;
  if (cpy_data != nullptr) t.team->copyprivate = cpy_data;
  team_barrier(t);
  return t.team->copyprivate;
}

// ---- cancellation (see the top of the file) --------------------------------------------------

kmp_int32 __kmpc_cancel(ident_t*, kmp_int32, kmp_int32 kind) {
  if (!global().cancel) return 0;
  Thread& t = thread_state();
  switch (kind) {
    case 1:
      return GOMP_cancel(cancel_parallel, true) ? 1 : 0;
    case 2:
    case 3:
      // relaxed: read at cancellation points and after the cancel barrier, which orders it.
      if (t.team != nullptr) t.team->kmp_ws_canceled.store(true, std::memory_order_relaxed);
      return 1;
    case 4:
      return GOMP_cancel(cancel_taskgroup, true) ? 1 : 0;
    default:
      fatal("__kmpc_cancel: construct kind %d (accepted: 1 parallel, 2 for, 3 sections, 4 taskgroup)", kind);
  }
}

kmp_int32 __kmpc_cancellationpoint(ident_t*, kmp_int32, kmp_int32 kind) {
  if (!global().cancel) return 0;
  Thread& t = thread_state();
  switch (kind) {
    case 1:
      return GOMP_cancellation_point(cancel_parallel) ? 1 : 0;
    case 2:
    case 3:
      // relaxed: as in __kmpc_cancel.
      return t.team != nullptr && t.team->kmp_ws_canceled.load(std::memory_order_relaxed) ? 1 : 0;
    case 4:
      return GOMP_cancellation_point(cancel_taskgroup) ? 1 : 0;
    default:
      fatal("__kmpc_cancellationpoint: construct kind %d (accepted: 1 parallel, 2 for, 3 sections, 4 taskgroup)",
            kind);
  }
}

// A barrier that answers whether the region or the construct it ends was cancelled. A cancelled
// construct's mark is cleared once every member has read it: read between two barriers, cleared
// by member 0 before a third (no member can mark the next construct before that).
kmp_int32 __kmpc_cancel_barrier(ident_t*, kmp_int32) {
  Thread& t = thread_state();
  if (t.team == nullptr) return 0;
  Team& team = *t.team;
  team_barrier(t);
  // relaxed: the barrier ordered every member's marks before these reads.
  const bool region = team.canceled.load(std::memory_order_relaxed);
  const bool construct = team.kmp_ws_canceled.load(std::memory_order_relaxed);
  if (construct && !region) {
    team_barrier(t);
    if (t.num == 0) team.kmp_ws_canceled.store(false, std::memory_order_relaxed);
    team_barrier(t);
  }
  return region || construct ? 1 : 0;
}

// ---- threadprivate ---------------------------------------------------------------------------

void* __kmpc_threadprivate_cached(ident_t*, kmp_int32, void* data, std::size_t size, void***) {
  return threadprivate_copy(data, size);
}
void* __kmpc_threadprivate(ident_t*, kmp_int32, void* data, std::size_t size) { return threadprivate_copy(data, size); }
void __kmpc_threadprivate_register(ident_t*, void* data, void* (*ctor)(void*), void* (*cctor)(void*, void*),
                                   void (*dtor)(void*)) {
  std::lock_guard<std::mutex> lk(tp_mu);
  if (tp_regs == nullptr) tp_regs = new std::unordered_map<void*, TpReg>();
  TpReg& r = (*tp_regs)[data];
  r.ctor = ctor;
  r.cctor = cctor;
  r.dtor = dtor;
}

// ---- the error directive ---------------------------------------------------------------------

void __kmpc_error(ident_t*, int severity, const char* message) {
  if (severity == 2) GOMP_error(message, static_cast<std::size_t>(-1));
  GOMP_warning(message, static_cast<std::size_t>(-1));
}

}  // extern "C"
