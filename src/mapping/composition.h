// Tokenising a term and composing its vector from word vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include "mapping/mapping.h"
#include "termalign/config.h"
#include "termalign/embeddings.h"
#include "termalign/types.h"

namespace termalign {

// Splits on ASCII white space (is_ascii_space).
std::vector<std::string> split_words(const std::string& term);

// The rows of the parts of `word` read as a closed compound (`dateiformat`: `datei`, `format`): a head of at
// least 4 characters that `vectors` know after a modifier of at least 4 that they know as it is, else without a
// linking s, es, n or en (`arbeits`), or as such a compound of its own (three parts at most). Of the
// readings, the one of the most frequent parts by Koehn and Knight's rule (the lowest mean log of their rows,
// which a vector file lists most frequent first: `wirtschaft|s|teil`, not `wirtschaft|steil`). A word with no
// such reading may have parts of 3 characters that are not among the 150 first rows, the function words
// (`datei|typ`, `web|seite`; not `ändern|den`). `any_case` looks the parts up with row_any_case. Words of 6 to
// 64 characters; false (rows empty) when there is no reading.
bool closed_compound_rows(const Embeddings& vectors, const std::string& word, bool any_case,
                          std::vector<std::size_t>& rows);
// The share of the white-space separated words of `terms` that `vectors` know only as closed compounds (over at
// most 10,000 distinct terms spread over the list, by a stride that no period of the list lines up with).
double closed_compound_share(const std::vector<std::string>& terms, const Embeddings& vectors, bool any_case);
// Share of a list's terms whose every word is a word of `vectors` (as written or lower-cased), over at most
// `sample` distinct terms spread over the list so that no period of it lines up with them. Subword vectors do not
// count (they compose any string); with `closed_compounds`, as for a list whose closed compounds are split, a
// closed compound of known words counts.
constexpr std::size_t kKnownShareSample = 2000;  // terms read by known_term_share, spread over the list
double known_term_share(const TermList& terms, const Embeddings& vectors, std::size_t sample = kKnownShareSample,
                        bool closed_compounds = false);
// Whether a list of which `share` of the words are closed compounds splits them: split_closed_compounds, and at
// least closed_compound_share (and some) of its words such compounds.
bool splits_closed_compounds(double share, const CompositionOptions& options);
// `options` for composing `terms` over `vectors`: split_closed_compounds stays on only where at least
// options.closed_compound_share of the list's words are such compounds (a compounding language: German, Dutch;
// not the odd identifier of an English or French list), which is logged under `name`.
CompositionOptions closed_compounds_for(const std::string& name, const std::vector<std::string>& terms,
                                        const Embeddings& vectors, CompositionOptions options);

// Looks up word vectors in `embeddings` (already normalised with `normalizer`), following the options: the token
// as written, lower-cased, split on hyphens and apostrophes, the parts of a closed compound, then (with .bin) its
// subword vector, normalised.
// Keeps references to `embeddings` and `normalizer`, which must outlive it (temporaries are refused).
class TermComposer {
 public:
  TermComposer(const Embeddings& embeddings, const Normalizer& normalizer, const CompositionOptions& options);
  TermComposer(Embeddings&&, const Normalizer&, const CompositionOptions&) = delete;
  TermComposer(const Embeddings&, Normalizer&&, const CompositionOptions&) = delete;
  TermComposer(Embeddings&&, Normalizer&&, const CompositionOptions&) = delete;
  // The mean of the term's token vectors, renormalised; false when no token is usable.
  bool compose(const std::string& term, RowVector& out) const;
  int dim() const { return embeddings_.dim(); }
  // One unit row per usable token of the term (a token split into pieces gets the mean of its pieces).
  Matrix token_vectors(const std::string& term) const;

 private:
  bool add_token(const std::string& token, RowVector& sum, int& count) const;
  bool add_known(const std::string& word, RowVector& sum, int& count) const;
  const Embeddings& embeddings_;
  const Normalizer& normalizer_;
  CompositionOptions options_;
};

ComposedTerms compose_terms(const std::vector<std::string>& terms, const TermComposer& composer, int threads = 0);

// A list of terms and the composer of its language.
// References: the list and the composer must outlive the call it is given to.
struct TermsToCompose {
  const std::vector<std::string>& terms;
  const TermComposer& composer;
};

// compose_terms of each list, the terms of all lists shared out among the threads at once.
std::vector<ComposedTerms> compose_lists(const std::vector<TermsToCompose>& lists, int threads);

// The distinct words (and their lower-cased forms and compound pieces, and the joined tokens of multi-word terms)
// that composing `terms` may look up.
void collect_words(const std::vector<std::string>& terms, std::vector<std::string>& words);
// The same for several lists at once (one pass, one set of the words seen).
void collect_words(std::initializer_list<const std::vector<std::string>*> lists, std::vector<std::string>& words);
// The same words as a set, the form LoadOptions::wanted takes.
std::unordered_set<std::string> collect_word_set(std::initializer_list<const std::vector<std::string>*> lists);

}  // namespace termalign
