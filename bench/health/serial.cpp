#include "health/health.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return health::main_for<kern::rt_serial>(argc, argv); }
