// The paired bootstrap interval and the paired approximate randomisation test of a difference in AP.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

// Resamples are walked `lanes` at a time: one pass over the merged list serves every lane, each lane one resample
// (its sums in the order a lone walk would take, so the figures do not depend on the grouping or the lane count).
// 32 lanes: each event's per-lane counts are one 32-byte load, and the table of 20k source terms (640 kB) stays in
// the core's L2 cache; 8 lanes walked the 200k pairs of the BUCC test size four times as often.
constexpr std::size_t lanes = 32;

// Each lane's AP of both runs (after the walk: [side][lane], side 0 the baseline).
struct LaneSums {
  std::uint32_t position[2][lanes] = {}, tp[2][lanes] = {};
  double precision_sum[2][lanes] = {};
};

// The bootstrap: source term s enters lane l copies[s * lanes + l] times (one copy of each of its pairs per draw,
// at consecutive positions). A pair that is no hit only moves the positions; a hit adds, for each of its copies,
// the precision at its position in the lanes that hold that copy. A lane without the copy adds nothing (a lone
// walk's sum is unchanged: adding 0 * precision leaves it as it was, so the masked form below gives its sums).
LaneSums walk_resampled(const std::vector<Event>& events, const std::vector<std::uint8_t>& copies) {
  LaneSums sums;
  for (const Event& event : events) {
    const std::uint8_t* counts = &copies[static_cast<std::size_t>(event.source) * lanes];
    std::uint32_t* position = sums.position[event.run];
    if (event.hit == 0) {
      for (std::size_t lane = 0; lane < lanes; ++lane) position[lane] += counts[lane];
      continue;
    }
    std::uint32_t* tp = sums.tp[event.run];
    // Branch-free lane loops (vector code): a lane without this copy adds 0 * precision, which leaves its sum as
    // it was. The counts in a local array of words: through the byte pointer, which may alias anything, the loops
    // would stay scalar. (A scalar loop over the lanes that drew the term more than once was slower: its trip
    // counts are random, and their branches mispredicted.)
    std::uint32_t count[lanes], enters[lanes], hits[lanes], places[lanes];
    std::uint32_t most = 0;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      count[lane] = counts[lane];
      most = std::max(most, count[lane]);
    }
    double* sum = sums.precision_sum[event.run];
    for (std::uint32_t copy = 0; copy < most; ++copy) {
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        enters[lane] = count[lane] > copy ? 1 : 0;
        position[lane] += enters[lane];
        tp[lane] += enters[lane];
        hits[lane] = tp[lane];
        places[lane] = std::max(position[lane], 1u);
      }
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        const double precision = static_cast<double>(hits[lane]) / static_cast<double>(places[lane]);
        sum[lane] += static_cast<double>(enters[lane]) * precision;
      }
    }
  }
  return sums;
}

// table[s * lanes + lane] = rows[lane * n + s]: each lane's row of counts turned into each term's lane counts.
// With SSE2, 16 x 16 blocks of bytes at a time (four rounds of interleaving row i with row i + 8 transpose a
// block), 20x faster than byte by byte, which took a tenth of the bootstrap's time.
void transpose_rows(const std::uint8_t* rows, std::size_t n, std::uint8_t* table) {
  static_assert(lanes % 16 == 0, "the blocks are 16 lanes wide");
  std::size_t s = 0;
#ifdef __SSE2__
  for (; s + 16 <= n; s += 16) {
    for (std::size_t first = 0; first < lanes; first += 16) {
      __m128i x[16], y[16];
      for (std::size_t i = 0; i < 16; ++i)
        x[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows + (first + i) * n + s));
      for (int round = 0; round < 2; ++round) {
        for (std::size_t i = 0; i < 8; ++i) {
          y[2 * i] = _mm_unpacklo_epi8(x[i], x[i + 8]);
          y[2 * i + 1] = _mm_unpackhi_epi8(x[i], x[i + 8]);
        }
        for (std::size_t i = 0; i < 8; ++i) {
          x[2 * i] = _mm_unpacklo_epi8(y[i], y[i + 8]);
          x[2 * i + 1] = _mm_unpackhi_epi8(y[i], y[i + 8]);
        }
      }
      for (std::size_t j = 0; j < 16; ++j)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(table + (s + j) * lanes + first), x[j]);
    }
  }
