#include "floorplan/floorplan.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return floorplan::main_for<kern::rt_tbb>(argc, argv); }
