// miniAMR proxy (study 003, Rico et al., "On the Benefits of Tasking with OpenMP"): the model,
// shared by the serial, Plait and OpenMP builds (compiled once into amr_common; the benchmark
// around it is amr.hpp). docs/amr.md describes the model, the conservation argument and
// the variants.
//
// The mesh is a unit cube of init_x × init_y × init_z root blocks; a block at level L has integer
// coordinates in the level-L grid (init_d · 2^L blocks along d). Every block holds num_vars
// variables of (nx+2)(ny+2)(nz+2) doubles (one ghost layer), contiguous per block. Blocks are
// refined where objects cross them (at most num_refine levels, face neighbours differ by at most
// one level) and coarsened when all 8 siblings may be.
//
// Block distribution: every block has an owner rank (Block::owner, all 0 in one process). In
// distributed mode (set_rank, amr-mpi) every rank keeps the whole structure -- every leaf, its
// owner, the comm ops, a few bytes per block, decided identically on every rank because refinement
// depends on the objects only -- and data only for the blocks it owns; a comm op whose two blocks
// have different owners is a message (docs/amr.md, "On ranks").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/driver.hpp"

namespace amr {

// One moving object (miniAMR's -object: type bounce cx cy cz mx my mz sx sy sz ix iy iz).
//   type 0: rectangle surface (box [cen-size, cen+size]); a zero size in one dimension is a plane
//   type 1: solid rectangle
//   type 2: spheroid surface (semi-axes size)       type 3: solid spheroid
// Every timestep: cen += move, size += inc; with bounce, a centre that leaves [0,1] along a
// dimension reverses that velocity component.
struct Object {
  int type = 2;
  bool bounce = false;
  std::array<double, 3> cen{}, move{}, size{}, inc{};
};

struct Options {
  std::string preset = "default";
  long long nx = 8, ny = 8, nz = 8;
  long long init_x = 1, init_y = 1, init_z = 1;
  long long num_refine = 4;
  long long max_blocks = 3000;
  long long num_vars = 40;
  long long comm_vars = 10;  // 0: all variables in one group
  long long num_tsteps = 40;
  long long stages_per_ts = 20;
  long long checksum_freq = 5;
  long long refine_freq = 1;
  long long block_change = 0;  // levels a block may change per refinement step (0: num_refine)
  long long num_objects = 1;
  std::string object = "2 0 -1.1 -1.1 -1.1 0.06 0.06 0.06 1.1 1.1 1.1 0 0 0";
  std::string variant = "loop";
  long long dyn_chunk = 1;  // chunk of the dynamic schedule (loop-dyn)
  bool inject_error = false;
  std::vector<Object> objects;  // parsed from `object`
};

enum class Variant { loop, loop_dyn, task1, task2 };
Variant parse_variant(std::string_view s);  // throws usage_error
const char* variant_name(Variant v);

// Parses one or more objects: 14 numbers each, separated by spaces or commas; objects separated
// by ';' or '/'. Throws plait_bench::usage_error naming the problem.
std::vector<Object> parse_objects(std::string_view spec);

// Sets the defaults of a preset (default, small, study003); false for an unknown name.
bool apply_preset(std::string_view name, Options& o);
// Registers every option on the command line. The preset is looked up in argv first
// (`--preset X` / `--preset=X`) and becomes the defaults, so explicit options override it and the
// JSON params show the values used.
void add_options(plait_bench::Cli& cli, Options& o, int argc, char** argv);
// After cli.parse(): parses the objects and checks the combination. Throws usage_error.
void finish_options(Options& o);
// The same checks on an Options value (exposed for tests).
void validate(Options& o);

// Block geometry helpers.
struct Geom {
  int n[3];           // interior cells per dimension
  long long stride[3];  // index strides of i, j, k
  long long bsize;    // doubles per variable per block, ghosts included
  explicit Geom(int nx = 2, int ny = 2, int nz = 2);
  long long idx(int i, int j, int k) const { return i * stride[0] + j * stride[1] + k * stride[2]; }
};

enum class OpKind : std::uint8_t { same, coarse_fine, boundary };
// One face exchange.
//   same:        a (low side) and b (high side along dim), same level
//   coarse_fine: a coarse, b one of the 4 finer blocks on a's face `side` (0: low, 1: high);
//                q[0], q[1] the quadrant of a's face it covers (the two other dims in order)
//   boundary:    a's face `side` along dim lies on the domain boundary (reflective)
struct Op {
  OpKind kind;
  std::int8_t dim, side;
  std::int8_t q[2];
  int a, b;  // storage slots
};

// Ghost-exchange kernels on raw block variables (exposed for the unit tests).
void exchange_same(const Geom& g, double* lo, double* hi, int dim);
void exchange_coarse_fine(const Geom& g, double* coarse, double* fine, int dim, int side, int q0, int q1);
void fill_boundary(const Geom& g, double* b, int dim, int side);
// One side of an exchange whose two blocks are on different ranks. `a_side`: this rank holds op.a
// (same: the low block; coarse_fine: the coarse one), else op.b. face_pack writes what the other
// side needs (face_values(g, op) doubles), face_unpack stores what the other side packed into this
// side's ghost cells: both sides together compute exactly what exchange_same / exchange_coarse_fine
// compute in one process (same operations in the same order, so the same bits).
std::size_t face_values(const Geom& g, const Op& op);
void face_pack(const Geom& g, const Op& op, bool a_side, const double* blk, double* out);
void face_unpack(const Geom& g, const Op& op, bool a_side, double* blk, const double* in);
// FNV-1a step over the bytes of a block's interior values, variable by variable (the data_hash).
std::uint64_t hash_block(std::uint64_t h, const Geom& g, int nvars, const double* block);
constexpr std::uint64_t kHashSeed = 1469598103934665603ULL;
// 7-point stencil on one variable's interior; `work` holds at least g.bsize doubles.
void stencil(const Geom& g, double* v, double* work);
// Sum of one variable's interior cells (fixed order).
double interior_sum(const Geom& g, const double* v);

struct MeshStats {
  long long refinements = 0;  // blocks split
  long long coarsenings = 0;  // families merged
  long long max_blocks_used = 0;
  long long adapt_steps = 0;
};

class Mesh {
 public:
  struct Block {
    int level = 0;
    int c[3] = {0, 0, 0};
    int owner = 0;   // rank that owns the block (0: shared memory)
    bool live = false;
  };

