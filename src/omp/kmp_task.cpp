// libomp's ABI: explicit tasks, dependences, undeferred and untied tasks, taskwait, taskgroup,
// taskloop, detach and task reductions — on task.cpp's records, counts, data-flow engine and waits
// (kmp_internal.hpp).
//
// The descriptor. libomp's compilers ask the runtime for the task (__kmpc_omp_task_alloc: a
// kmp_task_t with the compiler's privates after it, and a block for the shared variables' pointers)
// and fill it in before handing it over (__kmpc_omp_task). The task is 64-byte aligned, as
// libomp's (clang places over-aligned privates by the descriptor's alignment), and the 32 bytes
// before it are ours (Tail: the compiler never touches memory before the task pointer). Two kinds:
//
//   fast    a task that is tied or untied (destructors allowed) and nothing else, made on a worker
//           of a team, whose descriptor fits: the descriptor is the argument block of a task.cpp
//           record made at once (descriptor_alloc_fast). Handing it over counts and pushes that record
//           as GOMP_task's fast path does (descriptor_record_submit); its body runs the routine, and the
//           record ends with it: one allocation, nothing copied. When the fast path's conditions
//           do not hold at the hand-over (a taskgroup, dependences, a full deque, priorities among
//           the siblings), the record is mere memory and the task goes the general way below.
//   header  every other task: an allocation with a Header (detach, the undeferred task's frame)
//           before the Tail. Handing it over is GOMP_task with a 16-byte argument block naming
//           the descriptor: the task is then an ordinary GOMP task — counted, stolen, ordered by
//           its dependences, queued by priority, discarded when its taskgroup is cancelled —
//           whose body calls the compiler's routine and frees the descriptor.
//
// Untied tasks. clang splits an untied task's body into parts at its task scheduling points: a part
// sets part_id, hands the same descriptor back to __kmpc_omp_task and returns. A descriptor handed
// back while its body runs is marked, and the body calls the routine again when it returns — the
// next part runs at once on the same thread (an untied task may resume anywhere, its own thread
// included). The same holds when the task is undeferred (if(0)): the parts run before
// __kmpc_omp_task_complete_if0 returns (libomp 16 aborts on that case).
//
// Undeferred tasks (if(0)): the compiler calls the routine itself between begin_if0 and
// complete_if0; the task's context is task.cpp's included frame, kept in the header (a fast
// descriptor's frame is a block of its own, named by the Tail, for that time).
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

using Tail = KmpTail;

// The allocation of a descriptor that is not in a task.cpp record: what the rare cases need.
struct alignas(64) Header {
  std::size_t bytes;        // the whole allocation, header included
  detail::Pool* home;       // whose allocator made it (null: malloc)
  std::atomic<int> refs;    // a detachable task: 2 (its body, its event); unused otherwise
  void* gomp_event;         // a handed-over detachable task's GOMP event
  detail::CountLatch unfulfilled;  // an undeferred detachable task: 1 until its event is fulfilled
  IncludedFrame frame;      // an undeferred task's context
};
static_assert(sizeof(Header) % 64 == 0);
inline constexpr std::size_t header_task_off = sizeof(Header) + 64;  // the Tail in the last 32 bytes before it

Tail* tail_of(kmp_task_t* task) { return reinterpret_cast<Tail*>(task) - 1; }
Header* header_of(kmp_task_t* task) { return static_cast<Header*>(tail_of(task)->ext); }

