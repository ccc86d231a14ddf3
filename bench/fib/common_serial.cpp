// The serial recursion shared by every fib binary (see fib.hpp).
#include "fib.hpp"

namespace fib_bench {

long long serial_fib(long long n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

}  // namespace fib_bench
