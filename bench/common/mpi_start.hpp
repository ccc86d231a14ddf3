// The start of a benchmark's MPI build (bench/<kernel>/mpi.cpp): MPI_Init_thread at the level the
// program asks for, the rank and the rank count, and every rank but 0 silent (one JSON line and
// one message per run: rank 0's). Every rank parses the same command line, so every rank reaches
// the same verdict and exit status without saying it.
#pragma once

#include <mpi.h>  // C API only: OMPI_SKIP_MPICXX / MPICH_SKIP_MPICXX come from the build

#include <cstdio>

namespace plait_bench {

struct MpiStart {
  int provided = 0;  // the thread level the library gives
  int rank = 0, size = 1;
  bool ok = true;    // false: rank != 0 could not close its output (exit 3)
};

inline MpiStart mpi_start(int& argc, char**& argv, int level) {
  MpiStart s;
  MPI_Init_thread(&argc, &argv, level, &s.provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  if (s.rank != 0) s.ok = std::freopen("/dev/null", "w", stdout) && std::freopen("/dev/null", "w", stderr);
  return s;
}

}  // namespace plait_bench
