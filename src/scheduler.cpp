// The pool: start-up (deques, threads, pinning), root tasks from outside (pool::run), shutdown,
// counters, and the process-wide default pool.
#include "pool_impl.hpp"

#include <algorithm>
#include <sched.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace plait::detail {


Pool::Pool(const pool_options& o, bool caller_is_worker0) : opts(pool_options::from_env(o)), external0(caller_is_worker0) {
  stress_init();
  n = opts.num_workers;
  {
    cpu_set_t mask;
    unsigned cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? static_cast<unsigned>(CPU_COUNT(&mask)) : 1u;
    // Measured (docs/performance.md): polling after every pause for ~2048 pauses cut the 2-core
    // steal cost; with more workers than CPUs a spinning worker steals the core of the one it
    // waits for, so there it yields almost at once.
    spin_limit_alone = n > cpus ? 16 : 2048;
    spin_limit.store(spin_limit_alone, std::memory_order_relaxed);
    look_attempts = n > cpus ? std::min(n - 1, std::max(8u, look_sample_per_cpu * cpus)) : n - 1;
  }
  // from_env has set every policy (the options below are the resolved ones).
  ext.period_ns = opts.poll_period_us * 1000;
  steal.policy = *opts.steal;
  steal.k = static_cast<std::uint32_t>(steal.policy == steal_policy::chunk ? opts.steal_chunk : 1);
  std::size_t cap = opts.deque_capacity;
  if (cap < 16 || cap > (std::size_t{1} << 30) || (cap & (cap - 1)) != 0)
    throw std::invalid_argument("plait: deque_capacity " + std::to_string(cap) +
                                " is not a power of two in 16..2^30");
  // Placement (src/topology.hpp): given places, or pin_policy::cores; else the OS decides and the
  // victims stay in the flat order. Before anything is allocated: bad places only throw.
  if (!opts.places.empty() || *opts.pin == pin_policy::cores) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const bool have = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
    const Topology topo = load_topology(nullptr, have ? &allowed : nullptr);
    places = opts.places.empty() ? core_places(topo) : parse_places(opts.places, topo);
    victim_order = victim_orders(topo, places, n);
  }
  sleep.init(n);  // before any worker can sleep
  workers = new Worker[n];
  std::size_t bytes = cap * sizeof(Slot);
  for (unsigned i = 0; i < n; ++i) {
    Worker& w = workers[i];
    // Reserved, not committed: pages are touched only as deep as the recursion goes.
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
      for (unsigned j = 0; j < i; ++j) munmap(workers[j].dq.slots, bytes);
      delete[] workers;
      throw std::runtime_error(std::string("plait: cannot reserve deque memory: ") + std::strerror(errno));
    }
    w.dq.init(static_cast<Slot*>(mem), static_cast<std::uint32_t>(cap));
    w.throttle = static_cast<std::uint32_t>(std::min<std::size_t>(opts.group_throttle, ~0u));
    w.index = i;
    w.pool = this;
    w.rng = 0x9E3779B97F4A7C15ull * (i + 1) | 1;
    w.last_victim = (i + 1) % n;
    if (!victim_order.empty()) w.vorder = &victim_order[i];
  }

  // Tracing: the option, else PLAIT_TRACE (numbered from the second pool of the process on).
  trace.path = opts.trace_path;
  if (trace.path.empty()) {
    if (const char* env = std::getenv("PLAIT_TRACE"); env != nullptr && *env != '\0') {
      static std::atomic<unsigned> env_pools{0};
      // relaxed: only makes the numbers distinct.
      unsigned k = env_pools.fetch_add(1, std::memory_order_relaxed);
      trace.path = env;
      if (k > 0) {
        auto dot = trace.path.rfind('.');
        auto slash = trace.path.rfind('/');
        std::string num = "." + std::to_string(k + 1);
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
          trace.path.insert(dot, num);
        else
          trace.path += num;
      }
    }
  }
  trace_init(this);

  if (external0 && !places.empty()) worker0_cpu = places[0][0];
  threads.resize(n);
  for (unsigned i = external0 ? 1 : 0; i < n; ++i) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, opts.stack_size);
    if (!places.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : places[i % places.size()]) CPU_SET(c, &set);
      pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    int rc = pthread_create(&threads[i], &attr, &worker_main, &workers[i]);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      shutdown.store(true, std::memory_order_release);
      wake_idle(this);
      for (unsigned j = external0 ? 1 : 0; j < i; ++j) pthread_join(threads[j], nullptr);
      for (unsigned j = 0; j < n; ++j) delete workers[j].trace;
      alloc_release(this);
      for (unsigned j = 0; j < n; ++j) munmap(workers[j].dq.slots, bytes);
      delete[] workers;
      throw std::runtime_error("plait: cannot start worker thread " + std::to_string(i) + " (stack " +
                               std::to_string(opts.stack_size) + " bytes): " + std::strerror(rc));
    }
  }
}

