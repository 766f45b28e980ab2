#include "rerank/features.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <utility>

#include "termalign/error.h"
#include "termalign/logging.h"
#include "text/word_forms.h"
#include "util/huge_pages.h"
#include "util/parallel.h"

namespace termalign::detail {

namespace {

using In = const FeatureInputs&;
using Row = std::size_t;
constexpr FeatureGroup kBase = FeatureGroup::base, kCompositional = FeatureGroup::compositional,
                       kFrequency = FeatureGroup::corpus_frequency, kContext = FeatureGroup::corpus_context,
                       kDictionary = FeatureGroup::dictionary, kForms = FeatureGroup::word_forms,
                       kFirstStage = FeatureGroup::first_stage;

// Suffixes: _q a quantile among the run's candidates, _s a margin in units of the run's spread (RunScale).
constexpr Feature kFeatures[] = {
    {"csls_q", kBase, [](In in, Row i) { return in.csls.quantile[i]; }},
    {"cosine_q", kBase, [](In in, Row i) { return in.cosine.quantile[i]; }},
    {"csls_below_source_best_s", kBase, [](In in, Row i) { return in.csls_by_source.below_best(i); }},
    {"csls_below_target_best_s", kBase, [](In in, Row i) { return in.csls_by_target.below_best(i); }},
    {"source_rank", kBase, [](In in, Row i) { return in.csls_by_source.inverse_rank(i); }},
    {"target_rank", kBase, [](In in, Row i) { return in.csls_by_target.inverse_rank(i); }},
    {"csls_above_runner_up_s", kBase, [](In in, Row i) { return in.csls_by_source.above_other(i); }},
    {"orthographic", kBase, [](In in, Row i) { return in.evidence.orthographic[i]; }},
    {"ortho_below_source_best", kBase, [](In in, Row i) { return in.ortho_by_source.below_best(i); }},
    {"identical", kBase, [](In in, Row i) { return static_cast<float>(in.evidence.identical[i]); }},
    {"word_alignment_q", kBase, [](In in, Row i) { return in.word_alignment.quantile[i]; }},
    {"same_word_count", kBase,
     [](In in, Row i) { return in.evidence.source_words[i] == in.evidence.target_words[i] ? 1.0f : 0.0f; }},
    {"word_count_difference", kBase,
     [](In in, Row i) {
       return std::abs(static_cast<float>(in.evidence.source_words[i]) -
                       static_cast<float>(in.evidence.target_words[i]));
     }},
    {"log_length_ratio", kBase,
     [](In in, Row i) {
       return std::abs(std::log((1.0f + in.evidence.source_length[i]) / (1.0f + in.evidence.target_length[i])));
     }},
    {"multi_word_source", kBase, [](In in, Row i) { return in.evidence.source_words[i] > 1 ? 1.0f : 0.0f; }},
    {"reverse_rank", kBase,
     [](In in, Row i) {
       const float rank = in.evidence.reverse_rank[i];
       return rank > 0 ? 1.0f / rank : 0.0f;
     }},
    // Spelling matters most for single words, word-by-word evidence for multi-word terms.
    {"orthographic_if_single_word", kBase,
     [](In in, Row i) { return in.evidence.source_words[i] == 1 ? in.evidence.orthographic[i] : 0.0f; }},
    {"word_alignment_if_multi_word_q", kBase,
     [](In in, Row i) { return in.evidence.source_words[i] > 1 ? in.word_alignment.quantile[i] : 0.0f; }},
    {"csls_if_multi_word_q", kBase,
     [](In in, Row i) { return in.evidence.source_words[i] > 1 ? in.csls.quantile[i] : 0.0f; }},
    // A target's closest spelling among its candidates (the source's is above).
    {"ortho_below_target_best", kBase, [](In in, Row i) { return in.ortho_by_target.below_best(i); }},
    {"ortho_target_rank", kBase, [](In in, Row i) { return in.ortho_by_target.inverse_rank(i); }},

    {"comp_one_to_one_q", kCompositional, [](In in, Row i) { return in.one_to_one.quantile[i]; }},
    {"comp_one_to_one_below_source_best_s", kCompositional,
     [](In in, Row i) { return in.one_to_one_by_source.below_best(i); }},
    {"comp_one_to_one_source_rank", kCompositional,
     [](In in, Row i) { return in.one_to_one_by_source.inverse_rank(i); }},
    {"comp_one_to_one_below_target_best_s", kCompositional,
     [](In in, Row i) { return in.one_to_one_by_target.below_best(i); }},
    {"comp_one_to_one_target_rank", kCompositional,
     [](In in, Row i) { return in.one_to_one_by_target.inverse_rank(i); }},
    {"comp_translated_share", kCompositional, [](In in, Row i) { return in.evidence.translated_share[i]; }},
    {"comp_translated_share_below_source_best", kCompositional,
     [](In in, Row i) { return in.translated_share_by_source.below_best(i); }},
    {"comp_translated_share_source_rank", kCompositional,
     [](In in, Row i) { return in.translated_share_by_source.inverse_rank(i); }},
    {"comp_edge_agreement", kCompositional, [](In in, Row i) { return in.evidence.edge_agreement[i]; }},
    {"comp_seed_share", kCompositional, [](In in, Row i) { return in.evidence.seed_share[i]; }},
    {"comp_seed_share_below_source_best", kCompositional,
     [](In in, Row i) { return in.seed_share_by_source.below_best(i); }},
    {"comp_seed_share_source_rank", kCompositional,
     [](In in, Row i) { return in.seed_share_by_source.inverse_rank(i); }},
    {"comp_seed_share_below_target_best", kCompositional,
     [](In in, Row i) { return in.seed_share_by_target.below_best(i); }},
    {"comp_seed_share_target_rank", kCompositional,
     [](In in, Row i) { return in.seed_share_by_target.inverse_rank(i); }},
    {"comp_seed_conflict", kCompositional, [](In in, Row i) { return in.evidence.seed_conflict[i]; }},

    // Word forms: the task's target lists hold several forms of a term (`файл`, `файла`, `файлы`) and its gold
    // the one that agrees with the source in number. Which form each term is (the share of its words in citation
    // form, the family's most cited or most frequent form), whether the two agree, and where the candidate stands
    // among its family's members for this source term. Every value means the same in every language.
    {"form_source_citation", kForms, [](In in, Row i) { return in.source_citation[i]; }},
    {"form_target_citation", kForms, [](In in, Row i) { return in.target_citation[i]; }},
    {"form_citation_agreement", kForms,
     [](In in, Row i) { return 1.0f - std::abs(in.source_citation[i] - in.target_citation[i]); }},
    {"form_source_citation_best", kForms, [](In in, Row i) { return in.source_citation_best[i]; }},
    {"form_target_citation_best", kForms, [](In in, Row i) { return in.target_citation_best[i]; }},
    {"form_target_frequency_best", kForms, [](In in, Row i) { return in.target_frequency_best[i]; }},
    {"form_source_family_size", kForms, [](In in, Row i) { return in.source_family_size[i]; }},
    {"form_target_family_size", kForms, [](In in, Row i) { return in.target_family_size[i]; }},
    {"form_family_candidates", kForms, [](In in, Row i) { return in.family_candidates[i]; }},
    {"form_family_rank", kForms, [](In in, Row i) { return in.family_by_source.inverse_rank(i); }},
    {"form_family_below_best_s", kForms, [](In in, Row i) { return in.family_by_source.below_best(i); }},

    {"freq_log_ratio", kFrequency,
     [](In in, Row i) {
       return std::abs(in.evidence.source_log_frequency[i] - in.evidence.target_log_frequency[i]);
     }},
    {"freq_sentence_log_ratio", kFrequency,
     [](In in, Row i) {
       return std::abs(in.evidence.source_log_sentences[i] - in.evidence.target_log_sentences[i]);
     }},
    {"freq_source_z", kFrequency, [](In in, Row i) { return in.evidence.source_frequency_z[i]; }},
    {"freq_target_z", kFrequency, [](In in, Row i) { return in.evidence.target_frequency_z[i]; }},
    {"freq_z_difference", kFrequency,
     [](In in, Row i) { return std::abs(in.evidence.source_frequency_z[i] - in.evidence.target_frequency_z[i]); }},
    {"freq_closeness_below_source_best", kFrequency,
     [](In in, Row i) { return in.frequency_closeness_by_source.below_best(i); }},
    {"freq_closeness_source_rank", kFrequency,
     [](In in, Row i) { return in.frequency_closeness_by_source.inverse_rank(i); }},

    {"context_cosine_q", kContext, [](In in, Row i) { return in.context.quantile[i]; }},
    {"context_cosine_below_source_best_s", kContext,
     [](In in, Row i) { return in.context_by_source.below_best(i); }},
    {"context_cosine_source_rank", kContext, [](In in, Row i) { return in.context_by_source.inverse_rank(i); }},
    {"context_cosine_below_target_best_s", kContext,
     [](In in, Row i) { return in.context_by_target.below_best(i); }},
    {"context_cosine_target_rank", kContext, [](In in, Row i) { return in.context_by_target.inverse_rank(i); }},
    {"context_z_by_source", kContext, [](In in, Row i) { return in.context_z_by_source[i]; }},

    // A bilingual dictionary's: the pair an entry of it, or another of the source's (target's) candidates one;
    // the share of words it translates into the other term, and where that stands.
    {"dict_entry", kDictionary, [](In in, Row i) { return in.evidence.dictionary_entry[i]; }},
    {"dict_entry_below_source_best", kDictionary,
     [](In in, Row i) { return in.dictionary_entry_by_source.below_best(i); }},
    {"dict_entry_below_target_best", kDictionary,
     [](In in, Row i) { return in.dictionary_entry_by_target.below_best(i); }},
    {"dict_share", kDictionary, [](In in, Row i) { return in.evidence.dictionary_share[i]; }},
    {"dict_share_below_source_best", kDictionary,
     [](In in, Row i) { return in.dictionary_share_by_source.below_best(i); }},
    {"dict_share_source_rank", kDictionary,
     [](In in, Row i) { return in.dictionary_share_by_source.inverse_rank(i); }},
    {"dict_share_below_target_best", kDictionary,
     [](In in, Row i) { return in.dictionary_share_by_target.below_best(i); }},
    {"dict_conflict", kDictionary, [](In in, Row i) { return in.evidence.dictionary_conflict[i]; }},

    // A second stage's view of the first: the score, where it stands among the source's and the target's
    // candidates, and the nested terms' support.
    {"stage1_score", kFirstStage, [](In in, Row i) { return in.stage_scores[i]; }},
    {"stage1_source_rank", kFirstStage, [](In in, Row i) { return in.stage_by_source.inverse_rank(i); }},
    {"stage1_below_source_best", kFirstStage, [](In in, Row i) { return in.stage_by_source.below_best(i); }},
    {"stage1_above_source_other", kFirstStage, [](In in, Row i) { return in.stage_by_source.above_other(i); }},
    {"stage1_target_rank", kFirstStage, [](In in, Row i) { return in.stage_by_target.inverse_rank(i); }},
    {"stage1_below_target_best", kFirstStage, [](In in, Row i) { return in.stage_by_target.below_best(i); }},
    {"stage1_above_target_other", kFirstStage, [](In in, Row i) { return in.stage_by_target.above_other(i); }},
    {"stage1_family_rank", kFirstStage, [](In in, Row i) { return in.stage_by_family.inverse_rank(i); }},
    {"stage1_below_family_best", kFirstStage, [](In in, Row i) { return in.stage_by_family.below_best(i); }},
    {"stage1_nested_parts_best", kFirstStage, [](In in, Row i) { return in.nested.parts[i]; }},
    {"stage1_nested_wholes_best", kFirstStage, [](In in, Row i) { return in.nested.wholes[i]; }},
};

// The word forms' values of every candidate (FeatureInputs), from the evidence's families.
void compute_form_values(FeatureInputs& in) {
  const CandidateEvidence& e = in.evidence;
  const std::size_t n = e.size();
  // A side without families: each term its own family, in citation form.
  const auto citation_of = [](const TermForms& forms, std::uint32_t term) {
    return forms.empty() ? 1.0f : forms.citation[term];
  };
  const auto size_of = [](const TermForms& forms, std::uint32_t term) {
    return forms.empty() ? 1.0f : static_cast<float>(forms.family_size[forms.family[term]]);
  };
  // Each family's highest citation share over the whole list.
  const auto most_cited = [](const TermForms& forms) {
    std::vector<float> best(forms.family_size.size(), 0.0f);
    for (std::size_t t = 0; t < forms.family.size(); ++t)
      best[forms.family[t]] = std::max(best[forms.family[t]], forms.citation[t]);
    return best;
  };
  const std::vector<float> source_best = most_cited(e.source_forms), target_best = most_cited(e.target_forms);
  // With corpora: each target family's highest log frequency among the candidates' targets.
  const bool frequencies = e.target_log_frequency.size() == n && !e.target_forms.empty();
  std::vector<float> target_frequent(frequencies ? e.target_forms.family_size.size() : 0,
                                     -std::numeric_limits<float>::infinity());
  if (frequencies)
    for (std::size_t i = 0; i < n; ++i) {
      float& best = target_frequent[e.target_forms.family[e.target[i]]];
      best = std::max(best, e.target_log_frequency[i]);
    }
  in.source_citation.resize(n);
  in.target_citation.resize(n);
  in.source_family_size.resize(n);
  in.target_family_size.resize(n);
  in.source_citation_best.resize(n);
  in.target_citation_best.resize(n);
  in.target_frequency_best.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t s = e.source[i], t = e.target[i];
    in.source_citation[i] = citation_of(e.source_forms, s);
    in.target_citation[i] = citation_of(e.target_forms, t);
    in.source_family_size[i] = size_of(e.source_forms, s);
    in.target_family_size[i] = size_of(e.target_forms, t);
    in.source_citation_best[i] =
        e.source_forms.empty() || in.source_citation[i] >= source_best[e.source_forms.family[s]] ? 1.0f : 0.0f;
    in.target_citation_best[i] =
        e.target_forms.empty() || in.target_citation[i] >= target_best[e.target_forms.family[t]] ? 1.0f : 0.0f;
    in.target_frequency_best[i] =
        frequencies && e.target_log_frequency[i] >= target_frequent[e.target_forms.family[t]] ? 1.0f : 0.0f;
  }
  FamilyGroups groups = family_groups(e.source, e.target, e.target_forms);
  in.family_group = std::move(groups.of);
  std::vector<float> members(groups.count, 0.0f);
  for (std::size_t i = 0; i < n; ++i) ++members[in.family_group[i]];
  in.family_candidates.resize(n);
  for (std::size_t i = 0; i < n; ++i) in.family_candidates[i] = members[in.family_group[i]];
}

// The statistics of `group`'s features, computed side by side (one thread each) on `threads` threads.
void compute_statistics(FeatureInputs& in, FeatureGroup group, int threads) {
  const CandidateEvidence& e = in.evidence;
  const auto columns_filled = [&](std::initializer_list<const std::vector<float>*> columns) {
    for (const auto* column : columns)
      TERMALIGN_CHECK(column->size() == e.size(), "every candidate has a value of each evidence column");
  };
  std::vector<std::function<void()>> tasks;
  switch (group) {
    case kBase:
      columns_filled({&e.csls, &e.cosine, &e.orthographic, &e.word_alignment, &e.reverse_rank});
      TERMALIGN_CHECK(e.identical.size() == e.size() && e.source_words.size() == e.size() &&
                          e.target_words.size() == e.size() && e.source_length.size() == e.size() &&
                          e.target_length.size() == e.size(),
                      "every candidate has its spelling identity, word counts and lengths");
      tasks = {[&] { in.csls = run_scale(e.csls, 1); },
               [&] { in.cosine = run_scale(e.cosine, 1); },
               [&] { in.word_alignment = run_scale(e.word_alignment, 1); },
               [&] { in.csls_by_source = standing(e.source, e.csls, &in.csls); },
               [&] { in.csls_by_target = standing(e.target, e.csls, &in.csls); },
               [&] { in.ortho_by_source = standing(e.source, e.orthographic); },
               [&] { in.ortho_by_target = standing(e.target, e.orthographic); }};
      break;
    case kCompositional:
      columns_filled({&e.one_to_one, &e.translated_share, &e.edge_agreement, &e.seed_share, &e.seed_conflict});
      tasks = {[&] { in.one_to_one = run_scale(e.one_to_one, 1); },
               [&] { in.one_to_one_by_source = standing(e.source, e.one_to_one, &in.one_to_one); },
               [&] { in.one_to_one_by_target = standing(e.target, e.one_to_one, &in.one_to_one); },
               [&] { in.translated_share_by_source = standing(e.source, e.translated_share); },
               [&] { in.seed_share_by_source = standing(e.source, e.seed_share); },
               [&] { in.seed_share_by_target = standing(e.target, e.seed_share); }};
      break;
    case kFrequency:
      columns_filled({&e.source_log_frequency, &e.target_log_frequency, &e.source_log_sentences,
                      &e.target_log_sentences, &e.source_frequency_z, &e.target_frequency_z});
      in.frequency_closeness.resize(e.size());
      for (std::size_t i = 0; i < e.size(); ++i)
        in.frequency_closeness[i] = -std::abs(e.source_log_frequency[i] - e.target_log_frequency[i]);
      tasks = {[&] { in.frequency_closeness_by_source = standing(e.source, in.frequency_closeness); }};
      break;
    case kContext:
      columns_filled({&e.context_similarity});
      tasks = {[&] { in.context = run_scale(e.context_similarity, 1); },
               [&] { in.context_by_source = standing(e.source, e.context_similarity, &in.context); },
               [&] { in.context_by_target = standing(e.target, e.context_similarity, &in.context); },
               [&] { in.context_z_by_source = group_z(e.source, e.context_similarity); }};
      break;
    case kDictionary:
      columns_filled({&e.dictionary_entry, &e.dictionary_share, &e.dictionary_conflict});
      tasks = {[&] { in.dictionary_entry_by_source = standing(e.source, e.dictionary_entry); },
               [&] { in.dictionary_entry_by_target = standing(e.target, e.dictionary_entry); },
               [&] { in.dictionary_share_by_source = standing(e.source, e.dictionary_share); },
               [&] { in.dictionary_share_by_target = standing(e.target, e.dictionary_share); }};
      break;
    case kForms:
      columns_filled({&e.csls});
      compute_form_values(in);
      tasks = {[&] { in.family_by_source = standing(in.family_group, e.csls, &in.csls); }};
      break;
    case kFirstStage:  // its scores are set by add_first_stage
      columns_filled({&in.stage_scores});
      if (in.family_group.size() != e.size()) compute_form_values(in);
      tasks = {[&] { in.stage_by_source = standing(e.source, in.stage_scores); },
               [&] { in.stage_by_target = standing(e.target, in.stage_scores); },
               [&] { in.stage_by_family = standing(in.family_group, in.stage_scores); },
               [&] { in.nested = nested_support(e, in.stage_scores); }};
      break;
  }
  parallel_for(tasks.size(), threads, [&](std::size_t task) { tasks[task](); });
}

// The blocks of rows that a table of `rows` rows is filled in, on the threads.
constexpr std::size_t kRowBlock = 65536;

}  // namespace

