// miniAMR proxy on MPI ranks (study 003's workload across ranks): amr-mpi, a Plait pool of
// --threads workers in every rank.
//   loop    MPI + Loop, bulk-synchronous as the reference: per stage and variable group, post the
//           receives, pack and send the faces, exchange the rank's own faces (parallel_for), wait
//           for the messages, unpack, stencil (parallel_for); a checksum stage sums the rank's
//           blocks and MPI_Allreduce's the sums.
//   task-2  MPI + Task-2: one plait::dataflow_group per timestep as in amr-plait's task-2, plus a
//           receive task and a send task per neighbour rank, direction and group whose events
//           complete with their MPI requests (plait::mpi), pack and unpack tasks between them and
//           the blocks, and the checksum as tasks too: block sums, a local sum, an MPI_Iallreduce
//           whose event releases the validation. No barrier between phases; the group waits every
//           --window stages (default 1: a whole timestep at once ran 25 % slower across ranks).
// Every rank keeps the whole mesh structure and the data of its blocks (docs/amr.md, "On ranks"):
// blocks are dealt out along a Morton curve in equal counts, refinement is decided identically
// on every rank, the families a pass will merge are first gathered onto one rank, and after each
// refinement step the blocks are dealt out again (migration). Results: the same data_hash and
// final checksum as amr-serial, bit for bit (the final values are streamed to rank 0 after the
// timed run, in the serial block order).
#include <mpi.h>

#include <plait/dataflow.hpp>
#include <plait/mpi.hpp>
#include <plait/parallel_for.hpp>
#include <plait/plait.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "amr/common.hpp"
#include "common/driver.hpp"
#include "common/mpi_start.hpp"

