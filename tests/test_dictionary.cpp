// Bilingual dictionaries (--dictionary): dictd databases (index and dictzip/gzip text) that the tests write
// themselves, two-column files, the direction from the database's name, and the errors naming file and entry.
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "io/dictionary.h"
#include "io/io.h"
#include "pipeline/stages.h"
#include "rerank/reranker.h"
#include "scratch_file.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/config.h"
#include "termalign/error.h"
#include "termalign/lexicon.h"

using termalign::Dictionary;
using termalign_tests::scratch_file;

namespace {

// A dictd number: base64 digits, most significant first.
std::string dictd_number(std::uint64_t value) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  do {
    text.insert(text.begin(), digits[value % 64]);
    value /= 64;
  } while (value > 0);
  return text;
}

std::string gzipped(const std::string& text) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, text.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(&out[0]);
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// A dictd database of `entries` (each an entry's text), as `name`.index and `name`.dict.dz (gzipped); returns the
// base path. The index lists the entries in headword order, as dictfmt writes it, not in text order.
std::string write_dictd(const std::string& name, const std::vector<std::string>& entries,
                        const std::string& index_extra = "", bool compress = true) {
  std::string text = "00-database-info\nA test database.\n";
  std::vector<std::pair<std::string, std::string>> lines;
  lines.emplace_back("00-database-info", "\t" + dictd_number(0) + "\t" + dictd_number(text.size()));
  for (const std::string& entry : entries) {
    const std::string headword = entry.substr(0, entry.find_first_of(" \n"));
    lines.emplace_back(headword, "\t" + dictd_number(text.size()) + "\t" + dictd_number(entry.size()));
    text += entry;
  }
  std::sort(lines.begin(), lines.end());
  std::string index;
  for (const auto& [headword, rest] : lines) index += headword + rest + "\n";
  index += index_extra;
  const std::string base = scratch_file("test-data/dictionary", name + ".index", index);
  const std::string stem = base.substr(0, base.size() - 6);
  scratch_file("test-data/dictionary", name + (compress ? ".dict.dz" : ".dict"), compress ? gzipped(text) : text);
  return stem;
}

std::vector<std::string> translations(const Dictionary& dictionary, const std::string& source) {
  std::vector<std::string> found;
  const std::uint32_t id = dictionary.sources().find(source);
  if (id == termalign::PhraseTable::npos) return found;
  const auto [begin, end] = dictionary.translations(id);
  for (auto t = begin; t != end; ++t) found.emplace_back(dictionary.targets().phrase(*t));
  std::sort(found.begin(), found.end());
  return found;
}

// `read` must throw an input error whose message holds each of `words`.
void check_input_error(const std::function<void()>& read, const std::vector<std::string>& words) {
  try {
    read();
    FAIL("no error");
  } catch (const termalign::Error& error) {
    CHECK(error.kind() == termalign::ErrorKind::input);
    for (const std::string& word : words) CHECK_THAT(error.what(), Catch::Contains(word));
  }
}

const std::vector<std::string> kEnglishGerman = {
    "file format /fˈaɪl fˈɔːmat/\nDateiformat <n>, Format <n> [comp.]\n         Note: a note\n see: {file}\n",
    "drop-down menu /drɒp/\nAusklappmenü <n>; Dropdown-Menü (Software)\n",
    "window /ˈwɪndəʊ/\n1. Fenster <n>\n2. Schalter <m>\n      \"an example\" - Ein Beispiel\n",
};

}  // namespace

TEST_CASE("dictd numbers are base64 digits, most significant first", "[dictionary]") {
  std::uint64_t value = 0;
  REQUIRE(termalign::decode_dictd_number("A", value));
  CHECK(value == 0);
  REQUIRE(termalign::decode_dictd_number("BA", value));
  CHECK(value == 64);
  REQUIRE(termalign::decode_dictd_number("krTE", value));
  CHECK(value == ((36u * 64 + 43) * 64 + 19) * 64 + 4);
  CHECK_FALSE(termalign::decode_dictd_number("a-b", value));
  CHECK_FALSE(termalign::decode_dictd_number("", value));
  CHECK_FALSE(termalign::decode_dictd_number("AAAAAAAAAAA", value));  // more than 60 bits
}

