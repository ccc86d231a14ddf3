// libomp's ABI: explicit tasks, dependences, undeferred and untied tasks, taskwait, taskgroup,
// taskloop, detach and task reductions — on task.cpp's records, counts, data-flow engine and waits
// (kmp_internal.hpp).
//
// The descriptor. libomp's compilers ask the runtime for the task (__kmpc_omp_task_alloc: a
// kmp_task_t with the compiler's privates after it, and a block for the shared variables' pointers)
// and fill it in before handing it over (__kmpc_omp_task). Here that allocation carries a header
// of ours before the kmp_task_t (the compiler never touches memory before the task pointer; the
// task is 64-byte aligned, as libomp's: clang places over-aligned privates by the descriptor's
// alignment, and the header's size keeps it), and handing it over is GOMP_task
// with a 16-byte argument block naming the descriptor: the task is then an ordinary GOMP task —
// counted, stolen, ordered by its dependences, queued by priority, discarded when its taskgroup
// is cancelled — whose body calls the compiler's routine and frees the descriptor.
//
// Untied tasks. clang splits an untied task's body into parts at its task scheduling points: a part
// sets part_id, hands the same descriptor back to __kmpc_omp_task and returns. A descriptor handed
// back while its body runs is marked, and the body calls the routine again when it returns — the
// next part runs at once on the same thread (an untied task may resume anywhere, its own thread
// included). The same holds when the task is undeferred (if(0)): the parts run before
// __kmpc_omp_task_complete_if0 returns (libomp 16 aborts on that case).
//
// Undeferred tasks (if(0)): the compiler calls the routine itself between begin_if0 and
// complete_if0; the task's context is task.cpp's included frame, kept in the header.
//
// Detach. __kmpc_task_allow_completion_event hands out the header's address plus one (an odd
// value: GOMP's handles are records, even) before the task is handed over; the GOMP event exists
// once it is. omp_fulfill_event passes an odd handle to libomp_event_fulfilled, which gives the
// GOMP event back. The header of a detachable task lives until both its body has ended and its
// event was fulfilled (two references).
//
// Task reductions (taskgroup task_reduction / in_reduction, taskloop reduction): a registration
// per taskgroup with one private copy per member of the team for each item, initialised at
// registration; __kmpc_task_reduction_get_th_data answers the copy of the thread that runs the
// task (a task of a team runs on members of that team only), and the taskgroup's end combines the
// copies into the shared item. With the task modifier (parallel / for reduction(task, ...)), the
// members share one registration (Team::kmp_red_mod), whose items are each member's own private
// item; it is combined into its creator's at __kmpc_task_reduction_modifier_fini, after a barrier.
#include "kmp_internal.hpp"

#include "../wait.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

extern "C" {
void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int priority, void* detach);
void GOMP_taskwait(void);
void GOMP_taskwait_depend(void** depend);
void GOMP_taskyield(void);
}

