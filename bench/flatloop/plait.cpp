#include "flatloop/flatloop.hpp"
#include "mandel/loops_plait.hpp"

int main(int argc, char** argv) { return flatloop::main_for<loops::exec_plait>(argc, argv); }
