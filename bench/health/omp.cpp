#include "health/health.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return health::main_for<kern::rt_omp>(argc, argv); }