namespace plait::omp {
namespace {

using kmp_routine_entry_t = kmp_int32 (*)(kmp_int32, void*);

struct kmp_task_t {
  void* shareds;
  kmp_routine_entry_t routine;
  kmp_int32 part_id;
  union {
    kmp_int32 priority;
    kmp_routine_entry_t destructors;
  } data1;
  union {
    kmp_int32 priority;
    kmp_routine_entry_t destructors;
  } data2;
};
static_assert(sizeof(kmp_task_t) == 40);

// kmp_tasking_flags_t's compiler bits.
inline constexpr kmp_int32 kf_tied = 0x1, kf_final = 0x2, kf_destructors = 0x8, kf_priority = 0x20,
                           kf_detachable = 0x40;

struct alignas(64) Header {
  std::size_t bytes;        // the whole allocation, header included
  std::size_t shareds_off;  // from the allocation's start (0: no shareds block)
  detail::Pool* home;       // whose allocator made it (null: malloc)
  kmp_int32 flags;
  bool running;             // the body runs (a descriptor handed back now is an untied task's next part)
  bool resubmit;            // an untied part handed the descriptor back
  std::atomic<int> refs;    // a detachable task: 2 (its body, its event); unused otherwise
  void* gomp_event;         // a handed-over detachable task's GOMP event
  detail::CountLatch unfulfilled;  // an undeferred detachable task: 1 until its event is fulfilled
  IncludedFrame frame;      // an undeferred task's context
};
static_assert(sizeof(Header) % 64 == 0);

Header* header_of(kmp_task_t* task) { return reinterpret_cast<Header*>(task) - 1; }
kmp_task_t* task_of(Header* h) { return reinterpret_cast<kmp_task_t*>(h + 1); }

Header* allocate(std::size_t bytes) {
  detail::Worker* const w = detail::current_worker();
  void* p;
  detail::Pool* home = nullptr;
  if (w != nullptr) {
    home = w->pool;
    p = detail::pool_alloc_bytes(home, bytes, 64);
  } else {
    p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr) fatal("out of memory for a task of %zu bytes", bytes);
  }
  auto* h = new (p) Header;  // (default-initialised: the caller sets every field it reads)
  h->home = home;
  return h;
}

void deallocate(Header* h) {
  if (h->home != nullptr) detail::pool_free_bytes(h->home, h, h->bytes, 64);
  else std::free(h);
}

void release(Header* h) {
  // Only a detachable task has a second reference (its event); the others free at once.
  // acq_rel: the last of the body's end and the event's fulfil frees; each sees the other's writes.
  if ((h->flags & kf_detachable) == 0 || h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) deallocate(h);
}

// The routine, and the parts an untied task hands back meanwhile.
void run_parts(Header* h, kmp_task_t* task) {
  h->running = true;
  const kmp_int32 gtid = global_tid();
  do {
    h->resubmit = false;
    task->routine(gtid, task);
  } while (h->resubmit);
  h->running = false;
}

void end_task(Header* h, kmp_task_t* task) {
  if ((h->flags & kf_destructors) != 0 && task->data1.destructors != nullptr) task->data1.destructors(global_tid(), task);
  release(h);
}

struct Arg {
  void* event;  // GOMP's event handle of a detachable task goes here (task.cpp writes the first word)
  kmp_task_t* task;
};

void body(void* a) {
  kmp_task_t* task = static_cast<Arg*>(a)->task;
  Header* h = header_of(task);
  run_parts(h, task);
  end_task(h, task);
}

// clang's dependence array into GOMP's second format (task.cpp, collect_deps).
struct kmp_depend_info {
  std::intptr_t base_addr;
  std::size_t len;
  std::uint8_t flags;  // 1 in, 2 out (3 inout), 4 mutexinoutset, 8 inoutset, 0x80 omp_all_memory
};
static_assert(sizeof(kmp_depend_info) == 24);

class GompDeps {
 public:
  GompDeps(kmp_int32 n1, const kmp_depend_info* l1, kmp_int32 n2, const kmp_depend_info* l2, const char* who) {
    const std::size_t n = static_cast<std::size_t>(n1 > 0 ? n1 : 0) + static_cast<std::size_t>(n2 > 0 ? n2 : 0);
    words_.assign(5 + n, nullptr);
    pairs_.resize(2 * n);
    std::size_t nout = 0, nmutex = 0, nin = 0, npair = 0;
    auto each = [&](auto f) {
      for (kmp_int32 i = 0; i < n1; ++i) f(l1[i]);
      for (kmp_int32 i = 0; i < n2; ++i) f(l2[i]);
    };
    each([&](const kmp_depend_info& d) {
      if ((d.flags & 0x80) != 0)
        fatal("%s: depend(omp_all_memory) is not implemented by the Plait OpenMP runtime", who);
      if ((d.flags & 2) != 0) ++nout;
      else if ((d.flags & 4) != 0) ++nmutex;
      else if ((d.flags & 8) != 0) ++npair;
      else if ((d.flags & 1) != 0) ++nin;
      else fatal("%s: dependence kind %u (accepted: 1 in, 2/3 out/inout, 4 mutexinoutset, 8 inoutset)", who, d.flags);
    });
    std::size_t io = 5, im = 5 + nout, ii = 5 + nout + nmutex, ip = 5 + nout + nmutex + nin, pk = 0;
    each([&](const kmp_depend_info& d) {
      void* addr = reinterpret_cast<void*>(d.base_addr);
      if ((d.flags & 2) != 0) words_[io++] = addr;
      else if ((d.flags & 4) != 0) words_[im++] = addr;
      else if ((d.flags & 8) != 0) {
        pairs_[pk] = addr;
        pairs_[pk + 1] = reinterpret_cast<void*>(dep_inoutset);
        words_[ip++] = &pairs_[pk];
        pk += 2;
      } else words_[ii++] = addr;
    });
    words_[1] = reinterpret_cast<void*>(n);
    words_[2] = reinterpret_cast<void*>(nout);
    words_[3] = reinterpret_cast<void*>(nmutex);
    words_[4] = reinterpret_cast<void*>(nin);
  }
  void** array() { return words_.data(); }
  bool empty() const { return words_.size() == 5; }

