#include "nqueens/nqueens.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return nqueens::main_for<kern::rt_serial>(argc, argv); }
