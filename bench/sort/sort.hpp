// Multisort (BOTS sort, after Cilk's cilksort): sort the four quarters of the array in parallel,
// merge them pairwise in parallel into a scratch array, then merge the two halves back. Merges
// split recursively (the larger run at its middle, the other by binary search) and run in
// parallel. Below the sort cut-off a quarter is sorted by a serial quicksort (median-of-three),
// which hands ranges shorter than the insertion threshold to insertion sort; below the merge
// cut-off a merge is serial. The input is a shuffled permutation of 0..n-1, so the output must be
// exactly 0..n-1.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "common/rt/common.hpp"

namespace msort {

using elem = long long;

struct params {
  std::size_t sort_cut, merge_cut, insertion;
};

inline void insertion_sort(elem* lo, elem* hi) {
  for (elem* p = lo + 1; p < hi; ++p) {
    elem v = *p;
    elem* q = p;
    while (q > lo && q[-1] > v) {
      *q = q[-1];
      --q;
    }
    *q = v;
  }
}

// Median of three as pivot, Hoare-style partition; returns the pivot's final place.
inline elem* partition(elem* lo, elem* hi) {
  elem* mid = lo + (hi - lo) / 2;
  elem* last = hi - 1;
  if (*mid < *lo) std::swap(*mid, *lo);
  if (*last < *lo) std::swap(*last, *lo);
  if (*last < *mid) std::swap(*last, *mid);
  std::swap(*mid, *(last - 1));  // pivot parked at last-1; *lo <= pivot <= *last
  const elem pivot = *(last - 1);
  elem* i = lo;
  elem* j = last - 1;
  for (;;) {
    while (*++i < pivot) {
    }
    while (pivot < *--j) {
    }
    if (i >= j) break;
    std::swap(*i, *j);
  }
  std::swap(*i, *(last - 1));
  return i;
}

inline void quick_sort(elem* lo, elem* hi, std::size_t insertion) {
  while (static_cast<std::size_t>(hi - lo) > std::max<std::size_t>(insertion, 3)) {
    elem* p = partition(lo, hi);
    // recurse into the smaller side, loop on the larger
    if (p - lo < hi - (p + 1)) {
      quick_sort(lo, p, insertion);
      lo = p + 1;
    } else {
      quick_sort(p + 1, hi, insertion);
      hi = p;
    }
  }
  insertion_sort(lo, hi);
}

inline void merge_serial(const elem* a, std::size_t an, const elem* b, std::size_t bn, elem* dest) {
  const elem* ae = a + an;
  const elem* be = b + bn;
  while (a < ae && b < be) *dest++ = (*b < *a) ? *b++ : *a++;
  while (a < ae) *dest++ = *a++;
  while (b < be) *dest++ = *b++;
}

template <class RT>
void merge_par(RT& rt, const elem* a, std::size_t an, const elem* b, std::size_t bn, elem* dest, const params& p) {
  if (an < bn) {
    std::swap(a, b);
    std::swap(an, bn);
  }
  if (an + bn <= p.merge_cut || an == 0) {
    merge_serial(a, an, b, bn, dest);
    return;
  }
  const std::size_t am = an / 2;
  const std::size_t bs = static_cast<std::size_t>(std::lower_bound(b, b + bn, a[am]) - b);
  dest[am + bs] = a[am];
  rt.invoke([&] { merge_par(rt, a, am, b, bs, dest, p); },
            [&] { merge_par(rt, a + am + 1, an - am - 1, b + bs, bn - bs, dest + am + bs + 1, p); });
}

template <class RT>
void sort_par(RT& rt, elem* a, elem* tmp, std::size_t n, const params& p) {
  if (n <= p.sort_cut || n < 4) {
    quick_sort(a, a + n, p.insertion);
    return;
  }
  const std::size_t q = n / 4;
  elem *A = a, *B = a + q, *C = a + 2 * q, *D = a + 3 * q;
  elem *tA = tmp, *tB = tmp + q, *tC = tmp + 2 * q, *tD = tmp + 3 * q;
  rt.invoke(
      [&] { rt.invoke([&] { sort_par(rt, A, tA, q, p); }, [&] { sort_par(rt, B, tB, q, p); }); },
      [&] { rt.invoke([&] { sort_par(rt, C, tC, q, p); }, [&] { sort_par(rt, D, tD, n - 3 * q, p); }); });
  rt.invoke([&] { merge_par(rt, A, q, B, q, tA, p); }, [&] { merge_par(rt, C, q, D, n - 3 * q, tC, p); });
  merge_par(rt, tA, 2 * q, tC, n - 2 * q, A, p);
}

// splitmix64: a fixed, portable generator for the shuffle.
inline std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline void shuffled_permutation(std::vector<elem>& v, std::uint64_t seed) {
  std::iota(v.begin(), v.end(), elem{0});
  for (std::size_t i = v.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(splitmix(seed) % i);
    std::swap(v[i - 1], v[j]);
  }
}

template <class RT>
int main_for(int argc, char** argv) {
  return plait_bench::main_guard("sort", argc, argv, [&](plait_bench::Cli& cli) {
    RT rt(cli, false);
    long long n = 1 << 20, insertion = 20, seed = 1;
    std::string size = "ci", cutoff_s = "coarse", merge_s = "auto";
    bool inject = false;
    cli.add_int("n", &n, 1, 1LL << 30, "elements to sort; overrides --size");
    cli.add_size("size", &size, "problem class: ci (2^20), test (2^16), small (2^22), medium (2^25, BOTS default)",
                 {"ci", "test", "small", "medium"}, {{"n", {1 << 20, 1 << 16, 1 << 22, 1 << 25}}});
    cli.add_string("cutoff", &cutoff_s,
                   "sort cut-off (elements): ranges up to it are quicksorted serially; coarse = max(2048, n/64), "
                   "fine = 16, or 4..2^30");
    cli.add_string("merge-cutoff", &merge_s,
                   "merge cut-off (elements): merges up to it are serial; auto = max(2048, n/128) with coarse, 8 "
                   "with fine, half the sort cut-off otherwise; or 2..2^30");
    cli.add_int("insertion", &insertion, 1, 1 << 20, "quicksort hands ranges up to this size to insertion sort");
    cli.add_int("seed", &seed, 0, 1LL << 62, "shuffle seed");
    cli.add_inject_error(&inject);
    cli.parse();
    const long long coarse = std::max(2048LL, n / 64);
    params p{};
    p.sort_cut = static_cast<std::size_t>(kern::parse_cutoff("cutoff", cutoff_s, coarse, 16, 4, 1LL << 30));
    if (merge_s == "auto")
      p.merge_cut = cutoff_s == "coarse" ? static_cast<std::size_t>(std::max(2048LL, n / 128))
                                         : cutoff_s == "fine" ? 8 : std::max<std::size_t>(2, p.sort_cut / 2);
    else
      p.merge_cut = static_cast<std::size_t>(kern::parse_cutoff("merge-cutoff", merge_s, std::max(2048LL, n / 128), 8, 2, 1LL << 30));
    p.insertion = static_cast<std::size_t>(insertion);

    const std::size_t nn = static_cast<std::size_t>(n);
    std::vector<elem> data(nn), tmp(nn);
    rt.start(cli.threads);
    plait_bench::Runner run(cli);
    run.repeat([&](plait_bench::Record& rec) {
      shuffled_permutation(data, static_cast<std::uint64_t>(seed));
      rt.reset_stats();
      double t0 = plait_bench::now();
      rt.root([&] { sort_par(rt, data.data(), tmp.data(), nn, p); });
      rec.time_s = plait_bench::now() - t0;
      if (inject && nn >= 2) std::swap(data[nn / 3], data[nn / 3 + 1]);
      std::size_t bad = nn;
      for (std::size_t i = 0; i < nn; ++i)
        if (data[i] != static_cast<elem>(i)) {
          bad = i;
          break;
        }
      rec.check(bad == nn, bad == nn ? "output = 0.." + std::to_string(nn - 1)
                                     : "output differs from 0.." + std::to_string(nn - 1) + " at index " +
                                           std::to_string(bad));
      rec.stat("sort_cutoff", static_cast<unsigned long long>(p.sort_cut));
      rec.stat("merge_cutoff", static_cast<unsigned long long>(p.merge_cut));
      rt.stats(rec);
    });
  });
}

}  // namespace msort