// A descriptor of `task_bytes` (the shareds block at shareds_off) after a Header, for flags.
kmp_task_t* make_header_descriptor(kmp_int32 flags, std::size_t task_bytes, std::size_t shareds_off) {
  const std::size_t bytes = header_task_off + task_bytes;
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
  auto* h = new (p) Header;  // (default-initialised: every field read is set below or where it is used)
  h->home = home;
  h->bytes = bytes;
  h->gomp_event = nullptr;
  h->refs.store((flags & kf_detachable) != 0 ? 2 : 0, std::memory_order_relaxed);
  if ((flags & kf_detachable) != 0) h->unfulfilled.reset(1);
  auto* task = reinterpret_cast<kmp_task_t*>(static_cast<char*>(p) + header_task_off);
  Tail* tl = tail_of(task);
  tl->task = task;
  tl->ext = h;
  tl->flags = flags;
  tl->task_bytes = static_cast<std::uint32_t>(task_bytes);
  tl->shareds_off = static_cast<std::uint32_t>(shareds_off);
  tl->fast = false;
  tl->running = false;
  tl->resubmit = false;
  task->shareds = shareds_off != 0 ? reinterpret_cast<unsigned char*>(task) + shareds_off : nullptr;
  return task;
}

void release(Header* h) {
  // Only a detachable task has a second reference (its event); the others free at once.
  // acq_rel: the last of the body's end and the event's fulfil frees; each sees the other's writes.
  if (h->refs.load(std::memory_order_relaxed) != 0 && h->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (h->home != nullptr) detail::pool_free_bytes(h->home, h, h->bytes, 64);
  else std::free(h);
}

// The routine, and the parts an untied task hands back meanwhile.
PLAIT_INLINE void run_parts(Tail* tl, kmp_task_t* task) {
  tl->running = true;
  const kmp_int32 gtid = global_tid();
  do {
    tl->resubmit = false;
    task->routine(gtid, task);
  } while (PLAIT_UNLIKELY(tl->resubmit));
  tl->running = false;
}

// The destructors of a task whose body has ended (or of a taskloop's pattern), then its memory
// unless task.cpp's record of the task holds it (`ran_as_record`: that record ends with its body).
void end_task(Tail* tl, kmp_task_t* task, bool ran_as_record) {
  if (PLAIT_UNLIKELY((tl->flags & kf_destructors) != 0) && task->data1.destructors != nullptr)
    task->data1.destructors(global_tid(), task);
  if (!tl->fast) release(static_cast<Header*>(tl->ext));
  else if (!ran_as_record) descriptor_record_discard(task);
}

struct Arg {
  void* event;  // GOMP's event handle of a detachable task goes here (task.cpp writes the first word)
  kmp_task_t* task;
};

// The routine of a descriptor handed over as an argument block of another task.cpp record.
void body(void* a) {
  kmp_task_t* task = static_cast<Arg*>(a)->task;
  Tail* tl = tail_of(task);
  run_parts(tl, task);
  end_task(tl, task, false);
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
    // GOMP's words (5 + n) and the inoutset pairs (2 per item at most), on the stack when few
    // (a dependent task is made per call: no heap allocation on that path).
    const std::size_t need = 5 + 3 * n;
    if (need <= inline_words) {
      words_ = inline_;
    } else {
      heap_.resize(need);
      words_ = heap_.data();
    }
    void** const pairs = words_ + 5 + n;
    for (std::size_t k = 0; k < 5; ++k) words_[k] = nullptr;
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
        pairs[pk] = addr;
        pairs[pk + 1] = reinterpret_cast<void*>(dep_inoutset);
        words_[ip++] = &pairs[pk];
        pk += 2;
      } else words_[ii++] = addr;
    });
    n_ = n;
    words_[1] = reinterpret_cast<void*>(n);
    words_[2] = reinterpret_cast<void*>(nout);
    words_[3] = reinterpret_cast<void*>(nmutex);
    words_[4] = reinterpret_cast<void*>(nin);
  }
  GompDeps(const GompDeps&) = delete;
  GompDeps& operator=(const GompDeps&) = delete;
  void** array() { return words_; }
  bool empty() const { return n_ == 0; }

 private:
  static constexpr std::size_t inline_words = 5 + 3 * 8;
  void* inline_[inline_words];
  std::vector<void*> heap_;
  void** words_;
  std::size_t n_ = 0;
};

