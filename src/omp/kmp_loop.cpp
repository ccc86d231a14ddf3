// libomp's ABI: worksharing loops, sections, distribute, ordered and doacross (kmp_internal.hpp).
//
// Static schedules (__kmpc_for_static_init_*) are arithmetic on the team size and the thread's
// number, with no shared state, in libomp's terms: bounds are inclusive, and the answer is this
// thread's first chunk, the stride to its next one, and whether it holds the last iteration.
// Sections are a static loop over section numbers; `distribute` is the same over the league
// (team number, number of teams).
//
// Dispatch loops (__kmpc_dispatch_*) run loop.cpp's schedules over the logical iterations
// 0..n-1 of the loop as written (first value lb, increment st, n iterations); each chunk [lo, hi)
// goes back as the inclusive bounds lb + lo*st .. lb + (hi-1)*st, computed in the loop's own
// width (wrapping as the program's own induction variable would). The loop is left when `next`
// answers 0. Ordered turns are loop.cpp's, per chunk: __kmpc_ordered and __kmpc_end_ordered are
// GOMP_ordered_start and _end, and __kmpc_dispatch_fini_* (called after every iteration of an
// ordered loop) needs to do nothing — an iteration that skips its ordered region is passed at its
// chunk's end.
//
// Schedule kinds (libomp's enum sched_type, modifier bits 29 and 30 cleared first): static
// chunked 33 (and 65, 91, 161, 193), static 34 (40, 41, 66, 92, 162, 194), dynamic 35 (67, 163,
// 195) and static_steal 44 (172), guided 36, 42, 43, 39 (71, 164, 170, 171, 196, 199), runtime 37
// (69, 165, 197, 47), auto 38 (70, 166, 198), static balanced chunked 45, guided simd 46; the
// ordered kinds are 65..72 and 193..200.
#include "kmp_internal.hpp"

#include <type_traits>

extern "C" {
void GOMP_ordered_start(void);
void GOMP_ordered_end(void);
}

