#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "io/io.h"
#include "io/sanity.h"
#include "mapping/compose_alongside.h"
#include "mapping/composition.h"
#include "termalign/lexicon.h"

using namespace termalign;

namespace {
// Four words with orthogonal unit vectors e0..e3 (dimension 4).
Embeddings toy_embeddings() {
  Embeddings embeddings;
  embeddings.words = {"file", "menu", "drop", "utilisateur"};
  embeddings.vectors = Matrix::Identity(4, 4);
  for (std::size_t i = 0; i < embeddings.words.size(); ++i) embeddings.rows[embeddings.words[i]] = i;
  return embeddings;
}

RowVector unit_sum(std::initializer_list<int> axes) {
  RowVector v = RowVector::Zero(4);
  for (int axis : axes) v(axis) += 1;
  return v / v.norm();
}
}  // namespace

// A composer keeps references to its vectors and normaliser: temporaries would dangle, so they do not compile.
static_assert(!std::is_constructible_v<TermComposer, Embeddings&&, const Normalizer&, const CompositionOptions&>);
static_assert(!std::is_constructible_v<TermComposer, const Embeddings&, Normalizer&&, const CompositionOptions&>);
static_assert(
    std::is_constructible_v<TermComposer, const Embeddings&, const Normalizer&, const CompositionOptions&>);

TEST_CASE("split_words splits on white space", "[composition]") {
  CHECK(split_words("  file  menu\tdrop ") == std::vector<std::string>{"file", "menu", "drop"});
  CHECK(split_words("").empty());
}

TEST_CASE("A term vector is the renormalised mean of its word vectors", "[composition]") {
  const Embeddings embeddings = toy_embeddings();
  const Normalizer normalizer{Normalization::none, {}};
  const TermComposer composer(embeddings, normalizer, CompositionOptions{});
  RowVector out;
  REQUIRE(composer.compose("file menu", out));
  CHECK((out - unit_sum({0, 1})).norm() < 1e-6);
  REQUIRE(composer.compose("file", out));
  CHECK((out - unit_sum({0})).norm() < 1e-6);
  SECTION("an unknown word is skipped, a term of unknown words is unusable") {
    REQUIRE(composer.compose("file zzz", out));
    CHECK((out - unit_sum({0})).norm() < 1e-6);
    CHECK_FALSE(composer.compose("zzz yyy", out));
  }
}

TEST_CASE("Unknown tokens fall back to lower case, then to compound pieces", "[composition]") {
  const Embeddings embeddings = toy_embeddings();
  const Normalizer normalizer{Normalization::none, {}};
  RowVector out;
  CompositionOptions options;
  const TermComposer composer(embeddings, normalizer, options);
  REQUIRE(composer.compose("FILE Menu", out));
  CHECK((out - unit_sum({0, 1})).norm() < 1e-6);
  REQUIRE(composer.compose("drop-menu", out));
  CHECK((out - unit_sum({2, 1})).norm() < 1e-6);
  REQUIRE(composer.compose("l'utilisateur", out));  // "l" unknown, "utilisateur" known
  CHECK((out - unit_sum({3})).norm() < 1e-6);
  REQUIRE(composer.compose("l\xE2\x80\x99utilisateur", out));  // typographic apostrophe
  CHECK((out - unit_sum({3})).norm() < 1e-6);

  options.lowercase_fallback = false;
  options.split_compounds = false;
  const TermComposer strict(embeddings, normalizer, options);
  CHECK_FALSE(strict.compose("FILE", out));
  CHECK_FALSE(strict.compose("drop-menu", out));
}

TEST_CASE("compose_terms keeps usable terms in order and reports the others", "[composition]") {
  const Embeddings embeddings = toy_embeddings();
  const Normalizer normalizer{Normalization::none, {}};
  const TermComposer composer(embeddings, normalizer, CompositionOptions{});
  const ComposedTerms composed = compose_terms({"zzz", "menu", "drop file", "qqq"}, composer, 2);
  CHECK(composed.term_ids == std::vector<std::uint32_t>{1, 2});
  CHECK(composed.unusable == std::vector<std::uint32_t>{0, 3});
  REQUIRE(composed.vectors.rows() == 2);
  CHECK((RowVector(composed.vectors.row(1)) - unit_sum({2, 0})).norm() < 1e-6);
}

