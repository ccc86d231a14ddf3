#include "fft/fft.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return fft::main_for<kern::rt_omp>(argc, argv); }