// The general way: GOMP_task with an argument block naming the descriptor (see the top).
void hand_over_general(kmp_task_t* task, void** depend, bool if_clause) {
  const kmp_int32 flags = tail_of(task)->flags;
  unsigned gflags = 0;
  int priority = 0;
  if ((flags & kf_tied) == 0) gflags |= task_untied;
  if ((flags & kf_final) != 0) gflags |= task_final;
  if ((flags & kf_priority) != 0) {
    gflags |= task_priority;
    priority = task->data2.priority;
  }
  if ((flags & kf_detachable) != 0) gflags |= task_detach;
  if (depend != nullptr) gflags |= task_depend;
  Arg arg{nullptr, task};
  GOMP_task(&body, &arg, nullptr, sizeof arg, alignof(Arg), if_clause, gflags, depend, priority,
            (flags & kf_detachable) != 0 ? &header_of(task)->gomp_event : nullptr);
}

void hand_over(kmp_task_t* task, void** depend, bool if_clause) {
  if (tail_of(task)->fast && depend == nullptr && if_clause && PLAIT_LIKELY(descriptor_record_submit(task))) return;
  hand_over_general(task, depend, if_clause);
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

kmp_int32 descriptor_submit_general(void* new_task) noexcept {
  auto* task = static_cast<kmp_task_t*>(new_task);
  Tail* tl = tail_of(task);
  if (tl->running) {  // an untied task's next part (see the top of the file)
    tl->resubmit = true;
    return 0;
  }
  hand_over_general(task, nullptr, true);
  return 0;
}

// A fast descriptor's routine, run as its own task.cpp record (which ends after it).
void fast_descriptor_body(void* a) {
  kmp_task_t* task;
  std::memcpy(&task, a, sizeof task);
  Tail* tl = tail_of(task);
  run_parts(tl, task);
  end_task(tl, task, true);
}

void* descriptor_alloc_general(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds, void* routine) {
  PLAIT_ASSERT(sizeof_task >= sizeof(kmp_task_t));
  const std::size_t shareds_off = (sizeof_task + 7) / 8 * 8;
  kmp_task_t* task = make_header_descriptor(flags, shareds_off + sizeof_shareds, sizeof_shareds != 0 ? shareds_off : 0);
  task->routine = reinterpret_cast<kmp_routine_entry_t>(routine);
  task->part_id = 0;
  task->data1.destructors = nullptr;
  task->data2.destructors = nullptr;
  return task;
}

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
  // LLVM 16's flang passes the size of its own part only (8 bytes: the shareds pointer), and
  // libomp writes the kmp_task_t fields anyway, over the block that follows; here the descriptor
  // is never smaller than kmp_task_t, the shareds block after it.
  if (PLAIT_UNLIKELY(sizeof_task < sizeof(kmp_task_t))) sizeof_task = sizeof(kmp_task_t);
  return descriptor_alloc_fast(flags, sizeof_task, sizeof_shareds, routine);  // (or descriptor_alloc_general)
}

// target nowait on the host (the only device): a task running the region.
void* __kmpc_omp_target_task_alloc(ident_t* loc, kmp_int32 gtid, kmp_int32 flags, std::size_t sizeof_task,
                                   std::size_t sizeof_shareds, void* routine, kmp_int64) {
  return __kmpc_omp_task_alloc(loc, gtid, flags, sizeof_task, sizeof_shareds, routine);
}

kmp_int32 __kmpc_omp_task(ident_t*, kmp_int32, void* new_task) {
  return descriptor_submit(new_task);  // (or descriptor_submit_general)
}

