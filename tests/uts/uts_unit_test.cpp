// Unit tests of the UTS tree code (bench/uts/common.cpp): SHA-1, the node RNG, tree rules, the
// table of published trees, input files and the rejection of bad parameters.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/driver.hpp"
#include "uts/common.hpp"
#include "uts/expand.hpp"

namespace {

std::string hex_of(const std::string& s) { return uts::to_hex(uts::sha1(s.data(), s.size())); }

uts::Counts count(const uts::Params& p) {
  const uts::Tree t(p);
  const uts::Node root = t.root();
  if (root.nkids == 0) return uts::lone_root();
  uts::Counts c{1, 0, 0, 0};
  uts::walk(t, root, c);  // uts-serial's search
  return c;
}

uts::Params binomial(double b0, double q, long long m, long long r) {
  return {.type = uts::TreeType::binomial, .b0 = b0, .seed = r, .q = q, .m = m};
}

std::vector<std::uint8_t> bytes_of(const std::uint32_t h[5]) {
  std::vector<std::uint8_t> v;
  for (int i = 0; i < 5; ++i)
    for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(h[i] >> s));
  return v;
}

void be32(std::vector<std::uint8_t>& v, std::uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

}  // namespace

// ---- SHA-1: FIPS 180 examples and padding boundaries (reference digests from an independent
// implementation) -------------------------------------------------------------------------------

