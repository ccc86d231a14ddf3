#include "health/health.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return health::main_for<kern::rt_tbb>(argc, argv); }
