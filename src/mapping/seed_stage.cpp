// The mapping's seed stage (seed_stage.h): a seed lexicon or a dictionary's pairs fitted as given, an induced
// seed read off the term lists round after round, a ranked round's seed read off the last run's list.
#include "mapping/seed_stage.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "io/sanity.h"
#include "mapping/seed.h"
#include "mapping/term_seed.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

// How a seed's entries are looked up: the known words only, as written or lower-cased.
CompositionOptions known_words_only() {
  CompositionOptions known_only;
  known_only.split_compounds = false;
  known_only.subword_oov = false;
  known_only.split_closed_compounds = false;
  return known_only;
}

// Seed pairs whose two sides are composed from known words only (as written or lower-cased), as rows of Xs, Zt,
// in the lexicon's order. Both sides are composed as two lists (compose_lists, on `threads` threads); a pair is
// kept when both of its sides are usable.
std::size_t seed_matrices(const PairList& seed, const Embeddings& source, const Embeddings& target,
                          const Mapping& mapping, int threads, Matrix& Xs, Matrix& Zt) {
  const CompositionOptions known_only = known_words_only();
  const TermComposer source_composer(source, mapping.source, known_only);
  const TermComposer target_composer(target, mapping.target, known_only);
  std::vector<std::string> sources, targets;
  sources.reserve(seed.pairs.size());
  targets.reserve(seed.pairs.size());
  for (const auto& [source_entry, target_entry] : seed.pairs) {
    sources.push_back(source_entry);
    targets.push_back(target_entry);
  }
  std::vector<ComposedTerms> sides =
      compose_lists({{sources, source_composer}, {targets, target_composer}}, threads);
  // Each side's rows are its usable entries in order; the kept pairs' rows move up in place.
  Xs = std::move(sides[0].vectors);
  Zt = std::move(sides[1].vectors);
  const std::vector<std::uint32_t>& source_ids = sides[0].term_ids;
  const std::vector<std::uint32_t>& target_ids = sides[1].term_ids;
  Eigen::Index rows = 0;
  for (std::size_t s = 0, t = 0; s < source_ids.size() && t < target_ids.size();) {
    if (source_ids[s] < target_ids[t]) {
      ++s;
    } else if (target_ids[t] < source_ids[s]) {
      ++t;
    } else {
      Xs.row(rows) = Xs.row(static_cast<Eigen::Index>(s++));
      Zt.row(rows) = Zt.row(static_cast<Eigen::Index>(t++));
      ++rows;
    }
  }
  Xs.conservativeResize(rows, Eigen::NoChange);
  Zt.conservativeResize(rows, Eigen::NoChange);
  return static_cast<std::size_t>(rows);
}

}  // namespace

void set_transforms(Mapping fitted, Mapping& mapping) {
  mapping.source_transform = std::move(fitted.source_transform);
  mapping.target_transform = std::move(fitted.target_transform);
}

std::function<void()> fit_seed_transforms(const PairList& seed, const std::string& seed_name,
                                          const AlignConfig& config, const Embeddings& source,
                                          const Embeddings& target, Mapping& mapping, std::size_t& usable) {
  const int threads = config.scoring.threads;
  Matrix Xs, Zt;
  usable = seed_matrices(seed, source, target, mapping, threads, Xs, Zt);
  logger().info("{} of {} seed pairs have both sides in {} and {}", usable, seed.pairs.size(), source.path,
                target.path);
  warn_if_low_seed_coverage(seed.path, usable, seed.pairs.size(), source.path, target.path);
  if (usable < config.mapping.min_seed_pairs) {
    throw_input_error(seed_name, 0,
                      "only " + std::to_string(usable) + " of " + std::to_string(seed.pairs.size()) +
                          " seed pairs have both words in the vectors; at least " +
                          std::to_string(config.mapping.min_seed_pairs) +
                          " are needed (min_seed_pairs). Check that the seed lexicon and the vectors are of "
                          "the two languages, in that order.");
  }
  // The refinement's iterations use the threads; its final products, like the seed's without refinement, are
  // decomposed beside the composition.
  auto products = std::make_shared<const SeedProducts>(
      refined_seed_products(Xs, Zt, source.vectors, target.vectors, config.mapping, threads));
  return [products = std::move(products), options = config.mapping, &mapping] {
    set_transforms(mapping_from_products(*products, options), mapping);
  };
}

namespace {

// A word of letters (any non-ASCII byte counts as one), hyphens only inside.
bool clean_word(std::string_view word) {
  if (word.empty() || word.front() == '-' || word.back() == '-') return false;
  return std::all_of(word.begin(), word.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x80 || std::isalpha(byte) || c == '-';
  });
}

}  // namespace

