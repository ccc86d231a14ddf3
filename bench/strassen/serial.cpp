#include "strassen/strassen.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return strassen::main_for<kern::rt_serial>(argc, argv); }
