#include <fasttext/fasttext.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "captured_log.h"
#include "io/float_field.h"
#include "io/io.h"
#include "shared_data.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "util/parallel.h"

namespace {

using termalign::Embeddings;
using termalign::LoadOptions;

const std::string kFixtures = std::string(TERMALIGN_SOURCE_DIR) + "/tests/data/embeddings/";
const std::string kTinyBin = kFixtures + "tiny.bin";
const std::string kTinyVec = kFixtures + "tiny.vec";

std::string embeddings_temporary(const std::string& name, const std::string& contents) {
  const std::string directory = std::string(TERMALIGN_BINARY_DIR) + "/test_embeddings";
  std::filesystem::create_directories(directory);
  const std::string path = directory + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string file_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

// The message of the input error `load` throws, or "" when it throws none.
template <typename Load>
std::string input_error_of(Load&& load) {
  try {
    load();
  } catch (const termalign::Error& error) {
    CHECK(error.kind() == termalign::ErrorKind::input);
    return error.what();
  }
  return "";
}

// Writes `contents` as a .vec and expects load_vec to fail at `line` with `fragment` in the message.
void check_vec_error(const std::string& name, const std::string& contents, std::size_t line,
                     const std::string& fragment, const LoadOptions& options = {}) {
  const std::string path = embeddings_temporary(name, contents);
  const std::string message = input_error_of([&] { termalign::load_vec(path, options); });
  INFO(name << ": " << message);
  CHECK_THAT(message, Catch::Contains(path + ":" + std::to_string(line) + ":"));
  CHECK_THAT(message, Catch::Contains(fragment));
}

// An independent reader: iostreams and strtof over whitespace-separated fields.
struct ReferenceVec {
  std::vector<std::string> words;
  std::vector<std::vector<float>> rows;
};

ReferenceVec read_reference_vec(const std::string& path) {
  std::ifstream stream(path);
  std::size_t count = 0, dim = 0;
  stream >> count >> dim;
  ReferenceVec reference;
  std::string field;
  for (std::size_t row = 0; row < count; ++row) {
    stream >> field;
    reference.words.push_back(field);
    reference.rows.emplace_back();
    for (std::size_t column = 0; column < dim; ++column) {
      stream >> field;
      reference.rows.back().push_back(std::strtof(field.c_str(), nullptr));
    }
  }
  return reference;
}

void check_equals_reference(const Embeddings& embeddings, const ReferenceVec& reference,
                            const std::vector<std::size_t>& reference_rows) {
  REQUIRE(embeddings.size() == reference_rows.size());
  for (std::size_t row = 0; row < reference_rows.size(); ++row) {
    const std::size_t expected = reference_rows[row];
    REQUIRE(embeddings.words[row] == reference.words[expected]);
    CHECK(embeddings.row(reference.words[expected]) == row);
    for (int column = 0; column < embeddings.dim(); ++column) {
      REQUIRE(embeddings.vectors(static_cast<Eigen::Index>(row), column) == reference.rows[expected][column]);
    }
  }
}

void check_small_vec(const Embeddings& embeddings) {
  const std::vector<std::string> words = {"</s>", "the", "de", "caf\xc3\xa9", "x"};
  const float expected[5][3] = {{0.5f, -1.25f, 2.0f},
                                {0.001f, 0.125f, 0.0f},
                                {3.5f, 4.75f, -8.0f},
                                {0.0625f, 1.0f, 1.0f},
                                {250.0f, -0.5f, 0.25f}};
  REQUIRE(embeddings.words == words);
  REQUIRE(embeddings.dim() == 3);
  for (std::size_t row = 0; row < words.size(); ++row) {
    CHECK(embeddings.row(words[row]) == row);
    for (int column = 0; column < 3; ++column) CHECK(embeddings.vectors(row, column) == expected[row][column]);
  }
  CHECK_FALSE(embeddings.row("absent").has_value());
  CHECK_FALSE(embeddings.has_subwords());
}

// libfasttext itself, for the expected vectors of the .bin tests.
struct FastTextReference {
  fasttext::FastText model;
  FastTextReference() { model.loadModel(kTinyBin); }
  std::vector<float> word_vector(const std::string& word) const {
    fasttext::Vector vector(model.getDimension());
    model.getWordVector(vector, word);
    return {vector.data(), vector.data() + vector.size()};
  }
};

std::vector<float> as_vector(const termalign::RowVector& row) { return {row.data(), row.data() + row.size()}; }

}  // namespace

TEST_CASE("load_vec reads words and values in file order, whatever the chunks and threads", "[embeddings]") {
  for (const char* name : {"small.vec", "small-crlf.vec"}) {
    for (std::size_t chunk_bytes : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{30}}) {
      for (int threads : {1, 2}) {
        INFO(name << ", chunks of " << chunk_bytes << " bytes, " << threads << " threads");
        LoadOptions options;
        options.chunk_bytes = chunk_bytes;
        options.threads = threads;
        const Embeddings embeddings = termalign::load_vec(kFixtures + name, options);
        CHECK(embeddings.path == kFixtures + name);
        check_small_vec(embeddings);
      }
    }
  }
}

