#include "test_util.hpp"

#include <cstdlib>
#include <string>
#include <utility>

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

// ---- PLAIT_STACK_SIZE: no value wraps around into the accepted range ----------------------------

TEST(Env, StackSizesThatOverflowAreRefused) {
  // 17179869185G = 2^64 + 2^30 bytes and 17592186044417M = 2^64 + 2^20: a 64-bit shift wraps
  // them to 1 GiB and 1 MiB. The others overflow the digits themselves or are just past 64G.
  for (const char* v : {"17179869185G", "17592186044417M", "18014398509481985K", "18446744073709551617",
                        "36893488147419103232", "99999999999999999999999999G", "65G", "65537M", "68719476737",
                        "67108865K", "63K", "65535"}) {
    std::string m = error_for("PLAIT_STACK_SIZE", v);
    EXPECT_NE(m.find("PLAIT_STACK_SIZE='" + std::string(v) + "'"), std::string::npos) << "value '" << v << "': " << m;
    EXPECT_NE(m.find("64K..64G"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  }
}

TEST(Env, StackSizesAtTheBoundsAreTaken) {
  const std::pair<const char*, std::size_t> ok[] = {
      {"64K", std::size_t{64} << 10},       {"65536", std::size_t{65536}},
      {"64G", std::size_t{64} << 30},       {"65536M", std::size_t{64} << 30},
      {"68719476736", std::size_t{64} << 30}, {"00000000000000000000001G", std::size_t{1} << 30}};
  for (const auto& [v, bytes] : ok) {
    EnvGuard g("PLAIT_STACK_SIZE", v);
    EXPECT_EQ(plait::pool_options::from_env().stack_size, bytes) << v;
  }
}

// ---- policies out of their enumerators -------------------------------------------------------

std::string pool_error(const plait::pool_options& o) {
  try {
    plait::pool p(o);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Env, PolicyValuesOutsideTheirEnumsAreRefused) {
  std::string m = pool_error({.num_workers = 1, .steal = static_cast<plait::steal_policy>(9)});
  EXPECT_EQ(m, "plait: steal = 9 is out of range for steal_policy; accepted: one, chunk, half, adaptive");
  m = pool_error({.num_workers = 1, .pin = static_cast<plait::pin_policy>(9)});
  EXPECT_EQ(m, "plait: pin = 9 is out of range for pin_policy; accepted: none, cores");
  m = pool_error({.num_workers = 1, .idle = static_cast<plait::idle_policy>(9)});
  EXPECT_EQ(m, "plait: idle = 9 is out of range for idle_policy; accepted: sleep, spin");
  m = pool_error({.num_workers = 1, .pin = static_cast<plait::pin_policy>(-1)});
  EXPECT_EQ(m, "plait: pin = -1 is out of range for pin_policy; accepted: none, cores");
  // The check does not depend on the environment: a valid PLAIT_STEAL does not replace a set value.
  EnvGuard g("PLAIT_STEAL", "half");
  EXPECT_THROW((void)plait::pool_options::from_env({.steal = static_cast<plait::steal_policy>(4)}),
               std::invalid_argument);
  // The last enumerator of each is accepted.
  EXPECT_EQ(pool_error({.num_workers = 1, .pin = plait::pin_policy::none, .idle = plait::idle_policy::spin,
                        .steal = plait::steal_policy::adaptive}),
            "");
}

// ---- PLAIT_STRESS ------------------------------------------------------------------------------

TEST(Env, StressAcceptsOnlyZeroOneOrEmpty) {
  for (const char* v : {"0", "1", ""}) EXPECT_EQ(error_for("PLAIT_STRESS", v), "") << "'" << v << "'";
  for (const char* v : {"2", "yes", "on", "true", " 1", "1 ", "01", "-1"}) {
    std::string m = error_for("PLAIT_STRESS", v);
    EXPECT_EQ(m, "plait: PLAIT_STRESS='" + std::string(v) + "' is not valid; accepted: 0 (off), 1 (on), empty (off)");
  }
  // A pool is not created with it either.
  EnvGuard g("PLAIT_STRESS", "yes");
  EXPECT_THROW(plait::pool p({.num_workers = 1}), std::invalid_argument);
}

// ---- a set option wins over its variable, also when it equals the built-in default -------------

TEST(Env, ExplicitDefaultValuesWinOverTheEnvironment) {
  EnvGuard s("PLAIT_STEAL", "half");
  EnvGuard i("PLAIT_IDLE", "spin");
  EnvGuard p("PLAIT_PIN", "cores");
  const plait::pool_options o = plait::pool_options::from_env(
      {.pin = plait::pin_policy::none, .idle = plait::idle_policy::sleep, .steal = plait::steal_policy::one});
  EXPECT_EQ(o.pin, plait::pin_policy::none);
  EXPECT_EQ(o.idle, plait::idle_policy::sleep);
  EXPECT_EQ(o.steal, plait::steal_policy::one);
  // Unset: the variables.
  const plait::pool_options e = plait::pool_options::from_env();
  EXPECT_EQ(e.pin, plait::pin_policy::cores);
  EXPECT_EQ(e.idle, plait::idle_policy::spin);
  EXPECT_EQ(e.steal, plait::steal_policy::half);
  // And the pool runs with what was asked for.
  plait::pool pool({.num_workers = 2, .idle = plait::idle_policy::sleep, .steal = plait::steal_policy::one});
  EXPECT_EQ(pool.options().idle, plait::idle_policy::sleep);
  EXPECT_EQ(pool.options().steal, plait::steal_policy::one);
  EXPECT_EQ(pool.options().pin, plait::pin_policy::cores);
  EXPECT_EQ(pool.run([] { return 7; }), 7);
}

TEST(Env, PoolOptionsAreResolved) {
  EnvGuard s("PLAIT_STEAL", nullptr);
  EnvGuard i("PLAIT_IDLE", nullptr);
  EnvGuard p("PLAIT_PIN", nullptr);
  const plait::pool_options unset{};
  EXPECT_FALSE(unset.pin.has_value());
  EXPECT_FALSE(unset.idle.has_value());
  EXPECT_FALSE(unset.steal.has_value());
  plait::pool pool({.num_workers = 1});
  const plait::pool_options& o = pool.options();
  ASSERT_TRUE(o.pin.has_value() && o.idle.has_value() && o.steal.has_value());
  EXPECT_EQ(*o.pin, plait::pin_policy::none);
  EXPECT_EQ(*o.idle, plait::idle_policy::sleep);
  EXPECT_EQ(*o.steal, plait::steal_policy::one);
  EXPECT_EQ(o.num_workers, 1u);
  EXPECT_EQ(o.stack_size, std::size_t{1} << 30);
}

TEST(EnvDeathTest, DefaultPoolWithBadStressExitsWithOneLine) {
  EXPECT_EXIT(
      {
        setenv("PLAIT_STRESS", "yes", 1);
        plait::run([] { return 0; });
      },
      ::testing::ExitedWithCode(2), "PLAIT_STRESS='yes' is not valid; accepted: 0 \\(off\\), 1 \\(on\\), empty \\(off\\)");
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