TEST_CASE("A dictd entry is its headword and the translations before the notes", "[dictionary]") {
  const auto entry = termalign::parse_dictd_entry(kEnglishGerman[0]);
  CHECK(entry.headword == "file format");
  CHECK(entry.translations == std::vector<std::string>{"Dateiformat", "Format"});
  const auto senses = termalign::parse_dictd_entry(kEnglishGerman[2]);
  CHECK(senses.translations == std::vector<std::string>{"Fenster", "Schalter"});
  const auto lists = termalign::parse_dictd_entry(kEnglishGerman[1]);
  CHECK(lists.headword == "drop-down menu");
  CHECK(lists.translations == std::vector<std::string>{"Ausklappmenü", "Dropdown-Menü"});
  // A slash in a word is no pronunciation.
  CHECK(termalign::parse_dictd_entry("TCP/IP\nTCP/IP\n").translations == std::vector<std::string>{"TCP/IP"});
}

TEST_CASE("A dictd database reads forward or backward as its name says", "[dictionary]") {
  const std::string forward = write_dictd("freedict-eng-deu", kEnglishGerman);
  for (const std::string& path : {forward, forward + ".index", forward + ".dict.dz"}) {
    Dictionary dictionary;
    termalign::read_dictionary(path, "en-de", dictionary);
    dictionary.finish();
    CHECK(translations(dictionary, "file format") == std::vector<std::string>{"dateiformat", "format"});
    CHECK(translations(dictionary, "window") == std::vector<std::string>{"fenster", "schalter"});
    CHECK(dictionary.has_pair("drop-down menu", "ausklappmenü"));
    CHECK(dictionary.sources().find("00-database-info") == termalign::PhraseTable::npos);
  }
  // deu-eng: German headwords, read into (English, German) pairs.
  const std::string backward =
      write_dictd("freedict-deu-eng", {"Fenster /ˈfɛnstɐ/ <n>\nwindow, casement\n", "Datei <f>\nfile\n"});
  CHECK(termalign::dictd_reads_backward("freedict-deu-eng", "en-de"));
  CHECK(termalign::dictd_reads_backward("freedict-deu-eng", ""));
  CHECK_FALSE(termalign::dictd_reads_backward("freedict-eng-deu", ""));
  CHECK_FALSE(termalign::dictd_reads_backward("freedict-deu-eng", "de-en"));
  const Dictionary both = termalign::read_dictionaries({forward, backward}, "en-de");
  CHECK(translations(both, "window") == std::vector<std::string>{"fenster", "schalter"});
  CHECK(translations(both, "casement") == std::vector<std::string>{"fenster"});
  CHECK(translations(both, "file") == std::vector<std::string>{"datei"});
  // A plain .dict text reads as well.
  const std::string plain = write_dictd("plain-eng-fra", {"file\nfichier\n"}, "", false);
  CHECK(translations(termalign::read_dictionaries({plain}, "en-fr"), "file") == std::vector<std::string>{"fichier"});
}

TEST_CASE("A two-column dictionary: TAB-separated phrases or two words", "[dictionary]") {
  const std::string path = scratch_file("test-data/dictionary", "pairs.txt",
                                        "file\tfichier\nFile Format\tformat de fichier\nmenu menu\n\n");
  const Dictionary dictionary = termalign::read_dictionaries({path}, "en-fr");
  CHECK(dictionary.size() == 3);
  CHECK(dictionary.has_pair("file format", "format de fichier"));
  CHECK(translations(dictionary, "menu") == std::vector<std::string>{"menu"});
  const std::string three = scratch_file("test-data/dictionary", "three.txt", "file\tfichier\none two three\n");
  check_input_error([&] { termalign::read_dictionaries({three}, "en-fr"); }, {three + ":2:"});
  const std::string one = scratch_file("test-data/dictionary", "one.txt", "file\n");
  check_input_error([&] { termalign::read_dictionaries({one}, "en-fr"); }, {one + ":1:"});
}