TEST_CASE("load_vec agrees with an iostream reference on the sample vectors", "[embeddings]") {
  const std::string path = std::string(TERMALIGN_SOURCE_DIR) + "/models/sample/en.vec";
  const ReferenceVec reference = read_reference_vec(path);
  REQUIRE(reference.words.size() == 4162);
  std::vector<std::size_t> all(reference.words.size());
  for (std::size_t row = 0; row < all.size(); ++row) all[row] = row;
  LoadOptions options;
  options.threads = 2;
  options.chunk_bytes = 64 * 1024;
  check_equals_reference(termalign::load_vec(path, options), reference, all);
}

TEST_CASE("load_vec logs its progress in rows while a file loads", "[embeddings]") {
  const std::string path = std::string(TERMALIGN_SOURCE_DIR) + "/models/sample/en.vec";
  const ProgressInterval every_step(std::chrono::milliseconds(0));
  CapturedLog log;
  LoadOptions options;
  options.threads = 2;
  options.chunk_bytes = 256 * 1024;
  termalign::load_vec(path, options);
  const auto lines = log.lines_with("info", path + ": rows read: ");
  CHECK(lines.size() > 2);  // one per chunk of 256 KB
  REQUIRE_FALSE(lines.empty());
  CHECK_THAT(lines.back(), Catch::Contains("rows read: 4162/4162 (100%"));
}

TEST_CASE("a .vec that starts with a UTF-8 byte order mark loads as without it, with a warning", "[embeddings]") {
  const std::string text = "2 2\nword 1 2\nother 3 4\n";
  const std::string plain = embeddings_temporary("plain.vec", text);
  const std::string marked = embeddings_temporary("marked.vec", "\xEF\xBB\xBF" + text);
  CapturedLog log;
  const Embeddings expected = termalign::load_embeddings(plain);
  CHECK(log.warnings_with("byte order mark") == 0);
  const Embeddings loaded = termalign::load_embeddings(marked);
  CHECK(loaded.words == expected.words);
  CHECK(loaded.vectors == expected.vectors);
  CHECK(log.warnings_with(marked + ": starts with a UTF-8 byte order mark; ignored") == 1);
}