kmp_int32 __kmpc_omp_task_with_deps(ident_t* loc, kmp_int32 gtid, void* new_task, kmp_int32 ndeps,
                                    kmp_depend_info* deps, kmp_int32 ndeps_noalias, kmp_depend_info* noalias) {
  auto* task = static_cast<kmp_task_t*>(new_task);
  if (tail_of(task)->running) return __kmpc_omp_task(loc, gtid, new_task);
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
  Tail* tl = tail_of(task);
  IncludedFrame* frame;
  if (tl->fast) {  // a frame of its own (a fast descriptor's record has no room for one)
    void* p = detail::pool_alloc_bytes(descriptor_record_pool(task), sizeof(IncludedFrame), alignof(IncludedFrame));
    frame = ::new (p) IncludedFrame;
    tl->ext = frame;
  } else {
    frame = &header_of(task)->frame;
  }
  included_begin(*frame, (tl->flags & kf_final) != 0);
  tl->running = true;
}

void __kmpc_omp_task_complete_if0(ident_t*, kmp_int32, void* t) {
  auto* task = static_cast<kmp_task_t*>(t);
  Tail* tl = tail_of(task);
  const kmp_int32 gtid = global_tid();
  while (tl->resubmit) {  // the parts an untied task handed back
    tl->resubmit = false;
    task->routine(gtid, task);
  }
  tl->running = false;
  if (tl->fast) {
    auto* frame = static_cast<IncludedFrame*>(tl->ext);
    detail::Pool* const home = descriptor_record_pool(task);
    included_end(*frame);
    detail::pool_free_bytes(home, frame, sizeof(IncludedFrame), alignof(IncludedFrame));
    end_task(tl, task, false);
    return;
  }
  Header* h = header_of(task);
  included_end(h->frame);
  if ((tl->flags & kf_detachable) != 0) {
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
  end_task(tl, task, false);
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
  auto* task = static_cast<kmp_task_t*>(t);
  if ((tail_of(task)->flags & kf_detachable) == 0) fatal("__kmpc_task_allow_completion_event: a task made without detach");
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(header_of(task)) | 1);
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
  Tail* const tl = tail_of(task);
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
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work(ompt::work_taskloop, ompt::scope_begin, t, n);
  if (nogroup == 0) GOMP_taskgroup_start();
  using dup_fn = void (*)(kmp_task_t*, kmp_task_t*, kmp_int32);
  const std::uint64_t q = ntasks != 0 ? n / ntasks : 0, rem = ntasks != 0 ? n % ntasks : 0;
  std::uint64_t lo = 0;
  for (std::uint64_t k = 0; k < ntasks; ++k) {
    std::uint64_t hi = lo + q + (k < rem ? 1 : 0);
    if (strict != 0) hi = lo + strict < n ? lo + strict : n;
    // (a chunk's descriptor is never a fast one: taskloop's tasks are few and the pattern's
    // size may exceed a record's room)
    kmp_task_t* ct = make_header_descriptor(tl->flags, tl->task_bytes, tl->shareds_off);
    std::memcpy(static_cast<void*>(ct), task, tl->task_bytes);
    ct->shareds = tl->shareds_off != 0 ? reinterpret_cast<unsigned char*>(ct) + tl->shareds_off : nullptr;
    const kmp_uint64 first = static_cast<kmp_uint64>(lower + static_cast<kmp_int64>(lo) * st);
    const kmp_uint64 last = static_cast<kmp_uint64>(lower + static_cast<kmp_int64>(hi - 1) * st);
    std::memcpy(reinterpret_cast<unsigned char*>(ct) + lb_off, &first, sizeof first);
    std::memcpy(reinterpret_cast<unsigned char*>(ct) + ub_off, &last, sizeof last);
    if (task_dup != nullptr) reinterpret_cast<dup_fn>(task_dup)(ct, task, hi == n ? 1 : 0);
    hand_over(ct, nullptr, if_val != 0);
    lo = hi;
  }
  end_task(tl, task, false);  // the pattern: its destructors (the copies have their own), its memory
  if (nogroup == 0) GOMP_taskgroup_end();
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work(ompt::work_taskloop, ompt::scope_end, thread_state(), n);
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