namespace plait::omp {
namespace {

inline constexpr kmp_int32 sched_modifiers = 0x60000000;  // monotonic (1 << 29), nonmonotonic (1 << 30)

bool kind_is_ordered(kmp_int32 k) { return (k > 64 && k < 73) || (k > 192 && k < 201); }

// GOMP's kind and chunk for a dispatch schedule.
void gomp_kind(kmp_int32 k, std::int64_t chunk, int* kind, std::int64_t* ch) {
  if (k >= 193 && k <= 200) k -= 128;  // no-merge ordered -> ordered
  else if (k >= 161 && k <= 172) k -= 128;  // no-merge -> plain
  if (k >= 65 && k <= 72) k -= 32;   // ordered -> plain
  *ch = chunk;
  switch (k) {
    case 33: *kind = sched_static; if (*ch < 1) *ch = 1; return;
    case 34: case 40: case 41: case 45: *kind = sched_static; *ch = 0; return;
    case 35: case 44: *kind = sched_dynamic; return;
    case 36: case 39: case 42: case 43: case 46: *kind = sched_guided; return;
    case 37: case 47: *kind = sched_runtime; *ch = 0; return;
    case 38: *kind = sched_auto; return;
    default:
      fatal("__kmpc_dispatch_init: schedule kind %d (accepted: libomp's sched_type values 33-47, 65-72, 161-200)",
            static_cast<int>(k));
  }
}

// The trip count of lb..ub (inclusive) by st, in the loop's width.
template <class T, class ST>
std::uint64_t trip_count(T lb, T ub, ST st, const char* who) {
  using UT = std::make_unsigned_t<T>;
  if (st == 0) fatal("%s: a loop with increment 0", who);
  if (st > 0) {
    if (ub < lb) return 0;
    return static_cast<std::uint64_t>(static_cast<UT>(static_cast<UT>(ub) - static_cast<UT>(lb)) / static_cast<UT>(st)) + 1;
  }
  if (lb < ub) return 0;
  const UT step = static_cast<UT>(static_cast<UT>(0) - static_cast<UT>(st));
  return static_cast<std::uint64_t>(static_cast<UT>(static_cast<UT>(lb) - static_cast<UT>(ub)) / step) + 1;
}

// lb + k * st in T's width.
template <class T, class ST>
T at(T lb, std::uint64_t k, ST st) {
  using UT = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<UT>(static_cast<UT>(lb) + static_cast<UT>(k) * static_cast<UT>(st)));
}

template <class T, class ST>
void static_init(const char* who, kmp_int32 schedtype, kmp_int32* plast, T* plower, T* pupper, ST* pstride, ST incr,
                 ST chunk) {
  note_abi(abi_kmp);
  using UT = std::make_unsigned_t<T>;
  const Thread& t = thread_state();
  kmp_int32 sched = schedtype & ~sched_modifiers;
  std::uint64_t tid, nth;
  if (sched == 91 || sched == 92) {  // distribute: over the league
    tid = static_cast<std::uint64_t>(t.team_num);
    nth = static_cast<std::uint64_t>(t.num_teams > 0 ? t.num_teams : 1);
    sched = sched == 91 ? 33 : 34;
  } else {
    tid = t.num;
    nth = t.team != nullptr ? t.team->n : 1;
  }
  if (incr == 0) fatal("%s: a loop with increment 0", who);
  if (incr > 0 ? *pupper < *plower : *plower < *pupper) {  // no iteration
    if (plast != nullptr) *plast = 0;
    *pstride = incr;
    return;
  }
  const std::uint64_t trip = trip_count(*plower, *pupper, incr, who);
  if (nth == 1) {
    if (plast != nullptr) *plast = 1;
    const UT span = incr > 0 ? static_cast<UT>(static_cast<UT>(*pupper) - static_cast<UT>(*plower) + 1)
                             : static_cast<UT>(static_cast<UT>(*plower) - static_cast<UT>(*pupper) + 1);
    *pstride = incr > 0 ? static_cast<ST>(span) : static_cast<ST>(static_cast<UT>(0) - span);
    return;
  }
  const T lower = *plower;
  switch (sched) {
    case 33: {  // chunked, round robin
      std::uint64_t c = chunk < 1 ? 1 : static_cast<std::uint64_t>(chunk);
      if (c > trip) c = trip;
      const std::uint64_t nchunks = (trip + c - 1) / c;
      const std::uint64_t stride_chunks = nchunks < nth ? nchunks : nth;
      *pstride = static_cast<ST>(static_cast<UT>(static_cast<UT>(c) * static_cast<UT>(incr) * static_cast<UT>(stride_chunks)));
      if (tid < nchunks) {
        *plower = at(lower, tid * c, incr);
        *pupper = at(lower, tid * c + c - 1, incr);
      } else {
        *plower = static_cast<T>(static_cast<UT>(*pupper) + (incr > 0 ? UT{1} : static_cast<UT>(-1)));
      }
      if (plast != nullptr) *plast = tid == (nchunks - 1) % nth ? 1 : 0;
      return;
    }
    case 45: {  // balanced and chunked (simd): one block per thread, a multiple of the chunk (a power of 2)
      const T old_upper = *pupper;
      std::uint64_t c = chunk < 1 ? 1 : static_cast<std::uint64_t>(chunk);
      std::uint64_t span = (trip + nth - 1) / nth;
      span = (span + c - 1) / c * c;
      *plower = at(lower, tid * span, incr);
      const std::uint64_t last = tid * span + span - 1;
      *pupper = last >= trip - 1 ? old_upper : at(lower, last, incr);
      if (tid * span >= trip) *plower = static_cast<T>(static_cast<UT>(old_upper) + (incr > 0 ? UT{1} : static_cast<UT>(-1)));
      *pstride = static_cast<ST>(static_cast<UT>(static_cast<UT>(span * nth) * static_cast<UT>(incr)));
      if (plast != nullptr) *plast = tid == (trip - 1) / span ? 1 : 0;
      return;
    }
    default: {  // 34 and the other unchunked static kinds: balanced blocks
      if (trip < nth) {
        if (tid < trip) {
          *plower = *pupper = at(lower, tid, incr);
        } else {
          *plower = static_cast<T>(static_cast<UT>(*pupper) + (incr > 0 ? UT{1} : static_cast<UT>(-1)));
        }
        if (plast != nullptr) *plast = tid == trip - 1 ? 1 : 0;
      } else {
        const std::uint64_t small = trip / nth, extras = trip % nth;
        const std::uint64_t first = tid * small + (tid < extras ? tid : extras);
        const std::uint64_t count = small + (tid < extras ? 1 : 0);
        *plower = at(lower, first, incr);
        *pupper = at(lower, first + count - 1, incr);
        if (plast != nullptr) *plast = tid == nth - 1 ? 1 : 0;
      }
      *pstride = static_cast<ST>(trip);
      return;
    }
  }
}

// OMPT: a static loop's begin (its end: __kmpc_for_static_fini), the construct told by the flags
// clang puts in its location (sections and distribute are static loops too), the count the
// whole iteration space.
constexpr kmp_int32 ident_work_sections = 0x400, ident_work_distribute = 0x800;
template <class T, class ST>
void static_begin_told(const ident_t* loc, T lower, T upper, ST incr, const char* who) {
  const int type = loc != nullptr && (loc->flags & ident_work_sections) != 0     ? ompt::work_sections
                   : loc != nullptr && (loc->flags & ident_work_distribute) != 0 ? ompt::work_distribute
                                                                                 : ompt::work_loop;
  ompt::work_begin(thread_state(), type, incr == 0 ? 0 : trip_count(lower, upper, incr, who));
}

// distribute parallel for, fused: this team's share of the league's iterations (balanced blocks,
// its upper bound in *pupperD), then this thread's share of the team's by `schedule`.
template <class T, class ST>
void dist_for_static_init(kmp_int32 schedule, kmp_int32* plast, T* plower, T* pupper, T* pupperD, ST* pstride,
                          ST incr, ST chunk) {
  kmp_int32 team_last = 0;
  T lo = *plower, hi = *pupper;
  ST st = 1;
  // The team's block: a distribute static (92) over the league.
  static_init("__kmpc_dist_for_static_init", 92, &team_last, &lo, &hi, &st, incr, ST{0});
  *pupperD = hi;
  *plower = lo;
  *pupper = hi;
  if (incr > 0 ? hi < lo : lo < hi) {
    if (plast != nullptr) *plast = 0;
    *pstride = incr;
    return;
  }
  kmp_int32 last = 0;
  static_init("__kmpc_dist_for_static_init", schedule, &last, plower, pupper, pstride, incr, chunk);
  if (plast != nullptr) *plast = team_last != 0 && last != 0 ? 1 : 0;
}

// dist_schedule(static, chunk) over the league: round robin of chunks by team number.
template <class T, class ST>
void team_static_init(kmp_int32* plast, T* plower, T* pupper, ST* pstride, ST incr, ST chunk) {
  static_init("__kmpc_team_static_init", 91, plast, plower, pupper, pstride, incr, chunk);
}

template <class T, class ST>
void dispatch_init(kmp_int32 schedule, T lb, T ub, ST st, ST chunk) {
  note_abi(abi_kmp);
  const std::uint64_t n = trip_count(lb, ub, st, "__kmpc_dispatch_init");
  if (n > static_cast<std::uint64_t>(INT64_MAX))
    fatal("__kmpc_dispatch_init: a loop of %llu iterations (at most 2^63 - 1)", static_cast<unsigned long long>(n));
  const kmp_int32 k = schedule & ~sched_modifiers;
  int kind;
  std::int64_t ch;
  gomp_kind(k, static_cast<std::int64_t>(chunk), &kind, &ch);
  dispatch_start_logical(static_cast<std::int64_t>(n), kind, ch, kind_is_ordered(k));
  // (after the start: a thread outside every region got its solo team there, and Thread is whole)
  Thread& u = thread_state();
  u.kmp_lb = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(lb));
  u.kmp_st = static_cast<std::int64_t>(st);
  u.kmp_n = static_cast<std::int64_t>(n);
  u.kmp_ordered = kind_is_ordered(k);
}

