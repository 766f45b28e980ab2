// The paired bootstrap interval and the paired approximate randomisation test of a difference in AP.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "evaluation/ranking.h"
#include "termalign/error.h"
#include "termalign/evaluation.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// A ranked pair of either run, in the merged order of the two lists (rank, then baseline first).
struct Event {
  std::uint32_t source;  // source-term id
  std::uint8_t run;      // 0: the baseline, 1: the other run
  std::uint8_t hit;
};

// splitmix64 seeded from (seed, stream, index): each resample its own stream, whatever thread draws it.
class Stream {
 public:
  Stream(std::uint64_t seed, std::uint64_t stream, std::uint64_t index)
      : state_(mix(mix(seed ^ mix(stream)) ^ index)) {}
  std::uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, n) (multiply-shift; the bias is below n / 2^64).
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

// Resamples are walked eight at a time: one pass over the merged list serves eight lanes, each lane one resample
// (its sums in the order a lone walk would take, so the figures do not depend on the grouping).
constexpr std::size_t lanes = 8;

// Each lane's AP of both runs (after the walk: [side][lane], side 0 the baseline).
struct LaneSums {
  std::uint32_t position[2][lanes] = {}, tp[2][lanes] = {};
  double precision_sum[2][lanes] = {};
  // One more hit on `side` in the lanes where enters[lane] is 1 (none where 0), in every lane at once: adding 0 *
  // precision leaves a sum as it was, so each lane's sum is the one a lone walk gives.
  void hit(std::size_t side, const std::uint32_t* enters) {
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      position[side][lane] += enters[lane];
      tp[side][lane] += enters[lane];
      const double precision = static_cast<double>(tp[side][lane]) /
                               static_cast<double>(std::max<std::uint32_t>(position[side][lane], 1));
      precision_sum[side][lane] += static_cast<double>(enters[lane]) * precision;
    }
  }
};

// The bootstrap: source term s enters lane l copies[s * lanes + l] times (one copy of each of its pairs per draw,
// at consecutive positions). One byte a count keeps the table of 20k terms (160 kB) in the core's cache: the walk
// reads it in the lists' order, at random.
LaneSums walk_resampled(const std::vector<Event>& events, const std::vector<std::uint8_t>& copies) {
  LaneSums sums;
  std::uint32_t enters[lanes];
  for (const Event& event : events) {
    const std::uint8_t* counts = &copies[static_cast<std::size_t>(event.source) * lanes];
    if (event.hit == 0) {
      for (std::size_t lane = 0; lane < lanes; ++lane) sums.position[event.run][lane] += counts[lane];
      continue;
    }
    const std::uint32_t most = *std::max_element(counts, counts + lanes);
    for (std::uint32_t copy = 0; copy < most; ++copy) {
      for (std::size_t lane = 0; lane < lanes; ++lane) enters[lane] = counts[lane] > copy ? 1 : 0;
      sums.hit(event.run, enters);
    }
  }
  return sums;
}

// The randomisation test: in lane l, the runs swap their pairs of source term s when bit l of swapped[s] is set.
LaneSums walk_swapped(const std::vector<Event>& events, const std::vector<std::uint8_t>& swapped) {
  // The lanes of each byte of swaps as eight 0/1 words, so that the walk's lane loops stay vector code.
  static const std::vector<std::array<std::uint32_t, lanes>> lane_bits = [] {
    std::vector<std::array<std::uint32_t, lanes>> table(256);
    for (std::uint32_t byte = 0; byte < 256; ++byte) {
      for (std::size_t lane = 0; lane < lanes; ++lane) table[byte][lane] = (byte >> lane) & 1;
    }
    return table;
  }();
  LaneSums sums;
  std::uint32_t enters[2][lanes];
  for (const Event& event : events) {
    const std::array<std::uint32_t, lanes>& swaps = lane_bits[swapped[event.source]];
    const std::uint32_t run = event.run;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      enters[1][lane] = run ^ swaps[lane];
      enters[0][lane] = 1 - enters[1][lane];
    }
    if (event.hit == 0) {
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        sums.position[0][lane] += enters[0][lane];
        sums.position[1][lane] += enters[1][lane];
      }
    } else {
      sums.hit(0, enters[0]);
      sums.hit(1, enters[1]);
    }
  }
  return sums;
}

// The difference of AP (run minus baseline) in one lane.
double lane_difference(const LaneSums& sums, std::size_t lane, std::uint64_t n_gold) {
  if (n_gold == 0) return 0;
  return (sums.precision_sum[1][lane] - sums.precision_sum[0][lane]) / static_cast<double>(n_gold);
}

// numpy.percentile's default (linear between the closest ranks) of sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  const double h = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(h));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (h - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

constexpr std::uint64_t bootstrap_stream = 1, randomisation_stream = 2;

}  // namespace

void validate(const SignificanceOptions& options) {
  if (options.resamples == 0) {
    throw_usage_error("The number of resamples (--resamples) must be at least 1 (got 0)");
  }
}

