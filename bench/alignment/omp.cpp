#include "alignment/alignment.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return alignment::main_for<kern::rt_omp>(argc, argv); }