#endif
  for (; s < n; ++s) {
    for (std::size_t lane = 0; lane < lanes; ++lane) table[s * lanes + lane] = rows[lane * n + s];
  }
}

// The randomisation test: in lane l, the runs swap their pairs of source term s when bit l of swapped[s] is set.
// Every pair goes to one side in each lane, so only side 1's position and true pairs are counted; side 0's are
// the pairs walked so far minus those.
LaneSums walk_swapped(const std::vector<Event>& events, const std::vector<std::uint32_t>& swapped) {
  static_assert(lanes <= 32, "a term's swaps are the bits of one 32-bit word");
  LaneSums sums;
  std::uint32_t walked = 0, walked_hits = 0;
  std::uint32_t* position = sums.position[1];
  std::uint32_t* tp = sums.tp[1];
  for (const Event& event : events) {
    const std::uint32_t swaps = swapped[event.source], run = event.run;
    ++walked;
    if (event.hit == 0) {
      for (std::size_t lane = 0; lane < lanes; ++lane) position[lane] += run ^ ((swaps >> lane) & 1);
      continue;
    }
    ++walked_hits;
    // Branch-free lane loops (vector code): the side without the hit adds +0.0, which leaves its sum as it was.
    std::uint32_t side[lanes], own_tp[lanes], own_position[lanes];
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      side[lane] = run ^ ((swaps >> lane) & 1);
      position[lane] += side[lane];
      tp[lane] += side[lane];
      own_tp[lane] = side[lane] ? tp[lane] : walked_hits - tp[lane];
      own_position[lane] = side[lane] ? position[lane] : walked - position[lane];
    }
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      const double precision = static_cast<double>(own_tp[lane]) / static_cast<double>(own_position[lane]);
      sums.precision_sum[1][lane] += side[lane] ? precision : 0.0;
      sums.precision_sum[0][lane] += side[lane] ? 0.0 : precision;
    }
  }
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    sums.position[0][lane] = walked - position[lane];
    sums.tp[0][lane] = walked_hits - tp[lane];
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

