#include "nqueens/nqueens.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return nqueens::main_for<kern::rt_omp>(argc, argv); }