TEST_CASE("A dictionary entry and a term that differ only in white space and case match", "[dictionary]") {
  // Words separated by every kind of ASCII white space, repeated, and at the ends.
  const std::string spaced_source = " File\t\v\fFORMAT \r  Name\n",
                    spaced_target = "\fFormat  de\v\tnom\r de Fichier ";
  std::string folded;
  termalign::fold_phrase(spaced_source, folded);
  CHECK(folded == "file format name");
  termalign::fold_phrase("Größe\v\f DER  Datei", folded);
  CHECK(folded == "größe der datei");
  // Terms and dictionary phrases spaced and cased otherwise, on either side; and a decoy target.
  termalign::TermList sources, targets;
  sources.terms = {spaced_source, "menu"};
  targets.terms = {"format de fichier", "menu", "Format DE nom  de\vfichier"};
  Dictionary dictionary;
  dictionary.add("file format name", spaced_target);
  dictionary.add("Menu\f\v", "\tmenu");
  dictionary.finish();
  CHECK(dictionary.has_pair("file format name", "format de nom de fichier"));
  CHECK(dictionary.has_pair("menu", "menu"));
  // The candidates the dictionary adds: each source with its entry's target, not the decoy.
  termalign::ComposedTerms X, Z;
  X.vectors = termalign::Matrix::Identity(2, 3);
  X.term_ids = {0, 1};
  Z.vectors = termalign::Matrix::Identity(3, 3);
  Z.term_ids = {0, 1, 2};
  termalign::NeighbourhoodMeans means{Eigen::VectorXf::Zero(2), Eigen::VectorXf::Zero(3)};
  std::vector<termalign::Candidate> candidates;
  CHECK(termalign::pipeline::add_dictionary_candidates(dictionary, sources, targets, X, Z, means, 3, 2,
                                                       candidates) == 2);
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const termalign::Candidate& candidate : candidates) pairs.emplace(candidate.source, candidate.target);
  CHECK(pairs == std::set<std::pair<std::uint32_t, std::uint32_t>>{{0, 2}, {1, 1}});
}

TEST_CASE("A corrupt dictd database is an input error naming the file and the entry", "[dictionary]") {
  SECTION("an offset past the end") {
    const std::string base =
        write_dictd("past-end-eng-deu", kEnglishGerman, "zebra\t" + dictd_number(100000) + "\tB\n");
    check_input_error([&] { termalign::read_dictionaries({base}, "en-de"); },
                      {base + ".index:", "'zebra'", "past the end"});
  }
  SECTION("a bad base64 number") {
    const std::string base = write_dictd("bad-base64-eng-deu", kEnglishGerman, "zebra\tA*B\tB\n");
    check_input_error([&] { termalign::read_dictionaries({base}, "en-de"); },
                      {base + ".index:5:", "'zebra'", "base64"});
  }
  SECTION("a line without its fields") {
    const std::string base = write_dictd("fields-eng-deu", kEnglishGerman, "zebra\n");
    check_input_error([&] { termalign::read_dictionaries({base}, "en-de"); }, {base + ".index:5:", "TAB"});
  }
  SECTION("a cut .dict.dz") {
    const std::string base = write_dictd("cut-eng-deu", kEnglishGerman);
    const std::string text = termalign::read_file(base + ".dict.dz");
    scratch_file("test-data/dictionary", "cut-eng-deu.dict.dz", text.substr(0, text.size() / 2));
    check_input_error([&] { termalign::read_dictionaries({base}, "en-de"); },
                      {base + ".dict.dz", "truncated", "entry '"});
  }
  SECTION("a missing text") {
    const std::string base = write_dictd("no-text-eng-deu", kEnglishGerman);
    std::filesystem::remove(base + ".dict.dz");
    check_input_error([&] { termalign::read_dictionaries({base}, "en-de"); }, {base + ".dict.dz"});
  }
}

