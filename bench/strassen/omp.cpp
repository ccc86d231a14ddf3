#include "strassen/strassen.hpp"
#include "common/rt/omp.hpp"

int main(int argc, char** argv) { return strassen::main_for<kern::rt_omp>(argc, argv); }
