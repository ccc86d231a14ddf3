// UTS across MPI ranks, one single-threaded process per core (docs/uts.md, "Across ranks").
//
// Every rank expands nodes from a local stack (depth first). Rank 0 starts with the root. Work
// moves only on request: a rank whose stack is empty asks a victim (the last one that gave it
// work, else one chosen at random) and waits for the answer; a rank with work looks for requests
// every --poll nodes and answers with a chunk of up to --chunk nodes from the bottom of its stack
// (the oldest: the biggest subtrees), or "none" when it has fewer than two nodes. While a rank
// waits for an answer it answers requests with "none" and passes the termination token.
//
// Termination: Safra's token algorithm (docs/uts.md proves it for this protocol). Each rank
// counts work messages sent minus received (`count`) and turns black when it receives work. Rank
// 0, idle, sends a white token with q = 0 around the ring 0 -> n-1 -> ... -> 1 -> 0; an idle rank
// that holds the token adds its count, blackens the token if it is black itself, turns white and
// passes it on. Back at rank 0, idle: a white token, a white rank 0 and q + count == 0 mean no work
// is left anywhere and none is in flight: rank 0 tells every rank to stop. Otherwise a new round.
//
// The counts are summed on every rank (MPI_Allreduce), so every rank verifies them and every rank
// exits 1 on a mismatch; rank 0 prints the JSON line (the other ranks' stdout is closed).
//
// Hybrid (--hybrid, --threads T): every rank runs a Plait pool of T workers, and the protocol
// above is unchanged but for what "the rank's stack" is. While the rank has work, its stack is a
// pool round: the workers expand nodes from stacks of their own, and a worker publishes the oldest
// nodes of its stack (up to --chunk) as a task on its deque whenever the chunk it published last
// has been taken (and serves its rank's thieves every --poll nodes: plait::serve_thieves), so
// idle workers of the rank steal locally first. The workers serve MPI too: at a poll point, once
// --poll-us have passed since the rank's last look, the worker that takes the rank's MPI lock
// (try_lock: the others go on) handles the messages that came — a remote request is answered at
// once with the oldest nodes of that worker's stack, or, if it has fewer than two, queued for the
// next worker with nodes to hand over. MPI calls come from one thread at a time
// (MPI_THREAD_SERIALIZED); the main thread sleeps in the round. The rank goes idle — passes the
// token, asks other ranks — only when the round is over: its own workers ran dry. Requests still
// queued then get "none".
#include "common/driver.hpp"
#include "common/mpi_start.hpp"
#include "uts/common.hpp"
#include "uts/expand.hpp"

#include <mpi.h>  // C API only: OMPI_SKIP_MPICXX / MPICH_SKIP_MPICXX come from the build
#include <plait/plait.hpp>

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

enum tag : int { t_request = 1, t_work = 2, t_none = 3, t_token = 4, t_stop = 5 };

struct Token {
  long long q;  // sum of the counts of the ranks passed this round
  int black;
};

struct Search {
  const uts::Tree& tree;
  MPI_Comm comm;  // one per repetition: a message left over from the last one cannot reach this one
  int rank, size;
  long long chunk, poll;
  long long delay_us = 0;  // stress: a random delay of up to this many us before each message is handled
  std::vector<uts::Node> stack;
  uts::Counts c{0, 0, 0, 0};
  long long count = 0;   // work messages sent - received (Safra)
  bool black = false;    // received work since it last passed the token
  bool have_token = false;
  Token token{0, 0};
  bool token_out = false;  // rank 0: a token is travelling
  bool stop = false;
  int last_victim = -1;
  std::mt19937_64 rng;
  std::uint64_t sent_nodes = 0, steals = 0, requests = 0;
  std::vector<uts::Node> buf;

  // Expands a node: its children with children go on `st`, the rest are counted as leaves.
  void expand_into(const uts::Node& parent, std::vector<uts::Node>& st, uts::Counts& cnt) const {
    uts::expand(tree, parent, cnt, [&st](const uts::Node& kid) { st.push_back(kid); });
  }

