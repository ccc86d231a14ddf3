#include "mandel/mandel.hpp"
#include "mandel/loops_plait.hpp"

int main(int argc, char** argv) { return mandel::main_for<loops::exec_plait>(argc, argv); }
