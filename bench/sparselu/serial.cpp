#include "sparselu/sparselu.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return sparselu::main_for<kern::rt_serial>(argc, argv); }
