#include "sort/sort.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return msort::main_for<kern::rt_serial>(argc, argv); }
