// The puretask variants' chunk tasks for the executors whose tasks go into a task group (plait,
// tbb; see loops.hpp): the fixed chunks of g iterations, chunk k = [k g, min(n, (k + 1) g)).
#pragma once

#include <algorithm>
#include <cstdint>

#include "mandel/loops.hpp"

namespace loops {

// Chunk k as a task of tg; `chunk(lo, hi)` runs the iterations [lo, hi) and tells the tracker.
template <class Group, class Chunk>
void run_chunk(Group& tg, const Chunk& chunk, std::int64_t k, std::int64_t n, std::int64_t g) {
  const std::int64_t lo = k * g, hi = std::min(n, lo + g);
  tg.run([&chunk, lo, hi] { chunk(lo, hi); });
}

// puretask-single: one thread makes every chunk's task into one Group, then waits for them.
template <class Group, class Chunk>
void chunk_tasks_single(const Chunk& chunk, std::int64_t n, std::int64_t g) {
  Group tg;
  for (std::int64_t k = 0, m = fixed_chunks(n, g); k < m; ++k) run_chunk(tg, chunk, k, n, g);
  tg.wait();
}

}  // namespace loops