TEST_CASE("fold_case keeps and finds the cased words of lower-cased wanted words", "[embeddings]") {
  // Cased vectors (German nouns, names), lower-cased lists: `datei` finds `DATEI`, its first cased form.
  const std::string path = embeddings_temporary(
      "cased.vec", "6 2\nDATEI 1 0\nDatei 2 0\nFormat 3 0\nformat 4 0\nÉcran 5 0\nOther 6 0\n");
  LoadOptions options;
  options.restrict_words = true;
  options.wanted = {"datei", "format", "écran", "absent"};
  options.chunk_bytes = 16;
  options.threads = 2;
  const Embeddings exact = termalign::load_embeddings(path, options);
  CHECK(exact.words == std::vector<std::string>{"format"});
  CHECK_FALSE(exact.row_any_case("datei").has_value());
  options.fold_case = true;
  const Embeddings folded = termalign::load_embeddings(path, options);
  CHECK(folded.words == std::vector<std::string>{"DATEI", "Datei", "Format", "format", "Écran"});
  CHECK(folded.row_any_case("datei") == std::optional<std::size_t>(0));   // the first cased form
  CHECK(folded.row_any_case("format") == std::optional<std::size_t>(3));  // its own row first
  CHECK(folded.row_any_case("Format") == std::optional<std::size_t>(2));
  CHECK(folded.row_any_case("FORMAT") == std::optional<std::size_t>(3));  // lower-cased, then its own row
  CHECK(folded.row_any_case("écran") == std::optional<std::size_t>(4));   // non-ASCII capitals too
  CHECK_FALSE(folded.row_any_case("other").has_value());                  // not wanted: not kept
  CHECK_FALSE(folded.row_any_case("absent").has_value());
}

TEST_CASE("ё and е are one letter to the lookups, in either direction", "[embeddings]") {
  CHECK(termalign::fold_case("ОТЧЁТ Ёлка") == "отчет елка");
  CHECK(termalign::fold_case("Datei écran") == "datei écran");
  // Vectors with `отчёт` and `расчет`, lists with `отчет` and `расчёт`: the wanted forms are the lists' words and
  // their folded forms, as the composition's loads ask (run_load_options).
  const std::string path =
      embeddings_temporary("yo.vec", "5 2\nдругой 0 1\nотчёт 1 0\nрасчет 2 0\nЁлка 3 0\nещё 4 0\n");
  LoadOptions options;
  options.restrict_words = true;
  options.fold_case = true;
  for (const char* word : {"отчет", "расчёт", "ёлка"}) {
    options.wanted.insert(word);
    options.wanted.insert(termalign::fold_case(word));
  }
  const Embeddings vectors = termalign::load_embeddings(path, options);
  CHECK(vectors.words == std::vector<std::string>{"отчёт", "расчет", "Ёлка"});
  CHECK(vectors.row_any_case("отчет") == std::optional<std::size_t>(0));
  CHECK(vectors.row_any_case("ОТЧЕТ") == std::optional<std::size_t>(0));
  CHECK(vectors.row_any_case("расчёт") == std::optional<std::size_t>(1));
  CHECK(vectors.row_any_case("ёлка") == std::optional<std::size_t>(2));
  CHECK(vectors.row_any_case("елка") == std::optional<std::size_t>(2));
  CHECK_FALSE(vectors.row("отчет").has_value());  // as written only
}

TEST_CASE("load_vec keeps only the wanted words and the most frequent rows", "[embeddings]") {
  const ReferenceVec reference = read_reference_vec(kTinyVec);
  REQUIRE(reference.words.size() == 38);
  LoadOptions options;
  options.restrict_words = true;
  options.chunk_bytes = 50;
  options.threads = 2;

  SECTION("three most frequent plus two wanted words; an absent wanted word is ignored") {
    options.most_frequent = 3;
    options.wanted = {reference.words[30], reference.words[12], reference.words[1], "absent"};
    check_equals_reference(termalign::load_vec(kTinyVec, options), reference, {0, 1, 2, 12, 30});
  }
  SECTION("wanted words only") {
    options.wanted = {reference.words[37], reference.words[20]};
    check_equals_reference(termalign::load_vec(kTinyVec, options), reference, {20, 37});
  }
  SECTION("nothing wanted: no rows, the dimension kept") {
    const Embeddings embeddings = termalign::load_vec(kTinyVec, options);
    CHECK(embeddings.size() == 0);
    CHECK(embeddings.dim() == 8);
  }
  SECTION("more most frequent rows than the file has: every row") {
    options.most_frequent = 1000;
    std::vector<std::size_t> all(38);
    for (std::size_t row = 0; row < all.size(); ++row) all[row] = row;
    check_equals_reference(termalign::load_vec(kTinyVec, options), reference, all);
  }
}

