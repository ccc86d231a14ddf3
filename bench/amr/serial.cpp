// miniAMR proxy, serial: every variant runs the same plain loops (the baseline of study 003).
#include "amr/common.hpp"

int main(int argc, char** argv) {
  amr::Runtime rt;
  rt.run = [](amr::Sim& sim, amr::Variant) { amr::run_serial(sim); };
  return amr::main_for(argc, argv, rt);
}