  // Hybrid: the rank's pool (null: pure MPI) and what its workers and the main thread share.
  // During a round every MPI call and the protocol's state (requesters, count, sent_nodes, the
  // token) belong to whoever holds `mpi_mu`: a worker at a poll point; the main thread sleeps in
  // pool::run meanwhile and takes them back when the round is over.
  plait::pool* pool = nullptr;
  long long poll_us = 100;
  bool in_round = false;                // a pool round runs
  std::mutex mpi_mu;                    // MPI and the protocol state during a round
  // relaxed: a hint of when the next look is due (steady-clock ns); a look a little early or late
  // costs an MPI_Iprobe or some latency, never a message.
  std::atomic<std::int64_t> next_look{0};
  static constexpr int kLookEvery = 4;  // poll points between two readings of the clock
  std::vector<uts::Node>* answer_from = nullptr;  // mpi_mu: the looking worker's stack
  std::deque<int> requesters;           // mpi_mu: remote requests waiting for a chunk
  std::atomic<int> want_export{0};      // chunks still asked of the workers
  std::mutex xmu;                       // guards exports
  std::vector<std::vector<uts::Node>> exports;  // chunks handed over by workers, not yet sent
  std::atomic<std::uint64_t> r_nodes{0}, r_leaves{0}, r_with_kids{0}, local_chunks{0};
  std::atomic<std::int64_t> r_depth{0};

  Search(const uts::Tree& t, MPI_Comm cm, int r, int n, long long ch, long long po)
      : tree(t), comm(cm), rank(r), size(n), chunk(ch), poll(po), rng(0x9E3779B97F4A7C15ull * static_cast<unsigned>(r + 1)) {
    buf.resize(static_cast<std::size_t>(chunk));
  }

  void expand(const uts::Node& parent) { expand_into(parent, stack, c); }

  // Sends n nodes to a thief as work (counted for Safra's detector and the moved-node rate).
  void send_work(int thief, const uts::Node* p, std::size_t n) {
    MPI_Send(p, static_cast<int>(n * sizeof(uts::Node)), MPI_BYTE, thief, t_work, comm);
    ++count;
    sent_nodes += n;
  }

  // Answers one request: a chunk from the bottom of `st` (the rank's stack, or in a hybrid round
  // the looking worker's), or none when it holds fewer than two nodes.
  void answer(int thief, std::vector<uts::Node>& st) {
    const std::size_t n = st.size() >= 2 ? std::min<std::size_t>(static_cast<std::size_t>(chunk), st.size() / 2) : 0;
    if (n == 0) {
      MPI_Send(nullptr, 0, MPI_BYTE, thief, t_none, comm);
      return;
    }
    send_work(thief, st.data(), n);
    st.erase(st.begin(), st.begin() + static_cast<std::ptrdiff_t>(n));
  }