template <class T, class ST>
int dispatch_next(kmp_int32* plast, T* plb, T* pub, ST* pst) {
  Thread& t = thread_state();
  std::int64_t lo, hi;
  if (!dispatch_next_logical(t.kmp_ordered, &lo, &hi)) return 0;
  const T lb = static_cast<T>(static_cast<std::make_unsigned_t<T>>(t.kmp_lb));
  const ST st = static_cast<ST>(t.kmp_st);
  *plb = at(lb, static_cast<std::uint64_t>(lo), st);
  *pub = at(lb, static_cast<std::uint64_t>(hi - 1), st);
  if (pst != nullptr) *pst = st;
  if (plast != nullptr) *plast = hi == t.kmp_n ? 1 : 0;
  return 1;
}

template <class T, class ST>
void dist_dispatch_init(const char* who, kmp_int32 schedule, kmp_int32* last, T lb, T ub, ST st, ST chunk) {
  ST stride = 0;
  static_init(who, 92, last, &lb, &ub, &stride, st, ST{0});
  dispatch_init(schedule, lb, ub, st, chunk);
}

}  // namespace
}  // namespace plait::omp

using namespace plait::omp;

// Each loop entry point in libomp's four integer widths: KMPC_<FAMILY>(W, T, ST) defines
// __kmpc_<family>_W, T being the loop variable's type and ST the stride's, and
// KMPC_EACH_WIDTH(KMPC_<FAMILY>) defines it in the four (__kmpc_<family>_4, _4u, _8 and _8u).
// scripts/gen_omp_abi.py reads each KMPC_EACH_WIDTH invocation as the four definitions it is.
#define KMPC_EACH_WIDTH(F)     \
  F(4, kmp_int32, kmp_int32)   \
  F(4u, kmp_uint32, kmp_int32) \
  F(8, kmp_int64, kmp_int64)   \
  F(8u, kmp_uint64, kmp_int64)