PairList dictionary_seed(const Dictionary& dictionary, const Embeddings& source, const Embeddings& target,
                         std::size_t frequent, std::size_t translations_kept) {
  PairList seed;
  seed.path = "the dictionary's frequent single-word pairs";
  const auto frequent_row = [frequent](const Embeddings& side,
                                       std::string_view word) -> std::optional<std::size_t> {
    if (!clean_word(word)) return std::nullopt;
    const auto row = side.row_any_case(std::string(word));
    if (!row || *row >= frequent) return std::nullopt;
    return row;
  };
  std::vector<std::size_t> translations;
  for (std::uint32_t s = 0; s < dictionary.sources().size(); ++s) {
    const auto source_row = frequent_row(source, dictionary.sources().phrase(s));
    if (!source_row) continue;
    translations.clear();
    const auto [begin, end] = dictionary.translations(s);
    for (auto t = begin; t != end; ++t) {
      if (const auto target_row = frequent_row(target, dictionary.targets().phrase(*t)))
        translations.push_back(*target_row);
    }
    std::sort(translations.begin(), translations.end());
    translations.erase(std::unique(translations.begin(), translations.end()), translations.end());
    if (translations.size() > translations_kept) translations.resize(translations_kept);
    for (const std::size_t row : translations) {
      seed.pairs.emplace_back(source.words[*source_row], target.words[row]);
      seed.lines.push_back(seed.pairs.size());
    }
  }
  return seed;
}