namespace {

using amr::Mesh;
using amr::Op;
using amr::OpKind;

constexpr int kMoveTag = 1 << 20;    // block migration (ghost tags are below 8 * 4096)
constexpr int kFinalTag = kMoveTag + 1;  // the final values streamed to rank 0

// ---------------------------------------------------------------------------------------------
// Distribution

// Position along a Morton (Z-order) curve of the block's first cell at the finest level.
std::uint64_t morton(const Mesh& m, int slot, int finest) {
  const Mesh::Block& b = m.block(slot);
  std::uint64_t key = 0;
  for (int bit = 20; bit >= 0; --bit)
    for (int d = 2; d >= 0; --d) {
      const auto c = static_cast<std::uint64_t>(b.c[d]) << (finest - b.level);
      key = (key << 1) | ((c >> bit) & 1);
    }
  return key;
}

// Moves blocks to new owners: (slot, to) pairs, the same list on every rank. The whole block
// (ghost layers too) travels; every rank updates the owners. Returns the number of blocks moved.
long long transfer(Mesh& m, const std::vector<std::pair<int, int>>& moves, MPI_Comm comm) {
  const int me = m.rank();
  const int count = static_cast<int>(m.block_doubles());
  std::vector<MPI_Request> reqs;
  long long moved = 0;
  for (auto [slot, to] : moves) {
    const int from = m.block(slot).owner;
    if (from == to) continue;
    ++moved;
    if (to == me) {
      m.set_owner(slot, to);
      m.ensure_data(slot);
      // Messages between one pair of ranks match in the order posted (MPI's non-overtaking rule):
      // both sides walk the same list.
      MPI_Irecv(m.block_data(slot), count, MPI_DOUBLE, from, kMoveTag, comm, &reqs.emplace_back());
    } else if (from == me) {
      MPI_Isend(m.block_data(slot), count, MPI_DOUBLE, to, kMoveTag, comm, &reqs.emplace_back());
    }
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  for (auto [slot, to] : moves) m.set_owner(slot, to);  // frees what this rank sent
  return moved;
}

// Deals the leaves out in equal counts along the Morton curve.
std::vector<std::pair<int, int>> balance_moves(const Mesh& m, int nranks, int finest) {
  std::vector<std::pair<std::uint64_t, int>> order;
  for (int slot : m.active()) order.emplace_back(morton(m, slot, finest), slot);
  std::sort(order.begin(), order.end());
  std::vector<std::pair<int, int>> moves;
  const auto n = static_cast<long long>(order.size());
  for (long long i = 0; i < n; ++i) {
    const int slot = order[static_cast<std::size_t>(i)].second;
    const int owner = static_cast<int>(i * nranks / n);
    if (owner != m.block(slot).owner) moves.emplace_back(slot, owner);
  }
  return moves;
}

// Before an adapt pass: the families it will merge (planned on a copy of the structure) are
// gathered onto their first child's rank.
long long gather_families(Mesh& m, MPI_Comm comm) {
  Mesh plan = m.shape();
  plan.merge_log().clear();
  plan.adapt_pass();
  std::vector<std::pair<int, int>> moves;
  for (const auto& f : plan.merge_log()) {
    const int L = f[0] + 1;
    const int target = m.block(m.find(L, 2 * f[1], 2 * f[2], 2 * f[3])).owner;
    for (int o = 1; o < 8; ++o) {
      const int s = m.find(L, 2 * f[1] + (o & 1), 2 * f[2] + ((o >> 1) & 1), 2 * f[3] + ((o >> 2) & 1));
      if (s < 0) throw std::logic_error("amr-mpi: planned merge of a family that is not all leaves");
      if (m.block(s).owner != target) moves.emplace_back(s, target);
    }
  }
  return transfer(m, moves, comm);
}

// ---------------------------------------------------------------------------------------------
// This rank's share: its blocks, its own faces, its messages.

struct Face {
  Op op;
  bool a_side;  // this rank holds op.a
  int slot;     // this rank's block
  std::size_t n;    // values per variable
  std::size_t off;  // values per variable before this face in the channel
};

// Everything exchanged with one neighbour rank across faces normal to one dimension where this
// rank's blocks are on one side (low or high): one message each way per variable group.
struct Channel {
  int peer = 0, dim = 0, low = 0;
  std::vector<Face> faces;     // in the global op order (the peer lists the same faces)
  std::size_t per_var = 0;     // values per variable
  std::vector<int> blocks;     // this rank's blocks on it, distinct
  std::vector<std::vector<double>> sbuf, rbuf;  // per group
  int send_tag(int grp) const { return grp * 8 + dim * 2 + low; }
  int recv_tag(int grp) const { return grp * 8 + dim * 2 + (1 - low); }
};

struct Share {
  std::vector<int> mine;          // this rank's blocks, in the global block order
  std::vector<Op> ops;            // faces between this rank's blocks, boundaries of its blocks
  std::vector<int> op_start;      // ops grouped by block of `mine` (CSR)
  std::vector<Channel> chans;
  long long remote_faces = 0;

  void build(const Mesh& m, int groups, int gsize, int nvars) {
    mine.clear();
    ops.clear();
    chans.clear();
    remote_faces = 0;
    const auto& act = m.active();
    const auto& all = m.ops();
    const auto& st = m.op_start();
    op_start.assign(1, 0);
    std::vector<std::pair<std::array<int, 3>, std::size_t>> index;  // (peer, dim, low) -> chans
    auto channel = [&](int peer, int dim, int low) -> Channel& {
      for (auto& [k, i] : index)
        if (k == std::array<int, 3>{peer, dim, low}) return chans[i];
      index.push_back({{peer, dim, low}, chans.size()});
      Channel& c = chans.emplace_back();
      c.peer = peer;
      c.dim = dim;
      c.low = low;
      return c;
    };
    for (std::size_t bi = 0; bi < act.size(); ++bi) {
      const int slot = act[bi];
      const bool a_mine = m.mine(slot);
      if (a_mine) mine.push_back(slot);
      for (int i = st[bi]; i < st[bi + 1]; ++i) {
        const Op& op = all[static_cast<std::size_t>(i)];
        const bool b_mine = m.mine(op.b);
        if (a_mine && b_mine) {
          ops.push_back(op);
          continue;
        }
        if (!a_mine && !b_mine) continue;
        ++remote_faces;
        const bool a_low = op.kind == OpKind::same || op.side == 1;
        const int peer = a_mine ? m.block(op.b).owner : m.block(op.a).owner;
        const int low = a_mine == a_low ? 1 : 0;
        Channel& c = channel(peer, op.dim, low);
        const std::size_t n = amr::face_values(m.geom(), op);
        c.faces.push_back(Face{op, a_mine, a_mine ? op.a : op.b, n, c.per_var});
        c.per_var += n;
      }
      if (a_mine) op_start.push_back(static_cast<int>(ops.size()));
    }
    // Faces were appended in the global op order, which every rank shares: the peer packs and
    // unpacks the channel's faces in the same order.
    for (Channel& c : chans) {
      for (const Face& f : c.faces)
        if (std::find(c.blocks.begin(), c.blocks.end(), f.slot) == c.blocks.end()) c.blocks.push_back(f.slot);
      c.sbuf.resize(static_cast<std::size_t>(groups));
      c.rbuf.resize(static_cast<std::size_t>(groups));
      for (int grp = 0; grp < groups; ++grp) {
        const int gs = std::min(nvars, (grp + 1) * gsize) - grp * gsize;
        c.sbuf[static_cast<std::size_t>(grp)].assign(c.per_var * static_cast<std::size_t>(gs), 0.0);
        c.rbuf[static_cast<std::size_t>(grp)].assign(c.per_var * static_cast<std::size_t>(gs), 0.0);
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The simulation on one rank

class DistSim {
 public:
  DistSim(const amr::Options& o, int rank, int nranks, MPI_Comm comm)
      : o_(o), mesh_(o, true), rank_(rank), nranks_(nranks), comm_(comm) {}

  Mesh& mesh() { return mesh_; }
  Share& share() { return share_; }
  MPI_Comm comm() const { return comm_; }
  const amr::Options& opt() const { return o_; }
  int nvars() const { return static_cast<int>(o_.num_vars); }
  int gsize() const { return o_.comm_vars == 0 ? nvars() : static_cast<int>(o_.comm_vars); }
  int groups() const { return (nvars() + gsize() - 1) / gsize(); }
  int gbegin(int grp) const { return grp * gsize(); }
  int gend(int grp) const { return std::min(nvars(), (grp + 1) * gsize()); }
  bool checksum_stage(long long stage) const { return (stage + 1) % o_.checksum_freq == 0; }
  bool refine_after(long long ts) const { return (ts + 1) % o_.refine_freq == 0 && ts + 1 < o_.num_tsteps; }

  // Not timed: the initial mesh dealt out, initial values, reference checksums.
  void reset() {
    mesh_ = Mesh(o_, true);
    mesh_.set_rank(rank_, nranks_);
    mesh_.init_structure();
    for (auto [slot, to] : balance_moves(mesh_, nranks_, finest())) mesh_.set_owner(slot, to);
    mesh_.init_values();
    share_.build(mesh_, groups(), gsize(), nvars());
    std::vector<double> local(static_cast<std::size_t>(nvars()), 0.0);
    for (int v = 0; v < nvars(); ++v)
      for (int slot : share_.mine) local[static_cast<std::size_t>(v)] += amr::interior_sum(mesh_.geom(), mesh_.var(slot, v));
    std::vector<double> init(local.size(), 0.0);
    MPI_Allreduce(local.data(), init.data(), nvars(), MPI_DOUBLE, MPI_SUM, comm_);
    cs_.start(std::move(init));
    migrated_ = 0;
    messages_ = 0;
    refine_s_ = 0;
    wait_s_ = 0;
  }

  // Sums of variables [v0, v1) over this rank's blocks, in its block order.
  void local_sums(int v0, int v1, double* out) const {
    for (int v = v0; v < v1; ++v) out[v - v0] = 0;
    for (std::size_t i = 0; i < share_.mine.size(); ++i)
      for (int v = v0; v < v1; ++v) out[v - v0] += bsum_[i * static_cast<std::size_t>(nvars()) + static_cast<std::size_t>(v)];
  }
  double& bsum(std::size_t i, int v) { return bsum_[i * static_cast<std::size_t>(nvars()) + static_cast<std::size_t>(v)]; }
  void block_sums(std::size_t i, int v0, int v1) {
    for (int v = v0; v < v1; ++v) bsum(i, v) = amr::interior_sum(mesh_.geom(), mesh_.var(share_.mine[i], v));
  }
  void size_sums() { bsum_.assign(share_.mine.size() * static_cast<std::size_t>(nvars()), 0.0); }

  void validate(long long stage, int v, double sum) { cs_.validate(stage, v, sum); }

  // End of a timestep (every rank together): move objects, maybe refine, deal the blocks out
  // again, rebuild this rank's share.
  void end_timestep(long long ts) {
    mesh_.move_objects();
    if (!refine_after(ts)) return;
    const double t0 = MPI_Wtime();
    mesh_.adapt([&](Mesh& m) { migrated_ += gather_families(m, comm_); });
    migrated_ += transfer(mesh_, balance_moves(mesh_, nranks_, finest()), comm_);
    share_.build(mesh_, groups(), gsize(), nvars());
    refine_s_ += MPI_Wtime() - t0;
  }

  // After the timed run: with --inject-error corrupts one value; streams every block to rank 0 in
  // the global block order, which computes the data_hash and the final checksums exactly as
  // amr-serial does, and shares its verdict.
  // `loop`: the run was MPI + Loop, which measures its waits (wait_s_).
  void finish(plait_bench::Record& rec, bool loop) {
    const auto& act = mesh_.active();
    if (o_.inject_error && !act.empty() && mesh_.mine(act.front()))
      mesh_.var(act.front(), 0)[mesh_.geom().idx(1, 1, 1)] += 1e-6 * std::fabs(cs_.init[0]) + 1.0;
    const int count = static_cast<int>(mesh_.block_doubles());
    std::vector<double> buf(rank_ == 0 ? mesh_.block_doubles() : 0);
    std::vector<double> final_sum(static_cast<std::size_t>(nvars()), 0.0);
    std::uint64_t h = amr::kHashSeed;
    for (int slot : act) {
      const int owner = mesh_.block(slot).owner;
      if (rank_ == 0) {
        const double* p = mesh_.block_data(slot);
        if (owner != 0) {
          MPI_Recv(buf.data(), count, MPI_DOUBLE, owner, kFinalTag, comm_, MPI_STATUS_IGNORE);
          p = buf.data();
        }
        h = amr::hash_block(h, mesh_.geom(), nvars(), p);
        for (int v = 0; v < nvars(); ++v)
          final_sum[static_cast<std::size_t>(v)] += amr::interior_sum(mesh_.geom(), p + v * mesh_.geom().bsize);
      } else if (owner == rank_) {
        MPI_Send(mesh_.block_data(slot), count, MPI_DOUBLE, 0, kFinalTag, comm_);
      }
    }
    if (rank_ == 0)
      for (int v = 0; v < nvars(); ++v) validate(-1, v, final_sum[static_cast<std::size_t>(v)]);
    // Rank 0's verdict is everyone's (its sums are the reference order's).
    int len = static_cast<int>(cs_.failure.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, comm_);
    cs_.failure.resize(static_cast<std::size_t>(len));
    MPI_Bcast(cs_.failure.data(), len, MPI_CHAR, 0, comm_);
    cs_.report(rec, mesh_, o_,
               "(every checksum_freq stages, MPI_Allreduce; the final one in the serial order) within 1e-8 of the "
               "previous and the initial ones");
    long long sums[3] = {migrated_, messages_, share_.remote_faces}, tot[3];
    MPI_Reduce(sums, tot, 3, MPI_LONG_LONG, MPI_SUM, 0, comm_);
    double refine_max = 0;
    MPI_Reduce(&refine_s_, &refine_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm_);
    rec.stat("refine_s", refine_max);  // refinement, gathers and migration (timed, the slowest rank)
    rec.stat("ranks", nranks_);
    rec.stat("blocks_migrated", tot[0]);  // by the gathers before merges and the rebalancing
    rec.stat("messages", tot[1]);         // ghost messages sent, all ranks
    rec.stat("remote_faces_end", tot[2] / 2);
    if (loop) {  // time in the stages' Waitalls and checksum all-reduces
      double w[2] = {wait_s_, -wait_s_}, r[2] = {0, 0}, sum = 0;
      MPI_Reduce(w, r, 2, MPI_DOUBLE, MPI_MAX, 0, comm_);
      MPI_Reduce(&wait_s_, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm_);
      rec.stat("comm_wait_s", sum / nranks_);  // the mean over the ranks
      rec.stat("comm_wait_max_s", r[0]);
      rec.stat("comm_wait_min_s", -r[1]);
    }
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    rec.stat("data_hash", std::string(rank_ == 0 ? hex : ""));
  }

  long long messages_ = 0;
  // MPI + Loop: seconds this rank spent in the stages' MPI_Waitall and checksum MPI_Allreduce
  // calls (what a data-flow variant could at most hide).
  double wait_s_ = 0;

 private:
  int finest() const { return static_cast<int>(o_.num_refine); }

  amr::Options o_;
  Mesh mesh_;
  int rank_, nranks_;
  MPI_Comm comm_;
  Share share_;
  std::vector<double> bsum_;
  amr::Checksums cs_;
  long long migrated_ = 0;
  double refine_s_ = 0;
};

void pack(DistSim& s, Channel& c, int grp) {
  const int v0 = s.gbegin(grp), v1 = s.gend(grp);
  double* out = c.sbuf[static_cast<std::size_t>(grp)].data();
  for (const Face& f : c.faces)
    for (int v = v0; v < v1; ++v) {
      amr::face_pack(s.mesh().geom(), f.op, f.a_side, s.mesh().var(f.slot, v), out);
      out += f.n;
    }
}

void unpack(DistSim& s, Channel& c, int grp) {
  const int v0 = s.gbegin(grp), v1 = s.gend(grp);
  const double* in = c.rbuf[static_cast<std::size_t>(grp)].data();
  for (const Face& f : c.faces)
    for (int v = v0; v < v1; ++v) {
      amr::face_unpack(s.mesh().geom(), f.op, f.a_side, s.mesh().var(f.slot, v), in);
      in += f.n;
    }
}

// ---------------------------------------------------------------------------------------------
// MPI + Loop

void run_loop(DistSim& s) {
  Mesh& m = s.mesh();
  const amr::Options& o = s.opt();
  std::vector<MPI_Request> rreq, sreq;
  std::vector<double> local, global;
  for (long long ts = 0; ts < o.num_tsteps; ++ts) {
    Share& sh = s.share();
    s.size_sums();
    const auto nb = static_cast<std::int64_t>(sh.mine.size());
    const auto nc = static_cast<std::int64_t>(sh.chans.size());
    for (long long st = 0; st < o.stages_per_ts; ++st) {
      const long long stage = ts * o.stages_per_ts + st;
      for (int grp = 0; grp < s.groups(); ++grp) {
        const int v0 = s.gbegin(grp), v1 = s.gend(grp);
        rreq.assign(sh.chans.size(), MPI_REQUEST_NULL);
        sreq.assign(sh.chans.size(), MPI_REQUEST_NULL);
        for (std::size_t i = 0; i < sh.chans.size(); ++i) {
          Channel& c = sh.chans[i];
          auto& rb = c.rbuf[static_cast<std::size_t>(grp)];
          MPI_Irecv(rb.data(), static_cast<int>(rb.size()), MPI_DOUBLE, c.peer, c.recv_tag(grp), s.comm(), &rreq[i]);
        }
        plait::parallel_for(std::int64_t{0}, nc, [&](std::int64_t i) { pack(s, sh.chans[static_cast<std::size_t>(i)], grp); },
                            plait::static_partition());
        for (std::size_t i = 0; i < sh.chans.size(); ++i) {
          Channel& c = sh.chans[i];
          auto& sb = c.sbuf[static_cast<std::size_t>(grp)];
          MPI_Isend(sb.data(), static_cast<int>(sb.size()), MPI_DOUBLE, c.peer, c.send_tag(grp), s.comm(), &sreq[i]);
          ++s.messages_;
        }
        plait::parallel_for(
            std::int64_t{0}, nb,
            [&](std::int64_t bi) {
              for (int i = sh.op_start[static_cast<std::size_t>(bi)]; i < sh.op_start[static_cast<std::size_t>(bi) + 1]; ++i)
                m.apply(sh.ops[static_cast<std::size_t>(i)], v0, v1);
            },
            plait::static_partition());
        double w0 = MPI_Wtime();
        MPI_Waitall(static_cast<int>(rreq.size()), rreq.data(), MPI_STATUSES_IGNORE);
        s.wait_s_ += MPI_Wtime() - w0;
        // Channels touch different ghost cells of a block: unpacking them at once is race-free.
        plait::parallel_for(std::int64_t{0}, nc, [&](std::int64_t i) { unpack(s, sh.chans[static_cast<std::size_t>(i)], grp); },
                            plait::static_partition());
        w0 = MPI_Wtime();
        MPI_Waitall(static_cast<int>(sreq.size()), sreq.data(), MPI_STATUSES_IGNORE);
        s.wait_s_ += MPI_Wtime() - w0;
        plait::parallel_for(
            std::int64_t{0}, nb,
            [&](std::int64_t bi) {
              thread_local std::vector<double> work;
              work.resize(static_cast<std::size_t>(m.geom().bsize));
              for (int v = v0; v < v1; ++v) amr::stencil(m.geom(), m.var(sh.mine[static_cast<std::size_t>(bi)], v), work.data());
            },
            plait::static_partition());
        if (s.checksum_stage(stage)) {
          plait::parallel_for(std::int64_t{0}, nb, [&](std::int64_t bi) { s.block_sums(static_cast<std::size_t>(bi), v0, v1); },
                              plait::static_partition());
          local.assign(static_cast<std::size_t>(v1 - v0), 0.0);
          global.assign(local.size(), 0.0);
          s.local_sums(v0, v1, local.data());
          w0 = MPI_Wtime();
          MPI_Allreduce(local.data(), global.data(), v1 - v0, MPI_DOUBLE, MPI_SUM, s.comm());
          s.wait_s_ += MPI_Wtime() - w0;
          for (int v = v0; v < v1; ++v) s.validate(stage, v, global[static_cast<std::size_t>(v - v0)]);
        }
      }
    }
    s.end_timestep(ts);
  }
}

// ---------------------------------------------------------------------------------------------
// MPI + Task-2

// One checksum in flight: per-block sums, the rank's sums, the global ones.
struct Checksum {
  long long stage = 0;
  int v0 = 0, v1 = 0;
  std::vector<double> block, local, global;
};

unsigned long long run_task2(DistSim& s, plait::mpi::progress& mp, long long window) {
  Mesh& m = s.mesh();
  const amr::Options& o = s.opt();
  const long long bsize = m.geom().bsize;
  unsigned long long tasks = 0;
  char collective_order = 0, validate_order = 0;  // dependence tokens: collectives and validations in stage order
  std::vector<plait::access> acc;
  for (long long ts = 0; ts < o.num_tsteps; ++ts) {
    Share& sh = s.share();
    std::deque<Checksum> sums;
    {
      plait::dataflow_group g;
      const std::size_t nb = sh.mine.size();
      for (long long st = 0; st < o.stages_per_ts; ++st) {
        const long long stage = ts * o.stages_per_ts + st;
        for (int grp = 0; grp < s.groups(); ++grp) {
          const int v0 = s.gbegin(grp), v1 = s.gend(grp);
          const auto len = static_cast<std::size_t>((v1 - v0) * bsize);
          auto section = [&](int slot) { return static_cast<const double*>(m.block_data(slot) + v0 * bsize); };
          const auto gi = static_cast<std::size_t>(grp);
          // Receives: the buffer is free once the previous stage's unpack read it.
          for (Channel& c : sh.chans) {
            auto& rb = c.rbuf[gi];
            g.run_detached({plait::out(rb.data(), rb.size())}, [&mp, &s, &c, &rb, grp](plait::event e) {
              mp.irecv(rb.data(), static_cast<int>(rb.size()), MPI_DOUBLE, c.peer, c.recv_tag(grp), s.comm(), std::move(e));
            });
            ++tasks;
          }
          // Pack after the blocks' previous stencil, send after the pack.
          for (Channel& c : sh.chans) {
            auto& sb = c.sbuf[gi];
            acc.clear();
            for (int slot : c.blocks) acc.push_back(plait::in(section(slot), len));
            acc.push_back(plait::out(sb.data(), sb.size()));
            g.run(std::span<const plait::access>(acc), [&s, &c, grp] { pack(s, c, grp); });
            g.run_detached({plait::in(sb.data(), sb.size())}, [&mp, &s, &c, &sb, grp](plait::event e) {
              mp.isend(sb.data(), static_cast<int>(sb.size()), MPI_DOUBLE, c.peer, c.send_tag(grp), s.comm(), std::move(e));
            });
            tasks += 2;
            ++s.messages_;
          }
          // This rank's own faces, as amr-plait's task-2.
          for (const Op& op : sh.ops) {
            const Op* opp = &op;
            if (op.a == op.b)
              g.run({plait::inout(section(op.a), len)}, [&m, opp, v0, v1] { m.apply(*opp, v0, v1); });
            else
              g.run({plait::inout(section(op.a), len), plait::inout(section(op.b), len)},
                    [&m, opp, v0, v1] { m.apply(*opp, v0, v1); });
            ++tasks;
          }
          // Unpack once the message is in.
          for (Channel& c : sh.chans) {
            auto& rb = c.rbuf[gi];
            acc.clear();
            acc.push_back(plait::in(rb.data(), rb.size()));
            for (int slot : c.blocks) acc.push_back(plait::inout(section(slot), len));
            g.run(std::span<const plait::access>(acc), [&s, &c, grp] { unpack(s, c, grp); });
            ++tasks;
          }
          for (int slot : sh.mine) {
            g.run({plait::inout(section(slot), len)}, [&m, slot, v0, v1] {
              thread_local std::vector<double> work;
              work.resize(static_cast<std::size_t>(m.geom().bsize));
              for (int v = v0; v < v1; ++v) amr::stencil(m.geom(), m.var(slot, v), work.data());
            });
            ++tasks;
          }
          if (!s.checksum_stage(stage)) continue;
          // The checksum: block sums, this rank's sum, the all-reduce (an event), the validation.
          Checksum& cs = sums.emplace_back();
          cs.stage = stage;
          cs.v0 = v0;
          cs.v1 = v1;
          const auto gs = static_cast<std::size_t>(v1 - v0);
          cs.block.assign(nb * gs, 0.0);
          cs.local.assign(gs, 0.0);
          cs.global.assign(gs, 0.0);
          acc.clear();
          for (std::size_t i = 0; i < nb; ++i) {
            double* row = cs.block.data() + i * gs;
            const int slot = sh.mine[i];
            g.run({plait::in(section(slot), len), plait::out(row, gs)}, [&m, row, slot, v0, v1] {
              for (int v = v0; v < v1; ++v) row[v - v0] = amr::interior_sum(m.geom(), m.var(slot, v));
            });
            acc.push_back(plait::in(static_cast<const double*>(row), gs));
            ++tasks;
          }
          acc.push_back(plait::out(cs.local.data(), gs));
          Checksum* csp = &cs;
          g.run(std::span<const plait::access>(acc), [csp, nb, gs] {
            for (std::size_t i = 0; i < nb; ++i)
              for (std::size_t v = 0; v < gs; ++v) csp->local[v] += csp->block[i * gs + v];
          });
          // Collectives start in the same order on every rank: one chain through a token.
          g.run_detached({plait::in(cs.local.data(), gs), plait::out(cs.global.data(), gs), plait::inout(collective_order)},
                         [&mp, &s, csp, gs](plait::event e) {
                           mp.iallreduce(csp->local.data(), csp->global.data(), static_cast<int>(gs), MPI_DOUBLE, MPI_SUM,
                                         s.comm(), std::move(e));
                         });
          g.run({plait::in(cs.global.data(), gs), plait::inout(validate_order)}, [&s, csp] {
            for (int v = csp->v0; v < csp->v1; ++v) s.validate(csp->stage, v, csp->global[static_cast<std::size_t>(v - csp->v0)]);
          });
          tasks += 3;
        }
        if (window > 0 && (st + 1) % window == 0) g.wait();
      }
      g.wait();
    }
    s.end_timestep(ts);
  }
  return tasks;
}

}  // namespace

int main(int argc, char** argv) {
  // MULTIPLE where the library has it: task-2's tasks start their operations on any worker. (The
  // checks below depend on the options and the rank count only: every rank reaches the same verdict.)
  using plait_bench::Cli, plait_bench::MpiAgreement, plait_bench::MpiStart;
  return plait_bench::mpi_main(argc, argv, MPI_THREAD_MULTIPLE, "amr", [&](Cli& cli, MpiAgreement& agree, const MpiStart& mpi) {
    const int provided = mpi.provided, rank = mpi.rank, size = mpi.size;
    amr::Options o;
    long long window = 1;
    amr::add_options(cli, o, argc, argv);
    cli.add_int("window", &window, 0, 1000000,
                "task-2: stages whose tasks are added before the group waits for them (0: a whole timestep)");
    cli.parse();
    amr::finish_options(o);
    const amr::Variant var = amr::parse_variant(o.variant);
    if (var != amr::Variant::loop && var != amr::Variant::task2)
      throw plait_bench::usage_error("--variant " + o.variant +
                                     ": amr-mpi runs loop (MPI + Loop) and task-2 (MPI + Task-2); accepted: loop, task-2");
    {
      // The mesh sequence depends on the options only: a rank count larger than the most blocks
      // the mesh ever has leaves a rank that never holds one.
      Mesh shape(o, false);
      shape.init_structure();
      auto peak = static_cast<long long>(shape.active().size());
      for (long long ts = 0; ts < o.num_tsteps; ++ts) {
        shape.move_objects();
        if ((ts + 1) % o.refine_freq == 0 && ts + 1 < o.num_tsteps) shape.adapt();
        peak = std::max(peak, static_cast<long long>(shape.active().size()));
      }
      if (peak < size)
        throw plait_bench::usage_error(std::to_string(size) + " ranks but the mesh never has more than " +
                                       std::to_string(peak) + " blocks, so a rank would never hold one; run at most " +
                                       std::to_string(peak) + " ranks or refine more (--init_x/y/z, --num_refine)");
    }
    if (static_cast<long long>(o.num_vars) * (o.nx + 2) * (o.ny + 2) * (o.nz + 2) > INT_MAX)
      throw plait_bench::usage_error("a block of --num_vars x (nx+2)(ny+2)(nz+2) doubles exceeds one MPI message (2^31 values)");
    if (provided < MPI_THREAD_SERIALIZED)
      throw std::runtime_error("amr-mpi: the MPI library provides no MPI_THREAD_SERIALIZED (tasks on workers call MPI)");
    plait::pool pool(plait::pool_options{.num_workers = static_cast<unsigned>(cli.threads)});
    std::unique_ptr<plait::mpi::progress> mp;
    if (var == amr::Variant::task2) mp = std::make_unique<plait::mpi::progress>(pool);
    agree.point();  // every rank set up, with the same arguments, before the first message
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    DistSim sim(o, rank, size, comm);
    plait_bench::Runner(cli).repeat([&](plait_bench::Record& rec) {
      sim.reset();  // not timed
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      const unsigned long long tasks = pool.run([&]() -> unsigned long long {
        if (var == amr::Variant::loop) {
          run_loop(sim);
          return 0;
        }
        return run_task2(sim, *mp, window);
      });
      MPI_Barrier(comm);
      rec.time_s = MPI_Wtime() - t0;
      sim.finish(rec, var == amr::Variant::loop);
      rec.stat("variant", std::string(amr::variant_name(var)));
      rec.stat("threads_per_rank", cli.threads);
      unsigned long long all_tasks = 0;
      MPI_Reduce(&tasks, &all_tasks, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm);
      rec.stat("tasks", all_tasks);
      rec.stat("mpi_thread_level", provided);
    });
    MPI_Comm_free(&comm);
  });
}
