// The .bin reader against libfasttext itself: every vector bit for bit, on the bundled models and on small
// models written here with other n-gram lengths, a pruned n-gram index, maxn = 0 and version 11.
#include <fasttext/densematrix.h>
#include <fasttext/dictionary.h>
#include <fasttext/fasttext.h>
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "io/fasttext_model_file.h"
#include "io/io.h"
#include "pipeline/stages.h"
#include "robustness_helpers.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/embeddings.h"
#include "termalign/error.h"
#include "util/parallel.h"
#include "util/resources.h"

namespace {

using termalign::Embeddings;
using termalign::LoadOptions;

using termalign_tests::kSource;

std::string model_temporary(const std::string& name, const std::string& contents) {
  const std::string directory = std::string(TERMALIGN_BINARY_DIR) + "/test_fasttext_model_file";
  std::filesystem::create_directories(directory);
  const std::string path = directory + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// A small fastText model in the 0.9 layout, with rows of seeded random floats.
struct ModelSpec {
  std::int32_t version = 12, model = 2, dim = 5, bucket = 400, minn = 3, maxn = 6;
  std::vector<std::string> words;
  std::vector<std::string> labels;  // a supervised model's, after the words; the output matrix has their rows
  bool pruned = false;              // keep every third bucket, through a pruned n-gram index
  bool empty_index = false;         // a pruned n-gram index of no entry (no n-gram has a row)
  std::uint32_t seed = 1;
};

std::string model_bytes(const ModelSpec& spec) {
  std::string out;
  put<std::int32_t>(out, termalign::detail::fasttext_magic);
  put<std::int32_t>(out, spec.version);
  for (std::int32_t argument : {spec.dim, 5, 5, 1, 5, 1, 2, spec.model, spec.bucket, spec.minn, spec.maxn, 100})
    put(out, argument);
  put(out, 1e-4);
  const auto words = static_cast<std::int32_t>(spec.words.size());
  const auto labels = static_cast<std::int32_t>(spec.labels.size());
  std::vector<std::pair<std::int32_t, std::int32_t>> pruned;
  if (spec.pruned) {
    for (std::int32_t ngram = 0; ngram < spec.bucket; ngram += 3)
      pruned.emplace_back(ngram, static_cast<std::int32_t>(pruned.size()));
  }
  const bool indexed = spec.pruned || spec.empty_index;
  put(out, words + labels);
  put(out, words);
  put(out, labels);
  put<std::int64_t>(out, 1000);
  put<std::int64_t>(out, indexed ? static_cast<std::int64_t>(pruned.size()) : -1);
  for (std::int32_t id = 0; id < words + labels; ++id) {
    out += id < words ? spec.words[id] : spec.labels[id - words];
    out += '\0';
    put<std::int64_t>(out, 100 - id);
    put<std::int8_t>(out, id < words ? 0 : 1);
  }
  for (const auto& [ngram, row] : pruned) {
    put(out, ngram);
    put(out, row);
  }
  std::mt19937 random(spec.seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const std::int64_t input_rows = words + (indexed ? static_cast<std::int64_t>(pruned.size()) : spec.bucket);
  for (const std::int64_t rows : {input_rows, std::int64_t{labels > 0 ? labels : words}}) {
    put<std::uint8_t>(out, 0);
    put<std::int64_t>(out, rows);
    put<std::int64_t>(out, spec.dim);
    for (std::int64_t i = 0; i < rows * spec.dim; ++i) put(out, value(random));
  }
  return out;
}

// `path` gzipped (zlib level 1, as `gzip -1`) into the tests' folder, named after it with ".gz"; returns its path.
std::string gzipped(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string gz = model_temporary(std::filesystem::path(path).filename().string() + ".gz", "");
  gzFile out = gzopen(gz.c_str(), "wb1");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(out) == Z_OK);
  return gz;
}

std::vector<float> as_vector(const float* data, int size) { return {data, data + size}; }

// The message of the input error loading the model `path` gives ("no error" when it loads).
std::string load_error_of(const std::string& path) {
  try {
    termalign::load_fasttext_bin(path);
  } catch (const termalign::Error& error) {
    CHECK(error.kind() == termalign::ErrorKind::input);
    return std::string(error.what());
  }
  return std::string("no error");
}

// fastText's own code for one word's vector: Dictionary::getSubwords, DenseMatrix rows added into a Vector, mul
// by 1.0 / count, as FastText::getWordVector does. It takes pruned models, which FastText::loadModel refuses.
struct DictionaryReference {
  std::shared_ptr<fasttext::Args> args = std::make_shared<fasttext::Args>();
  std::shared_ptr<fasttext::Dictionary> dictionary;
  fasttext::DenseMatrix input;

  explicit DictionaryReference(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::int32_t header[2];
    in.read(reinterpret_cast<char*>(header), sizeof(header));
    args->load(in);
    if (header[1] == 11 && args->model == fasttext::model_name::sup) args->maxn = 0;
    dictionary = std::make_shared<fasttext::Dictionary>(args, in);
    bool quantized = true;
    in.read(reinterpret_cast<char*>(&quantized), sizeof(bool));
    REQUIRE_FALSE(quantized);
    input.load(in);
  }
  std::vector<float> word_vector(const std::string& word) const {
    fasttext::Vector vector(args->dim);
    const std::vector<std::int32_t> ngrams = dictionary->getSubwords(word);
    vector.zero();
    for (const std::int32_t row : ngrams) vector.addRow(input, row);
    if (!ngrams.empty()) vector.mul(1.0 / ngrams.size());
    return as_vector(vector.data(), static_cast<int>(vector.size()));
  }
};

// Out-of-vocabulary words of every kind: ASCII, accented, Cyrillic, Greek and CJK, shorter than minn, empty.
std::vector<std::string> unknown_words(std::size_t count, std::uint32_t seed) {
  const std::vector<std::string> letters = {"a",        "e",        "k",        "s",           "t",
                                            "z",        "-",        "\xc3\xa9", "\xc3\xa8",    "\xc3\xa7",
                                            "\xc3\xbc", "\xc3\x9f", "\xd1\x84", "\xd0\xb0",    "\xd0\xb9",
                                            "\xd0\xbb", "\xd1\x91", "\xce\xb1", "\xe6\x96\x87"};
  std::mt19937 random(seed);
  std::vector<std::string> words = {"", "a", "ab", "\xd1\x84", "</s>", "<", ">"};
  while (words.size() < count) {
    std::string word;
    const std::size_t length = random() % 14;
    for (std::size_t i = 0; i < length; ++i) word += letters[random() % letters.size()];
    words.push_back(word);
  }
  return words;
}

// `ngrams`: whether the model has character n-grams, so that unknown words get vectors.
void check_against_reference(const std::string& path, const std::vector<std::string>& in_vocabulary,
                             bool with_loadmodel, bool ngrams = true) {
  const DictionaryReference reference(path);
  std::unique_ptr<fasttext::FastText> model;
  if (with_loadmodel) {
    model = std::make_unique<fasttext::FastText>();
    model->loadModel(path);
  }
  const auto loadmodel_vector = [&](const std::string& word) {
    fasttext::Vector vector(model->getDimension());
    model->getWordVector(vector, word);
    return as_vector(vector.data(), static_cast<int>(vector.size()));
  };
  const Embeddings embeddings = termalign::load_fasttext_bin(path);
  REQUIRE(embeddings.size() == in_vocabulary.size());
  for (std::size_t id = 0; id < in_vocabulary.size(); ++id) {
    INFO("word " << id << " '" << in_vocabulary[id] << "'");
    REQUIRE(embeddings.words[id] == in_vocabulary[id]);
    const std::vector<float> vector =
        as_vector(embeddings.vectors.row(static_cast<Eigen::Index>(id)).data(), embeddings.dim());
    CHECK(vector == reference.word_vector(in_vocabulary[id]));
    if (model) CHECK(vector == loadmodel_vector(in_vocabulary[id]));
  }
  std::size_t with_vector = 0;
  for (const std::string& word : unknown_words(3000, 7)) {
    INFO("unknown word '" << word << "'");
    if (embeddings.row(word)) continue;
    const std::vector<float> expected = reference.word_vector(word);
    if (model) REQUIRE(loadmodel_vector(word) == expected);
    termalign::RowVector vector;
    if (embeddings.subword_vector(word, vector)) {
      CHECK(as_vector(vector.data(), static_cast<int>(vector.size())) == expected);
      ++with_vector;
    } else {
      CHECK(expected == std::vector<float>(expected.size(), 0.0f));
    }
  }
  CHECK((with_vector > 0) == ngrams);

  // The same model gzipped, read in one pass: the same vectors, and the subword vectors of the words asked for.
  LoadOptions options;
  options.restrict_words = true;
  options.most_frequent = in_vocabulary.size();
  const std::vector<std::string> unknown = unknown_words(300, 9);
  options.wanted.insert(unknown.begin(), unknown.end());
  const Embeddings streamed = termalign::load_embeddings(gzipped(path), options);
  REQUIRE(streamed.words == embeddings.words);
  CHECK((streamed.vectors.array() == embeddings.vectors.array()).all());
  for (const std::string& word : unknown) {
    INFO("unknown word '" << word << "' of the gzipped model");
    if (streamed.row(word)) continue;
    const std::vector<float> expected = reference.word_vector(word);
    termalign::RowVector vector;
    if (streamed.subword_vector(word, vector)) {
      CHECK(as_vector(vector.data(), static_cast<int>(vector.size())) == expected);
    } else {
      CHECK(expected == std::vector<float>(expected.size(), 0.0f));
    }
  }
}

const std::vector<std::string> kWords = {"</s>",
                                         "the",
                                         "file",
                                         "files",
                                         "format",
                                         "fen\xc3\xaatre",
                                         "\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb",
                                         "\xd1\x81\xd0\xb5\xd1\x80\xd0\xb2\xd0\xb5\xd1\x80",
                                         "\xce\xb1\xce\xb2",
                                         "\xe6\x96\x87\xe4\xbb\xb6",
                                         "a",
                                         "x-y"};

}  // namespace

TEST_CASE("the .bin reader gives libfasttext's vectors bit for bit on the bundled models", "[embeddings]") {
  for (const char* name : {"/models/sample/en.bin", "/models/sample/fr.bin", "/tests/data/embeddings/tiny.bin"}) {
    INFO(name);
    const std::string path = kSource + name;
    fasttext::FastText model;
    model.loadModel(path);
    std::vector<std::string> words;
    for (std::int32_t id = 0; id < model.getDictionary()->nwords(); ++id)
      words.push_back(model.getDictionary()->getWord(id));
    check_against_reference(path, words, true);
  }
}

TEST_CASE("the .bin reader gives libfasttext's vectors for other n-gram lengths, pruned and version 11",
          "[embeddings]") {
  struct Case {
    const char* name;
    ModelSpec spec;
    bool loadmodel;  // FastText::loadModel refuses a pruned model that is not quantized
    bool ngrams = true;
  };
  std::vector<Case> cases;
  ModelSpec spec;
  spec.words = kWords;
  cases.push_back({"minn 3, maxn 6", spec, true});
  spec.minn = spec.maxn = 5;
  cases.push_back({"minn = maxn = 5 (cc.en.300)", spec, true});
  spec.minn = 1;
  spec.maxn = 2;
  cases.push_back({"minn 1, maxn 2", spec, true});
  spec.minn = 0;
  spec.maxn = 0;
  spec.bucket = 0;
  cases.push_back({"maxn 0, no bucket", spec, true, false});
  spec.minn = 2;
  spec.maxn = 4;
  spec.bucket = 300;
  spec.pruned = true;
  cases.push_back({"pruned n-gram index", spec, false});
  spec.pruned = false;
  spec.version = 11;
  spec.model = 3;  // a version 11 supervised model: no n-grams
  cases.push_back({"version 11, supervised", spec, true, false});
  // fastText compares n-gram lengths, a size_t, with the int minn and maxn: -1 is the largest size_t.
  spec.version = 12;
  spec.model = 2;
  spec.minn = 2;
  spec.maxn = -1;
  cases.push_back({"maxn -1: every length from minn", spec, true});
  spec.minn = -1;
  spec.maxn = 4;
  cases.push_back({"minn -1: no n-gram", spec, true, false});
  // A supervised model with labels and no n-grams, as `fasttext supervised` writes by default.
  spec.model = 3;
  spec.minn = spec.maxn = 0;
  spec.bucket = 0;
  spec.labels = {"__label__a", "__label__b"};
  cases.push_back({"supervised, two labels, no bucket", spec, true, false});
  for (const Case& test : cases) {
    INFO(test.name);
    const std::string path = model_temporary("generated.bin", model_bytes(test.spec));
    check_against_reference(path, kWords, test.loadmodel, test.ngrams);
  }
}

TEST_CASE("the .bin reader's vectors are the same from several threads and after a restricted load",
          "[embeddings]") {
  ModelSpec spec;
  spec.words = kWords;
  const std::string path = model_temporary("threads.bin", model_bytes(spec));
  const DictionaryReference reference(path);
  LoadOptions options;
  options.restrict_words = true;
  options.most_frequent = 3;
  options.wanted = {"format", "\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb", "absent"};
  options.threads = 2;
  const Embeddings embeddings = termalign::load_fasttext_bin(path, options);
  const std::vector<std::string> kept = {"</s>", "the", "file", "format", "\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb"};
  REQUIRE(embeddings.words == kept);
  const std::vector<std::string> words = unknown_words(2000, 11);
  std::vector<std::vector<float>> vectors(words.size());
  termalign::parallel_for(words.size(), 2, [&](std::size_t i) {
    termalign::RowVector vector;
    if (embeddings.subword_vector(words[i], vector))
      vectors[i] = as_vector(vector.data(), static_cast<int>(vector.size()));
  });
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::vector<float> expected = reference.word_vector(words[i]);
    if (vectors[i].empty()) {
      CHECK(expected == std::vector<float>(expected.size(), 0.0f));
    } else {
      CHECK(vectors[i] == expected);
    }
  }
}