TEST(UtsSha1, FipsAbc) { EXPECT_EQ(hex_of("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d"); }

TEST(UtsSha1, Empty) { EXPECT_EQ(hex_of(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709"); }

TEST(UtsSha1, Fips448Bit) {
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

TEST(UtsSha1, Fips896Bit) {
  EXPECT_EQ(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "a49b2446a02c645bf419f995b67091253a04a259");
}

TEST(UtsSha1, MillionA) {
  EXPECT_EQ(hex_of(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(UtsSha1, PaddingBoundaries) {
  EXPECT_EQ(hex_of(std::string(55, 'a')), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  EXPECT_EQ(hex_of(std::string(56, 'a')), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  EXPECT_EQ(hex_of(std::string(63, 'a')), "03f09f5b158a7a8cdad920bddc29b81c18a551f5");
  EXPECT_EQ(hex_of(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
  EXPECT_EQ(hex_of(std::string(119, 'a')), "ee971065aaa017e0632a8ca6c77bb3bf8b1dfc56");
  EXPECT_EQ(hex_of(std::string(120, 'a')), "f34c1488385346a55709ba056ddd08280dd4c6d6");
}

// ---- node RNG -------------------------------------------------------------------------------

TEST(UtsRng, RootIsSha1OfZerosAndSeed) {
  for (std::uint32_t seed : {0u, 1u, 19u, 42u, 559u, 0x7fffffffu}) {
    std::uint32_t h[5];
    uts::root_state(seed, h);
    std::vector<std::uint8_t> msg(16, 0);
    be32(msg, seed);
    const uts::digest d = uts::sha1(msg.data(), msg.size());
    EXPECT_EQ(bytes_of(h), std::vector<std::uint8_t>(d.begin(), d.end())) << "seed " << seed;
  }
  std::uint32_t h[5];
  uts::root_state(42, h);
  uts::Node n{{h[0], h[1], h[2], h[3], h[4]}, 0, 0};
  EXPECT_EQ(uts::to_hex(uts::state_bytes(n)), "a11dabbcec7aab309c890ab3dbc256eaeb582782");
  uts::root_state(0, h);
  uts::Node z{{h[0], h[1], h[2], h[3], h[4]}, 0, 0};
  EXPECT_EQ(uts::to_hex(uts::state_bytes(z)), "6768033e216468247bd031a0a2d9876d79818f8f");
  EXPECT_EQ(uts::node_rand(z), 2038534031);  // bytes 16..19 big-endian, top bit cleared
}

TEST(UtsRng, ChildIsSha1OfParentAndIndex) {
  std::uint32_t root[5];
  uts::root_state(42, root);
  for (std::uint32_t i : {0u, 1u, 3u, 99u, 1999u, 0x01020304u}) {
    std::uint32_t h[5];
    uts::child_state(root, i, h);
    std::vector<std::uint8_t> msg = bytes_of(root);
    be32(msg, i);
    const uts::digest d = uts::sha1(msg.data(), msg.size());
    EXPECT_EQ(bytes_of(h), std::vector<std::uint8_t>(d.begin(), d.end())) << "child " << i;
  }
  std::uint32_t h[5];
  uts::child_state(root, 3, h);
  uts::Node n{{h[0], h[1], h[2], h[3], h[4]}, 1, 0};
  EXPECT_EQ(uts::to_hex(uts::state_bytes(n)), "ab1f4a5e65ac66464d79aec709ef0012b5338d97");
  EXPECT_EQ(uts::node_rand(n), 892571031);
  EXPECT_DOUBLE_EQ(uts::node_prob(n), 892571031.0 / 2147483648.0);
}

TEST(UtsRng, TreeChildMatchesChildStateForAnyGranularity) {
  for (long long g : {1LL, 2LL, 7LL}) {
    uts::Params p = binomial(10, 0.2, 4, 5);
    p.g = g;
    const uts::Tree t(p);
    const uts::Node root = t.root();
    ASSERT_EQ(root.nkids, 10);
    for (int i = 0; i < root.nkids; ++i) {
      uts::Node kid;
      t.child(root, i, kid);
      std::uint32_t h[5];
      uts::child_state(root.h, static_cast<std::uint32_t>(i), h);
      for (int k = 0; k < 5; ++k) EXPECT_EQ(kid.h[k], h[k]);
      EXPECT_EQ(kid.height, 1);
      EXPECT_EQ(kid.nkids, uts::node_prob(kid) < 0.2 ? 4 : 0);
    }
  }
}

// ---- tree rules -----------------------------------------------------------------------------

TEST(UtsTree, BinomialIdentity) {
  for (long long r : {1LL, 2LL, 3LL, 42LL}) {
    const uts::Params p = binomial(200, 0.2, 4, r);
    const uts::Counts c = count(p);
    EXPECT_EQ(c.nodes, c.leaves + c.with_kids);
    EXPECT_EQ(c.nodes, 1 + 200 + 4 * (c.nodes - c.leaves - 1)) << "seed " << r;
  }
}

TEST(UtsTree, GranularityLeavesCountsUnchanged) {
  uts::Params bin = binomial(300, 0.15, 6, 9);
  uts::Params geo;  // geometric, linear shape
  geo.b0 = 4;
  geo.depth = 8;
  geo.seed = 1;  // 1938 nodes
  for (uts::Params p : {bin, geo}) {
    const uts::Counts a = count(p);
    p.g = 5;
    const uts::Counts b = count(p);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.leaves, b.leaves);
    EXPECT_EQ(a.depth, b.depth);
    EXPECT_EQ(a.with_kids, b.with_kids);
    EXPECT_GT(a.nodes, 100u);
  }
}

TEST(UtsTree, BalancedClosedForm) {
  uts::Params p;
  p.type = uts::TreeType::balanced;
  p.b0 = 3;
  p.depth = 5;
  const uts::Counts c = count(p);
  EXPECT_EQ(c.nodes, 1u + 3 + 9 + 27 + 81 + 243);
  EXPECT_EQ(c.leaves, 243u);
  EXPECT_EQ(c.depth, 5);
}

TEST(UtsTree, BinomialRootIsNotCappedOthersAre) {
  const uts::Tree t(binomial(2000.7, 0.1, 4, 1));
  EXPECT_EQ(t.root().nkids, 2000);  // floor(b0), no cap of 100 at a binomial root
  uts::Params geo;
  geo.type = uts::TreeType::geometric;
  geo.shape = uts::Shape::fixed;
  geo.b0 = 1e6;  // mean branching far above the cap
  geo.depth = 3;
  const uts::Tree g(geo);
  const uts::Node root = g.root();
  EXPECT_LE(root.nkids, uts::max_children);
  for (int i = 0; i < root.nkids; ++i) {
    uts::Node kid;
    g.child(root, i, kid);
    EXPECT_LE(kid.nkids, uts::max_children);
  }
}

TEST(UtsTree, GeometricShapesStayWithinTheirDepth) {
  for (uts::Shape s : {uts::Shape::linear, uts::Shape::fixed}) {
    uts::Params p;
    p.shape = s;
    p.b0 = 3;
    p.depth = 7;
    p.seed = 11;
    const uts::Counts c = count(p);
    EXPECT_LE(c.depth, 7);
    EXPECT_EQ(c.nodes, c.leaves + c.with_kids);
  }
}

// ---- the published trees --------------------------------------------------------------------

TEST(UtsTable, NamesAndParameters) {
  const uts::NamedTree* t3 = uts::find_tree("T3");
  ASSERT_NE(t3, nullptr);
  EXPECT_EQ(uts::describe(t3->params), "-t 0 -b 2000 -q 0.124875 -m 8 -r 42 -g 1");
  EXPECT_EQ(uts::describe(uts::find_tree("T1")->params), "-t 1 -a 3 -d 10 -b 4 -r 19 -g 1");
  EXPECT_EQ(uts::describe(uts::find_tree("T4")->params), "-t 2 -a 0 -d 16 -b 6 -q 0.234375 -m 4 -f 0.5 -r 1 -g 1");
  EXPECT_EQ(uts::find_tree("T3L")->expect.with_kids, 22268727);
  EXPECT_EQ(uts::find_tree("nope"), nullptr);
  std::vector<std::string> names;
  for (const auto& t : uts::named_trees()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"T1", "T5", "T2", "T3", "T4", "T1L", "T2L", "T3L", "T1XL", "T1XXL",
                                             "T3XXL", "T2XXL", "T3WL"}));
  uts::Params p = binomial(2000, 0.124875, 8, 42);
  p.g = 4;  // granularity does not change the tree
  EXPECT_EQ(uts::match_tree(p), t3);
  p.seed = 43;
  EXPECT_EQ(uts::match_tree(p), nullptr);
}

TEST(UtsTable, PublishedBinomialCountsSatisfyTheIdentity) {
  for (const auto& t : uts::named_trees()) {
    if (t.params.type != uts::TreeType::binomial || t.expect.leaves < 0) continue;
    const std::uint64_t n = t.expect.nodes, l = static_cast<std::uint64_t>(t.expect.leaves);
    const std::uint64_t m = static_cast<std::uint64_t>(t.params.m);
    EXPECT_EQ(n, 1 + 2000 + m * (n - l - 1)) << t.name;
    if (t.expect.with_kids >= 0) {
      EXPECT_EQ(static_cast<std::uint64_t>(t.expect.with_kids), n - l) << t.name;
    }
  }
}

// ---- input files ----------------------------------------------------------------------------

namespace {
std::string write_tmp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("uts_unit_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}
}  // namespace

TEST(UtsInput, ParsesTheBotsFormat) {
  const std::string f = write_tmp("ok.input", "2000 0.124875 8 42 1 4112897 1572 3599034 \n# comment\n");
  const uts::InputFile in = uts::read_input(f);
  EXPECT_EQ(uts::match_tree(in.params), uts::find_tree("T3"));
  EXPECT_EQ(in.nodes, 4112897u);
  EXPECT_EQ(in.depth, 1572);
  EXPECT_EQ(in.leaves, 3599034);
  std::filesystem::remove(f);
}

#ifdef UTS_DATA_DIR
TEST(UtsInput, SharedBotsFilesAreThePublishedTrees) {
  const std::string dir = std::string(UTS_DATA_DIR) + "/bots/uts/";
  if (!std::filesystem::exists(dir + "test.input")) GTEST_SKIP() << "no " << dir;
  EXPECT_EQ(uts::match_tree(uts::read_input(dir + "test.input").params), uts::find_tree("T3"));
  EXPECT_EQ(uts::match_tree(uts::read_input(dir + "small.input").params), uts::find_tree("T3L"));
  EXPECT_EQ(uts::match_tree(uts::read_input(dir + "large.input").params), uts::find_tree("T2XXL"));
  EXPECT_EQ(uts::match_tree(uts::read_input(dir + "huge.input").params), uts::find_tree("T3WL"));
  EXPECT_EQ(uts::read_input(dir + "tiny.input").nodes, 30399117u);
  // medium.input has q*m = 0.333344 * 3 = 1.000032 >= 1, yet its tree is finite and the file
  // states its node count: accepted.
  EXPECT_EQ(uts::read_input(dir + "medium.input").nodes, 1606963542u);
}
#endif

TEST(UtsInput, RejectsBadFiles) {
  using plait_bench::usage_error;
  EXPECT_THROW(uts::read_input("/nonexistent/uts.input"), usage_error);
  const char* bad[] = {
      "",                                           // empty
      "2000 0.124875 8 42 1 4112897 1572\n",        // 7 fields
      "2000 0.124875 8 42 1 4112897 1572 35 9\n",   // 9 fields
      "2000 abc 8 42 1 4112897 1572 3599034\n",     // not a number
      "2000 0.1 8.5 42 1 4112897 1572 3599034\n",   // m not an integer
      "2000 1.0 8 42 1 4112897 1572 3599034\n",     // q = 1
      "0 0.1 8 42 1 4112897 1572 3599034\n",        // b0 = 0
      "2000 0.1 0 42 1 4112897 1572 3599034\n",     // m = 0
      "2000 0.1 8 42 0 4112897 1572 3599034\n",     // g = 0
      "2000 0.1 8 -1 1 4112897 1572 3599034\n",     // negative seed
      "4 0.99 8 42 1 1 1 1\n",                     // q*m = 7.92 >= 1 with placeholder counts
      "2000 0.5 2 42 1 2000 1 1\n",                // q*m = 1; 2000 nodes is fewer than root + children
  };
  int k = 0;
  for (const char* text : bad) {
    const std::string f = write_tmp("bad" + std::to_string(k++), text);
    try {
      (void)uts::read_input(f);
      ADD_FAILURE() << "accepted: '" << text << "'";
    } catch (const usage_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(f), std::string::npos) << what;  // names the file
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;  // one line
    }
    std::filesystem::remove(f);
  }
}

TEST(UtsInput, ADirectoryIsNamedAsOne) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    (void)uts::read_input(dir);
    ADD_FAILURE() << "a directory was accepted";
  } catch (const plait_bench::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("it is a directory"), std::string::npos) << e.what();
  }
}

// ---- parameter validation -------------------------------------------------------------------

TEST(UtsValidate, SupercriticalBinomialTreesAreRefused) {
  using plait_bench::usage_error;
  // q*m >= 1: infinite expected size, for the binomial and the hybrid rule.
  EXPECT_THROW(uts::check_finite(binomial(100, 0.3, 4, 0)), usage_error);
  EXPECT_THROW(uts::check_finite(binomial(2000, 0.5, 2, 0)), usage_error);  // critical: q*m = 1
  uts::Params h = binomial(6, 0.5, 4, 1);
  h.type = uts::TreeType::hybrid;
  EXPECT_THROW(uts::check_finite(h), usage_error);
  // q*m < 1, and the published trees: T3L has q*m = 0.200014 * 5 = 1.00007 but is finite, its
  // counts are known.
  EXPECT_NO_THROW(uts::check_finite(binomial(2000, 0.124875, 8, 42)));
  for (const char* name : {"T3", "T3L", "T3XXL", "T2XXL", "T3WL", "T4"})
    EXPECT_NO_THROW(uts::check_finite(uts::find_tree(name)->params)) << name;
  EXPECT_NO_THROW(uts::check_finite(binomial(2000, 0.200014, 5, 7)));  // T3L's parameters, given by hand
  EXPECT_THROW(uts::check_finite(binomial(2000, 0.200014, 5, 8)), usage_error);  // another seed: unknown
  // A root without children is a one-node tree whatever q and m are.
  EXPECT_NO_THROW(uts::check_finite(binomial(0.5, 0.9, 8, 0)));
  // A node count stated for exactly this tree (an input file) shows that it ended; a count
  // below the root and its children is a placeholder.
  EXPECT_NO_THROW(uts::check_finite(binomial(2000, 0.333344, 3, 23), 1606963542));
  EXPECT_NO_THROW(uts::check_finite(binomial(4, 0.99, 8, 42), 5));
  EXPECT_THROW(uts::check_finite(binomial(4, 0.99, 8, 42), 4), usage_error);
  EXPECT_THROW(uts::check_finite(binomial(4, 0.99, 8, 42), 1), usage_error);
  // Geometric and balanced trees have no binomial rule.
  uts::Params g = binomial(4, 0.9, 8, 0);
  g.type = uts::TreeType::geometric;
  EXPECT_NO_THROW(uts::check_finite(g));
}


TEST(UtsValidate, RejectsWhatTheTreeCannotBeBuiltFrom) {
  using plait_bench::usage_error;
  auto bad = [](auto change) {
    uts::Params p = binomial(2000, 0.1, 4, 1);
    change(p);
    EXPECT_THROW(uts::validate(p), usage_error);
  };
  bad([](uts::Params& p) { p.q = 1.0; });
  bad([](uts::Params& p) { p.q = -0.1; });
  bad([](uts::Params& p) { p.m = 0; });
  bad([](uts::Params& p) { p.m = 101; });
  bad([](uts::Params& p) { p.b0 = 0; });
  bad([](uts::Params& p) { p.b0 = -3; });
  bad([](uts::Params& p) { p.g = 0; });
  bad([](uts::Params& p) { p.seed = -1; });
  bad([](uts::Params& p) { p.type = static_cast<uts::TreeType>(7); });
  bad([](uts::Params& p) {
    p.type = uts::TreeType::geometric;
    p.depth = 0;
  });
  bad([](uts::Params& p) {
    p.type = uts::TreeType::hybrid;
    p.depth = -2;
  });
  bad([](uts::Params& p) {
    p.type = uts::TreeType::geometric;
    p.shape = static_cast<uts::Shape>(4);
  });
  EXPECT_NO_THROW(uts::validate(binomial(2000, 0.0, 1, 0)));
}

namespace {
// Runs uts::configure on a command line; returns the usage_error text or "" when accepted.
std::string configure_error(std::vector<std::string> args) {
  args.insert(args.begin(), "uts-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(args.size());
  try {
    plait_bench::Cli cli("uts", "test", argc, argv.data());
    (void)uts::configure(cli, argc, argv.data());
    return "";
  } catch (const plait_bench::usage_error& e) {
    return e.what();
  }
}
}  // namespace

TEST(UtsValidate, CommandLine) {
  EXPECT_EQ(configure_error({"--tree", "T3"}), "");
  EXPECT_EQ(configure_error({"-t", "0", "-b", "2000", "-q", "0.124875", "-m", "8", "-r", "42"}), "");
  EXPECT_EQ(configure_error({"-t", "binomial", "-q", "0.5", "-m", "1"}), "");
  EXPECT_NE(configure_error({"--tree", "T9"}).find("T9"), std::string::npos);
  EXPECT_NE(configure_error({"-t", "7"}), "");
  EXPECT_NE(configure_error({"-t", "0", "-q", "1"}), "");
  EXPECT_NE(configure_error({"-t", "0", "-m", "0"}), "");
  EXPECT_NE(configure_error({"-b", "0"}), "");
  EXPECT_NE(configure_error({"-t", "1", "-d", "0"}), "");
  EXPECT_NE(configure_error({"-g", "0"}), "");
  EXPECT_NE(configure_error({"-a", "9"}), "");
  EXPECT_NE(configure_error({"--input", "/nonexistent/x.input"}), "");
  EXPECT_NE(configure_error({"--tree", "T3", "--input", "/nonexistent/x.input"}), "");
}

TEST(UtsValidate, SupercriticalCommandLinesAreRefused) {
  const std::string m = configure_error({"--type", "binomial", "--q", "0.3", "--m", "4", "--b0", "100"});
  EXPECT_EQ(m, "q*m = 1.2 (q = 0.3, m = 4) is >= 1: the expected size of the binomial tree is infinite and its "
               "search need not end; accepted: q*m < 1, a published tree, or an input file that states the tree's "
               "node count");
  EXPECT_EQ(configure_error({"--tree", "T3L"}), "");
  EXPECT_EQ(configure_error({"-t", "0", "-b", "2000", "-q", "0.200014", "-m", "5", "-r", "7"}), "");
  EXPECT_NE(configure_error({"--tree", "T3", "-q", "0.2"}).find("q*m = 1.6"), std::string::npos);
  EXPECT_NE(configure_error({"-t", "2", "-q", "0.5", "-m", "4"}).find("q*m = 2"), std::string::npos);
  EXPECT_EQ(configure_error({"-t", "0", "-q", "0.2", "-m", "4"}), "");
}

TEST(UtsValidate, NamedTreeExpectations) {
  std::vector<std::string> args = {"uts-test", "--tree", "T3", "-g", "3"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  plait_bench::Cli cli("uts", "test", 5, argv.data());
  const uts::Config cfg = uts::configure(cli, 5, argv.data());
  EXPECT_EQ(cfg.label, "T3");
  EXPECT_EQ(cfg.params.g, 3);
  ASSERT_EQ(cfg.expects.size(), 1u);
  EXPECT_EQ(cfg.expects[0].second.nodes, 4112897u);

  uts::Counts good{4112897, 3599034, 513863, 1572};
  plait_bench::Record ok;
  EXPECT_NO_THROW(uts::verify(ok, cfg, good));
  EXPECT_NE(ok.verified_what.find("binomial identity"), std::string::npos);
  uts::Counts wrong = good;
  wrong.leaves -= 1;
  wrong.with_kids += 1;
  plait_bench::Record bad;
  try {
    uts::verify(bad, cfg, wrong);
    ADD_FAILURE() << "a wrong count verified";
  } catch (const plait_bench::verify_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("leaves 3599033 (expected 3599034)"), std::string::npos) << what;
  }
}
