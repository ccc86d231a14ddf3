#include "floorplan/floorplan.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return floorplan::main_for<kern::rt_plait>(argc, argv); }