TEST_CASE("load_vec rejects malformed files with the file and line", "[embeddings]") {
  const std::string header = "3 2\n";
  check_vec_error("empty.vec", "", 1, "empty file");
  check_vec_error("header-one-field.vec", "3\nw 1\n", 1, "bad header");
  check_vec_error("header-words.vec", "three 2\n", 1, "bad header");
  check_vec_error("header-zero-dim.vec", "3 0\n", 1, "bad header");
  check_vec_error("header-three-fields.vec", "3 2 1\n", 1, "bad header");
  check_vec_error("too-few-values.vec", header + "a 1 2\nb 3\nc 5 6\n", 3,
                  "expected 2 values after the word, found 1");
  check_vec_error("too-many-values.vec", header + "a 1 2\nb 3 4\nc 5 6 7\n", 4, "found 3");
  check_vec_error("no-values.vec", header + "a 1 2\nb\nc 5 6\n", 3, "found 0");
  check_vec_error("nan.vec", header + "a 1 2\nb 3 nan\nc 5 6\n", 3, "value 2 'nan' is not a finite float");
  check_vec_error("inf.vec", header + "a 1 2\nb 3 4\nc -inf 6\n", 4, "value 1 '-inf' is not a finite float");
  check_vec_error("overflow.vec", header + "a 1e99 2\nb 3 4\nc 5 6\n", 2, "value 1 '1e99' is not a finite float");
  check_vec_error("letters.vec", header + "a 1 2\nb 3 abc\nc 5 6\n", 3, "value 2 'abc' is not a number");
  check_vec_error("two-dots.vec", header + "a 1 2\nb 3 4\nc 5 6.1.2\n", 4, "'6.1.2' is not a number");
  check_vec_error("double-space.vec", header + "a 1  2\nb 3 4\nc 5 6\n", 2, "value 2 '' is not a number");
  check_vec_error("duplicate.vec", "4 2\na 1 2\nb 3 4\nc 5 6\nb 7 8\n", 5, "duplicate word 'b' (first at line 3)");
  check_vec_error("fewer-rows.vec", "4 2\na 1 2\nb 3 4\n", 4,
                  "the file ends after 2 rows, the header announces 4");
  check_vec_error("header-only.vec", "4 2\n", 2, "the file ends after 0 rows");
  check_vec_error("more-rows.vec", "2 2\na 1 2\nb 3 4\nc 5 6\n", 4, "more rows than the 2 the header announces");
  check_vec_error("bad-utf8.vec", header + "a 1 2\n\xC3\x28 3 4\nc 5 6\n", 3, "not valid UTF-8");
  check_vec_error("empty-line.vec", header + "a 1 2\n\nc 5 6\n", 3, "empty line");
  check_vec_error("leading-space.vec", header + "a 1 2\n b 3 4\nc 5 6\n", 3, "empty word");
  const std::string missing = std::string(TERMALIGN_BINARY_DIR) + "/test_embeddings/missing.vec";
  CHECK_THAT(input_error_of([&] { termalign::load_vec(missing); }), Catch::Contains(missing + ": cannot open"));
}

TEST_CASE("load_vec accepts tiny values and a last line without a line end", "[embeddings]") {
  const std::string path = embeddings_temporary("tiny-values.vec", "2 2\na 1e-40 -1e-50\nb 1.5 2");
  const Embeddings embeddings = termalign::load_vec(path);
  CHECK(embeddings.vectors(0, 0) == std::strtof("1e-40", nullptr));
  CHECK(embeddings.vectors(0, 1) == 0.0f);
  CHECK(embeddings.vectors(1, 1) == 2.0f);
}