namespace {

// A seed fitted as the run fits it: its usable pairs, the refined products and the mapping they give.
struct FittedSeed {
  PairList seed;
  std::size_t usable = 0;
  std::shared_ptr<const SeedProducts> products;  // null when fewer than min_seed_pairs pairs are usable
  Mapping mapping;                               // the transforms only
  bool from_terms = false;                       // the seed was read off the term lists
  MappingOptions options;                        // those of the fit: the run's, unwhitened for too few pairs
};

FittedSeed fit_seed(PairList seed, const AlignConfig& config, const Embeddings& source, const Embeddings& target,
                    const Mapping& normalisers) {
  const int threads = config.scoring.threads;
  FittedSeed fitted;
  fitted.options = config.mapping;
  MappingOptions& options = fitted.options;
  Matrix Xs, Zt;
  fitted.usable = seed_matrices(seed, source, target, normalisers, threads, Xs, Zt);
  fitted.seed = std::move(seed);
  if (fitted.usable < options.min_seed_pairs) return fitted;
  // The refinement's first fit sees the pairs outside its held-out share.
  const double fitted_share = options.refine_iterations > 0 ? 1.0 - options.refine_validation : 1.0;
  if (options.whiten && fitted_share * static_cast<double>(fitted.usable) <= static_cast<double>(source.dim())) {
    // The whitening's covariance of so few pairs is singular: the seed's plain orthogonal map instead, which the
    // rounds read the next seed with (a seed lexicon this small stays an error: it is the user's to enlarge).
    logger().info("seed '{}': {} usable pairs, too few to whiten {} dimensions: fitted without whitening",
                  fitted.seed.path, fitted.usable, source.dim());
    options.whiten = false;
    options.dewhiten = Dewhiten::none;
  }
  fitted.products = std::make_shared<const SeedProducts>(
      refined_seed_products(Xs, Zt, source.vectors, target.vectors, options, threads));
  fitted.mapping = mapping_from_products(*fitted.products, options);
  return fitted;
}

// The share of `next`'s pairs that `last` holds too.
double shared_share(const PairList& last, const PairList& next) {
  if (next.pairs.empty()) return 0.0;
  const std::set<std::pair<std::string, std::string>> before(last.pairs.begin(), last.pairs.end());
  std::size_t shared = 0;
  for (const auto& pair : next.pairs) shared += before.count(pair);
  return static_cast<double>(shared) / static_cast<double>(next.pairs.size());
}

// Rounds of term_word_pairs: the term lists composed once, mapped with each round's fit; each round's word
// pairs are the next seed. Returns the last round's fit (`fitted` itself when no round gives a usable seed).
FittedSeed read_off_terms(FittedSeed fitted, const SeedTerms& terms, const AlignConfig& config,
                          const Embeddings& source, const Embeddings& target, const Mapping& normalisers,
                          bool keep_start_pairs) {
  const PairList start_pairs = keep_start_pairs ? fitted.seed : PairList();
  const std::set<std::pair<std::string, std::string>> known(start_pairs.pairs.begin(), start_pairs.pairs.end());
  PairList last_read;  // the last round's pairs read off the terms
  const MappingOptions& options = config.mapping;
  const int threads = config.scoring.threads;
  const TermComposer source_composer(source, normalisers.source, terms.source_composition);
  const TermComposer target_composer(target, normalisers.target, terms.target_composition);
  const std::vector<ComposedTerms> composed =
      compose_lists({{terms.source, source_composer}, {terms.target, target_composer}}, threads);
  const CompositionOptions known_only = known_words_only();
  const TermComposer source_words(source, normalisers.source, known_only);
  const TermComposer target_words(target, normalisers.target, known_only);
  // The mutual nearest term pairs under a fit, and their mean CSLS.
  const auto term_pairs = [&](const FittedSeed& fit, double& mean) {
    Matrix X = composed[0].vectors, Z = composed[1].vectors;
    transform_rows(X, fit.mapping.source_transform, threads);
    transform_rows(Z, fit.mapping.target_transform, threads);
    std::vector<Candidate> pairs = confident_term_pairs(X, Z, config.scoring.k, options.seed_term_pairs, threads);
    mean = 0;
    for (const Candidate& pair : pairs) mean += pair.score;
    if (!pairs.empty()) mean /= static_cast<double>(pairs.size());
    return pairs;
  };
  std::optional<FittedSeed> start;  // kept until the first round's fit is shown to beat it
  double start_mean = 0;
  // Round r reads the pairs under the last fit; the one past the last round only checks the first round's fit.
  for (std::size_t round = 1; round <= std::max<std::size_t>(options.seed_term_rounds, 2); ++round) {
    throw_if_interrupted();
    double mean = 0;
    const std::vector<Candidate> pairs = term_pairs(fitted, mean);
    if (round == 2 && mean < options.seed_start_gain * start_mean) {
      logger().info(
          "seed round 2: under the first round's fit the {} mutual CSLS nearest term pairs have a mean CSLS of "
          "{:.4f}, under the start's {:.4f}: less than {:.0f} % higher, so the start '{}' is kept",
          pairs.size(), mean, start_mean, 100 * (options.seed_start_gain - 1), start->seed.path);
      return std::move(*start);
    }
    if (round > options.seed_term_rounds) break;
    PairList seed = term_word_pairs(
        pairs, {terms.source, composed[0].term_ids, source_words, fitted.mapping.source_transform},
        {terms.target, composed[1].term_ids, target_words, fitted.mapping.target_transform}, fitted.seed.path);
    const double kept = round == 1 ? 0.0 : shared_share(last_read, seed);
    last_read = seed;
    if (keep_start_pairs) {
      // The start's pairs (a dictionary's), then those read off the terms that it does not hold.
      PairList both = start_pairs;
      for (const auto& pair : seed.pairs) {
        if (known.count(pair)) continue;
        both.pairs.push_back(pair);
        both.lines.push_back(both.pairs.size());
      }
      seed = std::move(both);
    }
    if (round > 1 && kept >= options.seed_term_converged) {
      logger().info(
          "seed round {}/{}: {} mutual CSLS nearest term pairs (mean CSLS {:.4f}) give {} word pairs, {:.1f} % of "
          "them the last round's: converged, its fit is kept",
          round, options.seed_term_rounds, pairs.size(), mean, seed.pairs.size(), 100 * kept);
      break;
    }
    FittedSeed next = fit_seed(std::move(seed), config, source, target, normalisers);
    next.from_terms = true;
    logger().info(
        "seed round {}/{}: {} mutual CSLS nearest term pairs (mean CSLS {:.4f}) give {} word pairs ({} usable; "
        "{:.1f} % of them the last round's)",
        round, options.seed_term_rounds, pairs.size(), mean, next.seed.pairs.size(), next.usable, 100 * kept);
    if (!next.products) {
      logger().warn(
          "seed round {}: fewer than min_seed_pairs ({}) usable word pairs; the seed of round {} is kept", round,
          options.min_seed_pairs, round - 1);
      break;
    }
    if (round == 1) {
      start = std::move(fitted);
      start_mean = mean;
    }
    fitted = std::move(next);
  }
  return fitted;
}

// A fit as the run takes it: its transforms when it has enough usable pairs.
InducedSeed handed_over(FittedSeed fitted) {
  std::optional<Mapping> transforms;
  if (fitted.products) transforms = std::move(fitted.mapping);
  return {std::move(fitted.seed), std::move(transforms), fitted.usable, fitted.from_terms,
          std::move(fitted.options)};
}

}  // namespace

InducedSeed induced_seed(const AlignConfig& config, const Embeddings& source, const Embeddings& target,
                         const Mapping& normalisers, const SeedTerms* terms, PairList* start) {
  const MappingOptions& options = config.mapping;
  const int threads = config.scoring.threads;
  PairList first;
  if (start) {
    first = std::move(*start);
  } else if (config.input.seed == kIdenticalSeed) {
    first = identical_seed(source, target);
  } else {
    first = transliterated_seed(source, target, options.seed_spelling_similarity, threads);
    if (config.input.seed == kAutoSeed)
      logger().info("seed auto: the run starts from the words spelt alike ('{}', {} pairs)", first.path,
                    first.pairs.size());
  }
  FittedSeed fitted = fit_seed(std::move(first), config, source, target, normalisers);
  if (terms && fitted.products && options.seed_term_rounds > 0)
    fitted = read_off_terms(std::move(fitted), *terms, config, source, target, normalisers, start != nullptr);
  return handed_over(std::move(fitted));
}

