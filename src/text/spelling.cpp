#include "text/spelling.h"

#include <unicode/translit.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "io/io.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/parallel.h"

namespace termalign {

namespace {

// One transliterator per thread: ICU's Transliterator::transliterate is not safe to share between threads.
const icu::Transliterator& latin_transliterator() {
  thread_local std::unique_ptr<icu::Transliterator> transliterator = [] {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::Transliterator> created(icu::Transliterator::createInstance(
        icu::UnicodeString::fromUTF8("Any-Latin; Latin-ASCII; Lower"), UTRANS_FORWARD, status));
    TERMALIGN_CHECK(U_SUCCESS(status) && created, "ICU has no Any-Latin transliterator");
    return created;
  }();
  return *transliterator;
}

// FNV-1a over the bytes of one n-gram, with its length mixed in so bigrams and trigrams never share a hash.
std::uint32_t hash_ngram(const std::string& text, std::size_t begin, std::size_t end) {
  std::uint32_t hash = 2166136261u ^ static_cast<std::uint32_t>(end - begin);
  for (std::size_t i = begin; i < end; ++i) hash = (hash ^ static_cast<unsigned char>(text[i])) * 16777619u;
  return hash;
}

// The n-grams two (sorted) profiles share, or -1 as soon as they cannot share `needed` (the merge stops there:
// most of the targets a search scores fall short, and they are told apart early). The merge has no branches on
// the values, whose order is random (a branch would be mispredicted half the time).
long shared_at_least(const NgramProfile& a, const NgramProfile& b, long needed) {
  long shared = 0;
  std::size_t i = 0, j = 0;
  const std::size_t na = a.size(), nb = b.size();
  while (i < na && j < nb) {
    if (shared + static_cast<long>(std::min(na - i, nb - j)) < needed) return -1;
    const std::uint32_t x = a[i], y = b[j];
    shared += x == y;
    i += x <= y;
    j += y <= x;
  }
  return shared >= needed ? shared : -1;
}

}  // namespace

std::string latin_spelling(const std::string& term, bool transliterate) {
  // ASCII is left as it is by Any-Latin and Latin-ASCII: only lower-cased (most terms of Latin-script languages,
  // and ICU's rules cost microseconds a term).
  if (!transliterate || is_ascii(term)) return to_lower(term);
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(term);
  latin_transliterator().transliterate(text);
  std::string spelling;
  text.toUTF8String(spelling);
  return spelling;
}

NgramProfile ngram_profile(const std::string& spelling) {
  // Byte n-grams of the UTF-8 text: after transliteration nearly every term is ASCII.
  const std::string marked = "#" + spelling + "#";
  NgramProfile profile;
  for (std::size_t n = 2; n <= 3; ++n) {
    for (std::size_t i = 0; i + n <= marked.size(); ++i) {
      // The lowest bit tells trigrams (1) from bigrams (0), so the inverted index can use trigrams only.
      profile.push_back((hash_ngram(marked, i, i + n) & ~1u) | (n == 3 ? 1u : 0u));
    }
  }
  std::sort(profile.begin(), profile.end());
  return profile;
}

double ngram_similarity(const NgramProfile& a, const NgramProfile& b) {
  if (a.empty() && b.empty()) return 0;
  return 2.0 * static_cast<double>(shared_at_least(a, b, 0)) / static_cast<double>(a.size() + b.size());
}

double orthographic_similarity(const std::string& a, const std::string& b, bool transliterate) {
  return ngram_similarity(ngram_profile(latin_spelling(a, transliterate)),
                          ngram_profile(latin_spelling(b, transliterate)));
}

std::vector<NgramProfile> ngram_profiles(const std::vector<std::string>& terms, bool transliterate, int threads) {
  std::vector<NgramProfile> profiles(terms.size());
  parallel_for(terms.size(), threads,
               [&](std::size_t i) { profiles[i] = ngram_profile(latin_spelling(terms[i], transliterate)); });
  return profiles;
}

namespace {

// Number of distinct values of a sorted profile.
std::size_t distinct_count(const NgramProfile& profile) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < profile.size(); ++i) count += i == 0 || profile[i] != profile[i - 1];
  return count;
}

// The targets' n-grams (bigrams and trigrams) as an inverted index: for each distinct n-gram, the targets holding
// it, ordered by profile size and then by target, so that a search reads only the targets whose size can still
// reach the similarity it needs.
struct GramIndex {
  std::vector<std::uint32_t> grams;    // distinct n-grams, ascending
  std::vector<std::size_t> offsets;    // grams.size() + 1: grams[g]'s postings are [offsets[g], offsets[g + 1])
  std::vector<std::uint32_t> targets;  // the postings
  std::vector<std::uint32_t> sizes;    // each target's profile size

