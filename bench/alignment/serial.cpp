#include "alignment/alignment.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return alignment::main_for<kern::rt_serial>(argc, argv); }
