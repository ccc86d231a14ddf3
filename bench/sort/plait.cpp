#include "sort/sort.hpp"
#include "common/rt/plait.hpp"

int main(int argc, char** argv) { return msort::main_for<kern::rt_plait>(argc, argv); }