  // The position of `gram` in `grams`, or grams.size() when no target has it.
  std::size_t find(std::uint32_t gram) const {
    const auto it = std::lower_bound(grams.begin(), grams.end(), gram);
    return it != grams.end() && *it == gram ? static_cast<std::size_t>(it - grams.begin()) : grams.size();
  }
};

GramIndex index_targets(const std::vector<NgramProfile>& targets, int threads) {
  GramIndex index;
  const std::size_t n = targets.size();
  index.sizes.resize(n);
  std::vector<std::size_t> first(n + 1, 0);  // each target's distinct n-grams, side by side in `flat`
  for (std::size_t t = 0; t < n; ++t) {
    index.sizes[t] = static_cast<std::uint32_t>(targets[t].size());
    first[t + 1] = first[t] + distinct_count(targets[t]);
  }
  std::vector<std::uint32_t> flat(first[n]);
  parallel_for(n, threads, [&](std::size_t t) {
    const NgramProfile& profile = targets[t];
    std::size_t out = first[t];
    for (std::size_t i = 0; i < profile.size(); ++i)
      if (i == 0 || profile[i] != profile[i - 1]) flat[out++] = profile[i];
  });
  index.grams = flat;
  std::sort(index.grams.begin(), index.grams.end());
  index.grams.erase(std::unique(index.grams.begin(), index.grams.end()), index.grams.end());
  // Each entry's n-gram number, then a counting sort by it: targets in order within each n-gram.
  parallel_for(flat.size() / 4096 + 1, threads, [&](std::size_t block) {
    for (std::size_t i = block * 4096; i < std::min(flat.size(), (block + 1) * 4096); ++i)
      flat[i] = static_cast<std::uint32_t>(index.find(flat[i]));
  });
  index.offsets.assign(index.grams.size() + 1, 0);
  for (const std::uint32_t g : flat) ++index.offsets[g + 1];
  for (std::size_t g = 0; g < index.grams.size(); ++g) index.offsets[g + 1] += index.offsets[g];
  index.targets.resize(flat.size());
  std::vector<std::size_t> next(index.offsets.begin(), index.offsets.end() - 1);
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t i = first[t]; i < first[t + 1]; ++i)
      index.targets[next[flat[i]]++] = static_cast<std::uint32_t>(t);
  parallel_for(index.grams.size(), threads, [&](std::size_t g) {
    std::stable_sort(index.targets.begin() + static_cast<std::ptrdiff_t>(index.offsets[g]),
                     index.targets.begin() + static_cast<std::ptrdiff_t>(index.offsets[g + 1]),
                     [&](std::uint32_t a, std::uint32_t b) { return index.sizes[a] < index.sizes[b]; });
  });
  return index;
}

bool better_match(const OrthographicMatch& a, const OrthographicMatch& b) {
  return a.similarity != b.similarity ? a.similarity > b.similarity : a.target < b.target;
}

// Bounds are compared with this slack, so that rounding never drops a target that ties the m-th best (the
// similarities are floats: 1/3 is kept as 0.33333334, above the bound of a target that ties it).
constexpr double kSlack = 1e-6;

}  // namespace

