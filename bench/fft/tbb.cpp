#include "fft/fft.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return fft::main_for<kern::rt_tbb>(argc, argv); }
