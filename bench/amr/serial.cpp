// miniAMR proxy, serial: every variant runs the same plain loops (the baseline of study 003).
#include "amr/amr.hpp"
#include "common/rt/serial.hpp"

int main(int argc, char** argv) {
  return amr::main_for<kern::rt_serial>(argc, argv, [](kern::rt_serial&, amr::Sim& sim, amr::Variant) {
    amr::run_serial(sim);
    return 0ULL;
  });
}
