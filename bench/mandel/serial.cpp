#include "mandel/mandel.hpp"
#include "mandel/loops_serial.hpp"

int main(int argc, char** argv) { return mandel::main_for<loops::exec_serial>(argc, argv); }
