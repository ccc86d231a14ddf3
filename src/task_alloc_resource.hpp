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
// Blocks of the container's node size (the first size it asks for) are packed: the resource takes
// a block of the magazines' largest class (512 bytes), carves it into nodes at the node's own
// stride and hands those out; nodes given back go on a list of their own and are handed out
// again. Two reasons:
//   * density: a node between two classes (the data-flow table's map node is 136 bytes) would
//     take a 256-byte block (and nodes 256 bytes apart start on a quarter of the L1 sets). The
//     overhead pattern with 2 dependences ran 15 % slower on one worker that way than on malloc's
//     144-byte chunks, with the same instructions; packed (3 nodes per 512 bytes), a tie
//     (docs/notes/2026-11-29-repetition.md);
//   * the container is used under one lock by whichever worker holds it, so single blocks would
//     wander into every worker's magazine and back (a magazine round trip cost ~45 instructions
//     per map node more than the list: callgrind, overhead pattern with 4 dependences).
// (A node size too large for two per block gets a block of its own each time.) The carved blocks
// go back to the magazines when the resource is destroyed; until then the nodes
// stay with it (bounded by the container's peak). Not thread-safe: the container's own lock orders
// every call.
class task_alloc_resource final : public std::pmr::memory_resource {
 public:
  task_alloc_resource() = default;
  task_alloc_resource(const task_alloc_resource&) = delete;
  task_alloc_resource& operator=(const task_alloc_resource&) = delete;
  ~task_alloc_resource() override {
    while (carved_ != nullptr) {
      FreeList* b = carved_;
      carved_ = b->next;
      pool_free_bytes(home_, b, alloc_max_block, alloc_min_block);
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
      stride_ = (bytes + align - 1) / align * align;
      packed_ = bytes >= sizeof(FreeList) && align <= alloc_min_block && 2 * stride_ <= alloc_max_block - alloc_min_block;
    }
    if (bytes == size_ && align == align_ && packed_) {
      if (free_ == nullptr) carve();
      FreeList* b = free_;
      free_ = b->next;
      return b;
    }
    return pool_alloc_bytes(home_, bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    PLAIT_ASSERT(home_ != nullptr);
    if (bytes == size_ && align == align_ && packed_) {
      auto* b = static_cast<FreeList*>(p);
      b->next = free_;
      free_ = b;
      return;
    }
    pool_free_bytes(home_, p, bytes, align);
  }
  // One block of the largest class: its first line links it to the other carved blocks (for the
  // destructor), the rest holds as many nodes as fit at stride_, put on the free list in address
  // order (handed out lowest first).
  void carve() {
    auto* const blk = static_cast<unsigned char*>(pool_alloc_bytes(home_, alloc_max_block, alloc_min_block));
    auto* const link = reinterpret_cast<FreeList*>(blk);
    link->next = carved_;
    carved_ = link;
    const std::size_t n = (alloc_max_block - alloc_min_block) / stride_;
    for (std::size_t i = n; i-- > 0;) {
      auto* b = reinterpret_cast<FreeList*>(blk + alloc_min_block + i * stride_);
      b->next = free_;
      free_ = b;
    }
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }

  Pool* home_ = nullptr;
  FreeList* free_ = nullptr;    // nodes of size_ to hand out
  FreeList* carved_ = nullptr;  // the blocks they were carved from
  std::size_t size_ = 0, align_ = 0, stride_ = 0;
  bool packed_ = false;  // size_ is carved from blocks (at least two nodes fit in one)
};

}  // namespace plait::detail
