// How many source terms' first candidate is another form of one of their gold targets (`файла` for the gold
// `файл`): the task's confusers, counted for an error analysis (termalign evaluate --forms-language).
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "io/io.h"
#include "termalign/evaluation.h"
#include "text/word_forms.h"

namespace termalign {

InflectedFirst inflected_first_candidates(const PairList& gold, const PairList& predictions,
                                          const std::string& language, const std::string& hunspell_dir) {
  InflectedFirst out;
  // The targets of the gold and of the list, as matched (folded), with their families of forms.
  std::unordered_map<std::string, std::uint32_t> target_ids;
  std::vector<std::string> targets;
  const auto target_id = [&](const std::string& text) {
    std::string folded;
    fold_phrase(text, folded);
    const auto [it, added] = target_ids.emplace(folded, static_cast<std::uint32_t>(targets.size()));
    if (added) targets.push_back(folded);
    return it->second;
  };
  std::unordered_map<std::string, std::unordered_set<std::uint32_t>> gold_targets;  // folded source -> targets
  std::string source;
  for (const auto& [s, t] : gold.pairs) {
    fold_phrase(s, source);
    gold_targets[source].insert(target_id(t));
  }
  std::unordered_map<std::string, std::uint32_t> first;  // folded source -> its first candidate's target
  for (const auto& [s, t] : predictions.pairs) {
    fold_phrase(s, source);
    if (gold_targets.count(source)) first.emplace(source, target_id(t));
  }
  WordAnalyser analyser(language, hunspell_dir);
  out.analyser = analyser.name();
  if (analyser.kind() == FormsAnalyser::none) return out;
  const TermForms forms = term_forms(targets, analyser);
  out.source_terms = gold_targets.size();
  for (const auto& [term, wanted] : gold_targets) {
    const auto found = first.find(term);
    if (found == first.end()) continue;
    ++out.with_candidate;
    if (wanted.count(found->second)) {
      ++out.correct;
      continue;
    }
    for (const std::uint32_t target : wanted) {
      if (forms.family[target] == forms.family[found->second]) {
        ++out.inflected;
        break;
      }
    }
  }
  return out;
}

}  // namespace termalign
