#include "sort/sort.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return msort::main_for<kern::rt_tbb>(argc, argv); }