// --- The dictionary in a run ---

namespace {

termalign::AlignConfig sample_config(std::string& gold) {
  const std::string source = TERMALIGN_SOURCE_DIR;
  return termalign_tests::dataset_config(source + "/models/sample", "vec", source + "/data/sample", gold);
}

}  // namespace

TEST_CASE("A dictionary adds its entries as candidates and as evidence", "[dictionary][align]") {
  std::string gold_path;
  termalign::AlignConfig config = sample_config(gold_path);
  const termalign::PairList gold = termalign::read_pairs(gold_path, termalign::PairFileKind::gold);
  // Every other gold pair poses as a dictionary entry, written with capitals and extra spaces.
  std::string text;
  std::set<std::pair<std::string, std::string>> entries;
  for (std::size_t i = 0; i < gold.pairs.size(); i += 2) {
    entries.insert(gold.pairs[i]);
    text += "  " + termalign::to_lower(gold.pairs[i].first) + "\t" + gold.pairs[i].second + "\n";
  }
  text[2] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[2])));
  const std::string half = scratch_file("test-data/dictionary", "sample-gold-half.txt", text);
  // Alone, it translates few of the source terms' words: its candidates, but not its features.
  config.input.dictionary = {half};
  const termalign::Dictionary alone = termalign::read_dictionaries({half}, "en-fr");
  const termalign::TermList sources = termalign::read_term_list(config.input.src_terms);
  REQUIRE(termalign::pipeline::dictionary_coverage(alone, sources) < config.input.dictionary_min_coverage);
  const termalign::CandidateSet few = termalign::generate_candidates(config, true);
  CHECK(few.evidence.dictionary_entry.empty());
  CHECK(few.evidence.dictionary_share.empty());
  std::size_t entry_candidates = 0;
  for (std::size_t i = 0; i < few.evidence.size(); ++i)
    entry_candidates += entries.count({few.source_terms.terms[few.evidence.source[i]],
                                       few.target_terms.terms[few.evidence.target[i]]});
  CHECK(entry_candidates == entries.size());
  // With the seed lexicon as a second dictionary it translates most of them: its features too.
  config.input.dictionary = {half, config.input.seed};
  REQUIRE(termalign::pipeline::dictionary_coverage(termalign::read_dictionaries(config.input.dictionary, "en-fr"),
                                                   sources) >= config.input.dictionary_min_coverage);
  const termalign::CandidateSet with = termalign::generate_candidates(config, true);
  const termalign::CandidateEvidence& evidence = with.evidence;
  std::set<std::pair<std::string, std::string>> seed_pairs;  // lower-cased, as terms are
  for (const auto& [source, target] : termalign::read_pairs(config.input.seed, termalign::PairFileKind::seed_lexicon).pairs)
    seed_pairs.emplace(termalign::to_lower(source), termalign::to_lower(target));
  REQUIRE(evidence.dictionary_entry.size() == evidence.size());
  REQUIRE(evidence.dictionary_share.size() == evidence.size());
  REQUIRE(evidence.dictionary_conflict.size() == evidence.size());
  std::set<std::pair<std::string, std::string>> found;
  double share[2] = {}, count[2] = {};
  for (std::size_t i = 0; i < evidence.size(); ++i) {
    const std::pair<std::string, std::string> pair{with.source_terms.terms[evidence.source[i]],
                                                   with.target_terms.terms[evidence.target[i]]};
    const bool entry = entries.count(pair) > 0;
    CHECK(evidence.dictionary_entry[i] == (entry || seed_pairs.count(pair) ? 1.0f : 0.0f));
    if (entry) found.insert(pair);
    share[entry] += evidence.dictionary_share[i];
    count[entry] += 1;
  }
  // Each entry whose two terms have vectors is a candidate (the sample's vectors cover every term).
  CHECK(found == entries);
  // The run's features hold the dictionary's, and the bundled models trained with a dictionary rank it.
  const termalign::FeatureTable table = termalign::candidate_feature_table(evidence, 1);
  CHECK(table.has("dict_entry"));
  CHECK(table.has("dict_share"));
  CHECK_THAT(termalign::reranker_origin("default", table, false), Catch::EndsWith("reranker-enfr-dict.txt"));
  CHECK_THAT(termalign::reranker_origin("default", table, true), Catch::EndsWith("reranker-enfr-dict.txt"));
  CHECK(share[1] / count[1] > share[0] / count[0] + 0.2);
  // Without the dictionary: none of its columns, and entries the scoring alone did not find.
  config.input.dictionary.clear();
  const termalign::CandidateSet without = termalign::generate_candidates(config, true);
  CHECK(without.evidence.dictionary_entry.empty());
  CHECK(without.evidence.dictionary_share.empty());
  CHECK(without.evidence.size() < evidence.size());
  CHECK_FALSE(termalign::candidate_feature_table(without.evidence, 1).has("dict_entry"));
}

