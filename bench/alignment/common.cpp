// Alignment kernel: input parser, scoring matrix and the per-pair alignment (see alignment.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "alignment/alignment.hpp"

namespace alignment {

namespace {

// Gonnet-250 (PAM-like log-odds, published values), lower triangle row by row in the order
// below; B, Z and X rows as the reference ships them.
constexpr const char* gonnet_order = "ABCDEFGHIKLMNPQRSTVWXYZ";
constexpr int gonnet250[] = {
    24,                                                                                           // A
    0,   0,                                                                                       // B
    5,   0,   115,                                                                                // C
    -3,  0,   -32, 47,                                                                            // D
    0,   0,   -30, 27,  36,                                                                       // E
    -23, 0,   -8,  -45, -39, 70,                                                                  // F
    5,   0,   -20, 1,   -8,  -52, 66,                                                             // G
    -8,  0,   -13, 4,   4,   -1,  -14, 60,                                                        // H
    -8,  0,   -11, -38, -27, 10,  -45, -22, 40,                                                   // I
    -4,  0,   -28, 5,   12,  -33, -11, 6,   -21, 32,                                              // K
    -12, 0,   -15, -40, -28, 20,  -44, -19, 28,  -21, 40,                                         // L
    -7,  0,   -9,  -30, -20, 16,  -35, -13, 25,  -14, 28,  43,                                    // M
    -3,  0,   -18, 22,  9,   -31, 4,   12,  -28, 8,   -30, -22, 38,                               // N
    3,   0,   -31, -7,  -5,  -38, -16, -11, -26, -6,  -23, -24, -9,  76,                          // P
    -2,  0,   -24, 9,   17,  -26, -10, 12,  -19, 15,  -16, -10, 7,   -2,  27,                     // Q
    -6,  0,   -22, -3,  4,   -32, -10, 6,   -24, 27,  -22, -17, 3,   -9,  15,  47,                // R
    11,  0,   1,   5,   2,   -28, 4,   -2,  -18, 1,   -21, -14, 9,   4,   2,   -2,  22,           // S
    6,   0,   -5,  0,   -1,  -22, -11, -3,  -6,  1,   -13, -6,  5,   1,   0,   -2,  15,  25,      // T
    1,   0,   0,   -29, -19, 1,   -33, -20, 31,  -17, 18,  16,  -22, -18, -15, -20, -10, 0,  34,  // V
    -36, 0,   -10, -52, -43, 36,  -40, -8,  -18, -35, -7,  -10, -36, -50, -27, -16, -33, -35, -26, 142,  // W
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,  // X
    -22, 0,   -5,  -28, -27, 51,  -40, 22,  -7,  -21, 0,   -2,  -14, -31, -17, -18, -19, -19, -11, 41,  0,
    78,  // Y
    0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,
    0,   0};  // Z
static_assert(sizeof(gonnet250) / sizeof(gonnet250[0]) == 23 * 24 / 2);

constexpr double pw_gap_open = 10.0, pw_gap_extend = 0.1;

int code_of(char c) {
  const char* p = std::strchr(residue_codes, c);
  return (p && c) ? static_cast<int>(p - residue_codes) : -1;
}

// The per-pair state: the two code strings and the penalties.
struct pair_ctx {
  const signed char* a;  // a[1..n]
  const signed char* b;  // b[1..m]
  const scoring* sc;
  int g, gh;
  int score(int i, int j) const { return sc->m[a[i]][b[j]]; }
};

// Edit script as the reference encodes it: 0 = aligned pair, k > 0 = k residues of b against
// gaps, k < 0 = -k residues of a against gaps; element 0 is unused.
struct script {
  std::vector<int> d{0};
  int last = 0;
  void del(int k) {
    if (last < 0) {
      d.back() -= k;
      last = d.back();
    } else {
      last = -k;
      d.push_back(-k);
    }
  }
  void add(int v) {
    if (last < 0) {
      d.back() = v;
      d.push_back(last);
    } else {
      last = v;
      d.push_back(v);
    }
  }
  void match() {
    last = 0;
    d.push_back(0);
  }
};

// Best local alignment score and the cell where it ends.
void forward_pass(const pair_ctx& c, int n, int m, int& se1, int& se2, int& best, std::vector<int>& H,
                  std::vector<int>& D) {
  const int g = c.g, gh = c.gh;
  best = 0;
  se1 = se2 = 0;
  for (int j = 0; j <= m; ++j) {
    H[static_cast<std::size_t>(j)] = 0;
    D[static_cast<std::size_t>(j)] = -g;
  }
  for (int i = 1; i <= n; ++i) {
    int h = 0, diag = 0, f = -g;
    for (int j = 1; j <= m; ++j) {
      const std::size_t J = static_cast<std::size_t>(j);
      f = std::max(f - gh, h - g - gh);
      D[J] = std::max(D[J] - gh, H[J] - g - gh);
      h = std::max({diag + c.score(i, j), f, D[J], 0});
      diag = H[J];
      H[J] = h;
      if (h > best) {
        best = h;
        se1 = i;
        se2 = j;
      }
    }
  }
}

// Walks back from (se1, se2) to the cell where an alignment reaching `best` starts.
void reverse_pass(const pair_ctx& c, int se1, int se2, int best, int& sb1, int& sb2, std::vector<int>& H,
                  std::vector<int>& D) {
  const int g = c.g, gh = c.gh;
  int reached = 0;
  sb1 = sb2 = 1;
  for (int j = se2; j > 0; --j) {
    H[static_cast<std::size_t>(j)] = -1;
    D[static_cast<std::size_t>(j)] = -1;
  }
  for (int i = se1; i > 0; --i) {
    int h = -1, f = -1;
    int diag = i == se1 ? 0 : -1;
    for (int j = se2; j > 0; --j) {
      const std::size_t J = static_cast<std::size_t>(j);
      f = std::max(f - gh, h - g - gh);
      D[J] = std::max(D[J] - gh, H[J] - g - gh);
      h = std::max({diag + c.score(i, j), f, D[J]});
      diag = H[J];
      H[J] = h;
      if (h > reached) {
        reached = h;
        sb1 = i;
        sb2 = j;
        if (reached >= best) break;
      }
    }
    if (reached >= best) break;
  }
}

struct mm_scratch {
  std::vector<int> HH, DD, RR, SS;
};

inline int gap_cost(int open, int gh, int k) { return k <= 0 ? 0 : open + gh * k; }

// Myers-Miller: optimal global alignment of a[A+1..A+M] with b[B+1..B+N], where a gap touching
// the left end opens at cost tb and one touching the right end at cost te. Appends the edit
// script and returns the score. The scratch rows are free again before the recursive calls.
int mm_diff(const pair_ctx& c, int A, int B, int M, int N, int tb, int te, script& s, mm_scratch& w) {
  const int g = c.g, gh = c.gh;
  if (N <= 0) {
    if (M > 0) s.del(M);
    return -gap_cost(tb, gh, M);
  }
  if (M <= 1) {
    if (M <= 0) {
      s.add(N);
      return -gap_cost(tb, gh, N);
    }
    // one residue of a: either against a gap, or aligned with some b[B + j]
    int midh = -(tb + gh) - gap_cost(te, gh, N);
    const int alt = -(te + gh) - gap_cost(tb, gh, N);
    if (alt > midh) midh = alt;
    int midj = 0;
    for (int j = 1; j <= N; ++j) {
      const int h = c.score(A + 1, B + j) - gap_cost(te, gh, N - j) - gap_cost(tb, gh, j - 1);
      if (h > midh) {
        midh = h;
        midj = j;
      }
    }
    if (midj == 0) {
      s.del(1);
      s.add(N);
    } else {
      if (midj > 1) s.add(midj - 1);
      s.match();
      if (midj < N) s.add(N - midj);
    }
    return midh;
  }

  const std::size_t n1 = static_cast<std::size_t>(N) + 1;
  if (w.HH.size() < n1) {
    w.HH.resize(n1);
    w.DD.resize(n1);
    w.RR.resize(n1);
    w.SS.resize(n1);
  }
  int* HH = w.HH.data();
  int* DD = w.DD.data();
  int* RR = w.RR.data();
  int* SS = w.SS.data();
  const int midi = M / 2;

  // forward over the top half
  HH[0] = 0;
  int t = -tb;
  for (int j = 1; j <= N; ++j) {
    HH[j] = t = t - gh;
    DD[j] = t - g;
  }
  t = -tb;
  for (int i = 1; i <= midi; ++i) {
    int s0 = HH[0];
    int hh;
    HH[0] = hh = t = t - gh;
    int f = t - g, e;
    for (int j = 1; j <= N; ++j) {
      hh = hh - g - gh;
      f = f - gh;
      if (hh > f) f = hh;
      hh = HH[j] - g - gh;
      e = DD[j] - gh;
      if (hh > e) e = hh;
      hh = s0 + c.score(A + i, B + j);
      if (f > hh) hh = f;
      if (e > hh) hh = e;
      s0 = HH[j];
      HH[j] = hh;
      DD[j] = e;
    }
  }
  DD[0] = HH[0];

  // backward over the bottom half
  RR[N] = 0;
  t = -te;
  for (int j = N - 1; j >= 0; --j) {
    RR[j] = t = t - gh;
    SS[j] = t - g;
  }
  t = -te;
  for (int i = M - 1; i >= midi; --i) {
    int s0 = RR[N];
    int hh;
    RR[N] = hh = t = t - gh;
    int f = t - g, e;
    for (int j = N - 1; j >= 0; --j) {
      hh = hh - g - gh;
      f = f - gh;
      if (hh > f) f = hh;
      hh = RR[j] - g - gh;
      e = SS[j] - gh;
      if (hh > e) e = hh;
      hh = s0 + c.score(A + i + 1, B + j + 1);
      if (f > hh) hh = f;
      if (e > hh) hh = e;
      s0 = RR[j];
      RR[j] = hh;
      SS[j] = e;
    }
  }
  SS[N] = RR[N];

  // where the optimal path crosses row midi: through a cell (type 1) or inside a vertical gap (type 2)
  int midh = HH[0] + RR[0], midj = 0, type = 1;
  for (int j = 0; j <= N; ++j) {
    const int hh = HH[j] + RR[j];
    if (hh >= midh && (hh > midh || (HH[j] != DD[j] && RR[j] == SS[j]))) {
      midh = hh;
      midj = j;
    }
  }
  for (int j = N; j >= 0; --j) {
    const int hh = DD[j] + SS[j] + g;
    if (hh > midh) {
      midh = hh;
      midj = j;
      type = 2;
    }
  }

  if (type == 1) {
    mm_diff(c, A, B, midi, midj, tb, g, s, w);
    mm_diff(c, A + midi, B + midj, M - midi, N - midj, g, te, s, w);
  } else {
    mm_diff(c, A, B, midi - 1, midj, tb, 0, s, w);
    s.del(2);
    mm_diff(c, A + midi + 1, B + midj, M - midi - 1, N - midj, 0, te, s, w);
  }
  return midh;
}

}  // namespace

sequences parse(const std::string& text, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return plait_bench::usage_error("malformed alignment input '" + path + "': " + what);
  };
  std::vector<std::string> lines;
  {
    std::size_t at = 0;
    while (at < text.size()) {
      std::size_t e = text.find('\n', at);
      if (e == std::string::npos) e = text.size();
      std::string l = text.substr(at, e - at);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines.push_back(std::move(l));
      at = e + 1;
    }
  }
  std::size_t li = 0;
  while (li < lines.size() && lines[li].find_first_not_of(" \t") == std::string::npos) ++li;
  const std::string head = "Number of sequences is";
  if (li >= lines.size() || lines[li].compare(0, head.size(), head) != 0)
    throw bad("the first line must be 'Number of sequences is N'");
  const std::string num = lines[li].substr(head.size());
  char* end = nullptr;
  const long count = std::strtol(num.c_str(), &end, 10);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (end == num.c_str() || !end || *end || count < 1 || count > 100000)
    throw bad("sequence count '" + plait_bench::printable(num, 40) + "' is not an integer 1..100000");
  ++li;

