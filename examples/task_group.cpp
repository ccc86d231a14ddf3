// A task group: one child per file-like item, children that add more children, one wait().
#include <plait/plait.hpp>

#include <atomic>
#include <cstdio>
#include <vector>

int main() {
  std::vector<int> items(1000);
  for (int i = 0; i < 1000; ++i) items[i] = i;
  std::atomic<long> sum{0};
  plait::run([&] {
    plait::task_group g;
    for (int x : items)
      g.run([&g, &sum, x] {
        sum += x;
        if (x % 100 == 0) g.run([&sum] { sum += 1; });  // children may add children
      });
    g.wait();
  });
  long expect = 999L * 1000 / 2 + 10;
  std::printf("sum = %ld (expected %ld)\n", sum.load(), expect);
  return sum.load() == expect ? 0 : 1;
}
