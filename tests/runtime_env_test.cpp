#include "test_util.hpp"

#include <cstdlib>
#include <string>

namespace {

using plait_test::EnvGuard;

std::string error_for(const char* var, const char* val) {
  EnvGuard g(var, val);
  EnvGuard a("PLAIT_NUM_THREADS", std::string(var) == "PLAIT_NUM_THREADS" ? val : nullptr);
  try {
    (void)plait::pool_options::from_env();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Env, BadThreadCountsAreRefusedWithTheVariableAndRange) {
  for (const char* v : {"abc", "0", "-1", "99999", "", " 4", "4x", "1e3", "18446744073709551617"}) {
    std::string m = error_for("PLAIT_NUM_THREADS", v);
    EXPECT_NE(m.find("PLAIT_NUM_THREADS='"), std::string::npos) << "value '" << v << "': " << m;
    EXPECT_NE(m.find("1..1024"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  }
}

TEST(Env, GoodValuesAreTaken) {
  {
    EnvGuard g("PLAIT_NUM_THREADS", "3");
    EXPECT_EQ(plait::pool_options::from_env().num_workers, 3u);
  }
  {
    EnvGuard g("PLAIT_NUM_THREADS", nullptr);
    EnvGuard o("OMP_NUM_THREADS", "5,2");
    EXPECT_EQ(plait::pool_options::from_env().num_workers, 5u);
  }
  {
    EnvGuard g("PLAIT_STACK_SIZE", "256M");
    EXPECT_EQ(plait::pool_options::from_env().stack_size, std::size_t{256} << 20);
  }
  {
    EnvGuard g("PLAIT_PIN", "cores");
    EXPECT_EQ(plait::pool_options::from_env().pin, plait::pin_policy::cores);
  }
}

TEST(Env, OtherVariablesAreChecked) {
  EXPECT_NE(error_for("OMP_NUM_THREADS", "many").find("OMP_NUM_THREADS='many'"), std::string::npos);
  EXPECT_NE(error_for("PLAIT_PIN", "sockets").find("none, cores"), std::string::npos);
  EXPECT_NE(error_for("PLAIT_IDLE", "nap").find("sleep, spin"), std::string::npos);
  EXPECT_NE(error_for("PLAIT_STEAL", "half?").find("PLAIT_STEAL"), std::string::npos);
  EXPECT_NE(error_for("PLAIT_STACK_SIZE", "12Q").find("PLAIT_STACK_SIZE"), std::string::npos);
  EXPECT_NE(error_for("PLAIT_STACK_SIZE", "1K").find("64K..64G"), std::string::npos);
}

TEST(EnvDeathTest, DefaultPoolWithBadVariableExitsWithOneLine) {
  EXPECT_EXIT(
      {
        setenv("PLAIT_NUM_THREADS", "abc", 1);
        plait::run([] { return 0; });
      },
      ::testing::ExitedWithCode(2), "PLAIT_NUM_THREADS='abc' is not valid; accepted: an integer in 1..1024");
}

}  // namespace