  // with_data = false: structure only (used to check max_blocks before anything is timed).
  Mesh(const Options& o, bool with_data);

  // Distributed mode: this process is rank `rank` of `nranks`; only blocks it owns have data.
  // Call before init_structure(). Default: rank 0 of 1 (every block owned, all data here).
  void set_rank(int rank, int nranks);
  int rank() const { return rank_; }
  bool mine(int slot) const { return blocks_[static_cast<std::size_t>(slot)].owner == rank_; }

  // Initial mesh: root blocks, then num_refine refinement passes, then the initial values. In two
  // steps for the distributed mode: the structure (no data yet), then owners may be changed
  // (set_owner), then init_values() allocates and fills the owned blocks.
  void init() {
    init_structure();
    init_values();
  }
  void init_structure();
  void init_values();
  // Sets a block's owner: data is freed when the block stops being this rank's; a block that
  // becomes this rank's gets data with ensure_data() (before a receive writes it).
  void set_owner(int slot, int owner);
  void ensure_data(int slot);
  // A copy of the structure without data (planning a pass before the data moves).
  Mesh shape() const;
  // Families merged since the last clear: (parent level, x, y, z), in merge order.
  std::vector<std::array<int, 4>>& merge_log() { return merge_log_; }
  // Moves the objects one timestep.
  void move_objects();
  // One refinement step: block_change passes (0: num_refine) of adapt_pass(), stopping early
  // when a pass changes nothing. `prepare`, if given, runs before each pass (amr-mpi gathers the
  // families the pass will merge onto one rank there).
  void adapt(const std::function<void(Mesh&)>& prepare = {});
  // One pass: refine by one level where objects cross, balance, then coarsen families by one
  // level. Returns whether the mesh changed. Throws usage_error if max_blocks would be exceeded.
  bool adapt_pass();

  const Geom& geom() const { return g_; }
  double* var(int slot, int v) { return data_[static_cast<std::size_t>(slot)].get() + v * g_.bsize; }
  const double* var(int slot, int v) const { return data_[static_cast<std::size_t>(slot)].get() + v * g_.bsize; }
  double* block_data(int slot) { return data_[static_cast<std::size_t>(slot)].get(); }
  const double* block_data(int slot) const { return data_[static_cast<std::size_t>(slot)].get(); }
  std::size_t block_doubles() const { return static_cast<std::size_t>(nvars_ * g_.bsize); }

