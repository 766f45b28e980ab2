// How many source terms' first candidate is another form of one of their gold targets (`файла` for the gold
// `файл`): the task's confusers, counted for an error analysis (termalign evaluate --forms-language).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/io.h"
#include "termalign/evaluation.h"
#include "text/word_forms.h"

namespace termalign {

InflectedFirst inflected_first_candidates(const PairList& gold, const PairList& predictions,
                                          const std::string& language, const std::string& hunspell_dir) {
  InflectedFirst out;
  // The targets of the gold and of the list, as matched (folded), with their families of forms; each kept as first
  // written.
  std::unordered_map<std::string, std::uint32_t> target_ids;
  std::vector<std::string> targets, target_texts;
  const auto target_id = [&](const std::string& text) {
    std::string folded;
    fold_phrase(text, folded);
    const auto [it, added] = target_ids.emplace(folded, static_cast<std::uint32_t>(targets.size()));
    if (added) {
      targets.push_back(folded);
      target_texts.push_back(text);
    }
    return it->second;
  };
  // Folded source -> its gold targets, in the gold's order, and the source as the gold first writes it.
  std::unordered_map<std::string, std::pair<std::string, std::vector<std::uint32_t>>> gold_targets;
  std::string source;
  for (const auto& [s, t] : gold.pairs) {
    fold_phrase(s, source);
    auto& [text, wanted] = gold_targets.try_emplace(source, s, std::vector<std::uint32_t>{}).first->second;
    const std::uint32_t id = target_id(t);
    if (std::find(wanted.begin(), wanted.end(), id) == wanted.end()) wanted.push_back(id);
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
  for (const auto& [term, gold_entry] : gold_targets) {
    const auto& [text, wanted] = gold_entry;
    const auto found = first.find(term);
    if (found == first.end()) continue;
    ++out.with_candidate;
    if (std::find(wanted.begin(), wanted.end(), found->second) != wanted.end()) {
      ++out.correct;
      continue;
    }
    for (const std::uint32_t target : wanted) {
      if (forms.family[target] == forms.family[found->second]) {
        ++out.inflected;
        out.cases.push_back({text, target_texts[found->second], target_texts[target]});
        break;
      }
    }
  }
  std::sort(out.cases.begin(), out.cases.end(),
            [](const InflectedFirst::Case& a, const InflectedFirst::Case& b) { return a.source < b.source; });
  return out;
}

std::string format_inflected(const std::string& run, const InflectedFirst& counted, bool header) {
  std::string out = header ? "run\tsource\tcandidate\tgold_target\n" : "";
  for (const InflectedFirst::Case& c : counted.cases)
    out += run + '\t' + c.source + '\t' + c.candidate + '\t' + c.gold + '\n';
  return out;
}

}  // namespace termalign