  // Handles every pending message that is not the answer a thief waits for. Returns the answer's
  // tag when `waiting` and it arrived (its nodes pushed for t_work), else 0.
  int service(bool waiting) {
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
      if (!flag) return 0;
      if (delay_us > 0) usleep(static_cast<useconds_t>(rng() % static_cast<std::uint64_t>(delay_us + 1)));
      switch (st.MPI_TAG) {
        case t_request:
          MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, t_request, comm, MPI_STATUS_IGNORE);
          if (in_round && answer_from != nullptr && answer_from->size() >= 2) {
            answer(st.MPI_SOURCE, *answer_from);  // hybrid: the looking worker's nodes
          } else if (in_round) {  // hybrid: the next worker with nodes to spare hands a chunk over
            requesters.push_back(st.MPI_SOURCE);
            want_export.fetch_add(1, std::memory_order_relaxed);
          } else {
            answer(st.MPI_SOURCE, stack);
          }
          break;
        case t_work: {
          int bytes = 0;
          MPI_Get_count(&st, MPI_BYTE, &bytes);
          const auto n = static_cast<std::size_t>(bytes) / sizeof(uts::Node);
          if (buf.size() < n) buf.resize(n);
          MPI_Recv(buf.data(), bytes, MPI_BYTE, st.MPI_SOURCE, t_work, comm, MPI_STATUS_IGNORE);
          stack.insert(stack.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
          --count;
          black = true;
          ++steals;
          last_victim = st.MPI_SOURCE;
          if (waiting) return t_work;
          break;  // (a thief only ever has one request out; unreachable otherwise)
        }
        case t_none:
          MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, t_none, comm, MPI_STATUS_IGNORE);
          if (last_victim == st.MPI_SOURCE) last_victim = -1;
          if (waiting) return t_none;
          break;
        case t_token:
          MPI_Recv(&token, 2, MPI_LONG_LONG, st.MPI_SOURCE, t_token, comm, MPI_STATUS_IGNORE);
          have_token = true;
          break;
        case t_stop:
          MPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, t_stop, comm, MPI_STATUS_IGNORE);
          stop = true;
          // Termination is detected only when no rank has work: a rank that still has some is a
          // broken detector (checked, not assumed).
          if (!stack.empty() || in_round) {
            std::fprintf(stderr, "uts-mpi: rank %d: told to stop with %zu nodes on its stack%s: termination detected "
                                 "too early\n", rank, stack.size(), in_round ? " and its workers busy" : "");
            MPI_Abort(MPI_COMM_WORLD, 3);
          }
          return 0;
        default: {
          std::fprintf(stderr, "uts-mpi: rank %d: unexpected message tag %d\n", rank, st.MPI_TAG);
          MPI_Abort(comm, 3);
        }
      }
    }
  }

  // Idle: the token's step (Safra). Called only with an empty stack and no request out.
  void idle_token() {
    if (rank == 0) {
      if (size == 1) {
        stop = true;
        return;
      }
      if (!token_out) {
        token = Token{0, 0};
        black = false;
        token_out = true;
        MPI_Send(&token, 2, MPI_LONG_LONG, size - 1, t_token, comm);
        return;
      }
      if (!have_token) return;
      have_token = false;
      token_out = false;
      if (!token.black && !black && token.q + count == 0) {
        for (int r = 1; r < size; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, t_stop, comm);
        stop = true;
      }
      // else: the next call starts a new round
      return;
    }
    if (!have_token) return;
    if (delay_us > 0) usleep(static_cast<useconds_t>(rng() % static_cast<std::uint64_t>(delay_us + 1)));
    have_token = false;
    token.q += count;
    if (black) token.black = 1;
    black = false;
    MPI_Send(&token, 2, MPI_LONG_LONG, rank - 1, t_token, comm);
  }

  int victim() {
    if (last_victim >= 0) return last_victim;
    std::uniform_int_distribution<int> d(0, size - 2);
    const int v = d(rng);
    return v >= rank ? v + 1 : v;
  }

  void run() {
    std::unique_lock<std::mutex> own(mpi_mu);  // the main thread's but during a pool round
    if (rank == 0) {
      const uts::Node root = tree.root();
      if (root.nkids == 0) {
        c = uts::lone_root();
      } else {
        c.nodes = 1;
        expand(root);
      }
    }
    while (!stop) {
      long long k = 0;
      if (pool != nullptr && !stack.empty()) run_round(own);
      while (!stack.empty() && !stop) {
        const uts::Node n = stack.back();
        stack.pop_back();
        expand(n);
        if (++k == poll) {
          k = 0;
          service(false);
        }
      }
      if (stop) break;
      service(false);
      if (!stack.empty() || stop) continue;
      idle_token();
      if (stop || size == 1) break;
      // Ask a victim; answer others meanwhile.
      const int v = victim();
      MPI_Send(nullptr, 0, MPI_BYTE, v, t_request, comm);
      ++requests;
      int got = 0;
      while (got == 0 && !stop) {
        got = service(true);
        if (got == 0 && !stop) {
          idle_token_if_waiting();
          // Nothing arrived: give the core away. With more ranks than cores (the tests run 8
          // ranks on 2), a waiting rank that spins takes the time of the rank it waits for.
          // Stress: a random pause instead, after the token may have passed -- the window in
          // which an answer carrying work is in flight to a rank the token has already visited.
          if (delay_us > 0)
            usleep(static_cast<useconds_t>(rng() % static_cast<std::uint64_t>(delay_us + 1)));
          else
            sched_yield();
        }
      }
    }
  }

  // ---- hybrid ----

  // A chunk published as a task; `taken` once a worker started it.
  struct Chunk {
    std::vector<uts::Node> nodes;
    std::atomic<bool> taken{false};
  };

  // A worker's search: depth first from its own stack; every --poll nodes it looks for MPI
  // messages when a look is due (look), hands its oldest nodes over if a queued remote request
  // waits for them, else publishes them as a task once its last published chunk was taken.
  void explore(plait::task_group& g, std::shared_ptr<Chunk> mine) {
    mine->taken.store(true, std::memory_order_relaxed);
    std::vector<uts::Node> st = std::move(mine->nodes);
    mine.reset();
    uts::Counts lc{0, 0, 0, 0};
    std::shared_ptr<Chunk> last;
    long long k = 0;
    int looks = 0;
    while (!st.empty()) {
      const uts::Node n = st.back();
      st.pop_back();
      expand_into(n, st, lc);
      if (++k < poll) continue;
      k = 0;
      plait::serve_thieves();  // the chunk we published, if a thief of our rank asked: stealable now
      if (size > 1 && ++looks == kLookEvery) {
        looks = 0;
        look(st);
      }
      if (st.size() < 2) continue;
      const auto out = static_cast<std::ptrdiff_t>(std::min<std::size_t>(static_cast<std::size_t>(chunk), st.size() / 2));
      // relaxed: a hint; the count is taken under the lock.
      if (want_export.load(std::memory_order_relaxed) > 0) {
        std::lock_guard<std::mutex> lk(xmu);
        if (want_export.load(std::memory_order_relaxed) > 0) {
          want_export.fetch_sub(1, std::memory_order_relaxed);
          exports.emplace_back(st.begin(), st.begin() + out);
          st.erase(st.begin(), st.begin() + out);
          continue;
        }
      }
      // relaxed: a hint; a chunk published late or once too often costs a task, not a result.
      if (last == nullptr || last->taken.load(std::memory_order_relaxed)) {
        last = std::make_shared<Chunk>();
        last->nodes.assign(st.begin(), st.begin() + out);
        st.erase(st.begin(), st.begin() + out);
        local_chunks.fetch_add(1, std::memory_order_relaxed);
        g.run([this, &g, c = last] { explore(g, c); });
      }
    }
    r_nodes.fetch_add(lc.nodes, std::memory_order_relaxed);
    r_leaves.fetch_add(lc.leaves, std::memory_order_relaxed);
    r_with_kids.fetch_add(lc.with_kids, std::memory_order_relaxed);
    std::int64_t d = r_depth.load(std::memory_order_relaxed);
    while (lc.depth > d && !r_depth.compare_exchange_weak(d, lc.depth, std::memory_order_relaxed)) {
    }
  }

  // Hybrid, at a worker's poll point: if a look is due and no other worker is looking, send the
  // chunks handed over and handle the messages that came, answering requests from `st`.
  void look(std::vector<uts::Node>& st) {
    const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch()).count();
    if (now < next_look.load(std::memory_order_relaxed)) return;
    std::unique_lock<std::mutex> lk(mpi_mu, std::try_to_lock);
    if (!lk.owns_lock()) return;
    next_look.store(now + poll_us * 1000, std::memory_order_relaxed);
    send_exports();
    answer_from = &st;
    service(false);
    answer_from = nullptr;
  }

  // Sends the chunks the workers handed over to the queued requesters, oldest request first.
  void send_exports() {
    std::vector<std::vector<uts::Node>> ready;
    {
      std::lock_guard<std::mutex> lk(xmu);
      ready.swap(exports);
    }
    for (auto& ch : ready) {
      const int thief = requesters.front();
      requesters.pop_front();
      send_work(thief, ch.data(), ch.size());
    }
  }

  // The rank's stack as a pool round; the workers serve MPI at their poll points until they ran
  // dry (look), the main thread waits in pool::run.
  void run_round(std::unique_lock<std::mutex>& own) {
    auto first = std::make_shared<Chunk>();
    first->nodes.swap(stack);
    in_round = true;
    next_look.store(0, std::memory_order_relaxed);
    own.unlock();  // the protocol state is the workers' now
    pool->run([&] {
      plait::task_group g;
      g.run([this, &g, first] { explore(g, first); });
      g.wait();
    });
    own.lock();  // and the main thread's again (every look is over: the round's tasks are)
    in_round = false;
    send_exports();
    // The workers ran dry: requests they did not serve get "none" (the rank has nothing left).
    {
      std::lock_guard<std::mutex> lk(xmu);
      want_export.store(0, std::memory_order_relaxed);
    }
    while (!requesters.empty()) {
      MPI_Send(nullptr, 0, MPI_BYTE, requesters.front(), t_none, comm);
      requesters.pop_front();
    }
    c.nodes += r_nodes.exchange(0);
    c.leaves += r_leaves.exchange(0);
    c.with_kids += r_with_kids.exchange(0);
    if (const std::int64_t d = r_depth.exchange(0); d > c.depth) c.depth = d;
  }

  // A rank waiting for an answer is idle too: it may pass the token (its count already includes
  // what it sent; the work it may still get is counted by its sender). Rank 0 does not start a
  // round while it waits.
  void idle_token_if_waiting() {
    if (rank != 0 && have_token) idle_token();
  }
};

}  // namespace

