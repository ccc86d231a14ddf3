// Frame tasks: Lace-style fork-join whose spawn and sync cost a handful of instructions.
//
//   long long fib(plait::frame f, long long n) noexcept {
//     if (n < 2) return n;
//     auto t = f.spawn<fib>(n - 1);     // fib(f, n - 1) may run on another worker
//     long long b = fib(f, n - 2);      // meanwhile, here
//     return f.sync(t) + b;             // runs fib(f, n - 1) here unless a thief took it
//   }
//   long long r = plait::frame::call<fib>(35);          // from any task, or any thread
//   plait::frame::run([](plait::frame f) { ... });      // a frame lambda, likewise
//
// How it differs from plait::spawn (spawn.hpp)
//
//   * The context, plait::frame (the worker and the deque head this function pushes at), is an
//     argument of every frame function, passed by value: two registers, so neither spawn nor
//     sync loads the worker (no thread-local) or the head, and neither writes the head back.
//   * The task is a function R Fn(plait::frame, Args...) named at compile time, not a closure.
//     Its arguments are copied into the deque slot itself (Slot::payload, 24 bytes), where a
//     thief reads them and writes the result back. The handle `t` holds only values (the slot,
//     the head before the spawn, a copy of the arguments) that the compiler keeps in registers:
//     nothing of a spawn lives in the spawner's stack frame. A spawn_handle lives there, and its
//     address escapes into the slot; that alone keeps gcc and clang from turning the recursion
//     through the sync into a loop and from leaving a leaf call without a stack frame.
//   * Arguments and results are trivially copyable and fit in 24 bytes; pass a pointer for
//     anything larger, or use plait::spawn.
//   * A full deque runs the task at its sync (plait::spawn runs it at the spawn): same result.
//
// What is the same: thieves steal frame slots with the ordinary steal path (the slot is
// {exec, data pointer}; the data pointer is the slot itself); a sync whose task was stolen waits
// for the slot's latch (Slot::done) in detail::wait_stolen, leapfrogging on the thief; the `spawns` counter counts frame spawns;
// exceptions work (a stolen task's exception comes back in the payload and sync rethrows it; a
// handle destroyed unsynced, as an exception passes, syncs in its destructor and drops the
// result, as a spawn_handle does).
//
// Frame mode. While frame code runs on a worker, the head lives in the frame functions'
// registers, and the deque's head in memory (SplitDeque::head) holds detail::head_in_frame. Code that
// is not frame-aware (plait::spawn and join, task groups, loops, dataflow, frame::run) would use
// the head in memory, so it must not run there directly: each of those constructs fails its
// fast-path compare on the poisoned head and its slow path stops the program with a message. To
// use them from a frame function, wrap them in f.outside([&] { ... }): it writes the head back,
// runs the code, runs any task_group children the code left on the deque (so that the frame's
// head is right again), and poisons the head again. Frame slow paths (a thief's request, a
// shared slot, a stolen task, tracing, a full deque) write the exact head before they use the
// runtime. frame::run and frame::call enter frame mode and leave it (restoring the head) on
// return or exception; so does a frame task run by a thief.
//
// Syncs are LIFO per frame function, with the frame the handle was spawned with. A handle knows
// the head its push left; sync compares it with f's head. Both are register values, and in
// straight-line code the compiler proves them equal and drops the compare; where it cannot, the
// compare stays, and a mismatch (a sync out of order, or with another function's frame) stops the
// program with a message.
#pragma once

#include <plait/config.hpp>
#include <plait/detail/worker.hpp>
#include <plait/pool.hpp>
#include <plait/spawn.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

