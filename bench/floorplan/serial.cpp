#include "floorplan/floorplan.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) { return floorplan::main_for<kern::rt_serial>(argc, argv); }