int main(int argc, char** argv) {
  // SERIALIZED: in the hybrid mode the workers of the rank's pool make the MPI calls of a round,
  // one at a time (Search::look).
  using plait_bench::Cli, plait_bench::MpiAgreement, plait_bench::MpiStart;
  return plait_bench::mpi_main(argc, argv, MPI_THREAD_SERIALIZED, "uts", [&](Cli& cli, MpiAgreement& agree, const MpiStart& mpi) {
    const int provided = mpi.provided, rank = mpi.rank, size = mpi.size;
    long long chunk = 20, poll = 16, delay = 0, poll_us = 100;
    bool hybrid = false;
    cli.add_int("chunk", &chunk, 1, 1 << 20, "nodes a victim sends per steal (at most half its stack)");
    cli.add_int("poll", &poll, 1, 1 << 20, "nodes expanded between looks for requests");
    cli.add_int("delay-us", &delay, 0, 100000,
                "stress: a random delay of up to this many microseconds before each message is handled, "
                "each token pass and each look of a waiting rank (termination detection under delays; 0: off)");
    cli.add_flag("hybrid", &hybrid,
                 "every rank runs a Plait pool of --threads workers; ranks steal from each other when their "
                 "workers ran dry (default: one thread per rank, pure MPI)");
    cli.add_int("poll-us", &poll_us, 1, 100000,
                "hybrid: microseconds between looks for messages while the workers run (a worker at a poll point "
                "looks)");
    const uts::Config cfg = uts::configure(cli, argc, argv);
    if (cli.threads != 1 && !hybrid)
      throw plait_bench::usage_error("--threads " + std::to_string(cli.threads) +
                                     ": uts-mpi runs one thread per rank (use more ranks) unless --hybrid; accepted: 1, "
                                     "or 1..4096 with --hybrid");
    if (hybrid && provided < MPI_THREAD_SERIALIZED)
      throw std::runtime_error("uts-mpi --hybrid: the MPI library provides no MPI_THREAD_SERIALIZED");
    std::unique_ptr<plait::pool> rank_pool;
    if (hybrid) rank_pool = std::make_unique<plait::pool>(plait::pool_options{.num_workers = static_cast<unsigned>(cli.threads)});
    const uts::Tree tree(cfg.params);
    agree.point();  // every rank set up, with the same arguments, before the first message
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      MPI_Comm comm;
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      Search s(tree, comm, rank, size, chunk, poll);
      s.delay_us = delay;
      s.pool = rank_pool.get();
      s.poll_us = poll_us;
      s.run();
      MPI_Barrier(comm);  // every rank stopped
      rec.time_s = MPI_Wtime() - t0;
      // Requests and "none" answers may still be unreceived (a thief stops while it waits): they
      // stay on this communicator, which is freed.
      MPI_Comm_free(&comm);
      unsigned long long mine[4] = {s.c.nodes, s.c.leaves, s.c.with_kids, s.sent_nodes}, sum[4];
      MPI_Allreduce(mine, sum, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      // Work messages sent minus received over all ranks: 0 unless one was still in flight when
      // the ranks stopped (its nodes lost).
      long long in_flight = 0;
      MPI_Allreduce(&s.count, &in_flight, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      rec.check(in_flight == 0, "termination: " + std::to_string(in_flight) +
                                    " work message(s) still in flight when the ranks stopped");
      long long depth = s.c.depth, max_depth = 0;
      MPI_Allreduce(&depth, &max_depth, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
      const uts::Counts total{sum[0], sum[1], sum[2], max_depth};
      uts::verify(rec, cfg, total);
      // Moved "tasks" across ranks: nodes that travelled in work messages (seed 000's
      // load-balancing metric, per rank per second).
      uts::report(rec, cfg, total, sum[3], size);
      rec.stat("ranks", size);
      rec.stat("nodes_moved_per_rank_per_s", static_cast<double>(sum[3]) / size / rec.time_s);
      rec.stat("chunk", chunk);
      rec.stat("poll", poll);
      rec.stat("hybrid", hybrid ? 1 : 0);
      rec.stat("threads_per_rank", cli.threads);
      unsigned long long local = s.local_chunks.load(), local_sum = 0;
      MPI_Allreduce(&local, &local_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      rec.stat("local_chunks", static_cast<double>(local_sum));
    });
  });
}
