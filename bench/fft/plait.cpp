#include "fft/fft.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return fft::main_for<kern::rt_plait>(argc, argv); }
