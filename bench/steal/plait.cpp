#include "steal/steal.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return steal::main_for<kern::rt_plait>(argc, argv); }
