// The start and end of a benchmark's MPI build (bench/<kernel>/mpi.cpp): MPI_Init_thread at the
// level the program asks for, every rank but 0 silent on stdout and for its summary (one JSON line
// and one message per run: rank 0's), and the agreement that keeps a job from hanging when its
// ranks were given different input.
//
// Why an agreement. Each rank parses its own command line and environment and builds its own pool.
// A rank that rejects its input (a malformed PLAIT_* variable, other arguments after mpirun's `:`)
// would leave for MPI_Finalize while the others wait in their first collective: the job hangs. So
// every rank reaches one collective before its first message, MpiAgreement::point, or — when its
// set-up failed before that — the same collective at the end (mpi_main_guard). There every rank
// learns whether any rank failed (the lowest such rank's exit status and message are broadcast)
// and whether every rank was started with the same arguments (a hash of argv). Then every rank
// exits with that status and only rank 0 prints, one line: "<kernel>-mpi: error: rank R: why".
// A failure after the agreement (the run itself) is the same on every rank when it comes from the
// global counts (verification: exit 1, rank 0 says it); anything else — one rank's exception in the
// middle of a run — brings the job down with MPI_Abort after that rank printed its line.
#pragma once

#include <mpi.h>  // C API only: OMPI_SKIP_MPICXX / MPICH_SKIP_MPICXX come from the build
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "driver.hpp"

namespace plait_bench {

struct MpiStart {
  int provided = 0;  // the thread level the library gives
  int rank = 0, size = 1;
  bool ok = true;    // false: rank != 0 could not silence its output (exit 3)
  int err_fd = 2;    // where this rank's own error line goes (rank != 0: its original stderr)
};

inline MpiStart mpi_start(int& argc, char**& argv, int level) {
  MpiStart s;
  MPI_Init_thread(&argc, &argv, level, &s.provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  if (s.rank != 0) {
    s.err_fd = dup(2);
    s.ok = s.err_fd >= 0 && std::freopen("/dev/null", "w", stdout) && std::freopen("/dev/null", "w", stderr);
  }
  return s;
}

class MpiAgreement {
 public:
  MpiAgreement(const MpiStart& s, int argc, char** argv) : s_(s) {
    // FNV-1a over the arguments (not argv[0]: one rank may name the program by another path).
    for (int i = 1; i < argc; ++i) {
      for (const char* c = argv[i]; *c; ++c) hash_ = (hash_ ^ static_cast<unsigned char>(*c)) * 0x100000001b3ULL;
      hash_ = (hash_ ^ 0xffu) * 0x100000001b3ULL;  // argument boundary
    }
  }

  // Called by every rank after its set-up (arguments, environment, pools) and before its first
  // message. Throws (ending the body) when another rank failed or the ranks' arguments differ.
  void point() {
    exchange(0, "");
    if (failed_rank_ >= 0) throw exit_status(status_, message_);
  }

  // After the body: the rank that failed before point() joins the agreement now; then rank 0
  // prints the one line, a failure after the agreement that may be this rank's alone aborts the
  // job, and every rank finalizes with the same status. Returns the process's exit status.
  int finish(const std::string& who, int rc, const std::string& message) {
    if (!reached_) exchange(rc, message);
    if (failed_rank_ >= 0) {
      if (s_.rank == 0) std::fprintf(stderr, "%s: error: %s\n", who.c_str(), message_.c_str());
      MPI_Finalize();
      return status_;
    }
    if (rc != 0 && rc != 1) {
      // This rank failed during the run; the others may be waiting for its messages.
      dprintf(s_.err_fd, "%s: error: rank %d: %s\n", who.c_str(), s_.rank, message.c_str());
      MPI_Abort(MPI_COMM_WORLD, rc);
    }
    if (rc != 0 && s_.rank == 0) std::fprintf(stderr, "%s: error: %s\n", who.c_str(), message.c_str());
    MPI_Finalize();
    return rc;
  }

 private:
  void exchange(int rc, const std::string& message) {
    reached_ = true;
    // The lowest failing rank (size: none) and the spread of the argument hashes.
    int mine = rc != 0 ? s_.rank : s_.size, first = s_.size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    unsigned long long lo = 0, hi = 0, h = hash_;
    MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (first < s_.size) {
      struct {
        int status;
        char text[1000];
      } m{};
      if (s_.rank == first) {
        m.status = rc;
        std::snprintf(m.text, sizeof m.text, "%s%s", first == 0 ? "" : ("rank " + std::to_string(first) + ": ").c_str(),
                      message.c_str());
      }
      MPI_Bcast(&m, static_cast<int>(sizeof m), MPI_BYTE, first, MPI_COMM_WORLD);
      failed_rank_ = first;
      status_ = m.status;
      message_ = m.text;
      return;
    }
    if (lo != hi) {
      // Which rank differs from rank 0: the lowest whose hash is not rank 0's.
      unsigned long long h0 = hash_;
      MPI_Bcast(&h0, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
      int odd = h0 != hash_ ? s_.rank : s_.size, first_odd = s_.size;
      MPI_Allreduce(&odd, &first_odd, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      failed_rank_ = first_odd;
      status_ = 2;
      message_ = "rank " + std::to_string(first_odd) +
                 " was started with other arguments than rank 0; every rank must run the same configuration";
    }
  }

  const MpiStart& s_;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
  bool reached_ = false;
  int failed_rank_ = -1, status_ = 0;
  std::string message_;
};

// main_guard for an MPI program: runs body(cli, agreement) — which must call agreement.point()
// after its set-up, before its first message — and ends MPI as described at the top. Returns the
// process's exit status (the same on every rank).
inline int mpi_main_guard(const MpiStart& s, const std::string& kernel, int argc, char** argv,
                          const std::function<void(Cli&, MpiAgreement&)>& body) {
  MpiAgreement agree(s, argc, argv);
  std::string message;
  const int rc = run_guarded(kernel, this_runtime(), argc, argv, [&](Cli& cli) { body(cli, agree); }, &message);
  return agree.finish(kernel + "-" + this_runtime(), rc, message);
}

// An MPI program's whole main: MPI started at thread level `level` (mpi_start; exit 3 when a rank
// other than 0 cannot silence its output), then body(cli, agreement, start) under mpi_main_guard.
inline int mpi_main(int& argc, char**& argv, int level, const std::string& kernel,
                    const std::function<void(Cli&, MpiAgreement&, const MpiStart&)>& body) {
  const MpiStart s = mpi_start(argc, argv, level);
  if (!s.ok) return 3;
  return mpi_main_guard(s, kernel, argc, argv, [&](Cli& cli, MpiAgreement& agree) { body(cli, agree, s); });
}

}  // namespace plait_bench
