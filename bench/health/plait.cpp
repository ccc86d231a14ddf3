#include "health/health.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return health::main_for<kern::rt_plait>(argc, argv); }
