// Internal: the task-record allocator (include/plait/detail/task_alloc.hpp: the workers'
// magazines and their pool's depot) as a std::pmr::memory_resource, for a container whose nodes
// come and go on the workers of one pool (the data-flow table's map). Not part of the public API.
#pragma once

#include <plait/detail/task_alloc.hpp>

#include <memory_resource>

namespace plait::detail {

// Every block from pool_alloc_bytes(home): the calling worker's magazine, or the depot for a
// thread that is no worker of `home`. The pool is the one of the first allocation's worker (the
// container belongs to a task of that pool and dies before it); a container that never allocates
// needs no pool. Sizes above the magazines' classes go to operator new, as task_alloc_bytes does.
//
// Blocks of the container's node size (the first size it asks for) that it gives back are kept on
// a list of its own and handed out again: the container is used under one lock by whichever
// worker holds it, so the blocks would otherwise wander into every worker's magazine and back (a
// magazine round trip cost the data-flow table ~45 instructions per map node more than the list:
// callgrind, overhead pattern with 4 dependences). The list goes back to the magazines when the
// resource is destroyed. Not thread-safe: the container's own lock orders every call.
class task_alloc_resource final : public std::pmr::memory_resource {
 public:
  task_alloc_resource() = default;
  task_alloc_resource(const task_alloc_resource&) = delete;
  task_alloc_resource& operator=(const task_alloc_resource&) = delete;
  ~task_alloc_resource() override {
    while (free_ != nullptr) {
      FreeList* b = free_;
      free_ = b->next;
      pool_free_bytes(home_, b, size_, align_);
    }
  }

  // The pool of the calling thread's worker, or null on a thread that is no worker.
  static Pool* current_pool() noexcept { return tl_worker->pool; }

 private:
  struct FreeList {
    FreeList* next;
  };
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    if (PLAIT_UNLIKELY(home_ == nullptr)) {
      home_ = current_pool();
      if (home_ == nullptr) throw std::bad_alloc();  // no pool to allocate from (not a worker)
      size_ = bytes;
      align_ = align;
    }
    if (bytes == size_ && align == align_ && free_ != nullptr) {
      FreeList* b = free_;
      free_ = b->next;
      return b;
    }
    return pool_alloc_bytes(home_, bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    PLAIT_ASSERT(home_ != nullptr);
    if (bytes == size_ && align == align_ && bytes >= sizeof(FreeList)) {
      auto* b = static_cast<FreeList*>(p);
      b->next = free_;
      free_ = b;
      return;
    }
    pool_free_bytes(home_, p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }

  Pool* home_ = nullptr;
  FreeList* free_ = nullptr;
  std::size_t size_ = 0, align_ = 0;
};

}  // namespace plait::detail