std::vector<Difference> compare_runs(const PairList& gold, const std::vector<const PairList*>& runs,
                                     const TermList* source_terms, const TermList* target_terms,
                                     const EvaluationOptions& options, const SignificanceOptions& significance) {
  validate(options, source_terms != nullptr, target_terms != nullptr);
  validate(significance);
  const detail::GoldIndex gold_index(gold);
  std::unordered_map<std::string_view, std::uint32_t> source_ids;
  const auto source_id = [&](const std::string& term) {
    return source_ids.emplace(term, static_cast<std::uint32_t>(source_ids.size())).first->second;
  };
  std::vector<std::uint64_t> gold_count;
  for (const detail::Pair* pair : gold_index.pairs) {
    const std::uint32_t id = source_id(pair->first);
    if (id >= gold_count.size()) gold_count.resize(id + 1, 0);
    ++gold_count[id];
  }
  // Each run's ranked pairs as (source id, hit), in rank order.
  std::vector<std::vector<Event>> ranked_events;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const detail::RankedList ranked =
        detail::rank_predictions(gold_index, *runs[r], source_terms, target_terms, options);
    std::vector<Event> events(ranked.places.size());
    for (std::size_t rank = 0; rank < ranked.places.size(); ++rank) {
      events[rank] = {source_id(runs[r]->pairs[ranked.places[rank]].first), 1, 0};
    }
    for (const std::size_t rank : ranked.hit_ranks) events[rank - 1].hit = 1;
    ranked_events.push_back(std::move(events));
  }
  const std::uint32_t n_sources = static_cast<std::uint32_t>(source_ids.size());
  gold_count.resize(n_sources, 0);
  const std::uint64_t n_gold = gold_index.pairs.size();

  std::vector<Difference> differences(runs.size());
  for (std::size_t r = 1; r < runs.size(); ++r) {
    // The two lists merged by rank (the baseline's pair first at equal ranks).
    const std::vector<Event>& baseline = ranked_events[0];
    const std::vector<Event>& other = ranked_events[r];
    std::vector<Event> events;
    events.reserve(baseline.size() + other.size());
    for (std::size_t rank = 0; rank < std::max(baseline.size(), other.size()); ++rank) {
      if (rank < baseline.size()) events.push_back({baseline[rank].source, 0, baseline[rank].hit});
      if (rank < other.size()) events.push_back(other[rank]);
    }
    const LaneSums observed = walk_swapped(events, std::vector<std::uint8_t>(n_sources, 0));
    Difference& difference = differences[r];
    difference.ap = lane_difference(observed, 0, n_gold);
    difference.resamples = significance.resamples;

    const std::size_t n_resamples = significance.resamples;
    std::vector<double> bootstrap(n_resamples), permuted(n_resamples);
    parallel_for((n_resamples + lanes - 1) / lanes, significance.threads, [&](std::size_t block) {
      const std::size_t first = block * lanes, n_lanes = std::min(lanes, n_resamples - first);
      // The bootstrap: in each lane, n_sources source terms drawn with replacement.
      std::vector<std::uint8_t> copies(n_sources * lanes, 0);
      std::uint64_t drawn_gold[lanes] = {};
      // The randomisation test: each source term's pairs swapped between the runs with probability 1/2.
      std::vector<std::uint8_t> swapped(n_sources, 0);
      for (std::size_t lane = 0; lane < n_lanes; ++lane) {
        Stream draws(significance.seed, bootstrap_stream, first + lane);
        for (std::uint32_t k = 0; k < n_sources; ++k) {
          const std::uint32_t s = draws.below(n_sources);
          std::uint8_t& count = copies[static_cast<std::size_t>(s) * lanes + lane];
          TERMALIGN_CHECK(count < 255, "a source term drawn 255 times in one resample");
          ++count;
          drawn_gold[lane] += gold_count[s];
        }
        Stream coins(significance.seed, randomisation_stream, first + lane);
        std::uint64_t bits = 0;
        for (std::uint32_t s = 0; s < n_sources; ++s) {
          if (s % 64 == 0) bits = coins.next();
          swapped[s] |= static_cast<std::uint8_t>(((bits >> (s % 64)) & 1) << lane);
        }
      }
      const LaneSums resampled = walk_resampled(events, copies);
      const LaneSums shuffled = walk_swapped(events, swapped);
      for (std::size_t lane = 0; lane < n_lanes; ++lane) {
        bootstrap[first + lane] = lane_difference(resampled, lane, drawn_gold[lane]);
        permuted[first + lane] = lane_difference(shuffled, lane, n_gold);
      }
    });
    std::sort(bootstrap.begin(), bootstrap.end());
    difference.low = percentile(bootstrap, 0.025);
    difference.high = percentile(bootstrap, 0.975);
    // A permuted difference equal to the observed one up to rounding counts as at least as large.
    const double threshold = std::abs(difference.ap) - 1e-12;
    const std::size_t as_large = static_cast<std::size_t>(
        std::count_if(permuted.begin(), permuted.end(), [&](double d) { return std::abs(d) >= threshold; }));
    difference.p_value = static_cast<double>(1 + as_large) / static_cast<double>(1 + significance.resamples);
  }
  return differences;
}

}  // namespace termalign