  // This rank's blocks (sorted by level, then coordinates) and the comm ops: all ops and, for
  // the loop variants, the ops grouped by the block that performs them (CSR).
  const std::vector<int>& active() const { return active_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<int>& op_start() const { return op_start_; }  // size active()+1
  const Block& block(int slot) const { return blocks_[static_cast<std::size_t>(slot)]; }
  const MeshStats& stats() const { return stats_; }
  int num_vars() const { return nvars_; }
  std::vector<int> level_counts() const;

  // Applies one op to variables [v0, v1).
  void apply(const Op& op, int v0, int v1);

  // Exposed for tests: leaf lookup and whether the mesh satisfies the 2:1 rule.
  int find(int level, int x, int y, int z) const;
  bool balanced() const;
  // Test helpers: split / merge a block by hand (then rebuild() the block list and ops).
  void split(int slot);
  bool try_merge_family(int level, int px, int py, int pz);
  void rebuild();

 private:
  bool hit(const Block& b) const;
  std::uint64_t key(int level, int x, int y, int z) const;
  int alloc_slot(int level, int x, int y, int z, int owner);
  void free_slot(int slot);
  int extent(int d, int level) const { return dims_[d] << level; }
  // Leaf at or above (level, c) (an ancestor), -1 if the region is refined further or outside.
  int covering_leaf(int level, const int c[3]) const;
  bool finer_than(int level, const int c[3]) const;  // the region (level, c) is split further
  void merge(int level, int px, int py, int pz);

  Options o_;
  Geom g_;
  int nvars_;
  bool with_data_;
  int dims_[3];
  std::vector<Object> objs_;
  std::vector<Block> blocks_;
  std::vector<std::unique_ptr<double[]>> data_;  // non-null: a live block of this rank (with_data)
  std::vector<std::unique_ptr<double[]>> spare_;  // buffers of freed blocks, for reuse
  std::vector<int> free_;
  int rank_ = 0, nranks_ = 1;
  bool building_ = false;  // init_structure: no data yet
  std::vector<std::array<int, 4>> merge_log_;
  std::unordered_map<std::uint64_t, int> leaves_;
  std::vector<int> active_;
  std::vector<Op> ops_;
  std::vector<int> op_start_;
  std::vector<double> scratch_;
  MeshStats stats_;
};

// Checksum bookkeeping, shared by Sim and amr-mpi: every checksum is compared with the previous
// one and the initial one (relative tolerance 1e-8); the first failure is kept, nothing throws.
struct Checksums {
  std::vector<double> init, prev;
  std::string failure;
  long long checks = 0;
  void start(std::vector<double> initial);
  void validate(long long stage, int v, double sum);
  // The verdict (`how`: what was checked, said when all passed) and the statistics every amr
  // binary reports about the mesh and the checksums (data_hash excepted).
  void report(plait_bench::Record& rec, const Mesh& m, const Options& o, const std::string& how) const;
};
// All 17 digits of x, for comparisons across runs.
std::string exact(double x);

// The simulation state shared by every runtime: mesh, stage bookkeeping and checksum checks.
class Sim {
 public:
  explicit Sim(const Options& o) : o_(o), mesh_(o, true) {}
  void reset();  // fresh mesh, initial values, reference checksums (not timed)

  Mesh& mesh() { return mesh_; }
  const Options& opt() const { return o_; }
  int groups() const { return (nvars() + gsize() - 1) / gsize(); }
  int gsize() const { return o_.comm_vars == 0 ? nvars() : static_cast<int>(o_.comm_vars); }
  int nvars() const { return static_cast<int>(o_.num_vars); }
  int gbegin(int grp) const { return grp * gsize(); }
  int gend(int grp) const { return std::min(nvars(), (grp + 1) * gsize()); }
  bool checksum_stage(long long stage) const { return (stage + 1) % o_.checksum_freq == 0; }
  bool refine_after(long long ts) const { return (ts + 1) % o_.refine_freq == 0 && ts + 1 < o_.num_tsteps; }

  // Work on one block: ops of block index bi (loop variants), the stencil of a group.
  void comm_block(int bi, int grp);
  void stencil_block(int slot, int grp);
  // Per-block sums of variables [v0, v1) into bsum(bi, v).
  double& bsum(int bi, int v) { return bsum_[static_cast<std::size_t>(bi) * static_cast<std::size_t>(nvars()) + v]; }
  void block_sums(int bi, int v0, int v1);
  // Sum of bsum over the blocks in block order, variable v.
  double ordered_sum(int v) const;

  // Checks variable v's checksum against the previous one and the initial one (relative
  // tolerance 1e-8). Never throws: the first failure is kept for verify().
  void validate(long long stage, int v, double sum);
  // End of a timestep: move objects, maybe refine (serial, as in the reference).
  void end_timestep(long long ts);
  // After the timed run: with --inject-error corrupts one value (testing only); then compares the
  // final per-variable sums with the initial ones.
  void finish();
  // After the timed run: exit 1 on any checksum failure; stats into the record.
  void verify(plait_bench::Record& rec) const;

  long long checksums_done() const { return cs_.checks; }

 private:
  Options o_;
  Mesh mesh_;
  std::vector<double> bsum_;
  Checksums cs_;
  bool injected_ = false;
};

// Serial reference run of the whole simulation (used by the serial binary and the tests).
void run_serial(Sim& sim);

}  // namespace amr