namespace plait {

class frame;
template <auto Fn>
class frame_task;

namespace detail {

// A frame task's arguments: a tuple that is trivially copyable when its elements are (std::tuple
// is not), so that it can be copied into a slot's payload and read back by a thief. Its layout is
// that of a struct with the same members in the same order (each at the next offset its alignment
// allows; the size rounded up to the largest alignment), so "fits in 24 bytes" means what it says
// for every shape. A nested first/rest tuple does not: an empty tail took a padded word (three
// longs needed 32 bytes), and each nested rest is aligned as its widest element (short, short,
// int, long, long needed 32). So two or more elements live in bytes at computed offsets; the
// elements are trivially copyable (frame_task requires it), which makes them implicit-lifetime
// types: copying the bytes copies the objects.
template <class... T>
struct frame_layout {
  static constexpr std::size_t align = std::max({alignof(T)...});
  static constexpr std::array<std::size_t, sizeof...(T)> offsets = [] {
    std::array<std::size_t, sizeof...(T)> o{};
    std::size_t at = 0, i = 0;
    ((at = (at + alignof(T) - 1) / alignof(T) * alignof(T), o[i++] = at, at += sizeof(T)), ...);
    return o;
  }();
  static constexpr std::size_t size = [] {
    std::size_t at = 0;
    ((at = (at + alignof(T) - 1) / alignof(T) * alignof(T) + sizeof(T)), ...);
    return (at + align - 1) / align * align;
  }();
};

template <class... T>
struct frame_args {  // two or more elements
  using layout = frame_layout<T...>;
  alignas(layout::align) unsigned char bytes[layout::size];

  frame_args() = default;
  template <class... A>
  PLAIT_INLINE explicit frame_args(std::in_place_t, A&&... a) {
    construct(std::index_sequence_for<T...>{}, std::forward<A>(a)...);
  }
  template <std::size_t I>
  PLAIT_INLINE auto& get() noexcept {
    using E = std::tuple_element_t<I, std::tuple<T...>>;
    return *std::launder(reinterpret_cast<E*>(bytes + layout::offsets[I]));
  }

 private:
  template <std::size_t... I, class... A>
  PLAIT_INLINE void construct(std::index_sequence<I...>, A&&... a) {
    (::new (static_cast<void*>(bytes + layout::offsets[I])) T(std::forward<A>(a)), ...);
  }
};
template <>
struct frame_args<> {
  frame_args() = default;
  PLAIT_INLINE explicit frame_args(std::in_place_t) noexcept {}
};
template <class T0>
struct frame_args<T0> {  // one element: a plain member (fib's spawn keeps it in a register)
  T0 first;

  frame_args() = default;
  template <class A0>
  PLAIT_INLINE frame_args(std::in_place_t, A0&& a0) : first(std::forward<A0>(a0)) {}
  template <std::size_t I>
  PLAIT_INLINE auto& get() noexcept {
    static_assert(I == 0);
    return first;
  }
};

// Fn's signature: R (*)(frame, P...), noexcept or not.
template <class F>
struct frame_fn {
  static_assert(sizeof(F) == 0, "a frame task is a function R f(plait::frame, Args...), spawned as fr.spawn<f>(args...)");
};
template <class R, class... P>
struct frame_fn<R (*)(frame, P...)> {
  using result = R;
  using args = frame_args<std::decay_t<P>...>;
  static constexpr std::size_t arity = sizeof...(P);
  static constexpr bool trivial_args = (std::is_trivially_copyable_v<std::decay_t<P>> && ...);
};
template <class R, class... P>
struct frame_fn<R (*)(frame, P...) noexcept> : frame_fn<R (*)(frame, P...)> {};

// Out of line (src/frame.cpp).
// The sync of a stolen frame task in slot h: waits for the slot's latch in wait_stolen (run_until,
// leapfrogging on the thief), with slot h (where the thief writes the result) kept out of reach
// of the tasks run meanwhile (SplitDeque::hold_stolen / release_stolen). Leaves head at h.
PLAIT_NOINLINE void wait_stolen_frame(Worker* w, std::uint32_t h) noexcept;
// frame::outside: runs the detached slots that the code left above h (task_group children), so
// that the frame's head is the deque's again. Aborts on a joinable slot there.
PLAIT_NOINLINE void frame_run_above(Worker* w, std::uint32_t h) noexcept;
// A frame sync that is not LIFO (or a frame handle synced twice): a message, then abort.
PLAIT_COLD [[noreturn]] void frame_sync_violation(Worker* w, std::uint64_t head, std::uint64_t top);

// Enters frame mode on w for its lifetime: the head moves to the frame, memory holds head_in_frame.
class frame_mode {
 public:
  explicit frame_mode(Worker* w) : w_(w), head_(w->dq.head) {
    frame_check(w, "plait::frame::run (or frame::call; call the frame function with your frame instead)");
    w->dq.head = head_in_frame;
  }
  ~frame_mode() { w_->dq.head = head_; }
  frame_mode(const frame_mode&) = delete;
  frame_mode& operator=(const frame_mode&) = delete;
  std::uint32_t head() const noexcept { return head_; }

