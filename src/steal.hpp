// Internal: stealing and running stolen tasks, publishing for thieves, draining detached slots
// (src/steal.cpp), and the pool's steal rule (Pool::steal).
#pragma once

#include <plait/pool.hpp>
#include <plait/detail/worker.hpp>

#include <cstdint>

namespace plait::detail {

// Chunked stealing (claim_rule in detail/split_deque.hpp, filled in by steal_one): the policy and,
// for steal_policy::chunk, k.
struct PoolSteal {
  steal_policy policy = steal_policy::one;
  std::uint32_t k = 1;
};

// Steals from `victim` as many tasks as the pool's steal policy says (one by default) and runs them.
steal_result steal_one(Worker* self, Worker* victim) noexcept;
void top_up_for_wait(Worker* w, std::uint32_t floor) noexcept;
void supply_thieves(Worker* w) noexcept;
void run_stolen(Worker* w, exec_fn exec, void* data) noexcept;
void run_chunk(Worker* self, Worker* victim, std::uint32_t tail, std::uint32_t k) noexcept;
void drain_detached(Worker* w) noexcept;
// What a detached slot holds once its task ran in place (group_wait, below a spawn handle): a
// no-op, with a null record. Whoever pops or steals it later runs nothing.
void tombstone_exec(void* data, Worker* w) noexcept;
bool reclaim_buried(Worker* w, std::uint32_t i) noexcept;

}  // namespace plait::detail