 private:
  std::vector<void*> words_;
  std::vector<void*> pairs_;
};

void hand_over(kmp_task_t* task, void** depend, bool if_clause) {
  Header* h = header_of(task);
  unsigned gflags = 0;
  int priority = 0;
  if ((h->flags & kf_tied) == 0) gflags |= task_untied;
  if ((h->flags & kf_final) != 0) gflags |= task_final;
  if ((h->flags & kf_priority) != 0) {
    gflags |= task_priority;
    priority = task->data2.priority;
  }
  if ((h->flags & kf_detachable) != 0) gflags |= task_detach;
  if (depend != nullptr) gflags |= task_depend;
  Arg arg{nullptr, task};
  GOMP_task(&body, &arg, nullptr, sizeof arg, alignof(Arg), if_clause, gflags, depend, priority,
            (h->flags & kf_detachable) != 0 ? &h->gomp_event : nullptr);
}

// ---- task reductions ----
struct kmp_taskred_input_t {  // the 5.0 interface (__kmpc_taskred_init and _modifier_init)
  void* reduce_shar;
  void* reduce_orig;
  std::size_t reduce_size;
  void* reduce_init;  // void init(void* priv, void* orig)
  void* reduce_fini;  // void fini(void* priv)
  void* reduce_comb;  // void comb(void* shar, void* priv)
  kmp_int32 flags;
};
static_assert(sizeof(kmp_taskred_input_t) == 56);
struct kmp_task_red_input_t {  // the 4.5 interface (__kmpc_task_reduction_init): init(priv) only
  void* reduce_shar;
  std::size_t reduce_size;
  void* reduce_init;
  void* reduce_fini;
  void* reduce_comb;
  kmp_int32 flags;
};
static_assert(sizeof(kmp_task_red_input_t) == 48);

struct RedItem {
  std::size_t size = 0, stride = 0;
  void (*comb)(void*, void*) = nullptr;
  void (*fini)(void*) = nullptr;
  unsigned char* priv = nullptr;           // nth copies, `stride` apart
  std::vector<std::atomic<void*>> shar;    // each member's shared item (one unless the task modifier)
};

struct Reductions {
  unsigned nth = 1;
  std::vector<RedItem> items;
  Reductions* outer = nullptr;  // the registration of an enclosing taskgroup, searched next
  const Thread* creator = nullptr;
};

Reductions* enclosing_reductions(Taskgroup* g) {
  for (; g != nullptr; g = g->prev)
    if (g->kmp_red != nullptr) return static_cast<Reductions*>(g->kmp_red);
  return nullptr;
}

template <class Input>
Reductions* make_reductions(unsigned nth, int num, const Input* in, unsigned slots, unsigned me) {
  auto* r = new Reductions;
  r->nth = nth;
  r->items.reserve(static_cast<std::size_t>(num));
  for (int i = 0; i < num; ++i) {
    const Input& d = in[i];
    RedItem& it = r->items.emplace_back();
    it.size = d.reduce_size;
    it.stride = (d.reduce_size + 63) / 64 * 64;
    if (it.stride == 0) it.stride = 64;
    it.comb = reinterpret_cast<void (*)(void*, void*)>(d.reduce_comb);
    it.fini = reinterpret_cast<void (*)(void*)>(d.reduce_fini);
    if (it.comb == nullptr) fatal("__kmpc_taskred_init: a reduction item without a combiner");
    it.priv = static_cast<unsigned char*>(std::aligned_alloc(64, it.stride * nth));
    if (it.priv == nullptr) fatal("out of memory for the task reduction's private copies");
    it.shar = std::vector<std::atomic<void*>>(slots);
    for (auto& s : it.shar) s.store(nullptr, std::memory_order_relaxed);
    it.shar[me].store(d.reduce_shar, std::memory_order_relaxed);
    for (unsigned k = 0; k < nth; ++k) {
      void* p = it.priv + k * it.stride;
      if (d.reduce_init == nullptr) {
        std::memset(p, 0, it.size);
      } else if constexpr (std::is_same_v<Input, kmp_taskred_input_t>) {
        reinterpret_cast<void (*)(void*, void*)>(d.reduce_init)(p, d.reduce_orig != nullptr ? d.reduce_orig : d.reduce_shar);
      } else {
        reinterpret_cast<void (*)(void*)>(d.reduce_init)(p);
      }
    }
  }
  return r;
}

// Combines every copy into the creator's shared item, finalises the copies, frees.
void finish_reductions(Reductions* r, unsigned creator_slot) {
  for (RedItem& it : r->items) {
    void* shar = it.shar[creator_slot].load(std::memory_order_relaxed);
    for (unsigned k = 0; k < r->nth; ++k) {
      void* p = it.priv + k * it.stride;
      it.comb(shar, p);
      if (it.fini != nullptr) it.fini(p);
    }
    std::free(it.priv);
  }
  delete r;
}

unsigned team_size(const Thread& t) { return t.team != nullptr ? t.team->n : 1; }

template <class Input>
Reductions* taskred_init(int num, const Input* in) {
  Thread& t = thread_state();
  Taskgroup* g = innermost_taskgroup(t);
  if (g == nullptr) fatal("__kmpc_taskred_init outside a taskgroup");
  Reductions* r = make_reductions(team_size(t), num, in, 1, 0);
  r->outer = enclosing_reductions(g);
  if (g->kmp_red != nullptr) fatal("__kmpc_taskred_init: a second registration in one taskgroup");
  g->kmp_red = r;
  g->kmp_red_own = true;
  return r;
}

void* th_data(Reductions* r, void* data) {
  const Thread& t = thread_state();
  const unsigned me = t.num;
  for (; r != nullptr; r = r->outer) {
    for (RedItem& it : r->items) {
      const auto* d = static_cast<unsigned char*>(data);
      for (auto& s : it.shar) {
        // relaxed: a member's item is published to the tasks it makes by their hand-over.
        auto* sh = static_cast<unsigned char*>(s.load(std::memory_order_relaxed));
        if (sh != nullptr && d >= sh && d < sh + (it.size != 0 ? it.size : 1)) {
          if (me >= r->nth) fatal("__kmpc_task_reduction_get_th_data: thread %u of a team of %u", me, r->nth);
          return it.priv + me * it.stride + (d - sh);
        }
      }
      if (d >= it.priv && d < it.priv + r->nth * it.stride) {  // a copy's address: this thread's copy
        const std::size_t off = static_cast<std::size_t>(d - it.priv) % it.stride;
        return it.priv + me * it.stride + off;
      }
    }
  }
  fatal("__kmpc_task_reduction_get_th_data: %p is no item of an enclosing task reduction", data);
}

void* const red_busy = reinterpret_cast<void*>(1);

}  // namespace

