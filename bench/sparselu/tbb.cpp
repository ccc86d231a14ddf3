#include "sparselu/sparselu.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return sparselu::main_for<kern::rt_tbb>(argc, argv); }
