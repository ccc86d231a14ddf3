// plait::mpi: MPI requests as plait::events (target plait::mpi, built when MPI is found).
//
// A task that communicates does not block its worker: it starts a non-blocking operation and
// hands over its event (task_group::run_detached, dataflow_group::run_detached); the task
// finishes -- its group's wait() returns, its data-flow successors start -- when the request
// completes. One polling service per pool (pool::add_poller) tests the outstanding requests in
// batches (MPI_Testsome) and fulfils the events of those that completed. docs/mpi.md.
//
//   plait::mpi::progress mp(pool);                 // after MPI_Init_thread, before the tasks
//   pool.run([&] {
//     plait::dataflow_group df;
//     df.run_detached({plait::out(halo)}, [&](plait::event e) {
//       mp.irecv(halo.data(), n, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, std::move(e));
//     });
//     df.run({plait::in(halo)}, [&] { use(halo); });   // runs once the message is in
//     df.wait();
//   });
//
// Thread levels (MPI_Query_thread at construction):
//   MPI_THREAD_MULTIPLE    operations start on the calling worker; the poller tests.
//   MPI_THREAD_SERIALIZED  every MPI call -- starting an operation too -- is made by the poller,
//   MPI_THREAD_FUNNELED    which runs on one worker at a time (pollers never run concurrently);
//                          a started operation waits for the next poll. FUNNELED strictly allows
//                          calls from the main thread only, which is no worker: Open MPI treats
//                          FUNNELED like SERIALIZED, and so does this class (docs/mpi.md).
//   MPI_THREAD_SINGLE      refused (std::logic_error): tasks on several threads cannot use MPI.
// Blocking MPI calls inside tasks are allowed but hold their worker for the whole wait; with one
// worker per rank two ranks that both receive before they send deadlock, where the event form
// does not (tests/mpi).
#pragma once

#include <plait/event.hpp>
#include <plait/pool.hpp>

// The C API only: the target plait::mpi defines OMPI_SKIP_MPICXX and MPICH_SKIP_MPICXX for its
// users (Open MPI's and MPICH's deprecated C++ bindings do not compile warning-free).
#include <mpi.h>

#include <cstddef>
#include <memory>

namespace plait::mpi {

namespace detail {
struct engine;
}

class progress {
 public:
  // Registers the polling service on `p`. Throws std::logic_error when MPI is not initialised or
  // provides only MPI_THREAD_SINGLE.
  explicit progress(plait::pool& p);
  // Removes the poller. Requests still outstanding then stop the process with a message (their
  // events could never be fulfilled): wait for the tasks first.
  ~progress();
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  // Fulfils `ev` when `req` completes; *status (if given) receives its status first. With
  // SERIALIZED/FUNNELED the request must have been started by a poller (use the calls below).
  void bind(MPI_Request req, plait::event ev, MPI_Status* status = nullptr);

  // Non-blocking operations whose completion fulfils `ev`. The buffers must stay valid until then.
  void isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, plait::event ev);
  void irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, plait::event ev,
             MPI_Status* status = nullptr);
  void iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                  plait::event ev);

  // The thread level MPI provides (MPI_Query_thread at construction).
  int thread_level() const noexcept;
  // Requests started and not yet completed (and, serialized, operations waiting to start).
  std::size_t outstanding() const;
  // Completed requests so far, and MPI_Testsome calls (the poller's batches).
  std::size_t completed() const;
  std::size_t polls() const;

 private:
  std::unique_ptr<detail::engine> e_;
};

}  // namespace plait::mpi