const char* to_string(FeatureGroup group) {
  switch (group) {
    case kBase:
      return "base";
    case kCompositional:
      return "compositional";
    case kFrequency:
      return "corpus-frequency";
    case kContext:
      return "corpus-context";
    case kDictionary:
      return "dictionary";
    case kForms:
      return "word-forms";
    case kFirstStage:
      return "first-stage";
  }
  return "?";
}

bool needs_corpora(FeatureGroup group) { return group == kFrequency || group == kContext; }

const std::vector<Feature>& feature_list() {
  static const std::vector<Feature> features(std::begin(kFeatures), std::end(kFeatures));
  return features;
}

const Feature* find_feature(std::string_view name) {
  const auto found = std::find_if(std::begin(kFeatures), std::end(kFeatures),
                                  [&](const Feature& feature) { return feature.name == name; });
  return found == std::end(kFeatures) ? nullptr : found;
}

FeatureColumns::FeatureColumns(const CandidateEvidence& evidence, int threads)
    : inputs_(evidence), threads_(threads) {
  Progress progress("features, candidates", evidence.size());
  add_group(kBase);
  if (!evidence.one_to_one.empty()) {
    add_group(kCompositional);
    add_group(kForms);
  }
  if (!evidence.context_similarity.empty()) {
    add_group(kFrequency);
    add_group(kContext);
  }
  if (!evidence.dictionary_entry.empty()) add_group(kDictionary);
  progress.advance(evidence.size());
  progress.finish();
}