void* libomp_event_fulfilled(void* handle) noexcept {
  auto* h = reinterpret_cast<Header*>(reinterpret_cast<std::uintptr_t>(handle) & ~std::uintptr_t{1});
  void* ev = h->gomp_event;
  if (ev == nullptr) {
    // An undeferred task's event (never handed over): its creator waits in complete_if0 and frees
    // the header after this count (the last access here).
    h->unfulfilled.count_down(1);
    return nullptr;
  }
  release(h);
  return ev;
}

}  // namespace plait::omp

using namespace plait::omp;
namespace detail = plait::detail;

namespace plait::omp {
namespace {
// parallel / for reduction(task, ...): every member registers its own items in one shared
// registration (the first to come makes it), inside a taskgroup of its own.
template <class Input>
void* modifier_init(int num, const Input* in) {
  Thread& t = thread_state();
  GOMP_taskgroup_start();
  Taskgroup* g = innermost_taskgroup(t);
  g->workshare = true;  // no taskgroup region of the program: `cancel taskgroup` cancels the enclosing one
  const unsigned nth = team_size(t);
  Reductions* r;
  if (nth == 1) {
    r = make_reductions(1, num, in, 1, 0);
  } else {
    std::atomic<void*>& slot = t.team->kmp_red_mod[t.kmp_red_seq++ & 1];
    for (;;) {
      // acquire: pairs with the creator's release of the registration.
      void* cur = slot.load(std::memory_order_acquire);
      if (cur == nullptr) {
        if (slot.compare_exchange_strong(cur, red_busy, std::memory_order_acquire, std::memory_order_relaxed)) {
          r = make_reductions(nth, num, in, nth, t.num);
          r->creator = &t;
          r->outer = enclosing_reductions(g->prev);
          // release: publishes the registration to the members that take it.
          slot.store(r, std::memory_order_release);
          break;
        }
        continue;
      }
      if (cur == red_busy) {
        std::this_thread::yield();
        continue;
      }
      r = static_cast<Reductions*>(cur);
      for (int i = 0; i < num && static_cast<std::size_t>(i) < r->items.size(); ++i)
        r->items[static_cast<std::size_t>(i)].shar[t.num].store(in[i].reduce_shar, std::memory_order_relaxed);
      break;
    }
  }
  if (nth == 1) r->outer = enclosing_reductions(g->prev);
  g->kmp_red = r;
  g->kmp_red_own = false;
  return r;
}
}  // namespace
}  // namespace plait::omp

