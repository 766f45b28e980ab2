// Compositional evidence of candidate pairs: how the words of the two terms translate one another, regardless of
// their order (`menu déroulant` / `drop-down menu`).
#pragma once

#include <string_view>

#include "evidence/word_translation.h"
#include "termalign/lexicon.h"
#include "termalign/types.h"

namespace termalign {

class Dictionary;

// Whether two words of one language look like forms of one word: the same bytes, or both at least kStemPrefix
// bytes long with a common prefix of at least kStemShare of the longer one (`window`/`windows`,
// `insérer`/`inséré`, `файл`/`файла`; not `form`/`format`). A prefix rule, so for the suffixing languages of the
// task.
constexpr std::size_t kStemPrefix = 4;
constexpr double kStemShare = 0.75;
bool same_stem(std::string_view a, std::string_view b);

// Whether `part` (at least kStemPrefix letters) is the first or the last member of the closed compound `word`:
// `word` starts or ends with it, and the rest holds at least kStemPrefix bytes (`datei` and `format` in
// `dateiformat`, `data` and `base` in `database`; not `table` in `tableau`, nor Russian `по` in `пользователь`).
// Compounding languages (German, Dutch, the Scandinavian ones) write as one word what English and French write as
// several.
bool compound_member(std::string_view part, std::string_view word);

// Fills evidence.word_alignment, one_to_one, translated_share, edge_agreement, seed_share and seed_conflict for
// every candidate, from the mapped vectors of the distinct words of the candidates' terms (each word once,
// lower-cased), read from the two lists' TermWords (word_translation.h). Words are
// weighted by their inverse document frequency among their side's candidate terms, ln((terms + 1) / terms with
// the word), so that the words of many terms (`de`, `of`, `der`) count little; means and shares are weighted:
// - word_alignment: each word's best cosine among the other term's words, averaged over each term's words with a
//   vector, the two directions averaged (0 when a term has no word with a vector);
// - one_to_one: the words of the two terms matched one to one, greedily by mapped cosine, the sum of the matched
//   cosines (each weighted by the mean weight of its two words) over the larger summed weight of the two terms (a
//   word left over counts 0);
// - translated_share: the share of the two terms' words that have a translation among the other term's words, a
//   translation being a seed lexicon pair or a word's nearest word (mapped cosine) among the words it meets in
//   the candidates (the words of the terms paired with its terms), in either direction;
// - edge_agreement: 1 when the first or last word of one term translates the first or last word of the other.
//   Heads sit at an edge (last in English and German, first in French), so this is head-word agreement without
//   knowing the languages;
// - seed_share: the share of the two terms' words that have a seed translation among the other term's words, a
//   word matching a seed word when it is a form of it (same_stem: `windows` for `window`, `fenêtres` for
//   `fenêtre`): the seed lexicon holds lemmas of frequent words, terms hold their inflected forms;
// - seed_conflict: the share of the two terms' words that have seed translations among the other side's words
//   but none in the other term: `left` in `left list box` against `zone de liste droite` (the seed says `gauche`),
//   and `droite` (the seed's `right`), where the mapped vectors of the two antonyms are close.
// With a `dictionary` (io/dictionary.h), also dictionary_share and dictionary_conflict: seed_share and
// seed_conflict with the dictionary's single-word pairs in the seed's place.
void add_compositional_evidence(const TermWords& source_words, const TermWords& target_words, const PairList& seed,
                                int threads, CandidateEvidence& evidence, const Dictionary* dictionary = nullptr);

}  // namespace termalign
