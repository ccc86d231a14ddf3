// UTS tree definition, SHA-1, command line and verification (see common.hpp and docs/uts.md).
#include "uts/common.hpp"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "common/driver.hpp"

namespace uts {

// =============================================================================================
// SHA-1
//
// One compression function, fully unrolled at compile time (templates, so gcc and clang unroll it
// alike without pragmas), working on 16 message words in a rolling window. A node hash is always
// a single 64-byte block (20 or 24 message bytes + padding), so the node functions below build
// that block directly from the parent's chaining words and call the compression once.
// =============================================================================================
namespace {

constexpr std::uint32_t iv[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};

// Message word for round T; from round 16 on it is computed in place in the 16-word window.
template <int T>
[[gnu::always_inline]] inline std::uint32_t word(std::uint32_t* w) {
  if constexpr (T < 16) {
    return w[T];
  } else {
    const std::uint32_t x = std::rotl(w[(T + 13) & 15] ^ w[(T + 8) & 15] ^ w[(T + 2) & 15] ^ w[T & 15], 1);
    w[T & 15] = x;
    return x;
  }
}

// One round. Instead of shifting five variables every round, the callers rotate the roles of the
// variables: the round's new `a` lands in `e`, and `b` is rotated in place.
template <int T>
[[gnu::always_inline]] inline void round(std::uint32_t a, std::uint32_t& b, std::uint32_t c, std::uint32_t d,
                                         std::uint32_t& e, std::uint32_t* w) {
  std::uint32_t f;
  std::uint32_t k;
  if constexpr (T < 20) {
    f = d ^ (b & (c ^ d));  // choose
    k = 0x5a827999u;
  } else if constexpr (T < 40) {
    f = b ^ c ^ d;  // parity
    k = 0x6ed9eba1u;
  } else if constexpr (T < 60) {
    f = (b & c) | (d & (b | c));  // majority
    k = 0x8f1bbcdcu;
  } else {
    f = b ^ c ^ d;
    k = 0xca62c1d6u;
  }
  e += std::rotl(a, 5) + f + k + word<T>(w);
  b = std::rotl(b, 30);
}

template <int T>
[[gnu::always_inline]] inline void five_rounds(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d,
                                               std::uint32_t& e, std::uint32_t* w) {
  round<T + 0>(a, b, c, d, e, w);
  round<T + 1>(e, a, b, c, d, w);
  round<T + 2>(d, e, a, b, c, w);
  round<T + 3>(c, d, e, a, b, w);
  round<T + 4>(b, c, d, e, a, w);
}

template <std::size_t... G>
[[gnu::always_inline]] inline void all_rounds(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d,
                                              std::uint32_t& e, std::uint32_t* w, std::index_sequence<G...>) {
  (five_rounds<static_cast<int>(G) * 5>(a, b, c, d, e, w), ...);
}

// h: chaining words in/out; w: the block as 16 big-endian words (overwritten).
[[gnu::always_inline]] inline void compress(std::uint32_t h[5], std::uint32_t w[16]) {
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  all_rounds(a, b, c, d, e, w, std::make_index_sequence<16>{});
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

inline std::uint32_t load_be(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

inline void store_be(std::uint32_t v, std::uint8_t* p) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

void compress_bytes(std::uint32_t h[5], const std::uint8_t* block) {
  std::uint32_t w[16];
  for (int i = 0; i < 16; ++i) w[i] = load_be(block + 4 * i);
  compress(h, w);
}

}  // namespace

digest sha1(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint32_t h[5] = {iv[0], iv[1], iv[2], iv[3], iv[4]};
  std::size_t left = len;
  while (left >= 64) {
    compress_bytes(h, p);
    p += 64;
    left -= 64;
  }
  std::uint8_t tail[128] = {};
  if (left) std::memcpy(tail, p, left);
  tail[left] = 0x80;
  const std::size_t tail_len = left + 9 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(len) * 8u;
  for (std::size_t i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
  compress_bytes(h, tail);
  if (tail_len == 128) compress_bytes(h, tail + 64);
  digest out;
  for (int i = 0; i < 5; ++i) store_be(h[i], out.data() + 4 * i);
  return out;
}

std::string to_hex(const digest& d) {
  static const char* hexd = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : d) {
    s += hexd[b >> 4];
    s += hexd[b & 15];
  }
  return s;
}

digest state_bytes(const Node& n) {
  digest out;
  for (int i = 0; i < 5; ++i) store_be(n.h[i], out.data() + 4 * i);
  return out;
}

void root_state(std::uint32_t seed, std::uint32_t out[5]) {
  // 20 message bytes: 16 zeros and the seed; then 0x80 and the length, 160 bits.
  std::uint32_t w[16] = {0, 0, 0, 0, seed, 0x80000000u, 0, 0, 0, 0, 0, 0, 0, 0, 0, 160};
  std::uint32_t h[5] = {iv[0], iv[1], iv[2], iv[3], iv[4]};
  compress(h, w);
  for (int i = 0; i < 5; ++i) out[i] = h[i];
}

void child_state(const std::uint32_t parent[5], std::uint32_t i, std::uint32_t out[5]) {
  // 24 message bytes: the parent's state (its chaining words are already the big-endian message
  // words) and the child index; then 0x80 and the length, 192 bits.
  std::uint32_t w[16] = {parent[0], parent[1], parent[2], parent[3], parent[4], i, 0x80000000u, 0, 0, 0, 0, 0, 0, 0, 0,
                         192};
  std::uint32_t h[5] = {iv[0], iv[1], iv[2], iv[3], iv[4]};
  compress(h, w);
  for (int k = 0; k < 5; ++k) out[k] = h[k];
}

// =============================================================================================
// Parameters, published trees, input files
// =============================================================================================

const char* type_name(TreeType t) {
  switch (t) {
    case TreeType::binomial: return "binomial";
    case TreeType::geometric: return "geometric";
    case TreeType::hybrid: return "hybrid";
    case TreeType::balanced: return "balanced";
  }
  return "?";
}

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::linear: return "linear";
    case Shape::expdec: return "expdec";
    case Shape::cyclic: return "cyclic";
    case Shape::fixed: return "fixed";
  }
  return "?";
}

namespace {
std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

bool uses_geo(TreeType t) { return t == TreeType::geometric || t == TreeType::hybrid; }
bool uses_bin(TreeType t) { return t == TreeType::binomial || t == TreeType::hybrid; }
bool uses_depth(TreeType t) { return t != TreeType::binomial; }
}  // namespace

std::string describe(const Params& p) {
  std::string s = "-t " + std::to_string(static_cast<int>(p.type));
  if (uses_geo(p.type)) s += " -a " + std::to_string(static_cast<int>(p.shape));
  if (uses_depth(p.type)) s += " -d " + std::to_string(p.depth);
  s += " -b " + fmt_double(p.b0);
  if (uses_bin(p.type)) s += " -q " + fmt_double(p.q) + " -m " + std::to_string(p.m);
  if (p.type == TreeType::hybrid) s += " -f " + fmt_double(p.f);
  s += " -r " + std::to_string(p.seed) + " -g " + std::to_string(p.g);
  return s;
}

void validate(const Params& p) {
  using plait_bench::usage_error;
  const int t = static_cast<int>(p.type);
  if (t < 0 || t > 3)
    throw usage_error("unknown tree type " + std::to_string(t) +
                      "; accepted 0 (binomial), 1 (geometric), 2 (hybrid), 3 (balanced)");
  const int a = static_cast<int>(p.shape);
  if (a < 0 || a > 3)
    throw usage_error("unknown geometric shape " + std::to_string(a) +
                      "; accepted 0 (linear), 1 (expdec), 2 (cyclic), 3 (fixed)");
  if (!(p.b0 > 0) || !std::isfinite(p.b0) || p.b0 > 2147483647.0)
    throw usage_error("root branching factor b0 = " + fmt_double(p.b0) + " is invalid; it must be > 0 (and < 2^31)");
  if (p.seed < 0 || p.seed > 2147483647)
    throw usage_error("root seed r = " + std::to_string(p.seed) + " is invalid; accepted 0 <= r < 2^31");
  if (p.g < 1) throw usage_error("granularity g = " + std::to_string(p.g) + " is invalid; it must be >= 1");
  if (p.g > 1000000) throw usage_error("granularity g = " + std::to_string(p.g) + " is too large; accepted 1..1000000");
  if (uses_bin(p.type)) {
    if (!(p.q >= 0.0 && p.q < 1.0))
      throw usage_error("non-leaf probability q = " + fmt_double(p.q) + " is invalid; accepted 0 <= q < 1");
    if (p.m < 1)
      throw usage_error("non-leaf branching factor m = " + std::to_string(p.m) + " is invalid; it must be >= 1");
    if (p.m > max_children)
      throw usage_error("non-leaf branching factor m = " + std::to_string(p.m) + " exceeds the per-node cap of " +
                        std::to_string(max_children));
  }
  if (uses_geo(p.type) && p.depth <= 0)
    throw usage_error("geometric depth d = " + std::to_string(p.depth) + " is invalid; it must be >= 1");
  if (p.type == TreeType::balanced && p.depth < 0)
    throw usage_error("balanced depth d = " + std::to_string(p.depth) + " is invalid; it must be >= 0");
  if (p.depth > 2147483647) throw usage_error("depth d = " + std::to_string(p.depth) + " is too large");
  if (p.type == TreeType::hybrid && !(p.f >= 0.0 && std::isfinite(p.f)))
    throw usage_error("hybrid shift fraction f = " + fmt_double(p.f) + " is invalid; it must be >= 0");
}

void check_finite(const Params& p, std::uint64_t stated_nodes) {
  if (!uses_bin(p.type)) return;
  // Below the root a binomial node has m children with probability q, so every generation is
  // q*m times the one before it on average and the expected size is a geometric series. From
  // q*m = 1 on it diverges; for q*m > 1 a line of descent survives forever with a probability that
  // quickly nears 1, and the depth-first search then goes deeper until the stack overflows.
  const double qm = p.q * static_cast<double>(p.m);
  if (!(qm >= 1.0)) return;
  const double root_kids = std::floor(p.b0);
  if (p.type == TreeType::binomial && root_kids < 1) return;  // a childless root: a one-node tree
  // A particular tree can still be finite: T3L (BOTS small.input, q*m = 1.00007, 111,345,631
  // nodes) and BOTS medium.input (q*m = 1.000032, 1,606,963,542 nodes) are. Known counts say that
  // the tree was searched to the end: a published tree's, or the node count an input file states
  // for its own parameters (a count below root + root children is a placeholder, not a count).
  if (const NamedTree* t = match_tree(p); t != nullptr && t->expect.nodes > 0) return;
  if (p.type == TreeType::binomial && stated_nodes > 0 && static_cast<double>(stated_nodes) >= 1 + root_kids)
    return;
  throw plait_bench::usage_error("q*m = " + fmt_double(qm) + " (q = " + fmt_double(p.q) +
                                 ", m = " + std::to_string(p.m) +
                                 ") is >= 1: the expected size of the binomial tree is infinite and its search "
                                 "need not end; accepted: q*m < 1, a published tree, or an input file that states "
                                 "the tree's node count");
}

bool same_tree(const Params& a, const Params& b) {
  if (a.type != b.type || a.b0 != b.b0 || a.seed != b.seed) return false;
  if (uses_geo(a.type) && a.shape != b.shape) return false;
  if (uses_depth(a.type) && a.depth != b.depth) return false;
  if (uses_bin(a.type) && (a.q != b.q || a.m != b.m)) return false;
  if (a.type == TreeType::hybrid && a.f != b.f) return false;
  return true;
}

namespace {

Params bin(double b0, double q, std::int64_t m, std::int64_t r) {
  return {.type = TreeType::binomial, .b0 = b0, .seed = r, .q = q, .m = m};
}

Params geo(Shape a, std::int64_t d, double b0, std::int64_t r) {
  return {.type = TreeType::geometric, .b0 = b0, .seed = r, .shape = a, .depth = d};
}

Params hyb(Shape a, std::int64_t d, double b0, std::int64_t r, double q, std::int64_t m) {
  return {.type = TreeType::hybrid, .b0 = b0, .seed = r, .shape = a, .depth = d, .q = q, .m = m};
}

// The published UTS sample trees (UTS distribution's sample_trees.sh, BOTS inputs, and the
// seed study 000 for the T3L task count). nodes / depth / leaves / nodes-with-children; -1 where
// nothing was published.
const NamedTree kTrees[] = {
    {"T1", geo(Shape::fixed, 10, 4, 19), {4130071, 10, 3305118, -1}, "geometric, fixed shape (~4M nodes)"},
    {"T5", geo(Shape::linear, 20, 4, 34), {4147582, 20, 2181318, -1}, "geometric, linear decrease (~4M nodes)"},
    {"T2", geo(Shape::cyclic, 16, 6, 502), {4117769, 81, 2342762, -1}, "geometric, cyclic (~4M nodes)"},
    {"T3", bin(2000, 0.124875, 8, 42), {4112897, 1572, 3599034, -1}, "binomial, BOTS test.input (~4M nodes)"},
    {"T4", hyb(Shape::linear, 16, 6, 1, 0.234375, 4), {4132453, 134, 3108986, -1}, "hybrid (~4M nodes)"},
    {"T1L", geo(Shape::fixed, 13, 4, 29), {102181082, 13, 81746377, -1}, "geometric, fixed shape (~102M nodes)"},
    {"T2L", geo(Shape::cyclic, 23, 7, 220), {96793510, 67, 53791152, -1}, "geometric, cyclic (~97M nodes)"},
    {"T3L", bin(2000, 0.200014, 5, 7), {111345631, 17844, 89076904, 22268727},
     "binomial, BOTS small.input, 'T3S' of the seed study (~111M nodes, depth 17844)"},
    {"T1XL", geo(Shape::fixed, 15, 4, 29), {1635119272, 15, 1308100063, -1}, "geometric, fixed shape (~1.6G nodes)"},
    {"T1XXL", geo(Shape::fixed, 15, 4, 19), {4230646601, 15, -1, -1}, "geometric, fixed shape (~4.2G nodes)"},
    {"T3XXL", bin(2000, 0.499995, 2, 316), {2793220501, -1, -1, -1}, "binomial (~2.8G nodes)"},
    {"T2XXL", bin(2000, 0.499999995, 2, 0), {10612052303, 216370, 5306027151, -1},
     "binomial, BOTS large.input (~10.6G nodes)"},
    {"T3WL", bin(2000, 0.4999995, 2, 559), {157063495159, 758577, 78531748579, -1},
     "binomial, BOTS huge.input (~157G nodes)"},
};

}  // namespace

std::span<const NamedTree> named_trees() { return std::span<const NamedTree>(kTrees); }

const NamedTree* find_tree(std::string_view name) {
  for (const auto& t : kTrees)
    if (name == t.name) return &t;
  return nullptr;
}

const NamedTree* match_tree(const Params& p) {
  for (const auto& t : kTrees)
    if (same_tree(t.params, p)) return &t;
  return nullptr;
}

InputFile read_input(const std::string& path) {
  using plait_bench::usage_error;
  const std::string who = "input file '" + path + "'";
  const std::string format = "expected a first line 'b0 q m r g nodes depth leaves'";
  // A directory opens like a file and reads like an empty one: say what it is.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw usage_error(who + ": it is a directory; give a file whose first line is 'b0 q m r g nodes depth leaves'");
  std::ifstream in(path);
  if (!in) throw usage_error(who + ": cannot open it (" + std::strerror(errno) + ")");
  std::string line;
  if (!std::getline(in, line)) throw usage_error(who + ": it is empty; " + format);
  std::vector<std::string> tok;
  {
    std::istringstream ss(line);
    std::string t;
    while (ss >> t) tok.push_back(t);
  }
  static const char* names[8] = {"b0", "q", "m", "r", "g", "nodes", "depth", "leaves"};
  if (tok.size() != 8)
    throw usage_error(who + ": the first line has " + std::to_string(tok.size()) + " fields; " + format);
  // A field must be a number as a whole (a NUL byte inside a token ends strtod's view of it
  // early, hence the comparison with the token's end); bytes of a binary file are quoted escaped.
  auto as_double = [&](int k) {
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(tok[k].c_str(), &end);
    if (end != tok[k].c_str() + tok[k].size() || errno == ERANGE || !std::isfinite(v))
      throw usage_error(who + ": field " + names[k] + " = '" + plait_bench::printable(tok[k], 40) +
                        "' is not a number; " + format);
    return v;
  };
  auto as_int = [&](int k) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(tok[k].c_str(), &end, 10);
    if (end != tok[k].c_str() + tok[k].size() || errno == ERANGE)
      throw usage_error(who + ": field " + names[k] + " = '" + plait_bench::printable(tok[k], 40) +
                        "' is not an integer; " + format);
    return static_cast<std::int64_t>(v);
  };
  InputFile f;
  f.params = Params{};
  f.params.type = TreeType::binomial;
  f.params.b0 = as_double(0);
  f.params.q = as_double(1);
  f.params.m = as_int(2);
  f.params.seed = as_int(3);
  f.params.g = as_int(4);
  const std::int64_t nodes = as_int(5);
  f.depth = as_int(6);
  f.leaves = as_int(7);
  if (nodes < 0 || f.depth < 0 || f.leaves < 0)
    throw usage_error(who + ": the expected nodes, depth and leaves must not be negative");
  f.nodes = static_cast<std::uint64_t>(nodes);
  try {
    validate(f.params);
    check_finite(f.params, f.nodes);
  } catch (const usage_error& e) {
    throw usage_error(who + ": " + e.what());
  }
  return f;
}

