#include "mandel/mandel.hpp"
#include "mandel/loops_omp.hpp"

int main(int argc, char** argv) { return mandel::main_for<loops::exec_omp>(argc, argv); }
