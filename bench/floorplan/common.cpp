#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "floorplan/floorplan.hpp"

namespace floorplan {

problem parse_input(const std::string& text, const std::string& path) {
  std::vector<std::string> tok;
  std::string cur;
  for (char ch : text) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      if (!cur.empty()) tok.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) tok.push_back(cur);
  std::size_t at = 0;
  auto integer = [&](const char* what, long lo, long hi) {
    if (at >= tok.size()) throw plait_bench::usage_error("malformed floorplan input '" + path + "': missing " + what);
    const std::string& t = tok[at++];
    errno = 0;
    char* end = nullptr;
    long v = std::strtol(t.c_str(), &end, 10);
    // The whole token must be the number (strtol stops at a NUL byte inside it); a binary file's
    // bytes are quoted escaped, at most 40 of them.
    if (t.empty() || end != t.c_str() + t.size() || errno)
      throw plait_bench::usage_error("malformed floorplan input '" + path + "': " + what + " '" +
                                     plait_bench::printable(t, 40) + "' is not an integer");
    if (v < lo || v > hi)
      throw plait_bench::usage_error("floorplan input '" + path + "': " + what + " " + plait_bench::printable(t, 40) +
                                     " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    return static_cast<int>(v);
  };
  problem pr;
  pr.n = integer("cell count", 1, MAX_CELLS);
  pr.cells.resize(static_cast<std::size_t>(pr.n) + 1);
  for (int i = 1; i <= pr.n; ++i) {
    cell_def& c = pr.cells[static_cast<std::size_t>(i)];
    const int shapes = integer("shape count", 1, 64);
    for (int s = 0; s < shapes; ++s) {
      const int r = integer("shape rows", 1, ROWS);
      const int k = integer("shape columns", 1, COLS);
      c.alt.push_back({r, k});
    }
    c.left = integer("left neighbour", -1, pr.n);
    c.above = integer("above neighbour", -1, pr.n);
    c.next = integer("next cell", 0, pr.n);
    if (c.left < 0 && c.above < 0)
      throw plait_bench::usage_error("floorplan input '" + path + "': cell " + std::to_string(i) +
                                     " has neither a left nor an above neighbour");
    if (c.left >= i || c.above >= i || (c.next != 0 && c.next <= i))
      throw plait_bench::usage_error("floorplan input '" + path + "': cell " + std::to_string(i) +
                                     " refers to cells out of order");
  }
  // Every kernel checks its own answer: the file must end with the minimum area.
  if (at >= tok.size())
    throw plait_bench::usage_error("floorplan input '" + path + "': it ends after cell " + std::to_string(pr.n) +
                                   " without the expected minimum area; accepted: a file whose last number is that "
                                   "area (BOTS input.5, .15, .20 end with 216, 713, 896)");
  pr.expected = integer("expected area", 0, ROWS * COLS);
  if (at < tok.size()) throw plait_bench::usage_error("malformed floorplan input '" + path + "': trailing data");
  return pr;
}

int starts(const problem& pr, int id, int s, const positions& P, int (*nws)[2]) {
  const cell_def& c = pr.cells[static_cast<std::size_t>(id)];
  const int rows = c.alt[static_cast<std::size_t>(s)].rows, cols = c.alt[static_cast<std::size_t>(s)].cols;
  const int left = c.left, above = c.above;
  if (left >= 0 && above >= 0) {
    const pos& L = P[static_cast<std::size_t>(left)];
    const pos& A = P[static_cast<std::size_t>(above)];
    const int top = A.bot + 1, lhs = L.rhs + 1, bot = top + rows, rhs = lhs + cols;
    // only where the cell touches both neighbours
    if (top <= L.bot && bot >= L.top && lhs <= A.rhs && rhs >= A.lhs) {
      nws[0][0] = top;
      nws[0][1] = lhs;
      return 1;
    }
    return 0;
  }
  if (left >= 0) {
    const pos& L = P[static_cast<std::size_t>(left)];
    const int top = std::max(L.top - rows + 1, 0), bot = std::min(L.bot, ROWS);
    int n = 0;
    for (int r = top; r <= bot; ++r, ++n) {
      nws[n][0] = r;
      nws[n][1] = L.rhs + 1;
    }
    return n;
  }
  const pos& A = P[static_cast<std::size_t>(above)];
  const int lhs = std::max(A.lhs - cols + 1, 0), rhs = std::min(A.rhs, COLS);
  int n = 0;
  for (int k = lhs; k <= rhs; ++k, ++n) {
    nws[n][0] = A.bot + 1;
    nws[n][1] = k;
  }
  return n;
}

bool lay_down(int id, board& b, const pos& p) {
  if (p.top < 0 || p.lhs < 0 || p.bot >= ROWS || p.rhs >= COLS) return false;
  for (int i = p.top; i <= p.bot; ++i)
    for (int j = p.lhs; j <= p.rhs; ++j) {
      char& x = b[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      if (x != 0) return false;
      x = static_cast<char>(id);
    }
  return true;
}

void search_serial(const problem& pr, int id, const int fp[2], const board& b, positions& P, shared_best& best) {
  const cell_def& c = pr.cells[static_cast<std::size_t>(id)];
  int nws[ROWS + COLS + 2][2];
  for (int s = 0; s < static_cast<int>(c.alt.size()); ++s) {
    const int nn = starts(pr, id, s, P, nws);
    for (int j = 0; j < nn; ++j) {
      pos& q = P[static_cast<std::size_t>(id)];
      q.top = nws[j][0];
      q.bot = q.top + c.alt[static_cast<std::size_t>(s)].rows - 1;
      q.lhs = nws[j][1];
      q.rhs = q.lhs + c.alt[static_cast<std::size_t>(s)].cols - 1;
      board nb = b;
      best.nodes.add();
      if (!lay_down(id, nb, q)) continue;
      const int nfp[2] = {std::max(fp[0], q.bot + 1), std::max(fp[1], q.rhs + 1)};
      const int area = nfp[0] * nfp[1];
      if (c.next == 0)
        best.offer(area, nb, nfp[0], nfp[1]);
      else if (area < best.area.load(std::memory_order_relaxed))
        search_serial(pr, c.next, nfp, nb, P, best);
    }
  }
}

}  // namespace floorplan