// =============================================================================================
// The tree
// =============================================================================================

Tree::Tree(const Params& p)
    : p_(p), g_(static_cast<std::uint32_t>(p.g)), shift_height_(p.f * static_cast<double>(p.depth)) {
  validate(p);
}

Node Tree::root() const {
  Node n;
  root_state(static_cast<std::uint32_t>(p_.seed), n.h);
  n.height = 0;
  n.nkids = num_children(n);
  return n;
}

void Tree::child(const Node& parent, int i, Node& out) const {
  std::uint32_t idx = static_cast<std::uint32_t>(i);
  std::uint32_t h[5];
  for (std::uint32_t k = 0; k < g_; ++k) {
    // Granularity: every repetition must really hash. The empty asm statements hide from the
    // optimiser that the input is the same each time and make each result count as used.
    asm volatile("" : "+r"(idx));
    child_state(parent.h, idx, h);
    asm volatile("" : : "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]), "r"(h[4]));
  }
  for (int k = 0; k < 5; ++k) out.h[k] = h[k];
  out.height = parent.height + 1;
  out.nkids = num_children(out);
}

// The expressions below follow the UTS reference operation by operation, so that the
// floating-point results, and therefore the trees, are bit-identical.
int Tree::geometric_children(const Node& n) const {
  const double b_0 = p_.b0;
  const int depth = n.height;
  const double gen_mx = static_cast<double>(p_.depth);
  double b_i = b_0;
  if (depth > 0) {
    switch (p_.shape) {
      case Shape::expdec:
        b_i = b_0 * std::pow(static_cast<double>(depth), -std::log(b_0) / std::log(gen_mx));
        break;
      case Shape::cyclic:
        if (depth > 5 * p_.depth)
          b_i = 0.0;
        else
          b_i = std::pow(b_0, std::sin(2.0 * 3.141592653589793 * static_cast<double>(depth) / gen_mx));
        break;
      case Shape::fixed:
        b_i = depth < p_.depth ? b_0 : 0.0;
        break;
      case Shape::linear:
        b_i = b_0 * (1.0 - static_cast<double>(depth) / gen_mx);
        break;
    }
  }
  const double p = 1.0 / (1.0 + b_i);  // geometric distribution with mean b_i
  const double u = node_prob(n);
  const double k = std::floor(std::log(1 - u) / std::log(1 - p));  // inverse CDF
  // Clamp before converting (the reference converts first; identical for every value an int
  // can hold, and defined for the rest). The cap applies to every geometric node, root included.
  if (!(k > 0.0)) return 0;
  if (k >= static_cast<double>(max_children)) return max_children;
  return static_cast<int>(k);
}

int Tree::num_children(const Node& n) const {
  switch (p_.type) {
    case TreeType::binomial:
      if (n.height == 0) return static_cast<int>(std::floor(p_.b0));  // the root: not capped
      return node_prob(n) < p_.q ? static_cast<int>(p_.m) : 0;
    case TreeType::geometric:
      return geometric_children(n);
    case TreeType::hybrid:
      if (static_cast<double>(n.height) < shift_height_) return geometric_children(n);
      return node_prob(n) < p_.q ? static_cast<int>(p_.m) : 0;
    case TreeType::balanced:
      return n.height < p_.depth ? static_cast<int>(p_.b0) : 0;
  }
  return 0;
}

// =============================================================================================
// Command line, verification, statistics
// =============================================================================================

namespace {

// --tree and --input decide the defaults of the shape options, so they are looked at before the
// driver parses the command line (which reports anything malformed).
std::string prescan(int argc, char** argv, const std::string& opt) {
  std::string val;
  const std::string eq = opt + "=";
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    if (a == opt && k + 1 < argc)
      val = argv[++k];
    else if (a.rfind(eq, 0) == 0)
      val = a.substr(eq.size());
  }
  return val;
}

const std::vector<std::string> kTypeChoices = {"0", "1", "2", "3", "binomial", "geometric", "hybrid", "balanced"};
const std::vector<std::string> kShapeChoices = {"0", "1", "2", "3", "linear", "expdec", "cyclic", "fixed"};

int choice_index(const std::vector<std::string>& choices, const std::string& v) {
  for (std::size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == v) return static_cast<int>(i % 4);
  return -1;
}

std::string basename_of(const std::string& path) {
  auto s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

}  // namespace

Config configure(plait_bench::Cli& cli, int argc, char** argv) {
  using plait_bench::usage_error;
  std::string tree_name = prescan(argc, argv, "--tree");
  std::string input_path = prescan(argc, argv, "--input");
  Params p;
  if (const NamedTree* t = find_tree(tree_name)) p = t->params;
  InputFile file;
  bool have_file = false;
  if (!input_path.empty() && tree_name.empty()) {
    file = read_input(input_path);
    p = file.params;
    have_file = true;
  }
  const Params base = p;
  std::string type_s = kTypeChoices[static_cast<std::size_t>(p.type)];
  std::string shape_s = kShapeChoices[static_cast<std::size_t>(p.shape)];

  std::vector<std::string> names;
  for (const auto& t : named_trees()) names.push_back(t.name);
  cli.add_string("tree", &tree_name, "published UTS tree; its counts are verified", names);
  cli.add_string("input", &input_path, "BOTS UTS input file (first line: b0 q m r g nodes depth leaves)");
  cli.add_string("type", &type_s, "tree type", kTypeChoices, {"-t"});
  cli.add_double("b0", &p.b0, 0, 2147483647.0, "root branching factor", {"-b"}, {.lo = true});
  cli.add_int("seed", &p.seed, 0, 2147483647, "root seed", {"-r"});
  cli.add_string("shape", &shape_s, "geometric shape function", kShapeChoices, {"-a"});
  cli.add_int("depth", &p.depth, 0, 2147483647, "geometric gen_mx / balanced depth (geometric: >= 1)", {"-d"});
  cli.add_double("q", &p.q, 0, 1, "binomial: probability of a non-leaf node", {"-q"}, {.hi = true});
  cli.add_int("m", &p.m, 1, max_children, "binomial: children of a non-leaf node", {"-m"});
  cli.add_double("f", &p.f, 0, 1e9, "hybrid: geometric above depth f*d, binomial below", {"-f"});
  cli.add_int("g", &p.g, 1, 1000000, "compute granularity: SHA-1 hashes per child", {"-g"});
  cli.parse();

  if (!tree_name.empty() && !input_path.empty())
    throw usage_error("give either --tree or --input, not both");
  p.type = static_cast<TreeType>(choice_index(kTypeChoices, type_s));
  p.shape = static_cast<Shape>(choice_index(kShapeChoices, shape_s));
  validate(p);
  const bool modified = !same_tree(base, p);
  // Only the input file's own tree keeps the node count the file states.
  check_finite(p, have_file && !modified ? file.nodes : 0);

  Config cfg;
  cfg.params = p;
  if (!tree_name.empty())
    cfg.label = modified ? tree_name + "-modified" : tree_name;
  else if (have_file)
    cfg.label = "input:" + basename_of(input_path) + (modified ? "-modified" : "");
  else
    cfg.label = "custom";

  if (const NamedTree* t = match_tree(p)) {
    cfg.expects.emplace_back(std::string(t->name) + " (published)", t->expect);
    if (cfg.label == "custom") cfg.label = t->name;
  }
  if (have_file && !modified) {
    // BOTS files for trees without published counts carry placeholders ("1 1") for depth and
    // leaves; only values that can belong to a real tree of that size are checked.
    Expect e;
    e.nodes = file.nodes;
    if (file.depth > 1 && file.leaves > 1) {
      e.depth = file.depth;
      e.leaves = file.leaves;
    }
    cfg.expects.emplace_back("input file " + basename_of(input_path), e);
  }
  return cfg;
}

namespace {

std::string u64(std::uint64_t v) { return std::to_string(v); }

// Exact counts of a balanced tree, or false when they do not fit in 64 bits.
bool balanced_counts(std::uint64_t b, std::int64_t d, std::uint64_t& nodes, std::uint64_t& leaves) {
  nodes = 1;
  leaves = 1;
  if (b == 0) return true;
  std::uint64_t level = 1;
  for (std::int64_t k = 1; k <= d; ++k) {
    if (level > UINT64_MAX / b) return false;
    level *= b;
    if (nodes > UINT64_MAX - level) return false;
    nodes += level;
  }
  leaves = level;
  return true;
}

}  // namespace

void verify(plait_bench::Record& rec, const Config& cfg, const Counts& c) {
  const Params& p = cfg.params;
  std::vector<std::string> bad;
  std::vector<std::string> good;

  if (c.nodes != c.leaves + c.with_kids)
    bad.push_back("nodes " + u64(c.nodes) + " != leaves " + u64(c.leaves) + " + nodes with children " +
                  u64(c.with_kids));

  for (const auto& [src, e] : cfg.expects) {
    std::vector<std::string> miss;
    std::string what;
    auto cmp = [&](const char* name, std::uint64_t got, std::int64_t want) {
      if (want < 0) return;
      if (got != static_cast<std::uint64_t>(want))
        miss.push_back(std::string(name) + " " + u64(got) + " (expected " + std::to_string(want) + ")");
      else
        what += (what.empty() ? "" : ", ") + std::string(name) + " " + u64(got);
    };
    if (e.nodes) cmp("nodes", c.nodes, static_cast<std::int64_t>(e.nodes));
    cmp("depth", static_cast<std::uint64_t>(c.depth), e.depth);
    cmp("leaves", c.leaves, e.leaves);
    cmp("nodes with children", c.with_kids, e.with_kids);
    if (!miss.empty()) {
      std::string m = src + ": ";
      for (std::size_t i = 0; i < miss.size(); ++i) m += (i ? ", " : "") + miss[i];
      bad.push_back(m);
    } else if (!what.empty()) {
      good.push_back(what + " as " + src);
    }
  }

  const bool known = !cfg.expects.empty();
  if (p.type == TreeType::binomial) {
    const std::uint64_t root_kids = static_cast<std::uint64_t>(std::floor(p.b0));
    const std::uint64_t m = static_cast<std::uint64_t>(p.m);
    bool ok;
    std::string ident;
    if (root_kids == 0) {
      ok = c.nodes == 1;
      ident = "root without children: nodes = 1";
    } else {
      ok = c.with_kids >= 1 && c.nodes == 1 + root_kids + m * (c.with_kids - 1);
      ident = "binomial identity nodes = 1 + b0 + m*(nodes - leaves - 1) = 1 + " + u64(root_kids) + " + " + u64(m) +
              "*" + (c.with_kids >= 1 ? u64(c.with_kids - 1) : std::string("-1"));
    }
    if (ok)
      good.push_back(ident + " holds" + (known ? "" : " (no published counts for these parameters)"));
    else
      bad.push_back(ident + " fails: nodes " + u64(c.nodes) + ", leaves " + u64(c.leaves));
  } else if (p.type == TreeType::balanced) {
    std::uint64_t n, l;
    if (balanced_counts(static_cast<std::uint64_t>(p.b0), p.depth, n, l)) {
      if (c.nodes == n && c.leaves == l && (c.nodes == 1 || c.depth == p.depth))
        good.push_back("balanced tree: nodes " + u64(n) + ", leaves " + u64(l) + ", depth " + std::to_string(c.depth) +
                       " as b^0 + ... + b^d");
      else
        bad.push_back("balanced tree: nodes " + u64(c.nodes) + " (expected " + u64(n) + "), leaves " + u64(c.leaves) +
                      " (expected " + u64(l) + "), depth " + std::to_string(c.depth) + " (expected " +
                      std::to_string(p.depth) + ")");
    }
  } else if (!known) {
    // Geometric and hybrid trees have no closed form; say what was checked.
    std::int64_t bound = -1;
    if (p.type == TreeType::geometric && (p.shape == Shape::linear || p.shape == Shape::fixed)) bound = p.depth;
    if (p.type == TreeType::geometric && p.shape == Shape::cyclic) bound = 5 * p.depth + 1;
    std::string what = "no published counts for these parameters; checked nodes = leaves + nodes with children";
    if (bound >= 0) {
      if (c.depth > bound)
        bad.push_back("depth " + std::to_string(c.depth) + " exceeds the shape's bound " + std::to_string(bound));
      what += " and depth <= " + std::to_string(bound);
    }
    good.push_back(what);
  }

  if (!bad.empty()) {
    std::string m = cfg.label + ": ";
    for (std::size_t i = 0; i < bad.size(); ++i) m += (i ? "; " : "") + bad[i];
    rec.check(false, m);
  }
  std::string m = cfg.label + ": ";
  for (std::size_t i = 0; i < good.size(); ++i) m += (i ? "; " : "") + good[i];
  rec.check(true, m);
}

void report(plait_bench::Record& rec, const Config& cfg, const Counts& c, std::uint64_t moved, long long threads) {
  const double t = rec.time_s > 0 ? rec.time_s : 1e-9;
  rec.stat("nodes", static_cast<unsigned long long>(c.nodes));
  rec.stat("depth", static_cast<long long>(c.depth));
  rec.stat("leaves", static_cast<unsigned long long>(c.leaves));
  rec.stat("tasks", static_cast<unsigned long long>(c.with_kids));
  rec.stat("moved_tasks", static_cast<unsigned long long>(moved));
  rec.stat("moved_per_thread_per_s", static_cast<double>(moved) / static_cast<double>(threads) / t);
  rec.stat("nodes_per_s", static_cast<double>(c.nodes) / t);
  rec.stat("sha1_ops", static_cast<unsigned long long>((c.nodes - 1) * static_cast<std::uint64_t>(cfg.params.g) + 1));
  rec.stat("tree", cfg.label);
  rec.stat("tree_params", describe(cfg.params));
}

}  // namespace uts