  sequences s;
  int codes[256];
  for (int k = 0; k < 256; ++k) codes[k] = -1;
  for (const char* p = residue_codes; *p; ++p) codes[static_cast<unsigned char>(*p)] = code_of(*p);
  codes[static_cast<unsigned char>('-')] = gap2;

  for (long k = 0; k < count; ++k) {
    while (li < lines.size() && (lines[li].empty() || lines[li][0] != '>')) {
      if (lines[li].find_first_not_of(" \t") != std::string::npos)
        throw bad("line " + std::to_string(li + 1) + ": expected a '>' header of sequence " + std::to_string(k + 1));
      ++li;
    }
    if (li >= lines.size())
      throw bad("the header says " + std::to_string(count) + " sequences, found " + std::to_string(k));
    std::string name = lines[li].substr(1);
    name.erase(0, name.find_first_not_of(' '));
    name = name.substr(0, name.find(' '));
    ++li;
    std::vector<signed char> q{0};
    int res = 0;
    for (; li < lines.size() && (lines[li].empty() || lines[li][0] != '>'); ++li)
      for (char ch : lines[li]) {
        const int c = codes[static_cast<unsigned char>(ch)];
        if (c < 0) continue;  // not a residue code: skipped, as the reference does
        q.push_back(static_cast<signed char>(c));
        if (c != gap1 && c != gap2) ++res;
      }
    if (q.size() == 1) throw bad("sequence " + std::to_string(k + 1) + " ('" + plait_bench::printable(name, 40) + "') has no residues");
    if (q.size() > 1000001) throw bad("sequence " + std::to_string(k + 1) + " is longer than 1000000 residues");
    s.names.push_back(std::move(name));
    s.seq.push_back(std::move(q));
    s.residues.push_back(res);
  }
  for (; li < lines.size(); ++li)
    if (!lines[li].empty() && lines[li][0] == '>')
      throw bad("more sequences than the header's " + std::to_string(count));
  return s;
}

