#include "io/sanity.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <unordered_set>

#include "io/io.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

std::string percent(std::size_t part, std::size_t whole) {
  return fmt::format("{:.0f} %",
                     whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

bool known_word(const Embeddings& vectors, const std::string& word) {
  return vectors.row_any_case(word).has_value();
}

}  // namespace

bool Orientation::looks_reversed() const {
  return reversed > 2 * as_written && 20 * reversed >= pairs && reversed > 0;
}

Orientation count_orientation(const PairList& pairs, const Membership& in_source, const Membership& in_target) {
  Orientation orientation;
  orientation.pairs = pairs.pairs.size();
  for (const auto& [source, target] : pairs.pairs) {
    if (in_source(source) && in_target(target)) ++orientation.as_written;
    if (in_source(target) && in_target(source)) ++orientation.reversed;
  }
  return orientation;
}

namespace {

// An input error naming the file and the finding, or with `allow_reversed` a warning that the file is used as it
// is.
void report_reversed(const std::string& path, const std::string& finding, bool allow_reversed) {
  if (allow_reversed) {
    logger().warn("{}: {}; used as written (--allow-reversed)", path, finding);
    return;
  }
  throw_input_error(path, 0,
                    finding +
                        ". Swap the two columns (the file must be source<TAB>target), or give "
                        "--allow-reversed to use it as it is.");
}

}  // namespace

void check_orientation(const PairList& pairs, const Orientation& orientation, const std::string& against,
                       bool allow_reversed) {
  if (!orientation.looks_reversed()) return;
  report_reversed(pairs.path,
                  fmt::format("the columns look swapped: {} of {} pairs fit {} as target<TAB>source, only {} as "
                              "source<TAB>target",
                              orientation.reversed, orientation.pairs, against, orientation.as_written),
                  allow_reversed);
}

void check_pairs_against_lists(const PairList& pairs, const TermList& source_terms, const TermList& target_terms,
                               bool allow_reversed) {
  const Orientation orientation = count_orientation(
      pairs, [&](const std::string& term) { return source_terms.contains(term); },
      [&](const std::string& term) { return target_terms.contains(term); });
  check_orientation(pairs, orientation, "the term lists " + source_terms.path + " and " + target_terms.path,
                    allow_reversed);
}

std::size_t warn_gold_outside_lists(const PairList& gold, const TermList& source_terms,
                                    const TermList& target_terms) {
  std::size_t outside = 0;
  const std::pair<std::string, std::string>* first = nullptr;
  for (const auto& pair : gold.pairs) {
    if (source_terms.contains(pair.first) && target_terms.contains(pair.second)) continue;
    if (outside++ == 0) first = &pair;
  }
  if (outside > 0) {
    logger().warn(
        "{}: {} of {} gold pairs have a term outside the term lists {} and {} (e.g. '{}' / '{}'): no submission "
        "can hold them, so the AP cannot reach 1. Are the lists those of this gold?",
        gold.path, outside, gold.pairs.size(), source_terms.path, target_terms.path, first->first, first->second);
  }
  return outside;
}

void check_predictions_against_gold(const PairList& predictions, const PairList& gold, bool allow_reversed) {
  std::unordered_set<std::string> gold_pairs;
  for (const auto& [source, target] : gold.pairs) gold_pairs.insert(source + '\t' + target);
  Orientation orientation;
  orientation.pairs = predictions.pairs.size();
  for (const auto& [source, target] : predictions.pairs) {
    orientation.as_written += gold_pairs.count(source + '\t' + target);
    orientation.reversed += gold_pairs.count(target + '\t' + source);
  }
  // Hits can be few in a long list: far more reversed hits than hits, and at least a few, is the sign.
  if (orientation.reversed <= 2 * orientation.as_written || orientation.reversed < 5) return;
  // Which of the two is swapped only the term lists can tell (check_orientation, when they are given).
  report_reversed(
      predictions.path,
      fmt::format("the columns of this file or of the gold look swapped: {} of {} pairs are gold pairs "
                  "of {} reversed (target<TAB>source), only {} as written; give the term lists "
                  "(--src-terms, --tgt-terms) to tell which file is swapped",
                  orientation.reversed, orientation.pairs, gold.path, orientation.as_written),
      allow_reversed);
}

void check_seed_against_vectors(const PairList& seed, const Embeddings& source, const Embeddings& target,
                                bool allow_reversed) {
  const Orientation orientation = count_orientation(
      seed, [&](const std::string& word) { return known_word(source, word); },
      [&](const std::string& word) { return known_word(target, word); });
  check_orientation(seed, orientation, "the vectors " + source.path + " and " + target.path, allow_reversed);
}

void warn_if_low_seed_coverage(const std::string& seed_path, std::size_t usable, std::size_t pairs,
                               const std::string& source_vectors, const std::string& target_vectors) {
  if (pairs == 0 || static_cast<double>(usable) >= kLowSeedCoverage * static_cast<double>(pairs)) return;
  logger().warn(
      "{}: only {} of {} seed pairs ({}) have both sides in {} and {}: the mapping is fitted on few pairs. Likely "
      "causes: the seed lexicon is of other languages or its columns are swapped, or the vectors are of other "
      "languages or trimmed to other words.",
      seed_path, usable, pairs, percent(usable, pairs), source_vectors, target_vectors);
}

bool check_terms_in_corpora(const TermList& source_terms, std::size_t source_found,
                            const std::string& source_corpus, const TermList& target_terms,
                            std::size_t target_found, const std::string& target_corpus) {
  const auto share = [](std::size_t found, const TermList& terms) {
    return terms.size() ? static_cast<double>(found) / static_cast<double>(terms.size()) : 1.0;
  };
  const double source_share = share(source_found, source_terms), target_share = share(target_found, target_terms);
  const bool both_low = source_share < kLowCorpusCoverage && target_share < kLowCorpusCoverage;
  const struct {
    const char* name;
    const TermList& terms;
    double share;
    const std::string& corpus;
  } sides[] = {{"source", source_terms, source_share, source_corpus},
               {"target", target_terms, target_share, target_corpus}};
  for (const auto& side : sides) {
    if (side.share >= kLowCorpusCoverage) continue;
    logger().warn(
        "{}: only {:.0f} % of the {} terms ({}) occur in this corpus, where a comparable corpus of the task holds "
        "every term of its list, so the corpus evidence says little; {}",
        side.corpus, 100 * side.share, side.name, side.terms.path,
        both_low ? "are --src-corpus and --tgt-corpus swapped, or corpora of other texts?"
                 : "is it the corpus these terms were found in (or does it hold them only in other forms, "
                   "inflected)?");
  }
  return source_share < kLowCorpusCoverage || target_share < kLowCorpusCoverage;
}

}  // namespace termalign