TEST_CASE("a corrupt .bin gets an error naming the file and what is wrong", "[embeddings]") {
  ModelSpec spec;
  spec.words = kWords;
  const std::string good = model_bytes(spec);
  const auto error_of = [](const std::string& name, const std::string& bytes) {
    return load_error_of(model_temporary(name, bytes));
  };
  // The quantization flag of the input matrix follows the dictionary.
  const std::size_t input_flag = good.size() - (2 * 17 + (kWords.size() * 2 + 400) * 5 * 4);
  REQUIRE(good[input_flag] == 0);
  std::string quantized = good;
  quantized[input_flag] = 1;
  CHECK_THAT(error_of("quantized.bin", quantized), Catch::Contains("quantized.bin: quantized fastText models"));

  std::string cut_dictionary = good.substr(0, 80);
  CHECK_THAT(error_of("cut.bin", cut_dictionary),
             Catch::Contains("cut.bin: truncated fastText model: the file ends inside the dictionary"));

  std::string shrunk = good;
  const std::size_t rows_at = input_flag + 1;
  std::int64_t rows = 0;
  std::memcpy(&rows, shrunk.data() + rows_at, sizeof(rows));
  rows -= 1;
  std::memcpy(shrunk.data() + rows_at, &rows, sizeof(rows));
  CHECK_THAT(error_of("rows.bin", shrunk),
             Catch::Contains("rows.bin: corrupt fastText model: the input matrix is"));

  ModelSpec repeated = spec;
  repeated.words[5] = repeated.words[2];
  CHECK_THAT(error_of("repeated.bin", model_bytes(repeated)),
             Catch::Contains("repeated.bin: corrupt fastText model: dictionary entry 6 repeats entry 3 ('file')"));

  ModelSpec no_bucket = spec;
  no_bucket.bucket = 0;  // n-grams of 3 to 6 characters, but no row for them
  CHECK_THAT(error_of("no-bucket.bin", model_bytes(no_bucket)),
             Catch::Contains("no-bucket.bin: corrupt fastText model: character n-grams but no bucket"));

  // The same with an empty pruned index: fastText hashes the n-grams modulo the bucket count before it looks
  // them up in the index, and divides by zero.
  no_bucket.empty_index = true;
  CHECK_THAT(error_of("no-bucket-pruned.bin", model_bytes(no_bucket)),
             Catch::Contains("no-bucket-pruned.bin: corrupt fastText model: character n-grams but no bucket") &&
                 Catch::Contains("modulo 0"));

  ModelSpec pruned = spec;
  pruned.pruned = true;
  std::string bad_index = model_bytes(pruned);
  // The pruned index's first pair (bucket 0 -> row 0) sits right after the dictionary's entries.
  std::size_t index_at = 4 + 4 + 12 * 4 + 8 + 4 * 3 + 8 * 2;
  for (const std::string& word : kWords) index_at += word.size() + 1 + 8 + 1;
  const std::int32_t far_row = 1 << 20;
  std::memcpy(bad_index.data() + index_at + 4, &far_row, sizeof(far_row));
  CHECK_THAT(error_of("index.bin", bad_index),
             Catch::Contains("index.bin: corrupt fastText model: the pruned n-gram index sends bucket 0 to row"));
}