TEST_CASE("float fields parse as strtof does, fast path or not", "[embeddings]") {
  using termalign::detail::FloatStatus;
  std::mt19937 generator(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> scale(-45, 38), precision(1, 12);
  char field[64];
  for (int i = 0; i < 200000; ++i) {
    const double number = normal(generator) * std::pow(10.0, scale(generator));
    // Plain decimals, fastText's 5 digits, long significands, explicit exponents.
    const char* formats[] = {"%.*f", "%.*g", "%.*e", "%.*E"};
    std::snprintf(field, sizeof(field), formats[i % 4], precision(generator), number);
    const std::string text = field;
    const float expected = std::strtof(text.c_str(), nullptr);
    if (!std::isfinite(expected)) continue;
    float value = -1.0f;
    const auto parsed = termalign::detail::parse_float_field(text.data(), text.data() + text.size(), value);
    INFO(text);
    REQUIRE(parsed.status == FloatStatus::ok);
    REQUIRE(parsed.end == text.data() + text.size());
    REQUIRE(std::memcmp(&value, &expected, sizeof(float)) == 0);  // bit-exact, signed zeros included
  }
  const std::string line = "-0.5 1e-3 7";
  float value = 0.0f;
  const auto first = termalign::detail::parse_float_field(line.data(), line.data() + line.size(), value);
  CHECK(value == -0.5f);
  CHECK(first.end == line.data() + 4);
  for (const std::string bad : {"+1", "1e", "1e+", "1.2.3", "abc", "--1", "1e5x", "-", ".", "0x10", ""}) {
    INFO("'" << bad << "'");
    const auto parsed = termalign::detail::parse_float_field(bad.data(), bad.data() + bad.size(), value);
    CHECK(parsed.status == FloatStatus::not_a_number);
    CHECK(parsed.end == bad.data() + bad.size());
  }
  for (const std::string infinite : {"nan", "-inf", "infinity", "1e39", "-3.5e38", "1e400"}) {
    INFO("'" << infinite << "'");
    CHECK(termalign::detail::parse_float_field(infinite.data(), infinite.data() + infinite.size(), value).status ==
          FloatStatus::not_finite);
  }
}

namespace {

// Whether `values` is `count` finite floats separated by single spaces, field by field as load_vec parses them.
bool parses_as_fields(const std::string& values, int count) {
  const char* position = values.data();
  const char* const end = position + values.size();
  int fields = 0;
  float value;
  while (position != end && fields < count) {
    const auto field = termalign::detail::parse_float_field(position, end, value);
    if (field.status != termalign::detail::FloatStatus::ok) return false;
    ++fields;
    position = field.end == end ? end : field.end + 1;
  }
  return fields == count && position == end;
}

}  // namespace

TEST_CASE("plain_float_fields accepts fastText's rows and nothing that does not parse", "[embeddings]") {
  std::mt19937 generator(11);
  std::normal_distribution<double> normal(0.0, 0.2);
  std::uniform_int_distribution<int> field_count(1, 12), exponent(-42, 40);
  const std::string alphabet = "0123456789.-+eE x";
  char field[64];
  std::size_t accepted_mutants = 0;
  for (int i = 0; i < 100000; ++i) {
    const int count = field_count(generator);
    std::string row;
    for (int f = 0; f < count; ++f) {
      // fastText's 5 significant digits (exponents for small values); now and then a huge or tiny magnitude.
      const double number = normal(generator) * (i % 10 == 0 ? std::pow(10.0, exponent(generator)) : 1.0);
      std::snprintf(field, sizeof(field), "%.5g", number);
      row += (f ? " " : "") + std::string(field);
    }
    INFO("'" << row << "'");
    const bool parses = parses_as_fields(row, count);
    if (i % 10 != 0) REQUIRE(termalign::detail::plain_float_fields(row, count));
    if (termalign::detail::plain_float_fields(row, count)) REQUIRE(parses);
    // One to three edits: a byte inserted, replaced or removed.
    std::string mutant = row;
    for (int edit = 0; edit < 1 + i % 3 && !mutant.empty(); ++edit) {
      const std::size_t at = generator() % mutant.size();
      const char byte = alphabet[generator() % alphabet.size()];
      switch (generator() % 3) {
        case 0:
          mutant.insert(mutant.begin() + static_cast<std::ptrdiff_t>(at), byte);
          break;
        case 1:
          mutant[at] = byte;
          break;
        default:
          mutant.erase(at, 1);
      }
    }
    INFO("mutant '" << mutant << "'");
    for (const int fields : {count - 1, count, count + 1}) {
      if (!termalign::detail::plain_float_fields(mutant, fields)) continue;
      REQUIRE(parses_as_fields(mutant, fields));
      ++accepted_mutants;
    }
  }
  CHECK(accepted_mutants > 1000);  // the mutants include valid rows (a digit changed), which are accepted
  for (const std::string& bad :
       std::vector<std::string>{"", " 1", "1 ", "1  2", "-", "1.", ".5", "1e5", "1e-", "1e-123", "--1", "1-2",
                                "1.2.3", "1E-05", "nan", std::string(16, '9')}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(termalign::detail::plain_float_fields(bad, bad.empty() ? 0 : 1 + (bad == "1  2")));
  }
  CHECK_FALSE(termalign::detail::plain_float_fields(std::string_view(), 1));  // no data at all
  CHECK(termalign::detail::plain_float_fields(std::string(15, '9') + ".5e-07 -0 00.0 1e-5", 4));
  // Blocks of 64 bytes: rows whose fields straddle the blocks' borders anywhere.
  for (std::size_t pad = 0; pad < 130; ++pad) {
    const std::string row =
        std::string(pad % 15 + 1, '7') + " -0.0093491 1.2345e-05 " + std::to_string(pad) + ".25";
    INFO(row);
    CHECK(termalign::detail::plain_float_fields(row, 4));
    CHECK_FALSE(termalign::detail::plain_float_fields(row + ".5", 4));
    CHECK_FALSE(termalign::detail::plain_float_fields(row + "-", 4));
    if (pad + 1 >= 16) CHECK_FALSE(termalign::detail::plain_float_fields(std::string(pad, '1') + "6 1", 2));
  }
}

TEST_CASE("load_vec reports the first error in file order across chunks", "[embeddings]") {
  struct Spoiled {
    std::vector<std::pair<int, std::string>> rows;  // row index (line - 2) -> replacement
    std::size_t line;
    std::string fragment;
  };
  const std::vector<Spoiled> cases = {
      {{{35, "w35 1 x"}}, 37, "'x' is not a number"},
      {{{7, "w7 1 2 3"}, {30, "w2 1 2"}}, 9, "found 3"},
      {{{4, "w1 1 2"}, {20, "w20 inf 2"}, {33, "\xFF 1 2"}}, 6, "duplicate word 'w1' (first at line 3)"},
      {{{10, "\xFF 1 2"}, {25, "w25 1 nan"}}, 12, "UTF-8"},
  };
  for (const Spoiled& spoiled : cases) {
    std::vector<std::string> rows;  // "w<i> <i> -1"
    for (int i = 0; i < 40; ++i) rows.push_back("w" + std::to_string(i) + " " + std::to_string(i) + " -1");
    for (const auto& [index, replacement] : spoiled.rows) rows[index] = replacement;
    std::string contents = "40 2\n";
    for (const std::string& row : rows) contents += row + "\n";
    for (std::size_t chunk_bytes : {std::size_t{1}, std::size_t{16}, std::size_t{100}, std::size_t{0}}) {
      for (const bool restrict_words : {false, true}) {  // kept rows are parsed, the others only checked
        LoadOptions options;
        options.threads = 2;
        options.chunk_bytes = chunk_bytes;
        options.restrict_words = restrict_words;
        INFO("chunks of " << chunk_bytes << " bytes, " << (restrict_words ? "no row kept" : "every row kept"));
        check_vec_error("ordered.vec", contents, spoiled.line, spoiled.fragment, options);
      }
    }
  }
}

TEST_CASE("load_fasttext_bin gives libfasttext's vectors, in and out of the vocabulary", "[embeddings]") {
  const FastTextReference reference;
  const auto dictionary = reference.model.getDictionary();
  REQUIRE(dictionary->nwords() == 38);
  const Embeddings embeddings = termalign::load_fasttext_bin(kTinyBin);
  REQUIRE(embeddings.size() == 38);
  REQUIRE(embeddings.dim() == 8);
  REQUIRE(embeddings.has_subwords());
  for (std::int32_t id = 0; id < dictionary->nwords(); ++id) {
    const std::string word = dictionary->getWord(id);
    REQUIRE(embeddings.words[id] == word);
    CHECK(embeddings.row(word) == static_cast<std::size_t>(id));
    CHECK(as_vector(embeddings.vectors.row(id)) == reference.word_vector(word));
  }
  for (const std::string word : {"printers", "documentation", "fen\xc3\xaatre"}) {
    INFO(word);
    REQUIRE_FALSE(embeddings.row(word).has_value());
    termalign::RowVector vector;
    REQUIRE(embeddings.subword_vector(word, vector));
    CHECK(vector.squaredNorm() > 0.0f);
    CHECK(as_vector(vector) == reference.word_vector(word));
  }
  // "" has no n-gram ("<>" is shorter than minn); the n-grams of "zq" fall in buckets that stayed zero (with one
  // training thread fastText 0.9.2 initialises only part of the bucket rows).
  for (const std::string word : {"", "zq"}) {
    INFO("'" << word << "'");
    REQUIRE(reference.word_vector(word) == std::vector<float>(8, 0.0f));
    termalign::RowVector untouched = termalign::RowVector::Constant(8, 7.0f);
    CHECK_FALSE(embeddings.subword_vector(word, untouched));
    CHECK(untouched == termalign::RowVector::Constant(8, 7.0f));
  }
}

TEST_CASE("subword vectors are the same when asked from several threads", "[embeddings]") {
  const FastTextReference reference;
  const Embeddings embeddings = termalign::load_fasttext_bin(kTinyBin);
  std::vector<std::string> words;
  for (int i = 0; i < 400; ++i) words.push_back("oov" + std::to_string(i * 7919) + "word");
  std::vector<std::vector<float>> vectors(words.size());
  termalign::parallel_for(words.size(), 2, [&](std::size_t i) {
    termalign::RowVector vector;
    if (embeddings.subword_vector(words[i], vector)) vectors[i] = as_vector(vector);
  });
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::vector<float> expected = reference.word_vector(words[i]);
    if (vectors[i].empty()) {
      REQUIRE(expected == std::vector<float>(8, 0.0f));
    } else {
      REQUIRE(vectors[i] == expected);
      ++nonzero;
    }
  }
  CHECK(nonzero > 300);
}