extern "C" {

void* __kmpc_omp_task_alloc(ident_t*, kmp_int32, kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds,
                            void* routine) {
  note_abi(abi_kmp);
  if (sizeof_task < sizeof(kmp_task_t))
    fatal("__kmpc_omp_task_alloc: a task descriptor of %zu bytes (at least %zu)", sizeof_task, sizeof(kmp_task_t));
  const std::size_t task_off = sizeof(Header);
  const std::size_t shareds_off = (task_off + sizeof_task + 7) / 8 * 8;
  const std::size_t bytes = shareds_off + sizeof_shareds;
  Header* h = allocate(bytes);
  h->bytes = bytes;
  h->shareds_off = sizeof_shareds != 0 ? shareds_off : 0;
  h->flags = flags;
  h->running = false;
  h->resubmit = false;
  h->gomp_event = nullptr;
  if ((flags & kf_detachable) != 0) {
    h->refs.store(2, std::memory_order_relaxed);
    h->unfulfilled.reset(1);
  }
  kmp_task_t* task = task_of(h);
  task->shareds = sizeof_shareds != 0 ? reinterpret_cast<unsigned char*>(h) + shareds_off : nullptr;
  task->routine = reinterpret_cast<kmp_routine_entry_t>(routine);
  task->part_id = 0;
  task->data1.destructors = nullptr;
  task->data2.destructors = nullptr;
  return task;
}

// target nowait on the host (the only device): a task running the region.
void* __kmpc_omp_target_task_alloc(ident_t* loc, kmp_int32 gtid, kmp_int32 flags, std::size_t sizeof_task,
                                   std::size_t sizeof_shareds, void* routine, kmp_int64) {
  return __kmpc_omp_task_alloc(loc, gtid, flags, sizeof_task, sizeof_shareds, routine);
}

kmp_int32 __kmpc_omp_task(ident_t*, kmp_int32, void* new_task) {
  auto* task = static_cast<kmp_task_t*>(new_task);
  Header* h = header_of(task);
  if (h->running) {  // an untied task's next part (see the top of the file)
    h->resubmit = true;
    return 0;
  }
  hand_over(task, nullptr, true);
  return 0;
}

kmp_int32 __kmpc_omp_task_with_deps(ident_t* loc, kmp_int32 gtid, void* new_task, kmp_int32 ndeps,
                                    kmp_depend_info* deps, kmp_int32 ndeps_noalias, kmp_depend_info* noalias) {
  auto* task = static_cast<kmp_task_t*>(new_task);
  if (header_of(task)->running) return __kmpc_omp_task(loc, gtid, new_task);
  GompDeps d(ndeps, deps, ndeps_noalias, noalias, "__kmpc_omp_task_with_deps");
  hand_over(task, d.empty() ? nullptr : d.array(), true);
  return 0;
}

// affinity(...) is a hint.
kmp_int32 __kmpc_omp_reg_task_with_affinity(ident_t*, kmp_int32, void*, kmp_int32, void*) { return 0; }

void __kmpc_omp_wait_deps(ident_t*, kmp_int32, kmp_int32 ndeps, kmp_depend_info* deps, kmp_int32 ndeps_noalias,
                          kmp_depend_info* noalias) {
  GompDeps d(ndeps, deps, ndeps_noalias, noalias, "__kmpc_omp_wait_deps");
  if (!d.empty()) GOMP_taskwait_depend(d.array());
}

// taskwait depend(...) [nowait]: waits for the named siblings (nowait too, as libomp 16 does: the
// construct then completes before the next statement, which the standard allows).
void __kmpc_omp_taskwait_deps_51(ident_t* loc, kmp_int32 gtid, kmp_int32 ndeps, kmp_depend_info* deps,
                                 kmp_int32 ndeps_noalias, kmp_depend_info* noalias, kmp_int32) {
  __kmpc_omp_wait_deps(loc, gtid, ndeps, deps, ndeps_noalias, noalias);
}

void __kmpc_omp_task_begin_if0(ident_t*, kmp_int32, void* t) {
  auto* task = static_cast<kmp_task_t*>(t);
  Header* h = header_of(task);
  included_begin(h->frame, (h->flags & kf_final) != 0);
  h->running = true;
}

void __kmpc_omp_task_complete_if0(ident_t*, kmp_int32, void* t) {
  auto* task = static_cast<kmp_task_t*>(t);
  Header* h = header_of(task);
  const kmp_int32 gtid = global_tid();
  while (h->resubmit) {  // the parts an untied task handed back
    h->resubmit = false;
    task->routine(gtid, task);
  }
  h->running = false;
  included_end(h->frame);
  if ((h->flags & kf_detachable) != 0) {
    // Complete once its event is fulfilled; the creator waits (running tasks: the fulfil may be
    // one of them).
    h->refs.fetch_sub(1, std::memory_order_relaxed);  // (the event's reference: it is not handed over)
    Thread& th = thread_state();
    detail::Worker* const w = detail::current_worker();
    if (w != nullptr && th.task != nullptr)
      detail::group_wait(w, &h->unfulfilled, th.task->floor);
    else
      detail::run_until(nullptr, detail::latch_ref{nullptr, &h->unfulfilled}, detail::BlockWait{});
  }
  end_task(h, task);
}

kmp_int32 __kmpc_omp_taskwait(ident_t*, kmp_int32) {
  GOMP_taskwait();
  return 0;
}
kmp_int32 __kmpc_omp_taskyield(ident_t*, kmp_int32, int) {
  GOMP_taskyield();
  return 0;
}

void* __kmpc_task_allow_completion_event(ident_t*, kmp_int32, void* t) {
  Header* h = header_of(static_cast<kmp_task_t*>(t));
  if ((h->flags & kf_detachable) == 0) fatal("__kmpc_task_allow_completion_event: a task made without detach");
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(h) | 1);
}