FeatureColumns::FeatureColumns(const CandidateEvidence& evidence, const Eigen::VectorXd& first_scores, int threads)
    : inputs_(evidence), threads_(threads) {
  add_first_stage(first_scores);
}

void FeatureColumns::add_first_stage(const Eigen::VectorXd& first_scores) {
  TERMALIGN_CHECK(static_cast<std::size_t>(first_scores.size()) == inputs_.evidence.size(),
                  "one score per candidate");
  inputs_.stage_scores.resize(inputs_.evidence.size());
  for (std::size_t i = 0; i < inputs_.stage_scores.size(); ++i)
    inputs_.stage_scores[i] = static_cast<float>(first_scores(Eigen::Index(i)));
  add_group(kFirstStage);
}

void FeatureColumns::add_group(FeatureGroup group) {
  compute_statistics(inputs_, group, threads_);
  for (const Feature& feature : kFeatures) {
    if (feature.group != group) continue;
    columns_.push_back(&feature);
    names_.emplace_back(feature.name);
  }
}

FeatureTable FeatureColumns::rows(std::size_t first, std::size_t end) const {
  FeatureTable table;
  const std::size_t columns = columns_.size();
  table.names = names_;
  // A block of 262,144 rows is 47 MB, above malloc's mmap threshold: fresh pages each time, in huge pages.
  resize_in_huge_pages(table.values, static_cast<Eigen::Index>(end - first), static_cast<Eigen::Index>(columns));
  parallel_for((end - first + kRowBlock - 1) / kRowBlock, threads_, [&](std::size_t block) {
    const std::size_t block_first = first + block * kRowBlock, block_end = std::min(end, block_first + kRowBlock);
    for (std::size_t j = 0; j < columns; ++j) {
      const auto value = columns_[j]->value;
      float* out = table.values.data() + (block_first - first) * columns + j;
      for (std::size_t i = block_first; i < block_end; ++i, out += columns) *out = value(inputs_, i);
    }
  });
  return table;
}

}  // namespace termalign::detail