scoring make_scoring() {
  scoring sc;
  // order index -> code index
  int xref[24];
  for (int i = 0; i < 24; ++i) xref[i] = i < 23 ? code_of(gonnet_order[i]) : -1;
  int ix = 0, diagonal = 0;
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j <= i; ++j) {
      const int ti = xref[i], tj = xref[j];
      if (ti < 0 || tj < 0) continue;
      const int k = gonnet250[ix++] * 10;
      sc.m[ti][tj] = sc.m[tj][ti] = k;
      if (ti == tj) ++diagonal;
    }
  // The reference's mean mismatch: the strictly lower triangle of the code-indexed 24 x 24 block
  // divided by (r^2 - r) / 2 with r = (diagonal entries - 1), truncated toward zero; negated.
  const int r = diagonal - 1;
  int off = 0;
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < i; ++j) off += sc.m[i][j];
  sc.avg_mismatch = -static_cast<int>(off / (static_cast<double>(r * r - r) / 2));
  return sc;  // gap rows and columns (gap1, gap2) stay 0
}

pair_result align_pair(const sequences& s, const scoring& sc, std::size_t i, std::size_t j) {
  const int n = static_cast<int>(s.seq[i].size() - 1), m = static_cast<int>(s.seq[j].size() - 1);
  pair_ctx c{s.seq[i].data(), s.seq[j].data(), &sc, 0, 0};
  c.gh = static_cast<int>(10 * pw_gap_extend);
  const double gg = pw_gap_open + std::log(static_cast<double>(std::min(n, m)));
  c.g = sc.avg_mismatch <= 0 ? static_cast<int>(20 * gg) : static_cast<int>(2 * sc.avg_mismatch * gg);

  const std::size_t w = static_cast<std::size_t>(std::max(n, m)) + 1;
  std::vector<int> H(w), D(w);
  int se1, se2, best, sb1, sb2;
  forward_pass(c, n, m, se1, se2, best, H, D);
  reverse_pass(c, se1, se2, best, sb1, sb2, H, D);

  script sc_out;
  mm_scratch scratch;
  const int M = se1 - sb1 + 1, N = se2 - sb2 + 1;
  mm_diff(c, sb1 - 1, sb2 - 1, M, N, 0, 0, sc_out, scratch);

  // identical aligned residues along the script, and where the script ends
  int i1 = sb1, i2 = sb2, same = 0;
  for (std::size_t k = 1; k < sc_out.d.size(); ++k) {
    const int op = sc_out.d[k];
    if (op == 0) {
      if (i1 > n || i2 > m) break;
      const int c1 = c.a[i1], c2 = c.b[i2];
      if (c1 != gap1 && c1 != gap2 && c1 == c2) ++same;
      ++i1;
      ++i2;
    } else if (op > 0) {
      i2 += op;
    } else {
      i1 -= op;
    }
  }
  pair_result r;
  r.local = best;
  r.path_ok = i1 == sb1 + M && i2 == sb2 + N;
  const int len1 = s.residues[i], len2 = s.residues[j];
  double pct = 100.0 * same;
  pct = (len1 == 0 || len2 == 0) ? 0.0 : pct / std::min(len1, len2);
  r.score = static_cast<int>(pct);
  return r;
}

void align_all_serial(const sequences& s, const scoring& sc, std::vector<pair_result>& out) {
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) out[i * n + j] = align_pair(s, sc, i, j);
}

std::string compare(const std::vector<pair_result>& got, const std::vector<pair_result>& ref, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const pair_result& a = got[i * n + j];
      const pair_result& b = ref[i * n + j];
      const std::string at = "pair (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ")";
      if (!a.path_ok) return at + ": the edit script does not span the aligned segments";
      if (!(a == b))
        return at + ": score " + std::to_string(a.score) + " / local " + std::to_string(a.local) +
               " differs from the serial " + std::to_string(b.score) + " / " + std::to_string(b.local);
    }
  return "";
}

std::uint64_t checksum(const std::vector<pair_result>& r, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over (score, local) in pair order
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      for (int v : {r[i * n + j].score, r[i * n + j].local}) {
        h ^= static_cast<std::uint32_t>(v);
        h *= 1099511628211ULL;
      }
  return h;
}

}  // namespace alignment
