#include "alignment/alignment.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return alignment::main_for<kern::rt_plait>(argc, argv); }