#define KMPC_FOR_STATIC_INIT(W, T, ST)                                                                         \
  void __kmpc_for_static_init_##W(ident_t* loc, kmp_int32, kmp_int32 s, kmp_int32* last, T* lo, T* hi, ST* st, \
                                  ST incr, ST chunk) {                                                         \
    if (PLAIT_UNLIKELY(ompt::enabled)) static_begin_told(loc, *lo, *hi, incr, "__kmpc_for_static_init_" #W);   \
    static_init("__kmpc_for_static_init_" #W, s, last, lo, hi, st, incr, chunk);                               \
  }
#define KMPC_DIST_FOR_STATIC_INIT(W, T, ST)                                                                    \
  void __kmpc_dist_for_static_init_##W(ident_t*, kmp_int32, kmp_int32 s, kmp_int32* last, T* lo, T* hi,        \
                                       T* hid, ST* st, ST incr, ST chunk) {                                    \
    dist_for_static_init(s, last, lo, hi, hid, st, incr, chunk);                                               \
  }
#define KMPC_TEAM_STATIC_INIT(W, T, ST)                                                                        \
  void __kmpc_team_static_init_##W(ident_t*, kmp_int32, kmp_int32* last, T* lo, T* hi, ST* st, ST incr,        \
                                   ST chunk) {                                                                 \
    team_static_init(last, lo, hi, st, incr, chunk);                                                           \
  }
#define KMPC_DISPATCH_INIT(W, T, ST)                                                                           \
  void __kmpc_dispatch_init_##W(ident_t*, kmp_int32, kmp_int32 s, T lb, T ub, ST st, ST chunk) {               \
    dispatch_init(s, lb, ub, st, chunk);                                                                       \
  }
// distribute parallel for with a dynamic schedule: the team's block first (*p_last: whether it
// is the league's last), then a dispatch loop over it.
#define KMPC_DIST_DISPATCH_INIT(W, T, ST)                                                                      \
  void __kmpc_dist_dispatch_init_##W(ident_t*, kmp_int32, kmp_int32 s, kmp_int32* last, T lb, T ub, ST st,     \
                                     ST chunk) {                                                               \
    dist_dispatch_init("__kmpc_dist_dispatch_init_" #W, s, last, lb, ub, st, chunk);                           \
  }
#define KMPC_DISPATCH_NEXT(W, T, ST)                                                                           \
  int __kmpc_dispatch_next_##W(ident_t*, kmp_int32, kmp_int32* last, T* lb, T* ub, ST* st) {                   \
    return dispatch_next(last, lb, ub, st);                                                                    \
  }