void __kmpc_taskgroup(ident_t*, int) { GOMP_taskgroup_start(); }

void __kmpc_end_taskgroup(ident_t*, int) {
  Thread& t = thread_state();
  Taskgroup* g = innermost_taskgroup(t);
  Reductions* r = g != nullptr && g->kmp_red_own ? static_cast<Reductions*>(g->kmp_red) : nullptr;
  GOMP_taskgroup_end();
  if (r != nullptr) finish_reductions(r, 0);
}

// taskloop: `task` is the pattern, never run; each chunk is a byte copy of its allocation with its
// own bounds (64-bit, at the pattern's lb/ub offsets), made ready by the compiler's task_dup
// (firstprivate copies, the lastprivate flag), and handed over as any task.
static void taskloop(void* pattern, kmp_int32 if_val, kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st, kmp_int32 nogroup,
                     kmp_int32 sched, kmp_uint64 grainsize, kmp_int32 modifier, void* task_dup) {
  auto* task = static_cast<kmp_task_t*>(pattern);
  Header* h = header_of(task);
  const std::size_t lb_off = reinterpret_cast<unsigned char*>(lb) - reinterpret_cast<unsigned char*>(task);
  const std::size_t ub_off = reinterpret_cast<unsigned char*>(ub) - reinterpret_cast<unsigned char*>(task);
  const auto lower = static_cast<kmp_int64>(*lb), upper = static_cast<kmp_int64>(*ub);
  if (st == 0) fatal("__kmpc_taskloop: a loop with increment 0");
  std::uint64_t n = 0;
  if (st > 0 ? upper >= lower : lower >= upper)
    n = (st > 0 ? static_cast<std::uint64_t>(upper - lower) : static_cast<std::uint64_t>(lower - upper)) /
            static_cast<std::uint64_t>(st > 0 ? st : -st) + 1;
  Thread& t = thread_state();
  std::uint64_t ntasks;
  std::uint64_t strict = 0;
  switch (sched) {
    case 0: ntasks = 10ull * team_size(t); break;  // no clause: libomp's ten tasks per thread
    case 1: {
      const std::uint64_t g = grainsize == 0 ? 1 : grainsize;
      if (modifier != 0) {
        strict = g;
        ntasks = (n + g - 1) / g;
      } else {
        ntasks = n / g;
        if (ntasks < 1) ntasks = 1;
      }
      break;
    }
    case 2: ntasks = grainsize == 0 ? 1 : grainsize; break;
    default: fatal("__kmpc_taskloop: schedule %d (accepted: 0 none, 1 grainsize, 2 num_tasks)", sched);
  }
  if (ntasks > n) ntasks = n;
  if (nogroup == 0) GOMP_taskgroup_start();
  using dup_fn = void (*)(kmp_task_t*, kmp_task_t*, kmp_int32);
  const std::uint64_t q = ntasks != 0 ? n / ntasks : 0, rem = ntasks != 0 ? n % ntasks : 0;
  std::uint64_t lo = 0;
  for (std::uint64_t k = 0; k < ntasks; ++k) {
    std::uint64_t hi = lo + q + (k < rem ? 1 : 0);
    if (strict != 0) hi = lo + strict < n ? lo + strict : n;
    Header* c = allocate(h->bytes);
    c->bytes = h->bytes;
    c->shareds_off = h->shareds_off;
    c->flags = h->flags;
    c->running = false;
    c->resubmit = false;
    c->gomp_event = nullptr;
    if ((c->flags & kf_detachable) != 0) {
      c->refs.store(2, std::memory_order_relaxed);
      c->unfulfilled.reset(1);
    }
    kmp_task_t* ct = task_of(c);
    std::memcpy(static_cast<void*>(ct), task, h->bytes - sizeof(Header));
    if (h->shareds_off != 0) ct->shareds = reinterpret_cast<unsigned char*>(c) + h->shareds_off;
    const kmp_uint64 first = static_cast<kmp_uint64>(lower + static_cast<kmp_int64>(lo) * st);
    const kmp_uint64 last = static_cast<kmp_uint64>(lower + static_cast<kmp_int64>(hi - 1) * st);
    std::memcpy(reinterpret_cast<unsigned char*>(ct) + lb_off, &first, sizeof first);
    std::memcpy(reinterpret_cast<unsigned char*>(ct) + ub_off, &last, sizeof last);
    if (task_dup != nullptr) reinterpret_cast<dup_fn>(task_dup)(ct, task, hi == n ? 1 : 0);
    hand_over(ct, nullptr, if_val != 0);
    lo = hi;
  }
  end_task(h, task);  // the pattern: its destructors (the copies have their own), its memory
  if (nogroup == 0) GOMP_taskgroup_end();
}