TEST_CASE("compose_lists_alongside composes each list as compose_terms does, with alongside() run once",
          "[composition]") {
  const Embeddings embeddings = toy_embeddings();
  const Normalizer normalizer{Normalization::none, {}};
  const TermComposer composer(embeddings, normalizer, CompositionOptions{});
  // Enough terms for both threads to take items; some unusable, in both lists.
  std::vector<std::string> first, second;
  const std::vector<std::string> pool = {"menu", "zzz", "drop file", "file menu drop", "Utilisateur", "qqq x"};
  for (std::size_t i = 0; i < 500; ++i) first.push_back(pool[i % pool.size()]);
  for (std::size_t i = 0; i < 333; ++i) second.push_back(pool[(7 * i + 3) % pool.size()]);
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    int alongside_runs = 0;
    const std::vector<ComposedTerms> both = detail::compose_lists_alongside(
        {{first, composer}, {second, composer}}, threads, [&] { ++alongside_runs; });
    CHECK(alongside_runs == 1);
    REQUIRE(both.size() == 2);
    for (std::size_t l = 0; l < 2; ++l) {
      const ComposedTerms alone = compose_terms(l == 0 ? first : second, composer, 1);
      CHECK(both[l].term_ids == alone.term_ids);
      CHECK(both[l].unusable == alone.unusable);
      CHECK(both[l].vectors == alone.vectors);
      CHECK(both[l].unusable.size() > 0);
    }
  }
  CHECK(compose_lists({}, 2).empty());
}

TEST_CASE("collect_words lists every form a lookup may try", "[composition]") {
  std::vector<std::string> words{"file"};
  collect_words({"File drop-Down", "file"}, words);
  for (const char* expected : {"File", "file", "drop-Down", "drop-down", "drop", "Down", "down",
                               "File\xE2\x96\x81"
                               "drop-Down",
                               "file\xE2\x96\x81"
                               "drop-down"}) {
    CAPTURE(expected);
    CHECK(std::count(words.begin(), words.end(), expected) == 1);
  }
  // Several lists at once: the same words as one list after the other, each once.
  const std::vector<std::string> terms{"File drop-Down", "file"}, more{"menu", "drop", "Menu bar"};
  std::vector<std::string> one_by_one{"file"}, at_once{"file"};
  collect_words(terms, one_by_one);
  collect_words(more, one_by_one);
  collect_words({&terms, &more}, at_once);
  CHECK(at_once == one_by_one);
  // As a set (what the loader takes): the same words.
  std::vector<std::string> from_lists;
  collect_words({&terms, &more}, from_lists);
  CHECK(collect_word_set({&terms, &more}) ==
        std::unordered_set<std::string>(from_lists.begin(), from_lists.end()));
}

TEST_CASE("A multi-word term with a vector of its own (a joined token) uses it", "[composition]") {
  // Vectors trained by `train-vectors --terms` hold "drop▁menu" (joined_term_token) next to its words.
  Embeddings embeddings;
  embeddings.words = {"file", "menu", "drop", "utilisateur", "drop\xE2\x96\x81menu"};
  embeddings.vectors = Matrix::Identity(5, 5);
  for (std::size_t i = 0; i < embeddings.words.size(); ++i) embeddings.rows[embeddings.words[i]] = i;
  const Normalizer normalizer{Normalization::none, {}};
  RowVector out;
  const TermComposer joined(embeddings, normalizer, CompositionOptions{});
  REQUIRE(joined.compose("Drop menu", out));  // found lower-cased, like any word
  CHECK(out(4) == Approx(1.0f));
  CHECK(out.head(4).norm() < 1e-6);
  REQUIRE(joined.compose("file menu", out));  // no joined token: the mean of its words
  CHECK(out(0) == Approx(out(1)));
  CompositionOptions words_only;
  words_only.joined_terms = false;
  const TermComposer composed(embeddings, normalizer, words_only);
  REQUIRE(composed.compose("drop menu", out));
  CHECK(out(4) == Approx(0.0f));
  CHECK(out(1) == Approx(out(2)));
}

