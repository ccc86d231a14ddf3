#include "sparselu/sparselu.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return sparselu::main_for<kern::rt_omp>(argc, argv); }