TEST_CASE("load_fasttext_bin keeps the wanted words and the most frequent ones", "[embeddings]") {
  const FastTextReference reference;
  const auto dictionary = reference.model.getDictionary();
  LoadOptions options;
  options.restrict_words = true;
  options.most_frequent = 2;
  options.wanted = {dictionary->getWord(25), dictionary->getWord(9), "absent"};
  const Embeddings embeddings = termalign::load_fasttext_bin(kTinyBin, options);
  const std::vector<std::string> expected = {dictionary->getWord(0), dictionary->getWord(1),
                                             dictionary->getWord(9), dictionary->getWord(25)};
  REQUIRE(embeddings.words == expected);
  for (std::size_t row = 0; row < expected.size(); ++row) {
    CHECK(as_vector(embeddings.vectors.row(row)) == reference.word_vector(expected[row]));
  }
  termalign::RowVector vector;
  CHECK(embeddings.subword_vector(dictionary->getWord(30), vector));  // dropped rows still have n-grams
}

TEST_CASE("the .vec fastText wrote agrees with its .bin to 5 significant digits", "[embeddings]") {
  const Embeddings text = termalign::load_vec(kTinyVec);
  const Embeddings binary = termalign::load_fasttext_bin(kTinyBin);
  REQUIRE(text.words == binary.words);
  for (Eigen::Index row = 0; row < text.vectors.rows(); ++row) {
    for (Eigen::Index column = 0; column < text.vectors.cols(); ++column) {
      const float written = text.vectors(row, column), exact = binary.vectors(row, column);
      CHECK(std::abs(written - exact) <= 1e-4f * std::abs(exact) + 1e-9f);
    }
  }
}