TEST_CASE("Without a seed lexicon the dictionary's frequent single words are the seed", "[dictionary][align]") {
  std::string gold_path;
  termalign::AlignConfig config = sample_config(gold_path);
  const std::string seed = config.input.seed;
  config.input.seed = "";
  config.input.data_dir = "";  // its lists stay; its seed lexicon would fill the seed again
  config.input.dictionary = {seed};  // the seed lexicon poses as a dictionary
  termalign::AlignmentSummary summary;
  const termalign::CandidateSet candidates = termalign::generate_candidates(config, true, &summary);
  CHECK(summary.seed_pairs > 50);
  CHECK(summary.seed_pairs_usable > 50);
  CHECK(candidates.evidence.size() > 0);
  // Too small a dictionary for a seed is an error naming it, without a seed lexicon to fall back on.
  config.input.dictionary = {scratch_file("test-data/dictionary", "tiny.txt", "file\tfichier\n")};
  check_input_error([&] { termalign::generate_candidates(config, true); }, {"tiny.txt", "min_seed_pairs"});
}

TEST_CASE("dictionary is a list option: repeated flags, a TOML list, a Python list", "[dictionary][config]") {
  termalign::AlignConfig config;
  termalign::set_option_text(config, "dictionary", "a.index");
  CHECK(config.input.dictionary == std::vector<std::string>{"a.index"});
  termalign::set_option(config, "dictionary", std::vector<std::string>{"a.index", "b.txt"});
  CHECK(config.input.dictionary == std::vector<std::string>{"a.index", "b.txt"});
  CHECK_THROWS_AS(termalign::set_option(config, "dictionary", std::int64_t{3}), termalign::Error);
  termalign::AlignConfig from_toml;
  termalign::apply_toml(from_toml, "[input]\ndictionary = [\"/x/a.index\", \"b.txt\"]\n", "/etc/run.toml");
  CHECK(from_toml.input.dictionary == std::vector<std::string>{"/x/a.index", "/etc/b.txt"});
  termalign::apply_toml(from_toml, "[input]\ndictionary = \"/x/c.txt\"\n", "/etc/run.toml");
  CHECK(from_toml.input.dictionary == std::vector<std::string>{"/x/c.txt"});
  CHECK_THROWS_AS(termalign::apply_toml(from_toml, "[input]\ndictionary = [1]\n", "/etc/run.toml"),
                  termalign::Error);
  // The resolved configuration reads back to the same list.
  termalign::AlignConfig again;
  termalign::apply_toml(again, termalign::to_toml(from_toml), "/etc/resolved.toml");
  CHECK(again.input.dictionary == from_toml.input.dictionary);
  CHECK(termalign::to_toml(termalign::AlignConfig{}).find("dictionary = []") != std::string::npos);
}
