#include "sparselu/sparselu.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return sparselu::main_for<kern::rt_plait>(argc, argv); }