 private:
  Worker* w_;
  std::uint32_t head_;
};

}  // namespace detail

// The context of a frame function: the worker it runs on and the deque head it pushes at.
class frame {
 public:
  // f(frame) in frame mode, from any plait task; on a thread that is no worker, through
  // plait::run on the default pool.
  template <class F>
  static std::invoke_result_t<F&, frame> run(F&& f) {
    using R = std::invoke_result_t<F&, frame>;
    detail::Worker* w = detail::current_worker();
    if (PLAIT_UNLIKELY(!w)) return plait::run([&]() -> R { return frame::run(f); });
    detail::frame_mode m(w);
    return f(frame(w, m.head()));
  }

  // Fn(frame, a...) in frame mode (see run).
  template <auto Fn, class... A>
  static typename detail::frame_fn<decltype(Fn)>::result call(A&&... a) {
    return frame::run([&](frame f) -> typename detail::frame_fn<decltype(Fn)>::result {
      return Fn(f, std::forward<A>(a)...);
    });
  }

  // Spawns Fn(frame, a...) as a task another worker may steal. Sync it with this frame, in the
  // same function, newest handle first.
  template <auto Fn, class... A>
  [[nodiscard]] PLAIT_INLINE frame_task<Fn> spawn(A&&... a) {
    return frame_task<Fn>(*this, std::forward<A>(a)...);
  }

  // The task's result (or its exception, rethrown). Runs it here unless a thief took it.
  template <auto Fn>
  PLAIT_INLINE typename frame_task<Fn>::result_type sync(frame_task<Fn>& t);

  // Runs g() with the deque's head in memory, so that g may use any other plait construct
  // (plait::spawn, task groups, loops, dataflow). Task_group children that g leaves on the deque
  // run before outside returns.
  template <class G>
  decltype(auto) outside(G&& g) {
    detail::Worker* w = w_;
    const auto h = static_cast<std::uint32_t>(head_);
    w->dq.head = h;
    struct back {
      detail::Worker* w;
      std::uint32_t h;
      ~back() {
        if (w->dq.head != h) detail::frame_run_above(w, h);
        w->dq.head = detail::head_in_frame;
      }
    } b{w, h};
    return std::forward<G>(g)();
  }

  unsigned worker_index() const noexcept { return w_->index; }

 private:
  template <auto>
  friend class frame_task;
  PLAIT_INLINE frame(detail::Worker* w, std::uint64_t head) noexcept : w_(w), head_(head) {}

  detail::Worker* w_;
  // Where this function's next spawn pushes. 64 bits: it fills the second register of the pair,
  // so that no padding bits travel with it.
  std::uint64_t head_;
};

template <auto Fn>
class [[nodiscard]] frame_task {
  using sig = detail::frame_fn<decltype(Fn)>;

 public:
  using result_type = typename sig::result;

  frame_task(const frame_task&) = delete;
  frame_task& operator=(const frame_task&) = delete;

  // Not synced: an exception is passing (or the sync was forgotten). Sync now and drop the result,
  // as a spawn_handle does.
  ~frame_task() {
    if (PLAIT_UNLIKELY(top_ != top_synced)) abandon(w_, top_, below_, args_);
  }

 private:
  friend class frame;
  using args_t = typename sig::args;
  using stored = std::conditional_t<std::is_void_v<result_type>, char, result_type>;

  template <class T>
  static constexpr bool fits = sizeof(T) <= detail::payload_size && alignof(T) <= 8;
  static_assert(fits<args_t>, "frame task arguments must fit in 24 bytes (pass a pointer)");
  static_assert(fits<stored>, "a frame task's result must fit in 24 bytes (return it through a pointer)");
  static_assert(sig::trivial_args && std::is_trivially_copyable_v<stored>,
                "frame task arguments and results must be trivially copyable");

