// UTS (Unbalanced Tree Search): the tree definition shared by every runtime's binary.
//
// Everything that decides the shape of the tree lives here and in common.cpp, which is compiled
// once into the static library uts_common and linked into uts-serial, uts-plait, uts-tbb and
// uts-gomp / uts-libomp: the same SHA-1, the same child rule, the same flags for all of them.
// The runtimes only differ in how they walk the tree (docs/uts.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plait_bench {
class Cli;
struct Record;
}  // namespace plait_bench

namespace uts {

// ---- SHA-1 (FIPS 180-4) ---------------------------------------------------------------------

using digest = std::array<std::uint8_t, 20>;

// SHA-1 of an arbitrary byte string (used by the tests and for cross-checking the node hash).
digest sha1(const void* data, std::size_t len);
std::string to_hex(const digest& d);

// ---- nodes ----------------------------------------------------------------------------------

// A node's 20-byte state is kept as the five SHA-1 chaining words h[0..4]; the state bytes are
// those words written big-endian, which is also how SHA-1 reads them back as message words, so a
// child hash needs no byte shuffling at all.
struct Node {
  std::uint32_t h[5];
  std::int32_t height;  // root = 0
  std::int32_t nkids;   // number of children
};

digest state_bytes(const Node& n);
// bytes 16..19 of the state, big-endian, masked to 31 bits
inline std::int32_t node_rand(const Node& n) { return static_cast<std::int32_t>(n.h[4] & 0x7fffffffu); }
// node_rand / 2^31, in [0, 1)
inline double node_prob(const Node& n) { return static_cast<double>(node_rand(n)) / 2147483648.0; }

// root state: SHA-1(16 zero bytes, seed as 4 big-endian bytes)
void root_state(std::uint32_t seed, std::uint32_t out[5]);
// child i's state: SHA-1(parent's 20 state bytes, i as 4 big-endian bytes)
void child_state(const std::uint32_t parent[5], std::uint32_t i, std::uint32_t out[5]);

// ---- tree parameters ------------------------------------------------------------------------

// Numbering as in the UTS reference (-t and -a).
enum class TreeType : int { binomial = 0, geometric = 1, hybrid = 2, balanced = 3 };
enum class Shape : int { linear = 0, expdec = 1, cyclic = 2, fixed = 3 };

inline constexpr int max_children = 100;  // cap for every node except a binomial root

// Defaults are the UTS reference's.
struct Params {
  TreeType type = TreeType::geometric;  // -t
  double b0 = 4.0;                      // -b  root branching factor
  long long seed = 0;                // -r  root seed, 0 <= r < 2^31
  Shape shape = Shape::linear;          // -a  geometric shape function
  long long depth = 6;               // -d  geometric gen_mx / balanced depth
  double q = 15.0 / 64.0;               // -q  binomial: probability that a node has m children
  long long m = 4;                   // -m  binomial: children of a non-leaf node
  double f = 0.5;                       // -f  hybrid: geometric above depth f*d, binomial below
  long long g = 1;                   // -g  compute granularity: hashes per child
};

const char* type_name(TreeType t);
const char* shape_name(Shape s);
// "-t 0 -b 2000 -q 0.124875 -m 8 -r 42 -g 1" (only the letters that matter for the type)
std::string describe(const Params& p);
// Throws plait_bench::usage_error (one line) for parameters the tree cannot be built from.
void validate(const Params& p);
// Throws plait_bench::usage_error (one line) when the binomial rule (binomial and hybrid trees)
// has q*m >= 1: the expected tree size is infinite, and a supercritical tree's search runs until
// the stack overflows. Accepted nevertheless when the tree's node count is known, so that this
// particular tree was searched to the end: a published tree (T3L has q*m = 1.00007), or
// `stated_nodes`, the count an input file gives for exactly these parameters, when it is a real
// count (at least the root and its children; BOTS medium.input, q*m = 1.000032). 0: none stated.
void check_finite(const Params& p, std::uint64_t stated_nodes = 0);
// Same tree (g is ignored: it does not change the tree).
bool same_tree(const Params& a, const Params& b);

// ---- published trees and expectations -------------------------------------------------------

struct Expect {
  std::uint64_t nodes = 0;      // 0: unknown
  std::int64_t depth = -1;      // -1: unknown
  std::int64_t leaves = -1;     // -1: unknown
  std::int64_t with_kids = -1;  // nodes that have children; -1: unknown
};

struct NamedTree {
  const char* name;
  Params params;
  Expect expect;
  const char* note;
};

std::span<const NamedTree> named_trees();
const NamedTree* find_tree(std::string_view name);
const NamedTree* match_tree(const Params& p);  // the published tree with these parameters, if any

// A BOTS UTS input file: first line "b0 q m r g nodes depth leaves" (binomial trees). The rest
// of the file is commentary. Throws plait_bench::usage_error naming the file and the problem.
struct InputFile {
  Params params;
  std::uint64_t nodes = 0;
  std::int64_t depth = 0;
  std::int64_t leaves = 0;
};
InputFile read_input(const std::string& path);

// ---- the tree -------------------------------------------------------------------------------

class Tree {
 public:
  explicit Tree(const Params& p);
  const Params& params() const { return p_; }

