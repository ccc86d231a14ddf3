#include "steal/steal.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return steal::main_for<kern::rt_omp>(argc, argv); }
