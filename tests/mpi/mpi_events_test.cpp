// plait::mpi on real ranks (run by ctest through mpiexec): messages and reductions completed as
// events of data-flow and task_group tasks, at each thread level, with 1 or 2 workers per rank.
// Every check runs on every rank; the failures are summed over the ranks, so each rank exits 1
// when any failed (and 0 only when all passed).
//
//   mpirun -np 3 --oversubscribe mpi_events_test --workers 1 --level serialized
#include <plait/mpi.hpp>
#include <plait/plait.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int rank = 0, size = 1;
int failures = 0;

void check(bool ok, const char* what, long got, long want) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED %s: got %ld, want %ld\n", rank, what, got, want);
    ++failures;
  }
}

// Each rank sends k numbers to its right neighbour and receives k from its left one; every receive
// is a detached data-flow task whose successor (in) adds the value up: it must run only after the
// message arrived.
void ring(plait::pool& pool, plait::mpi::progress& mp, int k) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  std::vector<long> out(static_cast<std::size_t>(k)), in(static_cast<std::size_t>(k), -1);
  std::atomic<long> sum{0};
  pool.run([&] {
    plait::dataflow_group df;
    for (int i = 0; i < k; ++i) {
      auto& r = in[static_cast<std::size_t>(i)];
      auto& s = out[static_cast<std::size_t>(i)];
      df.run_detached({plait::out(r)}, [&, i](plait::event e) {
        mp.irecv(&r, 1, MPI_LONG, left, i, MPI_COMM_WORLD, std::move(e));
      });
      df.run({plait::out(s)}, [&, i] { s = rank * 1000L + i; });
      df.run_detached({plait::in(s)}, [&, i](plait::event e) {
        mp.isend(&s, 1, MPI_LONG, right, i, MPI_COMM_WORLD, std::move(e));
      });
      df.run({plait::in(r)}, [&] { sum.fetch_add(r, std::memory_order_relaxed); });
    }
    df.wait();
  });
  long want = 0;
  for (int i = 0; i < k; ++i) want += left * 1000L + i;
  check(sum.load() == want, "ring: sum of the received values", sum.load(), want);
}

// One worker, a receive started before the send in the same group, on every rank: blocking
// MPI_Recv would hold the only worker and deadlock; the event form does not.
void receive_first(plait::pool& pool, plait::mpi::progress& mp) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long got = -1, mine = 7L * rank + 1;
  MPI_Status st;
  pool.run([&] {
    plait::task_group g;
    g.run_detached([&](plait::event e) { mp.irecv(&got, 1, MPI_LONG, left, 99, MPI_COMM_WORLD, std::move(e), &st); });
    g.run_detached([&](plait::event e) { mp.isend(&mine, 1, MPI_LONG, right, 99, MPI_COMM_WORLD, std::move(e)); });
    g.wait();
  });
  check(got == 7L * left + 1, "receive-first: value", got, 7L * left + 1);
  check(st.MPI_SOURCE == left, "receive-first: status source", st.MPI_SOURCE, left);
}

// A reduction as an event; its successor reads the result.
void allreduce(plait::pool& pool, plait::mpi::progress& mp) {
  long mine = rank + 1, total = 0, seen = 0;
  pool.run([&] {
    plait::dataflow_group df;
    df.run_detached({plait::out(total)}, [&](plait::event e) {
      mp.iallreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, std::move(e));
    });
    df.run({plait::in(total)}, [&] { seen = total; });
    df.wait();
  });
  const long want = static_cast<long>(size) * (size + 1) / 2;
  check(seen == want, "iallreduce: sum", seen, want);
}

// bind(): a request started by hand (MPI_THREAD_MULTIPLE only: with the serialized levels every
// MPI call is the poller's).
void bound(plait::pool& pool, plait::mpi::progress& mp) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long got = -1, mine = 100L + rank;
  pool.run([&] {
    plait::task_group g;
    g.run_detached([&](plait::event e) {
      MPI_Request r;
      MPI_Irecv(&got, 1, MPI_LONG, left, 5, MPI_COMM_WORLD, &r);
      mp.bind(r, std::move(e));
    });
    g.run_detached([&](plait::event e) {
      MPI_Request r;
      MPI_Isend(&mine, 1, MPI_LONG, right, 5, MPI_COMM_WORLD, &r);
      mp.bind(r, std::move(e));
    });
    g.wait();
  });
  check(got == 100L + left, "bind: value", got, 100L + left);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned workers = 1;
  std::string level = "multiple";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--workers") && i + 1 < argc) workers = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--level") && i + 1 < argc) level = argv[++i];
    else {
      std::fprintf(stderr, "usage: mpi_events_test [--workers N] [--level multiple|serialized|funneled]\n");
      return 2;
    }
  }
  const int want = level == "multiple" ? MPI_THREAD_MULTIPLE : level == "serialized" ? MPI_THREAD_SERIALIZED
                   : level == "funneled" ? MPI_THREAD_FUNNELED : -1;
  if (want < 0 || workers < 1) {
    std::fprintf(stderr, "mpi_events_test: --level must be multiple, serialized or funneled; --workers >= 1\n");
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, want, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    plait::pool pool(plait::pool_options{.num_workers = workers});
    plait::mpi::progress mp(pool);
    check(mp.thread_level() == provided, "thread level", mp.thread_level(), provided);
    ring(pool, mp, 200);
    receive_first(pool, mp);
    allreduce(pool, mp);
    if (provided == MPI_THREAD_MULTIPLE) bound(pool, mp);
    check(mp.outstanding() == 0, "nothing outstanding", static_cast<long>(mp.outstanding()), 0);
    const long ops = 2 * 200 + 2 + 1 + (provided == MPI_THREAD_MULTIPLE ? 2 : 0);
    check(mp.completed() == static_cast<std::size_t>(ops), "completed operations", static_cast<long>(mp.completed()), ops);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("mpi_events_test: %d ranks x %u workers, level %s (provided %d): %s\n", size, workers, level.c_str(),
                provided, all == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