  // top_ when the task is on no slot: the deque was full and the task runs at the sync
  // (deferred), or the sync ran (synced). No head reaches them (capacity <= 2^30).
  static constexpr std::uint64_t top_deferred = ~std::uint64_t{0};
  static constexpr std::uint64_t top_synced = ~std::uint64_t{0} - 1;

  template <class... A>
  PLAIT_INLINE explicit frame_task(frame& f, A&&... a)
      : w_(f.w_), below_(f.head_), args_(std::in_place, std::forward<A>(a)...) {
    detail::Worker* w = w_;
    const std::uint64_t h = below_;
    PLAIT_ASSERT(w->dq.head == detail::head_in_frame);
    // relaxed: as in detail::push (push_limit is capacity, or 0 while a thief's request, an
    // all-stolen reset or tracing wants the slow path).
    if (PLAIT_UNLIKELY(!w->dq.frame_push_ok(h))) {
      if (!spawn_rare(w, static_cast<std::uint32_t>(h), args_)) {
        top_ = top_deferred;
        return;
      }
    } else {
      w->dq.write_frame(h, &exec_stolen, args_);
      PLAIT_COUNT_ONE(w, spawns);
    }
    f.head_ = h + 1;
    top_ = h + 1;
  }

  // Runs Fn here. (No lambda: a closure holding &f would make f's address escape for a while,
  // and the compiler then turns the recursion into a loop only in its last pass, too late for the
  // leaf call to lose its stack frame.)
  template <std::size_t... I>
  PLAIT_INLINE static result_type run_with(frame& f, args_t& a, std::index_sequence<I...>) {
    return Fn(f, a.template get<I>()...);
  }
  PLAIT_INLINE static result_type run(frame& f, args_t& a) { return run_with(f, a, std::make_index_sequence<sig::arity>{}); }
  PLAIT_INLINE static result_type run(frame&& f, args_t& a) { return run(f, a); }

  // The push's slow path: a request to serve, an all-stolen reset, tracing, or a full deque.
  // Returns false when the deque is full (the task then runs at the sync).
  PLAIT_NOINLINE static bool spawn_rare(detail::Worker* w, std::uint32_t h, args_t a) noexcept {
    std::uintptr_t tagged = 0;
    // The payload is written before push_slow, which may publish the slot at once (the all-stolen
    // reset); push_slow writes exec and tagged again, with the same values.
    if (h < w->dq.capacity) tagged = w->dq.write_frame(h, &exec_stolen, a).tagged;
    w->dq.head = h;  // push_slow pushes at the head in memory
    const std::uint32_t at = detail::push_slow(w, &exec_stolen, tagged);
    w->dq.head = detail::head_in_frame;
    PLAIT_ASSERT(at == detail::no_slot || at == h);
    return at != detail::no_slot;
  }

  // Runs on the thief: the arguments come from the payload, the result or exception goes back
  // there. Setting the slot's latch is the last access to the slot.
  static void exec_stolen(void* p, detail::Worker* w) noexcept {
    auto* s = static_cast<detail::Slot*>(p);
    args_t a = *std::launder(reinterpret_cast<args_t*>(s->payload));
    std::uint8_t oc = detail::outcome_value;
    try {
      detail::frame_mode m(w);
      if constexpr (std::is_void_v<result_type>) {
        run(frame(w, m.head()), a);
        ::new (static_cast<void*>(s->payload)) stored();
      } else {
        ::new (static_cast<void*>(s->payload)) stored(run(frame(w, m.head()), a));
      }
    } catch (...) {
      static_assert(sizeof(std::exception_ptr) <= detail::payload_size && alignof(std::exception_ptr) <= 8);
      ::new (static_cast<void*>(s->payload)) std::exception_ptr(std::current_exception());
      oc = detail::outcome_error;
    }
    // The latch's release publishes the result (or exception) written above to the spawner's
    // acquire in run_until (wait_stolen), after which it reads them.
    s->done.set(oc);
  }

  // The pop's slow path (slot h below pop_limit: a request to serve, a shared slot to take back or
  // a stolen one, tracing).
  PLAIT_NOINLINE static result_type sync_slow(detail::Worker* w, std::uint32_t h, args_t a) {
    w->dq.head = h;  // pop_slow and what follows use the head in memory (the slot is popped)
    return finish(w, h, detail::pop_slow(w), a);
  }

