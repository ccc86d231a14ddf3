#include "alignment/alignment.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return alignment::main_for<kern::rt_tbb>(argc, argv); }
