#include "flatloop/flatloop.hpp"
#include "mandel/loops_tbb.hpp"

int main(int argc, char** argv) { return flatloop::main_for<loops::exec_tbb>(argc, argv); }
