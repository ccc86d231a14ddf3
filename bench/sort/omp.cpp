#include "sort/sort.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return msort::main_for<kern::rt_omp>(argc, argv); }
