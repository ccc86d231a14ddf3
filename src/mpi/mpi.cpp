// plait::mpi::progress: MPI requests completed as plait::events by one polling service per pool.
//
// State: the outstanding requests and, beside them, each one's event and status pointer, under a
// mutex; with SERIALIZED/FUNNELED also the operations waiting to start. The poller (pollers never
// run concurrently: src/poll.cpp) starts what waits, calls MPI_Testsome on every outstanding
// request under the mutex, takes the completed ones out, and fulfils their events after
// unlocking: a fulfil may run code (data-flow successors released in place) that starts new
// operations, which takes the mutex again.
#include <plait/mpi.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace plait::mpi {

namespace detail {

struct pending_op {
  std::function<int(MPI_Request*)> start;
  plait::event ev;
  MPI_Status* status;
};

struct engine {
  plait::pool* pool = nullptr;
  plait::pool::poller_id id = 0;
  int level = MPI_THREAD_SINGLE;
  mutable std::mutex mu;
  std::vector<MPI_Request> reqs;       // under mu; parallel to evs and sts
  std::vector<plait::event> evs;
  std::vector<MPI_Status*> sts;
  std::vector<pending_op> to_start;    // under mu (serialized levels)
  std::vector<int> indices;            // the poller's scratch (one poller at a time)
  std::vector<MPI_Status> statuses;
  std::atomic<std::size_t> ncompleted{0}, npolls{0};

  bool direct() const noexcept { return level == MPI_THREAD_MULTIPLE; }

  void add(MPI_Request r, plait::event ev, MPI_Status* st) {
    reqs.push_back(r);
    evs.push_back(std::move(ev));
    sts.push_back(st);
  }

  void poll() {
    std::vector<plait::event> done;
    {
      std::lock_guard<std::mutex> lk(mu);
      for (pending_op& op : to_start) {
        MPI_Request r = MPI_REQUEST_NULL;
        const int rc = op.start(&r);
        if (rc != MPI_SUCCESS) {
          std::fprintf(stderr, "plait::mpi: starting an operation failed (MPI error %d)\n", rc);
          std::abort();
        }
        add(r, std::move(op.ev), op.status);
      }
      to_start.clear();
      if (reqs.empty()) return;
      const int n = static_cast<int>(reqs.size());
      indices.resize(reqs.size());
      statuses.resize(reqs.size());
      int outcount = 0;
      MPI_Testsome(n, reqs.data(), &outcount, indices.data(), statuses.data());
      npolls.fetch_add(1, std::memory_order_relaxed);
      if (outcount == MPI_UNDEFINED || outcount == 0) return;
      for (int k = 0; k < outcount; ++k) {
        const auto i = static_cast<std::size_t>(indices[static_cast<std::size_t>(k)]);
        if (sts[i] != nullptr) *sts[i] = statuses[static_cast<std::size_t>(k)];
        done.push_back(std::move(evs[i]));
      }
      // Compact: MPI_Testsome set the completed requests to MPI_REQUEST_NULL.
      std::size_t w = 0;
      for (std::size_t i = 0; i < reqs.size(); ++i) {
        if (reqs[i] == MPI_REQUEST_NULL) continue;
        reqs[w] = reqs[i];
        evs[w] = std::move(evs[i]);
        sts[w] = sts[i];
        ++w;
      }
      reqs.resize(w);
      evs.resize(w);
      sts.resize(w);
      ncompleted.fetch_add(done.size(), std::memory_order_relaxed);
    }
    for (plait::event& e : done) e.fulfill();
  }

  void start(std::function<int(MPI_Request*)> f, plait::event ev, MPI_Status* st) {
    if (direct()) {
      MPI_Request r = MPI_REQUEST_NULL;
      const int rc = f(&r);
      if (rc != MPI_SUCCESS) throw std::runtime_error("plait::mpi: starting an operation failed (MPI error " +
                                                      std::to_string(rc) + ")");
      std::lock_guard<std::mutex> lk(mu);
      add(r, std::move(ev), st);
    } else {
      std::lock_guard<std::mutex> lk(mu);
      to_start.push_back({std::move(f), std::move(ev), st});
    }
  }
};

}  // namespace detail

progress::progress(plait::pool& p) : e_(std::make_unique<detail::engine>()) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) throw std::logic_error("plait::mpi::progress: MPI is not initialised (call MPI_Init_thread first)");
  MPI_Query_thread(&e_->level);
  if (e_->level == MPI_THREAD_SINGLE)
    throw std::logic_error("plait::mpi::progress: MPI provides MPI_THREAD_SINGLE; tasks on several threads need "
                           "MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (MPI_Init_thread)");
  e_->pool = &p;
  detail::engine* e = e_.get();
  e_->id = p.add_poller([e] { e->poll(); });
}

progress::~progress() {
  e_->pool->remove_poller(e_->id);  // no poll in progress after this
  const std::size_t left = outstanding();
  if (left != 0) {
    std::fprintf(stderr,
                 "plait::mpi::progress destroyed with %zu MPI operation(s) outstanding: their tasks could never "
                 "finish (wait for the tasks before destroying it)\n",
                 left);
    std::abort();
  }
}

void progress::bind(MPI_Request req, plait::event ev, MPI_Status* status) {
  std::lock_guard<std::mutex> lk(e_->mu);
  e_->add(req, std::move(ev), status);
}

void progress::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, plait::event ev) {
  e_->start([=](MPI_Request* r) { return MPI_Isend(buf, count, type, dest, tag, comm, r); }, std::move(ev), nullptr);
}

void progress::irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, plait::event ev,
                     MPI_Status* status) {
  e_->start([=](MPI_Request* r) { return MPI_Irecv(buf, count, type, source, tag, comm, r); }, std::move(ev), status);
}

void progress::iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          plait::event ev) {
  e_->start([=](MPI_Request* r) { return MPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, r); }, std::move(ev),
            nullptr);
}

int progress::thread_level() const noexcept { return e_->level; }

std::size_t progress::outstanding() const {
  std::lock_guard<std::mutex> lk(e_->mu);
  return e_->reqs.size() + e_->to_start.size();
}

std::size_t progress::completed() const { return e_->ncompleted.load(std::memory_order_relaxed); }
std::size_t progress::polls() const { return e_->npolls.load(std::memory_order_relaxed); }

}  // namespace plait::mpi