Pool::~Pool() {
  // A thread that handed in a completion may still be waking a sleeper of ours (poll.cpp).
  wait_hand_ins(this);
  // release: pairs with the workers' acquire load; they exit once idle.
  shutdown.store(true, std::memory_order_release);
  wake_idle(this);
  for (unsigned i = external0 ? 1 : 0; i < n; ++i) pthread_join(threads[i], nullptr);
  trace_finish(this);
  alloc_release(this);
  std::size_t bytes = std::size_t{workers[0].dq.capacity} * sizeof(Slot);
  for (unsigned i = 0; i < n; ++i) munmap(workers[i].dq.slots, bytes);
  delete[] workers;
}

bool is_worker_of(const Pool* p) noexcept {
  Worker* w = tl_worker;
  return w && w->pool == p;
}

void run_root(Pool* p, exec_fn exec, void* data) {
  // A worker waiting here runs roots of its own pool, at its deque's head.
  if (Worker* me = current_worker(); me != nullptr) frame_check(me, "pool::run of another pool");
  Injected job;
  job.exec = exec;
  job.data = data;
  {
    std::lock_guard<std::mutex> lk(p->roots.mu);
    p->roots.q.push_back(&job);
    // relaxed: the queue itself is protected by the mutex; the count is a polling hint.
    p->roots.count.fetch_add(1, std::memory_order_relaxed);
  }
  notify_injected(p);
  if (Worker* me = current_worker(); me != nullptr) {
    // The caller is a worker of another pool (pool::run from a task of this pool just calls f).
    // It must not block: a task of this pool may in turn call pool::run on the caller's pool, whose
    // workers may all be waiting here (one worker each: A's task runs B.run, B's task runs A.run).
    // So it keeps running the roots handed to its own pool until ours is done. Roots are the only
    // way work crosses pools, so this is enough for any cycle of pools calling each other.
    run_until(me, latch_ref{&job.done, nullptr}, RootsWait{});
    return;
  }
  // Not a worker: spin briefly (short roots, as in tests and tiny benchmarks, finish before a futex
  // round trip would), then sleep until the root's latch is set. Never yield: a caller that kept
  // calling sched_yield stayed runnable for the whole root, a third thread on the workers' CPUs;
  // the scheduler then preempted workers for it at every tick and moved them to balance the load,
  // until both of a 2-worker pool's workers shared one CPU for milliseconds at a time (sparselu, 2
  // workers on 2 CPUs: docs/design.md, "The caller of a root").
  run_until(nullptr, latch_ref{&job.done, nullptr}, BlockWait{});
}

}  // namespace plait::detail

namespace plait {

pool::pool(pool_options opts) : impl_(std::make_unique<detail::Pool>(opts)) {}
pool::~pool() = default;

unsigned pool::num_workers() const noexcept { return impl_->n; }
const pool_options& pool::options() const noexcept { return impl_->opts; }

std::vector<worker_counters> pool::counters() const {
  std::vector<worker_counters> out(impl_->n);
  for (unsigned i = 0; i < impl_->n; ++i) {
    const detail::AtomicCounters& c = impl_->workers[i].ctr;
    // relaxed: each counter is a statistic on its own; no ordering among them is promised.
#define PLAIT_COUNTER_SNAPSHOT_(name, description) out[i].name = c.name.load(std::memory_order_relaxed);
    PLAIT_COUNTER_LIST(PLAIT_COUNTER_SNAPSHOT_)
#undef PLAIT_COUNTER_SNAPSHOT_
  }
  return out;
}

worker_counters pool::total_counters() const {
  worker_counters t;
  for (auto& c : counters()) t += c;
  return t;
}

void pool::reset_counters() {
  for (unsigned i = 0; i < impl_->n; ++i) {
    detail::AtomicCounters& c = impl_->workers[i].ctr;
#define PLAIT_COUNTER_RESET_(name, description) c.name.store(0, std::memory_order_relaxed);
    PLAIT_COUNTER_LIST(PLAIT_COUNTER_RESET_)
#undef PLAIT_COUNTER_RESET_
  }
}

// The default pool is never destroyed (tasks may still use it from static destructors), so its
// trace would never be written by ~Pool: write it when the process exits normally (exit or a
// return from main). Written like any on-demand trace (pool::write_trace): idle workers may still
// record idle events meanwhile; each buffer is copied under its busy flag.
static pool* g_default_pool = nullptr;
static void write_default_trace() noexcept {
  try {
    g_default_pool->write_trace(g_default_pool->impl()->trace.path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

pool& default_pool() {
  static pool* p = [] {
    pool* q = nullptr;
    try {
      q = new pool(pool_options::from_env());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::exit(2);
    }
    if (q->tracing()) {
      g_default_pool = q;
      std::atexit(&write_default_trace);
    }
    return q;
  }();
  return *p;
}

}  // namespace plait