extern "C" {

KMPC_EACH_WIDTH(KMPC_FOR_STATIC_INIT)
void __kmpc_for_static_fini(ident_t*, kmp_int32) {
  if (PLAIT_UNLIKELY(ompt::enabled)) ompt::work_end(thread_state());
}

KMPC_EACH_WIDTH(KMPC_DIST_FOR_STATIC_INIT)

KMPC_EACH_WIDTH(KMPC_TEAM_STATIC_INIT)

KMPC_EACH_WIDTH(KMPC_DISPATCH_INIT)

KMPC_EACH_WIDTH(KMPC_DIST_DISPATCH_INIT)

KMPC_EACH_WIDTH(KMPC_DISPATCH_NEXT)
// After every iteration of an ordered dispatch loop: nothing to do (see the top of the file).
void __kmpc_dispatch_fini_4(ident_t*, kmp_int32) {}
void __kmpc_dispatch_fini_4u(ident_t*, kmp_int32) {}
void __kmpc_dispatch_fini_8(ident_t*, kmp_int32) {}
void __kmpc_dispatch_fini_8u(ident_t*, kmp_int32) {}

void __kmpc_ordered(ident_t*, kmp_int32) { GOMP_ordered_start(); }
void __kmpc_end_ordered(ident_t*, kmp_int32) { GOMP_ordered_end(); }

// ---- doacross --------------------------------------------------------------------------------

struct kmp_dim {
  kmp_int64 lo;
  kmp_int64 up;  // inclusive
  kmp_int64 st;
};

// The nest's dimensions are kept with the thread for its posts and waits (Thread::kmp_doacross
// holds the slot; the bounds go in a thread-local copy beside it).
namespace {
struct DoacrossDims {
  unsigned n = 0;
  kmp_dim d[8];
};
thread_local DoacrossDims doacross_dims;

bool doacross_index(const kmp_int64* vec, std::uint64_t* idx) {
  const DoacrossDims& dd = doacross_dims;
  for (unsigned i = 0; i < dd.n; ++i) {
    const kmp_dim& d = dd.d[i];
    const kmp_int64 v = vec[i];
    if (d.st > 0 ? (v < d.lo || v > d.up) : (v > d.lo || v < d.up)) return false;  // outside: ignored
    idx[i] = static_cast<std::uint64_t>(d.st > 0 ? (v - d.lo) / d.st : (d.lo - v) / -d.st);
  }
  return true;
}
}  // namespace

void __kmpc_doacross_init(ident_t*, kmp_int32, kmp_int32 num_dims, const kmp_dim* dims) {
  if (num_dims < 1 || num_dims > 8)
    fatal("__kmpc_doacross_init: %d ordered loops (accepted: 1 to 8)", static_cast<int>(num_dims));
  DoacrossDims& dd = doacross_dims;
  dd.n = static_cast<unsigned>(num_dims);
  std::uint64_t counts[8];
  for (unsigned i = 0; i < dd.n; ++i) {
    dd.d[i] = dims[i];
    counts[i] = trip_count(dims[i].lo, dims[i].up, dims[i].st, "__kmpc_doacross_init");
  }
  WorkShare* s = doacross_nest_start(dd.n, counts);
  thread_state().kmp_doacross = s;  // (after the start: a thread outside every region got its solo team there)
}

void __kmpc_doacross_post(ident_t*, kmp_int32, const kmp_int64* vec) {
  WorkShare* s = thread_state().kmp_doacross;
  std::uint64_t idx[8];
  if (s != nullptr && doacross_index(vec, idx)) doacross_nest_post(*s, idx);
}

void __kmpc_doacross_wait(ident_t*, kmp_int32, const kmp_int64* vec) {
  WorkShare* s = thread_state().kmp_doacross;
  std::uint64_t idx[8];
  if (s != nullptr && doacross_index(vec, idx)) doacross_nest_wait(*s, idx);
}

void __kmpc_doacross_fini(ident_t*, kmp_int32) {
  Thread& t = thread_state();
  WorkShare* s = t.kmp_doacross;
  t.kmp_doacross = nullptr;
  doacross_dims.n = 0;
  if (s != nullptr) doacross_nest_end(s);
}

}  // extern "C"
