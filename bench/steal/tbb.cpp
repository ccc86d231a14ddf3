#include "steal/steal.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return steal::main_for<kern::rt_tbb>(argc, argv); }