namespace termalign {

using detail::FeatureColumns;

FeatureTable candidate_feature_table(const CandidateEvidence& evidence, int threads) {
  return FeatureColumns(evidence, threads).all();
}

const std::vector<std::string>& stage_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> stage;
    for (const detail::Feature& feature : detail::feature_list())
      if (feature.group == detail::FeatureGroup::first_stage) stage.emplace_back(feature.name);
    return stage;
  }();
  return names;
}

FeatureTable stage_feature_table(const CandidateEvidence& evidence, const Eigen::VectorXd& first_scores,
                                 int threads) {
  return FeatureColumns(evidence, first_scores, threads).all();
}

FeatureTable with_stage_columns(const FeatureTable& table, const CandidateEvidence& evidence,
                                const Eigen::VectorXd& first_scores, int threads) {
  const FeatureTable stage = stage_feature_table(evidence, first_scores, threads);
  FeatureTable joined;
  joined.names = table.names;
  joined.names.insert(joined.names.end(), stage.names.begin(), stage.names.end());
  joined.values.resize(table.values.rows(), table.values.cols() + stage.values.cols());
  joined.values << table.values, stage.values;
  return joined;
}

std::string feature_group(const std::string& name) {
  const detail::Feature* feature = detail::find_feature(name);
  return feature ? to_string(feature->group) : "";
}

