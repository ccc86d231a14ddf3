// The benchmarks' command line (bench/common/driver.hpp): problem classes and their derived values.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/driver.hpp"

namespace {

struct Args {
  explicit Args(std::vector<std::string> a) : words(std::move(a)) {
    words.insert(words.begin(), "kernel-test");
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  std::vector<std::string> words;
  std::vector<char*> argv;
};

std::string param(const plait_bench::Cli& cli, const std::string& name) {
  for (const auto& [k, v] : cli.params())
    if (k == name) return v;
  return "(none)";
}

struct Sized {
  long long n = 11, m = 3;
  std::string size = "ci";
};

// --size registered between the options it sets: before one, after the other.
void add(plait_bench::Cli& cli, Sized& s) {
  cli.add_int("n", &s.n, 1, 100, "n");
  cli.add_size("size", &s.size, "class", {"ci", "test", "small"}, {{"n", {11, 8, 12}}, {"m", {3, 2, 5}}});
  cli.add_int("m", &s.m, 1, 100, "m");
}

}  // namespace

TEST(DriverSize, TheClassSetsWhatIsNotGivenAndTheRecordShowsIt) {
  Args a({"--size", "small", "--m", "7"});
  plait_bench::Cli cli("k", "test", a.argc(), a.argv.data());
  Sized s;
  add(cli, s);
  cli.parse();
  EXPECT_EQ(s.n, 12);  // from the class
  EXPECT_EQ(s.m, 7);   // given: the class does not override it
  EXPECT_EQ(param(cli, "n"), "12");
  EXPECT_EQ(param(cli, "m"), "7");
  EXPECT_EQ(param(cli, "size"), "small");
}

TEST(DriverSize, TheDefaultClassAppliesWithoutSize) {
  Args a({});
  plait_bench::Cli cli("k", "test", a.argc(), a.argv.data());
  Sized s;
  s.n = 99;  // a variable's initial value is not what the class says: the class wins
  add(cli, s);
  cli.parse();
  EXPECT_EQ(s.n, 11);
  EXPECT_EQ(param(cli, "n"), "11");
}

TEST(DriverSize, AnUnknownClassIsAUsageError) {
  Args a({"--size", "huge"});
  plait_bench::Cli cli("k", "test", a.argc(), a.argv.data());
  Sized s;
  add(cli, s);
  try {
    cli.parse();
    FAIL() << "--size huge was accepted";
  } catch (const plait_bench::usage_error& e) {
    EXPECT_EQ(std::string(e.what()), "option --size: unknown value 'huge'; accepted: ci, test, small");
  }
}

TEST(DriverSize, ProgrammingErrorsAreCaught) {
  Args a({});
  plait_bench::Cli cli("k", "test", a.argc(), a.argv.data());
  long long n = 1;
  std::string size = "ci", other = "xl";
  cli.add_int("n", &n, 1, 100, "n");
  EXPECT_THROW(cli.add_size("size", &size, "class", {"ci", "test"}, {{"n", {1}}}), std::logic_error);  // 1 value, 2 classes
  EXPECT_THROW(cli.add_size("other", &other, "class", {"ci", "test"}, {{"n", {1, 2}}}), std::logic_error);  // default
  cli.add_size("size", &size, "class", {"ci", "test"}, {{"nope", {1, 2}}});
  EXPECT_THROW(cli.parse(), std::logic_error);  // sets an option the program does not have
}

TEST(DriverOptions, PowerOfTwo) {
  EXPECT_NO_THROW(plait_bench::require_power_of_two("n", 1));
  EXPECT_NO_THROW(plait_bench::require_power_of_two("n", 1LL << 40));
  try {
    plait_bench::require_power_of_two("n", 100);
    FAIL() << "100 was accepted";
  } catch (const plait_bench::usage_error& e) {
    EXPECT_EQ(std::string(e.what()), "option --n: 100 is not a power of two");
  }
  EXPECT_THROW(plait_bench::require_power_of_two("n", 0), plait_bench::usage_error);
}
