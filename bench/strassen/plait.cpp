#include "strassen/strassen.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return strassen::main_for<kern::rt_plait>(argc, argv); }