InducedSeed ranked_seed(const AlignConfig& config, const Embeddings& source, const Embeddings& target,
                        const Mapping& normalisers, const RankedSeed& ranked) {
  // The pairs as rows of two lists of their own terms, row i of each the pair's.
  std::vector<std::string> sources, targets;
  std::vector<std::uint32_t> ids;
  std::vector<Candidate> rows;
  for (const auto& [s, t] : ranked.term_pairs) {
    Candidate row;
    row.source = row.target = static_cast<std::uint32_t>(ids.size());
    ids.push_back(row.source);
    rows.push_back(row);
    sources.push_back(s);
    targets.push_back(t);
  }
  const CompositionOptions known_only = known_words_only();
  const TermComposer source_words(source, normalisers.source, known_only);
  const TermComposer target_words(target, normalisers.target, known_only);
  PairList pairs = term_word_pairs(rows, {sources, ids, source_words, ranked.mapping->source_transform},
                                   {targets, ids, target_words, ranked.mapping->target_transform},
                                   "ranked round " + std::to_string(ranked.round));
  FittedSeed fitted = fit_seed(std::move(pairs), config, source, target, normalisers);
  logger().info("seed ranked round {}: the {} best pairs of the last ranked list give {} word pairs ({} usable)",
                ranked.round, ranked.term_pairs.size(), fitted.seed.pairs.size(), fitted.usable);
  fitted.from_terms = true;
  return handed_over(std::move(fitted));
}

PairList induced_lexicon(const AlignConfig& config, PairList start, const Embeddings& source,
                         const Embeddings& target, const Mapping& mapping) {
  const std::size_t words = config.mapping.seed_lexicon_words;
  if (words == 0) return start;
  PairList lexicon;
  lexicon.path = start.path;
  for (const auto& [s, t] :
       mutual_nearest_words(source.vectors, target.vectors, mapping, words, config.scoring.threads)) {
    lexicon.pairs.emplace_back(source.words[s], target.words[t]);
    lexicon.lines.push_back(lexicon.pairs.size());
  }
  logger().info(
      "the seed evidence reads {} word pairs, mutual CSLS nearest neighbours among the {} most frequent words of "
      "each side under the mapping from the seed '{}'",
      lexicon.pairs.size(), words, start.path);
  return lexicon;
}

SeedFit seed_stage(const AlignConfig& config, const RunDecisions& decisions, PairList given,
                   const Embeddings& source, const Embeddings& target, Mapping& mapping, const SeedTerms* terms,
                   const RankedSeed* ranked) {
  SeedFit fit;
  fit.seed = std::move(given);
  const bool dictionary_start =
      decisions.seed == RunDecisions::Seed::dictionary && config.mapping.seed_term_rounds > 0;
  if (decisions.seed == RunDecisions::Seed::induced || dictionary_start) {
    const std::size_t dictionary_pairs = fit.seed.pairs.size();
    const bool from_ranking = ranked != nullptr && !dictionary_start;
    InducedSeed induced = from_ranking ? ranked_seed(config, source, target, mapping, *ranked)
                                       : induced_seed(config, source, target, mapping, terms,
                                                      dictionary_start ? &fit.seed : nullptr);
    if (dictionary_start && induced.from_terms)
      logger().info("the seed: the dictionary's {} pairs and {} more read off the term lists", dictionary_pairs,
                    induced.seed.pairs.size() - dictionary_pairs);
    fit.seed = std::move(induced.seed);
    fit.usable = induced.usable;
    if (induced.transforms) {
      set_transforms(std::move(*induced.transforms), mapping);
      return fit;
    }
    if (from_ranking) {
      logger().warn(
          "seed ranked round {}: {} usable word pairs, fewer than min_seed_pairs ({}): the last round's mapping "
          "is "
          "kept",
          ranked->round, induced.usable, config.mapping.min_seed_pairs);
      set_transforms(*ranked->mapping, mapping);
      return fit;
    }
  }
  // What names the seed in messages: what made it, or its file.
  const std::string seed_name = decisions.seed == RunDecisions::Seed::induced ? config.input.seed
                                : fit.seed.path.empty()                        ? "the seed lexicon given"
                                                                               : fit.seed.path;
  fit.finish_fit = fit_seed_transforms(fit.seed, seed_name, config, source, target, mapping, fit.usable);
  return fit;
}

}  // namespace termalign