TEST_CASE("loading stops with a resources error when what it keeps or reads with exceeds the memory limit",
          "[embeddings]") {
  ModelSpec spec;
  spec.words = kWords;
  const std::string bin = model_temporary("limit.bin", model_bytes(spec));
  const std::string vec = kSource + "/models/sample/en.vec";
  struct Limit {
    Limit() { termalign::set_memory_limit(std::size_t{100}); }
    ~Limit() { termalign::set_memory_limit(std::nullopt); }
  };
  auto limit = std::make_unique<Limit>();
  for (const std::string& path : {bin, vec}) {
    INFO(path);
    try {
      termalign::load_embeddings(path);
      FAIL("no error");
    } catch (const termalign::Error& error) {
      CHECK(error.kind() == termalign::ErrorKind::resources);
      // The .vec's words read (0.6 MiB), charged before its vectors, are past the limit first.
      CHECK_THAT(error.what(), Catch::StartsWith(path + (path == vec ? ": reading the file needs 0.6 MiB"
                                                                     : ": loading the vectors of 12 words")));
    }
  }
  limit.reset();
  CHECK(termalign::load_embeddings(bin).size() == kWords.size());
}

TEST_CASE("the two sides share one memory budget, and their dimensions are compared first", "[embeddings]") {
  ModelSpec spec;
  spec.words = kWords;
  const std::string bin = model_temporary("budget.bin", model_bytes(spec));
  const std::size_t one_side = kWords.size() * static_cast<std::size_t>(spec.dim) * sizeof(float);
  struct Limit {
    explicit Limit(std::size_t bytes) { termalign::set_memory_limit(bytes); }
    ~Limit() { termalign::set_memory_limit(std::nullopt); }
  };
  {
    const Limit limit(one_side + one_side / 2);  // room for one side, not for two
    LoadOptions options;
    CHECK(termalign::load_embeddings(bin, options).size() == kWords.size());
    CHECK(termalign::load_embeddings(bin, options).size() == kWords.size());  // each load alone fits
    options.shared_charge = std::make_shared<std::atomic<std::size_t>>(0);
    termalign::load_embeddings(bin, options);
    try {
      termalign::load_embeddings(bin, options);
      FAIL("no error");
    } catch (const termalign::Error& error) {
      CHECK(error.kind() == termalign::ErrorKind::resources);
      CHECK_THAT(error.what(), Catch::Contains("beside the other side's"));
    }
    Embeddings source, target;
    CHECK_THROWS_WITH(termalign::pipeline::load_pair(bin, bin, {}, {}, nullptr, source, target),
                      Catch::Contains("beside the other side's"));
  }
  // A target of another dimension whose body is broken: the headers' mismatch is what is reported.
  const std::string vec = model_temporary("other-dim.vec", "2 7\nun 1 2 3 4 5 6 7\ndeux 1 2 x\n");
  Embeddings source, target;
  CHECK_THROWS_WITH(termalign::pipeline::load_pair(bin, vec, {}, {}, nullptr, source, target),
                    Catch::Contains("the vectors have dimension 7 but the source vectors") &&
                        Catch::Contains("have dimension 5"));
}