  // sync found top != f's next slot: deferred, synced twice, or not LIFO.
  PLAIT_NOINLINE static result_type sync_rare(detail::Worker* w, std::uint64_t top, std::uint64_t head, args_t a) {
    if (top == top_deferred) return run(frame(w, head), a);
    detail::frame_sync_violation(w, head, top);
  }

  // After the slow pop of slot h (head is h in memory): run the task here, or take the result a
  // thief left. Back in frame mode before returning.
  static result_type finish(detail::Worker* w, std::uint32_t h, detail::pop_result r, args_t& a) {
    if (PLAIT_LIKELY(r == detail::pop_result::local)) {
      w->dq.head = detail::head_in_frame;
      return run(frame(w, h), a);
    }
    if (r == detail::pop_result::traced) {
      w->dq.head = detail::head_in_frame;
      struct end_guard {
        detail::Worker* w;
        ~end_guard() { detail::trace_task_end(w); }
      } g{w};
      return run(frame(w, h), a);
    }
    detail::wait_stolen_frame(w, h);
    w->dq.head = detail::head_in_frame;
    detail::Slot& s = w->dq.own[h];
    // run_until saw the latch set (acquire). Resetting it keeps the free-slot invariant (a pending
    // latch), so that a frame spawn need not write it.
    const std::uint8_t oc = s.done.code();
    s.done.reset();
    if (oc == detail::outcome_error) {
      auto* e = std::launder(reinterpret_cast<std::exception_ptr*>(s.payload));
      std::exception_ptr ex = std::move(*e);
      e->~exception_ptr();
      std::rethrow_exception(ex);
    }
    if constexpr (!std::is_void_v<result_type>) return *std::launder(reinterpret_cast<stored*>(s.payload));
  }

  // The destructor of an unsynced handle. LIFO: the handles spawned after this one were synced or
  // abandoned already, so our slot is the deque's newest.
  PLAIT_COLD static void abandon(detail::Worker* w, std::uint64_t top, std::uint64_t below, args_t a) noexcept {
    try {
      if (top == top_deferred) {
        (void)run(frame(w, below), a);
      } else {
        const auto h = static_cast<std::uint32_t>(top - 1);
        PLAIT_ASSERT(w->dq.own[h].tagged == reinterpret_cast<std::uintptr_t>(&w->dq.own[h]));
        w->dq.head = h + 1;
        (void)finish(w, h, detail::pop(w), a);
      }
    } catch (...) {
      // The result (or exception) of an abandoned task is dropped.
    }
  }

  detail::Worker* w_;
  std::uint64_t below_;  // f's head before the spawn (our slot, if we pushed); sync puts it back
  std::uint64_t top_;    // the head our push left (our slot + 1), or top_deferred / top_synced
  args_t args_;          // for running the task here
};

template <auto Fn>
PLAIT_INLINE typename frame_task<Fn>::result_type frame::sync(frame_task<Fn>& t) {
  detail::Worker* w = w_;
  const std::uint64_t top = t.top_;
  // Synced from here on, whatever happens below (the task may throw): the destructor must not
  // sync again. The handle lives in registers, so this costs nothing.
  t.top_ = frame_task<Fn>::top_synced;
  // The LIFO check (deferred tasks fail it too). In straight-line code the compiler knows both.
  if (PLAIT_UNLIKELY(top != head_)) return frame_task<Fn>::sync_rare(w, top, head_, t.args_);
  const std::uint64_t h = top - 1;
  head_ = h;
  PLAIT_ASSERT(w->dq.head == detail::head_in_frame);
  PLAIT_ASSERT(w->dq.own[h].tagged == reinterpret_cast<std::uintptr_t>(&w->dq.own[h]));
  // relaxed: as in detail::pop. Below pop_limit: a shared slot (take it back, or learn that it was
  // stolen) or a request to serve.
  if (PLAIT_LIKELY(w->dq.frame_pop_ok(h))) return frame_task<Fn>::run(*this, t.args_);
  return frame_task<Fn>::sync_slow(w, static_cast<std::uint32_t>(h), t.args_);
}

}  // namespace plait