void __kmpc_taskloop(ident_t*, kmp_int32, void* task, kmp_int32 if_val, kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st,
                     kmp_int32 nogroup, kmp_int32 sched, kmp_uint64 grainsize, void* task_dup) {
  taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, 0, task_dup);
}
void __kmpc_taskloop_5(ident_t*, kmp_int32, void* task, kmp_int32 if_val, kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st,
                       kmp_int32 nogroup, kmp_int32 sched, kmp_uint64 grainsize, kmp_int32 modifier, void* task_dup) {
  taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, modifier, task_dup);
}

// ---- task reductions (see the top of the file) -----------------------------------------------

void* __kmpc_taskred_init(int, int num, void* data) {
  return taskred_init(num, static_cast<const kmp_taskred_input_t*>(data));
}
void* __kmpc_task_reduction_init(int, int num, void* data) {
  return taskred_init(num, static_cast<const kmp_task_red_input_t*>(data));
}

void* __kmpc_task_reduction_get_th_data(int, void* tg, void* data) {
  Reductions* r = static_cast<Reductions*>(tg);
  if (r == nullptr) r = enclosing_reductions(innermost_taskgroup(thread_state()));
  return th_data(r, data);
}

void* __kmpc_taskred_modifier_init(ident_t*, int, int, int num, void* data) {
  return modifier_init(num, static_cast<const kmp_taskred_input_t*>(data));
}
void* __kmpc_task_reduction_modifier_init(ident_t*, int, int, int num, void* data) {
  return modifier_init(num, static_cast<const kmp_task_red_input_t*>(data));
}

void __kmpc_task_reduction_modifier_fini(ident_t*, int, int) {
  Thread& t = thread_state();
  Taskgroup* g = innermost_taskgroup(t);
  if (g == nullptr || g->kmp_red == nullptr) fatal("__kmpc_task_reduction_modifier_fini without its init");
  auto* r = static_cast<Reductions*>(g->kmp_red);
  g->kmp_red = nullptr;
  GOMP_taskgroup_end();
  if (team_size(t) == 1) {
    finish_reductions(r, 0);
    return;
  }
  const bool creator = r->creator == &t;  // (read before the barrier: the creator frees it after)
  team_barrier(t);  // every member's tasks are done (each waited for its taskgroup's)
  if (creator) {
    unsigned slot = t.num;
    t.team->kmp_red_mod[(t.kmp_red_seq - 1) & 1].store(nullptr, std::memory_order_relaxed);
    finish_reductions(r, slot);
  }
}

}  // extern "C"
