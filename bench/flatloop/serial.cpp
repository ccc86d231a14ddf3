#include "flatloop/flatloop.hpp"
#include "mandel/loops_serial.hpp"

int main(int argc, char** argv) { return flatloop::main_for<loops::exec_serial>(argc, argv); }
