// The slow paths of frame tasks (include/plait/frame.hpp) that do not depend on the task.
#include <plait/frame.hpp>
#include <plait/spawn.hpp>

#include "hooks.hpp"

#include <cstdio>
#include <cstdlib>

namespace plait::detail {

void wait_stolen_frame(Worker* w, std::uint32_t h) noexcept {
  // pop_slow found slot h stolen (head h, all-stolen). The thief writes the result into slot h,
  // so the tasks we run while waiting (leapfrogging) start at h + 1.
  w->dq.hold_stolen(h);
  wait_stolen(w, &w->dq.own[h].done);
  w->dq.release_stolen(h);
  hook::published(w);
}

void frame_run_above(Worker* w, std::uint32_t h) noexcept {
  // As uncover does for a join: what lies above h are task_group children (or tombstones) that
  // the code left queued; each runs now, or its thief runs it.
  bool saved_ok = w->defer_ok;
  w->defer_ok = false;
  while (w->dq.head > h) {
    Slot& s = w->dq.own[w->dq.head - 1];
    if (s.kind() == slot_kind::joinable) lifo_violation(w, w->dq.head - 1, nullptr);
    exec_fn fn = s.exec;
    void* data = s.data();
    pop_result r = pop(w);
    if (r == pop_result::stolen) continue;
    fn(data, w);
    if (r == pop_result::traced) trace_task_end(w);
  }
  w->defer_ok = saved_ok;
  PLAIT_ASSERT(w->dq.head == h);
}

void frame_sync_violation(Worker* w, std::uint64_t head, std::uint64_t top) {
  if (top == ~std::uint64_t{0} - 1)
    std::fprintf(stderr, "plait: frame_task synced twice on worker %u\n", w->index);
  else
    std::fprintf(stderr,
                 "plait: frame sync out of order on worker %u: the handle's slot is %llu, but the newest "
                 "unsynced spawn of this frame is slot %llu. Syncs must be LIFO: sync the newest handle first, "
                 "with the frame it was spawned with.\n",
                 w->index, static_cast<unsigned long long>(top - 1), static_cast<unsigned long long>(head - 1));
  std::abort();
}

void frame_escaped(Worker* w, std::uint32_t h0) {
  std::fprintf(stderr,
               "plait: worker %u: a task_group child (or loop body, or data-flow task) joined a spawn_handle of the "
               "task that created it (slot %u, below its own); a handle must be joined by the task that spawned "
               "it\n",
               w->index, h0 - 1);
  std::abort();
}

void frame_misuse(const char* what) {
  std::fprintf(stderr,
               "plait: %s called inside a frame function (plait/frame.hpp), where the deque's head is in the "
               "frame; wrap the call in f.outside([&] { ... })\n",
               what);
  std::abort();
}

}  // namespace plait::detail
