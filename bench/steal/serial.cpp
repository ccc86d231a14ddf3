#include "steal/steal.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return steal::main_for<kern::rt_serial>(argc, argv); }