namespace {

// The gold and the runs' ranked pairs by source-term id: the units of the resampling are the source terms of the
// gold and of the runs.
struct Prepared {
  std::uint32_t n_sources = 0;
  std::vector<std::uint64_t> gold_count;  // gold pairs of each source term
  std::uint64_t n_gold = 0;
  std::vector<std::vector<Event>> ranked;  // each run's pairs in rank order, as (source id, run 1, hit)
};

Prepared prepare(const PairList& gold, const std::vector<const PairList*>& runs, const TermList* source_terms,
                 const TermList* target_terms, const EvaluationOptions& options) {
  Prepared prepared;
  const detail::GoldIndex gold_index(gold);
  std::unordered_map<std::string_view, std::uint32_t> source_ids;
  const auto source_id = [&](const std::string& term) {
    return source_ids.emplace(term, static_cast<std::uint32_t>(source_ids.size())).first->second;
  };
  for (const detail::Pair* pair : gold_index.pairs) {
    const std::uint32_t id = source_id(pair->first);
    if (id >= prepared.gold_count.size()) prepared.gold_count.resize(id + 1, 0);
    ++prepared.gold_count[id];
  }
  for (const PairList* run : runs) {
    const detail::RankedList ranked =
        detail::rank_predictions(gold_index, *run, source_terms, target_terms, options);
    std::vector<Event> events(ranked.places.size());
    for (std::size_t rank = 0; rank < ranked.places.size(); ++rank) {
      events[rank] = {source_id(run->pairs[ranked.places[rank]].first), 1, 0};
    }
    for (const std::size_t rank : ranked.hit_ranks) events[rank - 1].hit = 1;
    prepared.ranked.push_back(std::move(events));
  }
  prepared.n_sources = static_cast<std::uint32_t>(source_ids.size());
  prepared.gold_count.resize(prepared.n_sources, 0);
  prepared.n_gold = gold_index.pairs.size();
  return prepared;
}

// The bootstrap's differences (side 1 minus side 0) of `events`, one per resample, sorted: in each resample,
// n_sources source terms drawn with replacement (resample i from the stream (seed, bootstrap, i)).
std::vector<double> bootstrap_differences(const std::vector<Event>& events, const Prepared& prepared,
                                          const SignificanceOptions& significance) {
  const std::size_t n_resamples = significance.resamples;
  const std::uint32_t n_sources = prepared.n_sources;
  std::vector<double> bootstrap(n_resamples);
  parallel_for((n_resamples + lanes - 1) / lanes, significance.threads, [&](std::size_t block) {
    const std::size_t first = block * lanes, n_lanes = std::min(lanes, n_resamples - first);
    // Each lane draws into its own row of counts (20 kB for 20k terms: the draws stay in the L1 cache), then the
    // rows are transposed into the walk's table, a term's 32 lane counts side by side. The tables are the
    // thread's, reused by its blocks: a fresh 640 kB table each block cost a page fault per 4 kB.
    thread_local std::vector<std::uint8_t> rows, copies;
    rows.assign(static_cast<std::size_t>(n_sources) * lanes, 0);
    copies.resize(static_cast<std::size_t>(n_sources) * lanes);
    // Locals, not re-read through the captures after each byte written (a byte store may alias anything).
    const std::size_t n = n_sources;
    std::uint8_t* const row_data = rows.data();
    std::uint8_t* const table = copies.data();
    const std::uint64_t* const gold_count = prepared.gold_count.data();
    std::uint64_t drawn_gold[lanes] = {};
    for (std::size_t lane = 0; lane < n_lanes; ++lane) {
      std::uint8_t* const row = row_data + lane * n;
      Stream draws(significance.seed, bootstrap_stream, first + lane);
      std::uint64_t gold_drawn = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t s = draws.below(static_cast<std::uint32_t>(n));
        TERMALIGN_CHECK(row[s] < 255, "a source term drawn 255 times in one resample");
        ++row[s];
        gold_drawn += gold_count[s];
      }
      drawn_gold[lane] = gold_drawn;
    }
    transpose_rows(row_data, n, table);
    const LaneSums resampled = walk_resampled(events, copies);
    for (std::size_t lane = 0; lane < n_lanes; ++lane)
      bootstrap[first + lane] = lane_difference(resampled, lane, drawn_gold[lane]);
  });
  std::sort(bootstrap.begin(), bootstrap.end());
  return bootstrap;
}

}  // namespace