  Node root() const;
  // Child i of `parent`: its state (hashed g times), height and child count. This is the only
  // per-node work of the benchmark.
  void child(const Node& parent, int i, Node& out) const;
  int num_children(const Node& n) const;

 private:
  int geometric_children(const Node& n) const;
  Params p_;
  std::uint32_t g_;
  double shift_height_;  // hybrid: heights below this are geometric
};

// Per-subtree counts. No default member initialisers on purpose: arrays of them in the walkers
// should not be zeroed; write `Counts c{}` for a zero.
struct Counts {
  std::uint64_t nodes;
  std::uint64_t leaves;
  std::uint64_t with_kids;  // = tasks in the seed's (Fig. 1) parallel version
  std::int64_t depth;       // maximum height

  Counts& operator+=(const Counts& o) {
    nodes += o.nodes;
    leaves += o.leaves;
    with_kids += o.with_kids;
    if (o.depth > depth) depth = o.depth;
    return *this;
  }
};

// Counts of a single leaf at `height`.
inline Counts leaf_counts(std::int64_t height) { return Counts{1, 1, 0, height}; }

// Counts of a tree whose root has no children (the walkers start below the root).
inline Counts lone_root() { return Counts{1, 1, 0, 0}; }

// Room for n objects of a trivially copyable T: inline up to N, on the heap beyond (only the
// root of a binomial tree, or a rare wide geometric node, goes there). Elements start
// uninitialised.
template <class T, int N>
class scratch {
 public:
  explicit scratch(int n) : p_(n <= N ? inline_ : nullptr) {
    if (!p_) {
      heap_.reset(new T[static_cast<std::size_t>(n)]);
      p_ = heap_.get();
    }
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  T& operator[](int i) { return p_[i]; }
  const T& operator[](int i) const { return p_[i]; }

 private:
  T inline_[N];
  std::unique_ptr<T[]> heap_;
  T* p_;
};

// Per-thread counter on its own cache line.
struct alignas(64) padded_counter {
  std::uint64_t value = 0;
};

// ---- the benchmark around the tree ----------------------------------------------------------

// What the command line selected.
struct Config {
  Params params;
  std::string label;  // "T3", "input:test.input", "custom", "T3-modified"
  // Expected counts and where they come from (a published tree, the input file, or both).
  std::vector<std::pair<std::string, Expect>> expects;
};

// Registers the UTS options (--tree, --input, -t -b -r -a -d -q -m -f -g), parses the command
// line (runtime-specific options must be added before) and resolves the tree. Throws
// plait_bench::usage_error for bad input.
Config configure(plait_bench::Cli& cli, int argc, char** argv);

// Checks `c` against the expectations (or, with none, against what the tree type guarantees),
// calling rec.check(): a mismatch fails the repetition naming expected and actual values.
void verify(plait_bench::Record& rec, const Config& cfg, const Counts& c);

// Records the shared statistics: nodes, depth, leaves, tasks, moved_tasks,
// moved_per_thread_per_s, nodes_per_s, sha1_ops, tree.
void report(plait_bench::Record& rec, const Config& cfg, const Counts& c, std::uint64_t moved, long long threads);

// Main-thread stack and OMP_STACKSIZE the deep trees need (T3L is 17,844 levels deep).
inline constexpr std::size_t main_stack_bytes = std::size_t{1} << 30;
inline constexpr const char* omp_stacksize = "256M";
inline constexpr std::size_t worker_stack_bytes = std::size_t{256} << 20;

}  // namespace uts
