// Internal: a pool's depot of task-record blocks, one per size class (Pool::depot), behind the
// workers' magazines (include/plait/detail/task_alloc.hpp). Owned by src/task_alloc.cpp.
#pragma once

#include <plait/detail/task_alloc.hpp>

#include <cstdint>
#include <mutex>
#include <vector>

namespace plait::detail {

// Full batches that workers handed back, the blocks of threads that are no worker, and every slab
// ever carved (freed in ~Pool). Everything under mu.
struct AllocDepot {
  std::mutex mu;
  FreeBlock* batches = nullptr;  // linked through FreeBlock::next_batch of each batch's first block
  // Blocks given back by threads that are no worker of the pool (task_free_foreign), linked
  // through `next`; made into a batch once there are a batch's worth. task_alloc_foreign takes from
  // here first.
  FreeBlock* strays = nullptr;
  std::uint32_t stray_n = 0;
  std::vector<void*> slabs;
};

// Returns every slab of the pool's depots to the system (the workers are gone: ~Pool).
void alloc_release(Pool* p) noexcept;

}  // namespace plait::detail