std::vector<OrthographicMatch> orthographic_neighbours(const std::vector<NgramProfile>& sources,
                                                       const std::vector<NgramProfile>& targets, std::size_t m,
                                                       double minimum, int threads, std::size_t budget) {
  if (m == 0 || sources.empty() || targets.empty()) return {};
  const GramIndex index = index_targets(targets, threads);

  // Per source: its n-grams in the index, rarest first. A target that shares none of the first i of them shares at
  // most rest_i = the multiplicities of the others, so its Dice 2 shared / (|A| + |B|) is at most
  // 2 min(rest_i, |B|) / (|A| + |B|): only targets of a size |B| that can still reach the m-th best similarity
  // found (tau) are read, and the search stops when no unread target can reach it. In three steps:
  //  1. the rarest n-grams' targets are scored exactly as they are read, until kPilot targets are scored: tau;
  //  2. the next n-grams' targets (of a size that can reach tau) are only counted: how many of the source's
  //     n-grams each holds, at most `budget` postings read;
  //     at checkpoints, the counted targets of highest bound are scored, raising tau;
  //  3. the counted targets whose bound (counted + unread n-grams) can reach tau are scored, the highest bounds
  //     first, at most budget / 32 of them.
  // Unless a limit is reached the result is the exact top-m; the limits bound the work per source whatever the
  // number of targets (a source that reaches one keeps the best it found; they are counted and logged).
  struct Gram {
    std::size_t postings_begin, postings_end;
    std::uint32_t multiplicity;
  };
  constexpr std::size_t kPilot = 64, kCheckpointScores = 16;
  constexpr std::ptrdiff_t kAhead = 4;
  const std::size_t verify = std::max<std::size_t>(budget / 32, 64);  // targets scored at the end, at most
  const int thread_count = resolve_threads(threads);
  struct Scratch {
    // By target: what this source did with it (stamp) and the n-grams counted; side by side, one cache line.
    struct Mark {
      std::uint32_t stamp = 0, count = 0;
    };
    std::vector<Mark> marks;
    std::vector<std::uint32_t> touched;
    std::vector<std::pair<double, std::uint32_t>> bounds;
    std::vector<Gram> grams;
  };
  std::vector<Scratch> scratch(static_cast<std::size_t>(thread_count));
  std::vector<std::vector<OrthographicMatch>> per_source(sources.size());
  std::vector<char> truncated(sources.size(), 0);
  Progress progress("orthographic candidates, source terms of " + std::to_string(sources.size()) + " x " +
                        std::to_string(targets.size()),
                    sources.size());
  constexpr std::size_t kProgressBlock = 256;
  parallel_for((sources.size() + kProgressBlock - 1) / kProgressBlock, thread_count, [&](std::size_t block) {
    Scratch& own_scratch = scratch[static_cast<std::size_t>(current_thread())];
    auto& marks = own_scratch.marks;
    std::vector<Gram>& grams = own_scratch.grams;
    if (marks.empty()) marks.resize(targets.size());
    const std::size_t block_end = std::min(sources.size(), (block + 1) * kProgressBlock);
    for (std::size_t s = block * kProgressBlock; s < block_end; ++s) {
      const NgramProfile& profile = sources[s];
      const double own = static_cast<double>(profile.size());
      grams.clear();
      for (std::size_t i = 0; i < profile.size();) {
        std::size_t j = i;
        while (j < profile.size() && profile[j] == profile[i]) ++j;
        const std::size_t g = index.find(profile[i]);
        if (g < index.grams.size())
          grams.push_back({index.offsets[g], index.offsets[g + 1], static_cast<std::uint32_t>(j - i)});
        i = j;
      }
      std::sort(grams.begin(), grams.end(), [](const Gram& a, const Gram& b) {
        const std::size_t la = a.postings_end - a.postings_begin, lb = b.postings_end - b.postings_begin;
        return la != lb ? la < lb : a.postings_begin < b.postings_begin;
      });
      double rest = 0;
      for (const Gram& gram : grams) rest += gram.multiplicity;
      // Marks: 2s + 1 = scored, 2s + 2 = counted (step 2).
      const std::uint32_t scored = 2 * static_cast<std::uint32_t>(s) + 1, counted = scored + 1;
      std::vector<OrthographicMatch>& best = per_source[s];
      const auto tau = [&] {
        return best.size() == m ? std::max<double>(minimum, best.back().similarity) : minimum;
      };
      // The targets scored are read at random, each a wait for memory: a profile is asked for kAhead targets
      // before it is scored (at 130k x 290k the search took 6.3-7.3 s without, 3.9-4.4 s with).
      const auto prefetch_profile = [&](std::uint32_t t) { __builtin_prefetch(targets[t].data()); };
      const auto score = [&](std::uint32_t t) {
        marks[t].stamp = scored;
        // Dice >= tau needs 2 shared >= tau (|A| + |B|): a target short of that cannot enter the list.
        const double sizes = own + static_cast<double>(targets[t].size());
        const auto needed = static_cast<long>(std::ceil((tau() - kSlack) * sizes / 2));
        const long shared = shared_at_least(profile, targets[t], std::max<long>(needed, 0));
        if (shared < 0) return;
        const auto similarity = static_cast<float>(2.0 * static_cast<double>(shared) / sizes);
        if (similarity < minimum) return;
        const OrthographicMatch match{static_cast<std::uint32_t>(s), t, similarity};
        if (best.size() == m && !better_match(match, best.back())) return;
        best.insert(std::upper_bound(best.begin(), best.end(), match, better_match), match);
        if (best.size() > m) best.pop_back();
      };
      // The postings of `gram` whose size can reach tau, when the targets share at most `shared` n-grams (at most
      // all of the source's: `own`).
      const auto window = [&](const Gram& gram, double shared) {
        const double t = tau();
        const auto first = index.targets.begin() + static_cast<std::ptrdiff_t>(gram.postings_begin);
        const auto last = index.targets.begin() + static_cast<std::ptrdiff_t>(gram.postings_end);
        if (t <= 0) return std::make_pair(first, last);
        const double smallest = t * own / (2 - t) - kSlack, largest = 2 * shared / t - own + kSlack;
        const auto begin = std::lower_bound(first, last, smallest, [&](std::uint32_t target, double size) {
          return static_cast<double>(index.sizes[target]) < size;
        });
        const auto end = std::upper_bound(begin, last, largest, [&](double size, std::uint32_t target) {
          return size < static_cast<double>(index.sizes[target]);
        });
        return std::make_pair(begin, end);
      };
      const auto hopeless = [&] { return tau() > 0 && 2 * rest / (own + rest) < tau() - kSlack; };
      // 1. Score as read.
      std::size_t next = 0, pilot = 0;
      // A gram whose window outlasts the pilot is scored in part; step 2 counts it again (from its start),
      // skipping what was scored.
      for (; next < grams.size() && !hopeless(); ++next) {
        const auto [begin, end] = window(grams[next], rest);
        auto it = begin;
        for (; it != end && pilot < kPilot; ++it) {
          if (end - it > kAhead) prefetch_profile(*(it + kAhead));
          if (marks[*it].stamp == scored) continue;
          score(*it);
          ++pilot;
        }
        if (it != end) break;
        rest -= grams[next].multiplicity;
      }
      // 2. Count how many of the source's n-grams each target holds (the source's multiplicity: at least what the
      // target can share of that n-gram). The size windows here use tau alone, which holds for every target
      // whatever it shares, so a target left out of a later, narrower window cannot reach tau. At checkpoints
      // (postings read doubling from 1024), the counted targets of highest bound are scored, which raises tau
      // and narrows the rest of the search.
      std::vector<std::uint32_t>& touched = own_scratch.touched;
      touched.clear();
      auto& bounds = own_scratch.bounds;
      const auto collect_bounds = [&] {
        bounds.clear();
        const double threshold = tau() - kSlack;
        for (const std::uint32_t t : touched) {
          if (marks[t].stamp == scored) continue;
          const double size = index.sizes[t];
          const double reach = 2 * std::min({marks[t].count + rest, size, own});  // bound x (|A| + |B|)
          if (reach >= threshold * (own + size)) bounds.emplace_back(reach / (own + size), t);
        }
      };
      const auto higher = [](const std::pair<double, std::uint32_t>& a,
                             const std::pair<double, std::uint32_t>& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      };
      // Scores the `limit` counted targets of highest bound that can still reach tau; returns the highest bound
      // left unscored (-1: none).
      const auto score_highest = [&](std::size_t limit) {
        collect_bounds();
        double left = -1;
        if (bounds.size() > limit) {
          std::nth_element(bounds.begin(), bounds.begin() + static_cast<std::ptrdiff_t>(limit), bounds.end(),
                           higher);
          left = bounds[limit].first;
          bounds.resize(limit);
        }
        std::sort(bounds.begin(), bounds.end(), higher);
        for (std::size_t k = 0; k < bounds.size(); ++k) {
          if (bounds[k].first < tau() - kSlack) return left;
          if (k + static_cast<std::size_t>(kAhead) < bounds.size()) prefetch_profile(bounds[k + kAhead].second);
          score(bounds[k].second);
        }
        return left;
      };
      std::size_t read = 0, checkpoint = 1024;
      bool stopped = false;
      for (; next < grams.size() && !hopeless(); ++next) {
        const auto [begin, end] = window(grams[next], own);
        if (read + static_cast<std::size_t>(end - begin) > budget) {
          stopped = true;
          break;
        }
        read += static_cast<std::size_t>(end - begin);
        for (auto it = begin; it != end; ++it) {
          const std::uint32_t t = *it;
          auto& mark = marks[t];
          if (mark.stamp == scored) continue;
          if (mark.stamp != counted) mark = {counted, 0}, touched.push_back(t);
          mark.count += grams[next].multiplicity;
        }
        rest -= grams[next].multiplicity;
        if (read >= checkpoint) {
          score_highest(kCheckpointScores);
          checkpoint *= 2;
        }
      }
      // 3. Score the counted targets that can reach tau, highest bound first.
      const double dropped = score_highest(verify);
      truncated[s] = stopped || dropped >= tau() - kSlack;
    }
    progress.advance(block_end - block * kProgressBlock);
  });
  progress.finish();
  const auto stopped = static_cast<std::size_t>(std::count(truncated.begin(), truncated.end(), 1));
  if (stopped > 0)
    logger().info(
        "orthographic candidates: {} of {} source terms reached the work bound ({} postings counted, {} "
        "targets scored) and keep the closest spellings found within it",
        stopped, sources.size(), budget, kPilot + verify);
  std::vector<OrthographicMatch> matches;
  for (auto& best : per_source) matches.insert(matches.end(), best.begin(), best.end());
  return matches;
}

}  // namespace termalign
