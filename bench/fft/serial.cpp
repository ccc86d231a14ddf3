#include "fft/fft.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return fft::main_for<kern::rt_serial>(argc, argv); }
