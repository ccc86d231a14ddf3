#include "nqueens/nqueens.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return nqueens::main_for<kern::rt_tbb>(argc, argv); }
