#include "mandel/mandel.hpp"
#include "mandel/loops_tbb.hpp"

int main(int argc, char** argv) { return mandel::main_for<loops::exec_tbb>(argc, argv); }