TEST_CASE("a load's charge ends at the vectors it keeps: what it read with is released", "[embeddings]") {
  ModelSpec spec;
  spec.words = kWords;
  const std::string bin = model_temporary("charge.bin", model_bytes(spec));
  const std::string vec = model_temporary("charge.vec", termalign::read_file(kSource + "/models/sample/en.vec"));
  // A .bin.gz reads the rows of its words (their own and their n-grams') as they stream by, and keeps none of
  // them when no word's subword vector is wanted: it once stayed charged for them all.
  for (const std::string& path : {bin, gzipped(bin), vec, gzipped(vec)}) {
    INFO(path);
    LoadOptions options;
    options.shared_charge = std::make_shared<std::atomic<std::size_t>>(0);
    const Embeddings embeddings = termalign::load_embeddings(path, options);
    CHECK(*options.shared_charge == static_cast<std::size_t>(embeddings.vectors.size()) * sizeof(float));
  }
  // So two such loads fit a budget of the rows one reads and the vectors the other keeps, not a byte less.
  const termalign::detail::FastTextModelFile model(bin);
  std::vector<std::int32_t> rows, word_rows;
  for (std::int32_t id = 0; id < model.word_count(); ++id) {
    model.subword_rows(model.word(id), word_rows);
    rows.insert(rows.end(), word_rows.begin(), word_rows.end());
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const std::size_t row_bytes = static_cast<std::size_t>(spec.dim) * sizeof(float);
  const std::size_t budget = (kWords.size() + rows.size()) * row_bytes + kWords.size() * row_bytes;
  const std::string gz = gzipped(bin);
  for (const std::size_t limit : {budget, budget - 1}) {
    termalign::set_memory_limit(limit);
    LoadOptions options;
    options.shared_charge = std::make_shared<std::atomic<std::size_t>>(0);
    termalign::load_embeddings(gz, options);
    try {
      termalign::load_embeddings(gz, options);
      CHECK(limit == budget);
    } catch (const termalign::Error& error) {
      CHECK(limit < budget);
      CHECK(error.kind() == termalign::ErrorKind::resources);
    }
    termalign::set_memory_limit(std::nullopt);
  }
}

TEST_CASE("a gzipped model cut short or with a bad CRC is an input error naming the file", "[embeddings]") {
  ModelSpec spec;
  spec.words = kWords;
  const std::string gz = gzipped(model_temporary("whole.bin", model_bytes(spec)));
  std::ifstream in(gz, std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto error_of = load_error_of;
  for (const std::size_t kept : {whole.size() / 10, whole.size() / 2, whole.size() - 12}) {
    INFO("cut after " << kept << " of " << whole.size() << " bytes");
    const std::string cut = model_temporary("cut.bin.gz", whole.substr(0, kept));
    CHECK_THAT(error_of(cut), Catch::StartsWith(cut + ": truncated"));
  }
  std::string bad_crc = whole;
  bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 1);  // the trailer's CRC-32
  const std::string crc = model_temporary("crc.bin.gz", bad_crc);
  CHECK_THAT(error_of(crc), Catch::StartsWith(crc + ": corrupt gzip file") && Catch::Contains("CRC"));
}

TEST_CASE("a model whose header claims 2^31 - 1 words is an input error before any large allocation",
          "[embeddings]") {
  // Gzipped, the junk passes the first bound (an entry of 10 bytes at least, inflated up to 1032 times): the
  // reader once reserved 16 GiB of entry offsets from the header there (exit 5 in 4 GB of address space,
  // test_robustness.cpp). The plain file's bound is its size.
  ModelSpec spec;
  spec.words = kWords;
  const std::string bytes = termalign_tests::claiming_most_words(model_bytes(spec), std::size_t{24} << 20);
  const std::string bin = model_temporary("claiming.bin", bytes);
  CHECK_THAT(load_error_of(bin),
             Catch::StartsWith(bin + ": truncated fastText model: the file ends inside the dictionary"));
  const std::string gz = gzipped(bin);
  REQUIRE(std::filesystem::file_size(gz) * 1032 > std::uint64_t{10} * INT32_MAX);
  CHECK_THAT(load_error_of(gz), Catch::StartsWith(gz + ": corrupt fastText model: "));
}

TEST_CASE("a model with more input rows than int32 ids reach is corrupt, before its rows are picked",
          "[embeddings]") {
  // 2^31 - 1 buckets: the n-gram 'wLbMba' hashes to bucket 2^31 - 2, which after the words is past int32's rows
  // (the gzip reader once computed such rows, as a signed overflow, before it checked the matrix's header).
  ModelSpec spec;
  spec.words = {"a", "wLbMba"};
  spec.dim = 1;
  spec.bucket = 0;  // the bucket count is set in the bytes: its rows are not written
  std::string bytes = model_bytes(spec);
  const std::int32_t buckets = INT32_MAX;
  const std::size_t bucket_at = 4 + 4 + 8 * 4;  // the magic, the version, then the ninth argument
  std::memcpy(bytes.data() + bucket_at, &buckets, sizeof(buckets));
  const std::string bin = model_temporary("int32-rows.bin", bytes);
  for (const std::string& path : {bin, gzipped(bin)}) {
    CHECK_THAT(load_error_of(path), Catch::StartsWith(path + ": corrupt fastText model: 2 words and 2147483647 "
                                                             "n-gram rows, more input-matrix rows than"));
  }
}

TEST_CASE("a model whose pruned n-gram index claims 2^63 - 1 entries is corrupt, without an overflow",
          "[embeddings]") {
  // The index's size is an int64 of the file: the rows it adds to the words' were once summed before the bound
  // was checked, a signed overflow (UndefinedBehaviorSanitizer, found by fuzz_bin).
  ModelSpec spec;
  spec.words = {"a", "b"};
  spec.dim = 1;
  std::string bytes = model_bytes(spec);
  const std::int64_t entries = INT64_MAX;
  // The magic, the version, 12 int32 arguments and a double; then the dictionary's size, words, labels (int32)
  // and tokens (int64) before the index's size.
  const std::size_t index_size_at = 4 + 4 + 12 * 4 + 8 + 3 * 4 + 8;
  std::int64_t written = 0;
  std::memcpy(&written, bytes.data() + index_size_at, sizeof(written));
  REQUIRE(written == -1);  // the place holds the size of a model without an index
  std::memcpy(bytes.data() + index_size_at, &entries, sizeof(entries));
  const std::string bin = model_temporary("int64-index.bin", bytes);
  for (const std::string& path : {bin, gzipped(bin)}) {
    CHECK_THAT(load_error_of(path),
               Catch::StartsWith(path + ": corrupt fastText model: 2 words and " + std::to_string(entries) +
                                 " n-gram rows, more input-matrix"));
  }
}

TEST_CASE("with a .bin.gz and corpora, the corpus evidence is the .bin's", "[embeddings][align]") {
  // A gzipped model is read in one pass: the corpus evidence's context words that the model does not know get
  // their subword vectors only if they were asked for before the pass. Models of the sample's words with 100k
  // n-gram buckets (the term lists' words' n-grams hold few of them) and corpora whose lines end with their long
  // words spelt a new way ("filesqzj"): context words of the terms that only n-grams give vectors.
  const std::string source = TERMALIGN_SOURCE_DIR;
  termalign::AlignConfig config = termalign_tests::sample_inputs("vec");
  std::map<std::string, std::string> models;
  for (const std::string language : {"en", "fr"}) {
    ModelSpec spec;
    spec.dim = 8;
    spec.bucket = 100000;
    spec.seed = language == "en" ? 3 : 4;
    std::istringstream vec(termalign::read_file(source + "/models/sample/" + language + ".vec"));
    std::string line;
    std::getline(vec, line);  // the header
    while (std::getline(vec, line)) spec.words.push_back(line.substr(0, line.find(' ')));
    const std::string bin = model_temporary("evidence-" + language + ".bin", model_bytes(spec));
    models[language] = bin;
    std::istringstream corpus(termalign::read_file(source + "/data/sample/corpus-" + language + ".txt"));
    std::string text;
    while (std::getline(corpus, line)) {
      text += line;
      std::istringstream words(line);
      for (std::string word; words >> word;)
        if (word.size() >= 5) text += " " + word + "qzj";
      text += '\n';
    }
    (language == "en" ? config.input.src_corpus : config.input.tgt_corpus) =
        model_temporary("evidence-corpus-" + language + ".txt", text);
  }
  config.mapping.refine_iterations = 0;
  const auto evidence = [&](const std::string& source_model, const std::string& target_model) {
    config.input.src_vectors = source_model;
    config.input.tgt_vectors = target_model;
    return termalign::generate_candidates(config, true).evidence;
  };
  const termalign::CandidateEvidence from_bin = evidence(models["en"], models["fr"]);
  const termalign::CandidateEvidence from_gz = evidence(gzipped(models["en"]), gzipped(models["fr"]));
  REQUIRE(from_bin.context_similarity.size() > 1000);
  CHECK(std::count_if(from_bin.context_similarity.begin(), from_bin.context_similarity.end(),
                      [](float value) { return value != 0.0f; }) > 100);
  CHECK(from_gz.context_similarity == from_bin.context_similarity);
  CHECK(from_gz.csls == from_bin.csls);
}
