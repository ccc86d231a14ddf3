#include "flatloop/flatloop.hpp"
#include "mandel/loops_omp.hpp"

int main(int argc, char** argv) { return flatloop::main_for<loops::exec_omp>(argc, argv); }
