#include "strassen/strassen.hpp"
#include "common/rt/tbb.hpp"

int main(int argc, char** argv) { return strassen::main_for<kern::rt_tbb>(argc, argv); }
