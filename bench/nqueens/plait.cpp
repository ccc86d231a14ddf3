#include "nqueens/nqueens.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return nqueens::main_for<kern::rt_plait>(argc, argv); }
