#include "floorplan/floorplan.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return floorplan::main_for<kern::rt_omp>(argc, argv); }