std::vector<Difference> compare_runs(const PairList& gold, const std::vector<const PairList*>& runs,
                                     const TermList* source_terms, const TermList* target_terms,
                                     const EvaluationOptions& options, const SignificanceOptions& significance) {
  validate(options, source_terms != nullptr, target_terms != nullptr);
  validate(significance);
  const Prepared prepared = prepare(gold, runs, source_terms, target_terms, options);
  const std::uint32_t n_sources = prepared.n_sources;
  const std::uint64_t n_gold = prepared.n_gold;

  std::vector<Difference> differences(runs.size());
  for (std::size_t r = 1; r < runs.size(); ++r) {
    // The two lists merged by rank (the baseline's pair first at equal ranks).
    const std::vector<Event>& baseline = prepared.ranked[0];
    const std::vector<Event>& other = prepared.ranked[r];
    std::vector<Event> events;
    events.reserve(baseline.size() + other.size());
    for (std::size_t rank = 0; rank < std::max(baseline.size(), other.size()); ++rank) {
      if (rank < baseline.size()) events.push_back({baseline[rank].source, 0, baseline[rank].hit});
      if (rank < other.size()) events.push_back(other[rank]);
    }
    const LaneSums observed = walk_swapped(events, std::vector<std::uint32_t>(n_sources, 0));
    Difference& difference = differences[r];
    difference.ap = lane_difference(observed, 0, n_gold);
    difference.resamples = significance.resamples;

    const std::vector<double> bootstrap = bootstrap_differences(events, prepared, significance);
    difference.low = percentile(bootstrap, 0.025);
    difference.high = percentile(bootstrap, 0.975);

    // The randomisation test: each source term's pairs swapped between the runs with probability 1/2 (bit l of
    // swapped[s]: in lane l; resample i from the stream (seed, randomisation, i)).
    const std::size_t n_resamples = significance.resamples;
    std::vector<double> permuted(n_resamples);
    parallel_for((n_resamples + lanes - 1) / lanes, significance.threads, [&](std::size_t block) {
      const std::size_t first = block * lanes, n_lanes = std::min(lanes, n_resamples - first);
      std::vector<std::uint32_t> swapped(n_sources, 0);
      for (std::size_t lane = 0; lane < n_lanes; ++lane) {
        Stream coins(significance.seed, randomisation_stream, first + lane);
        for (std::uint32_t s = 0; s < n_sources; s += 64) {
          const std::uint64_t bits = coins.next();
          const std::uint32_t end = std::min<std::uint32_t>(n_sources, s + 64);
          for (std::uint32_t t = s; t < end; ++t)
            swapped[t] |= static_cast<std::uint32_t>((bits >> (t - s)) & 1) << lane;
        }
      }
      const LaneSums shuffled = walk_swapped(events, swapped);
      for (std::size_t lane = 0; lane < n_lanes; ++lane)
        permuted[first + lane] = lane_difference(shuffled, lane, n_gold);
    });
    // A permuted difference equal to the observed one up to rounding counts as at least as large.
    const double threshold = std::abs(difference.ap) - 1e-12;
    const std::size_t as_large = static_cast<std::size_t>(
        std::count_if(permuted.begin(), permuted.end(), [&](double d) { return std::abs(d) >= threshold; }));
    difference.p_value = static_cast<double>(1 + as_large) / static_cast<double>(1 + significance.resamples);
  }
  return differences;
}

std::vector<ApInterval> ap_intervals(const PairList& gold, const std::vector<const PairList*>& runs,
                                     const TermList* source_terms, const TermList* target_terms,
                                     const EvaluationOptions& options, const SignificanceOptions& significance) {
  validate(options, source_terms != nullptr, target_terms != nullptr);
  validate(significance);
  std::vector<ApInterval> intervals;
  for (const PairList* run : runs) {
    // The units are the source terms of the gold and of this run alone; side 0 is empty, so each resample's
    // difference is the run's AP on it.
    const Prepared prepared = prepare(gold, {run}, source_terms, target_terms, options);
    const std::vector<Event>& events = prepared.ranked[0];
    ApInterval interval;
    interval.ap = lane_difference(walk_swapped(events, std::vector<std::uint32_t>(prepared.n_sources, 0)), 0,
                                  prepared.n_gold);
    const std::vector<double> bootstrap = bootstrap_differences(events, prepared, significance);
    interval.low = percentile(bootstrap, 0.025);
    interval.high = percentile(bootstrap, 0.975);
    interval.resamples = significance.resamples;
    intervals.push_back(interval);
  }
  return intervals;
}

double sign_flip_p_value(const std::vector<double>& differences, const SignificanceOptions& significance) {
  validate(significance);
  double observed = 0;
  for (const double d : differences) observed += d;
  const std::size_t n_resamples = significance.resamples, n = differences.size();
  // A flipped sum equal to the observed one up to rounding counts as at least as large (identical runs: p = 1).
  const double threshold = std::abs(observed) - 1e-12;
  std::vector<std::uint8_t> as_large(n_resamples, 0);
  parallel_for(n_resamples, significance.threads, [&](std::size_t i) {
    Stream coins(significance.seed, randomisation_stream, i);
    double sum = 0;
    std::uint64_t bits = 0;
    for (std::size_t u = 0; u < n; ++u) {
      if (u % 64 == 0) bits = coins.next();
      sum += ((bits >> (u % 64)) & 1) ? -differences[u] : differences[u];
    }
    as_large[i] = std::abs(sum) >= threshold ? 1 : 0;
  });
  const std::size_t count = static_cast<std::size_t>(std::count(as_large.begin(), as_large.end(), 1));
  return static_cast<double>(1 + count) / static_cast<double>(1 + n_resamples);
}

}  // namespace termalign
