// The decision of the refinement's check (refined_seed_products): is a refitted map worse than the best so far on
// the held-out seed words?
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace termalign::detail {

// The share of held-out words retrieved (one flag per word).
inline double share_of_hits(const std::vector<char>& hits) {
  return hits.empty()
             ? 0.0
             : static_cast<double>(std::count(hits.begin(), hits.end(), 1)) / static_cast<double>(hits.size());
}

// How a refitted map's held-out hits compare with those of the best map so far (one measure: P@1 or P@5).
struct HitComparison {
  std::size_t lost = 0, gained = 0;
  double before = 0, after = 0;  // shares of held-out words retrieved
  // It loses significantly more held-out words than it gains: by more than one standard deviation of that
  // difference under chance (a sign test on the words where the two maps differ).
  bool significant_loss() const {
    const double net = static_cast<double>(lost) - static_cast<double>(gained);
    return net > 0 && net > std::sqrt(static_cast<double>(lost + gained));
  }
};

inline HitComparison compare_hits(const std::vector<char>& before, const std::vector<char>& after) {
  HitComparison comparison;
  for (std::size_t i = 0; i < before.size(); ++i) {
    comparison.lost += before[i] && !after[i];
    comparison.gained += !before[i] && after[i];
  }
  comparison.before = share_of_hits(before);
  comparison.after = share_of_hits(after);
  return comparison;
}

// A refitted map is worse than the best so far when its P@1 loses significantly and falls under kKeptShare of the
// best's, AND its P@5 loses significantly too. The held-out seed words are a proxy, not the task:
// - on enfr/train the refinement raises the AP from 0.532 to 0.565 while the held-out P@1 moves within a point
//   (47, 45, 52 words lost, 43, 45, 50 gained);
// - with a seed of identical strings (--seed identical) it raises the AP from 0.468 to 0.560 while the P@1 falls
//   from 52.9 % to 47.3 % (the identical strings are names and numbers, which the induced pairs outweigh);
// - with a noisy seed (a pivot dictionary, on an en-ru stand-in: docs/accuracy.md) it raises the AP from 0.257 to
//   0.355 while the P@1 falls from 10.2 % to 5.7 % and the P@5 rises from 18.4 % to 22.4 %: the map leaves the
//   seed's own errors, not the translations.
// A drifting refinement loses both: P@1 21.8 % -> 4.8 % and P@5 42.8 % -> 11.7 % on synthetic rows in unrelated
// orders (d = 300); at d = 100 and noise 2.5, P@1 21.5 % -> 17.0 % with P@5 41.5 % -> 38.5 % (17 lost, 11
// gained), where the refinement would lower the AP from 0.427 to 0.262.
inline constexpr double kKeptShare = 0.8;
inline bool worse_map(const HitComparison& top1, const HitComparison& top) {
  return top1.significant_loss() && top1.after < kKeptShare * top1.before && top.significant_loss();
}

}  // namespace termalign::detail