namespace {
// Unit rows e0, e1, ... for `words` (dimension = their count), with the folded forms of words (fold_case) indexed
// as the loader's LoadOptions::fold_case does.
Embeddings embeddings_of(const std::vector<std::string>& words) {
  Embeddings embeddings;
  embeddings.words = words;
  embeddings.vectors =
      Matrix::Identity(static_cast<Eigen::Index>(words.size()), static_cast<Eigen::Index>(words.size()));
  for (std::size_t i = 0; i < words.size(); ++i) {
    embeddings.rows[words[i]] = i;
    const std::string key = fold_case(words[i]);
    if (key != words[i] && !embeddings.folded.count(key)) embeddings.folded[key] = i;
  }
  return embeddings;
}

std::vector<std::string> parts_of(const Embeddings& embeddings, const std::string& word, bool any_case = true) {
  std::vector<std::size_t> rows;
  std::vector<std::string> parts;
  if (closed_compound_rows(embeddings, word, any_case, rows)) {
    for (const std::size_t row : rows) parts.push_back(embeddings.words[row]);
  }
  return parts;
}

// Whether `parts` (lower-cased) spell `word` in order, each but the last maybe followed by a linking element.
bool spell(const std::vector<std::string>& parts, const std::string& word, std::size_t at = 0,
           std::size_t part = 0) {
  if (part == parts.size()) return at == word.size();
  const std::string piece = to_lower(parts[part]);
  if (word.compare(at, piece.size(), piece) != 0) return false;
  at += piece.size();
  if (part + 1 == parts.size()) return at == word.size();
  for (const std::string link : {"", "s", "es", "n", "en"}) {
    if (word.compare(at, link.size(), link) == 0 && spell(parts, word, at + link.size(), part + 1)) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("closed_compound_rows reads a closed compound as known words", "[composition]") {
  const Embeddings embeddings =
      embeddings_of({"Datei", "Format", "Seite", "Zahl", "Tabelle", "Kalkulation", "Dokument", "Arbeit", "Blatt",
                     "tab", "leau", "zeichen", "kette", "größe", "schrift", "übe"});
  using Parts = std::vector<std::string>;
  CHECK(parts_of(embeddings, "dateiformat") == Parts{"Datei", "Format"});
  CHECK(parts_of(embeddings, "seitenzahl") == Parts{"Seite", "Zahl"});      // linking n
  CHECK(parts_of(embeddings, "arbeitsblatt") == Parts{"Arbeit", "Blatt"});  // linking s
  CHECK(parts_of(embeddings, "zeichenkette") == Parts{"zeichen", "kette"});
  CHECK(parts_of(embeddings, "schriftgröße") == Parts{"schrift", "größe"});
  // Three parts: the modifier is itself a compound (with linking elements at both joints).
  CHECK(parts_of(embeddings, "tabellenkalkulationsdokument") == Parts{"Tabelle", "Kalkulation", "Dokument"});
  SECTION("parts known in the case asked for, in words of at most 64 characters; short ones not frequent") {
    CHECK(parts_of(embeddings, "tableau").empty());    // tab + leau: 3 characters, among the 150 first rows
    CHECK(parts_of(embeddings, "übeformat").empty());  // 3 characters in 4 bytes, as frequent
    CHECK(parts_of(embeddings, "dateiformat", /*any_case=*/false).empty());
    CHECK(parts_of(embeddings, "dateiformatx").empty());  // no known head
    CHECK(parts_of(embeddings, "datei").empty());
    const Embeddings long_words = embeddings_of({std::string(58, 'a'), std::string(59, 'a'), "format"});
    CHECK(parts_of(long_words, std::string(58, 'a') + "format").size() == 2);  // 64 characters
    CHECK(parts_of(long_words, std::string(59, 'a') + "format").empty());
  }
}

TEST_CASE("closed_compound_rows reads parts of 3 characters where longer ones read nothing", "[composition]") {
  // The vectors' first 150 rows are their most frequent words (function words in real vectors: `aus`, `den`).
  std::vector<std::string> words = {"aus", "den"};
  while (words.size() < 150) words.push_back("frequent" + std::to_string(words.size()));
  for (const char* word : {"datei", "typ", "web", "seite", "richtung", "ausrichtung", "befehle", "ändern", "wahl",
                           "block", "zip", "code", "de"})
    words.push_back(word);
  const Embeddings embeddings = embeddings_of(words);
  using Parts = std::vector<std::string>;
  CHECK(parts_of(embeddings, "dateityp") == Parts{"datei", "typ"});  // a short head
  CHECK(parts_of(embeddings, "webseite") == Parts{"web", "seite"});  // a short modifier
  CHECK(parts_of(embeddings, "zipcode") == Parts{"zip", "code"});    // 7 characters
  // A reading in longer parts is kept: not aus + richtung + befehle, though `aus` would be the most frequent part.
  CHECK(parts_of(embeddings, "ausrichtungsbefehle") == Parts{"ausrichtung", "befehle"});
  // The most frequent words are no parts: an ending (ändern + den), a prefix (block + aus + wahl).
  CHECK(parts_of(embeddings, "ändernden").empty());
  CHECK(parts_of(embeddings, "blockauswahl").empty());
  // A linking element after a short modifier; no part of 2 characters, however rare.
  CHECK(parts_of(embeddings, "webscode") == Parts{"web", "code"});
  CHECK(parts_of(embeddings, "dedatei").empty());
}

TEST_CASE("closed_compound_rows reads a compound as its most frequent parts", "[composition]") {
  // wirtschaft|steil or wirtschaft|s|teil: the vectors' row order (most frequent first) decides.
  using Parts = std::vector<std::string>;
  CHECK(parts_of(embeddings_of({"teil", "wirtschaft", "steil"}), "wirtschaftsteil") ==
        Parts{"wirtschaft", "teil"});
  CHECK(parts_of(embeddings_of({"steil", "wirtschaft", "teil"}), "wirtschaftsteil") ==
        Parts{"wirtschaft", "steil"});
  // Three frequent parts before two rare ones, and two before three at an equal mean.
  const Embeddings three = embeddings_of({"wasser", "kraft", "werk", "a", "b", "c", "d", "e", "kraftwerk"});
  CHECK(parts_of(three, "wasserkraftwerk") == Parts{"wasser", "kraft", "werk"});
  const Embeddings two = embeddings_of({"wasser", "kraftwerk", "kraft", "werk"});
  CHECK(parts_of(two, "wasserkraftwerk") == Parts{"wasser", "kraftwerk"});
}

TEST_CASE("closed_compound_rows: the parts found spell the word, for random compounds", "[composition]") {
  // Random words of 4-8 letters from a small alphabet (so that many words share prefixes and suffixes), and
  // compounds of two or three of them with random linking elements: every compound that is not itself a word
  // must be split, into parts that spell it.
  std::mt19937 random(7);
  const std::string letters = "aenrst";
  std::vector<std::string> words;
  std::unordered_set<std::string> seen;
  while (words.size() < 200) {
    std::string word(4 + random() % 5, 'a');
    for (char& c : word) c = letters[random() % letters.size()];
    if (seen.insert(word).second) words.push_back(word);
  }
  const Embeddings embeddings = embeddings_of(words);
  const std::string links[] = {"", "s", "es", "n", "en"};
  std::size_t split = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t count = 2 + random() % 2;
    std::string compound;
    for (std::size_t p = 0; p < count; ++p) {
      compound += words[random() % words.size()];
      if (p + 1 < count) compound += links[random() % 5];
    }
    if (embeddings.row(compound)) continue;
    const auto parts = parts_of(embeddings, compound);
    INFO(compound);
    REQUIRE(parts.size() >= 2);
    CHECK(spell(parts, compound));
    ++split;
  }
  CHECK(split > 1900);
}

TEST_CASE("Closed compounds are split in a compounding list", "[composition]") {
  const Embeddings embeddings = embeddings_of({"Datei", "Format", "Name", "menu", "couleur", "police"});
  const Normalizer normalizer{Normalization::none, {}};
  RowVector out, expected = RowVector::Zero(6);
  expected(0) = expected(1) = 1;
  expected.normalize();
  CompositionOptions options;
  const TermComposer composer(embeddings, normalizer, options);
  REQUIRE(composer.compose("dateiformat", out));
  CHECK((out - expected).norm() < 1e-6);
  CHECK(composer.token_vectors("dateiformat name").rows() == 2);  // one row per token
  options.split_closed_compounds = false;
  CHECK_FALSE(TermComposer(embeddings, normalizer, options).compose("dateiformat", out));

  // The gate: German-like lists split, a list with the odd identifier (under 2 % of its words) does not.
  const std::vector<std::string> german = {"dateiformat", "dateiname", "name", "menu"};
  CHECK(closed_compound_share(german, embeddings, true) == Approx(0.5));
  CHECK(closed_compounds_for("de", german, embeddings, CompositionOptions{}).split_closed_compounds);
  std::vector<std::string> french(60, "menu couleur");
  french.push_back("couleurpolice");
  CHECK(closed_compound_share(french, embeddings, true) == Approx(1.0 / 121));
  CHECK_FALSE(closed_compounds_for("fr", french, embeddings, CompositionOptions{}).split_closed_compounds);
  options = CompositionOptions{};
  options.closed_compound_share = 0;  // any list
  CHECK(closed_compounds_for("fr", french, embeddings, options).split_closed_compounds);
  options.split_closed_compounds = false;
  CHECK_FALSE(closed_compounds_for("de", german, embeddings, options).split_closed_compounds);
}

TEST_CASE("closed_compound_share samples long lists without lining up with their period", "[composition]") {
  // 20,000 terms alternating a word the vectors lack and a compound of two known words: half the words are
  // compounds; a sample of every other term would see none or all of them.
  const Embeddings embeddings = embeddings_of({"datei", "format"});
  std::vector<std::string> terms;
  for (int i = 0; i < 10000; ++i) {
    terms.push_back("zzzzzz");
    terms.push_back("dateiformat");
  }
  CHECK(closed_compound_share(terms, embeddings, true) == Approx(0.5).margin(0.02));
  terms.resize(2000);  // short lists are read whole
  CHECK(closed_compound_share(terms, embeddings, true) == 0.5);
}

TEST_CASE("closed_compound_rows finds a reading within its lookup bound when every substring is a word",
          "[composition]") {
  std::mt19937 random(3);
  std::string word(64, 'a');
  for (char& c : word) c = static_cast<char>('a' + random() % 26);
  std::vector<std::string> substrings;
  std::unordered_set<std::string> seen;
  for (std::size_t begin = 0; begin < word.size(); ++begin) {
    for (std::size_t length = 4; begin + length <= word.size() && length < word.size(); ++length) {
      if (seen.insert(word.substr(begin, length)).second) substrings.push_back(word.substr(begin, length));
    }
  }
  const auto parts = parts_of(embeddings_of(substrings), word);
  REQUIRE(parts.size() >= 2);
  CHECK(spell(parts, word));
}

TEST_CASE("The share of known terms counts closed compounds where they are composed", "[composition]") {
  const Embeddings embeddings = embeddings_of({"Datei", "Format", "Name"});
  TermList list;
  list.terms = {"dateiformat", "dateiname", "name", "zzz"};
  CHECK(known_term_share(list, embeddings, kKnownShareSample, /*closed_compounds=*/true) == Approx(0.75));
  CHECK(known_term_share(list, embeddings) == Approx(0.25));
}

TEST_CASE("The share of known terms is sampled without lining up with the list's period", "[composition]") {
  // 10,000 terms, a known word then four unknown ones, 2,000 sampled: every 5th term would see only the known.
  const Embeddings embeddings = embeddings_of({"name"});
  TermList list;
  for (int i = 0; i < 2000; ++i) list.terms.insert(list.terms.end(), {"name", "zzzz", "yyyy", "xxxx", "wwww"});
  CHECK(known_term_share(list, embeddings) == Approx(0.2).margin(0.03));
}