const std::string* first_corpus_feature(const std::vector<std::string>& names) {
  const auto found = std::find_if(names.begin(), names.end(), [](const std::string& name) {
    const detail::Feature* feature = detail::find_feature(name);
    return feature && needs_corpora(feature->group);
  });
  return found == names.end() ? nullptr : &*found;
}

Matrix FeatureTable::select(const std::vector<std::string>& wanted, const std::string& origin) const {
  return select(wanted, origin, 0, values.rows());
}

Matrix FeatureTable::select(const std::vector<std::string>& wanted, const std::string& origin, Eigen::Index first,
                            Eigen::Index rows) const {
  std::vector<Eigen::Index> column(wanted.size());
  for (std::size_t j = 0; j < wanted.size(); ++j) {
    const auto found = std::find(names.begin(), names.end(), wanted[j]);
    if (found == names.end()) {
      const detail::Feature* feature = detail::find_feature(wanted[j]);
      const std::string cause =
          !feature ? " (no feature of that name exists)."
          : needs_corpora(feature->group)
              ? " (it needs the corpora: --src-corpus, --tgt-corpus); use a model trained without it."
          : feature->group == detail::FeatureGroup::first_stage
              ? " (a first stage's column: two-stage models score with score_candidates)."
              : "; use a model trained without it.";
      throw_input_error(origin, 0,
                        "the model uses the feature '" + wanted[j] + "', which this run does not compute" + cause);
    }
    column[j] = found - names.begin();
  }
  // A block of 262,144 rows is 47 MB, above malloc's mmap threshold: fresh pages each time, in huge pages.
  Matrix selected;
  detail::resize_in_huge_pages(selected, rows, static_cast<Eigen::Index>(wanted.size()));
  if (wanted == names) {  // the model's columns are the run's: one copy
    selected = values.middleRows(first, rows);
    return selected;
  }
  // Row by row: the table is row-major, and a column copy would stride through all of it once per column.
  for (Eigen::Index r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < column.size(); ++j)
      selected(r, static_cast<Eigen::Index>(j)) = values(first + r, column[j]);
  return selected;
}

bool FeatureTable::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace termalign