TEST_CASE("load_embeddings chooses the loader by content", "[embeddings]") {
  const std::string disguised = embeddings_temporary("model-without-extension", file_bytes(kTinyBin));
  CHECK(termalign::load_embeddings(disguised).has_subwords());
  const Embeddings text = termalign::load_embeddings(kFixtures + "small.vec");
  CHECK_FALSE(text.has_subwords());
  check_small_vec(text);
  termalign::RowVector vector;
  CHECK_FALSE(text.subword_vector("the", vector));
}

TEST_CASE("load_fasttext_bin rejects truncated models and other files", "[embeddings]") {
  const std::string model = file_bytes(kTinyBin);
  REQUIRE(model.size() == 35124);
  // Cuts inside the version, the arguments, the dictionary, the input matrix, the output matrix.
  for (std::size_t size :
       {std::size_t{6}, std::size_t{40}, std::size_t{150}, model.size() / 2, model.size() - 1}) {
    INFO("cut at " << size << " bytes");
    const std::string path = embeddings_temporary("truncated.bin", model.substr(0, size));
    const std::string message = input_error_of([&] { termalign::load_fasttext_bin(path); });
    CHECK_THAT(message, Catch::Contains(path + ": truncated fastText model"));
    CHECK_THAT(input_error_of([&] { termalign::load_embeddings(path); }), Catch::Contains("truncated"));
  }
  const std::string trailing = embeddings_temporary("trailing.bin", model + "extra");
  CHECK_THAT(input_error_of([&] { termalign::load_fasttext_bin(trailing); }),
             Catch::Contains(trailing + ": corrupt fastText model"));
  std::string newer = model;
  newer[4] = 13;  // version 13
  const std::string future = embeddings_temporary("future.bin", newer);
  CHECK_THAT(input_error_of([&] { termalign::load_fasttext_bin(future); }),
             Catch::Contains(future + ": unsupported fastText model version 13"));
  const std::string text = kFixtures + "small.vec";
  CHECK_THAT(input_error_of([&] { termalign::load_fasttext_bin(text); }),
             Catch::Contains(text + ": not a fastText model"));
  const std::string empty = embeddings_temporary("empty.bin", "");
  CHECK_THAT(input_error_of([&] { termalign::load_fasttext_bin(empty); }),
             Catch::Contains(empty + ": not a fastText model"));
}

TEST_CASE("the real .vec and .bin vectors agree", "[embeddings]") {
  if (!termalign_tests::shared_file_or_skip("vectors/en.vec") ||
      !termalign_tests::shared_file_or_skip("vectors/en.bin"))
    return;
  const std::string directory = termalign_tests::shared_data() + "/vectors/";
  LoadOptions options;
  options.restrict_words = true;
  options.most_frequent = 2000;
  const Embeddings text = termalign::load_vec(directory + "en.vec", options);
  const Embeddings binary = termalign::load_fasttext_bin(directory + "en.bin", options);
  REQUIRE(text.size() == 2000);
  REQUIRE(text.words == binary.words);
  const float largest_difference = (text.vectors - binary.vectors).cwiseAbs().maxCoeff();
  CHECK(largest_difference <= 1e-4f * binary.vectors.cwiseAbs().maxCoeff());
}
