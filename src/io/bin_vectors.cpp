// A fastText .bin's word vectors (the model's rows read on demand, the model kept for subword vectors), or a
// .bin.gz's, read in one pass.
#include <algorithm>
#include <filesystem>

#include "io/fasttext_model_file.h"
#include "io/gzip_stream.h"
#include "io/io.h"
#include "io/vector_loading.h"
#include "termalign/error.h"
#include "termalign/logging.h"
#include "util/huge_pages.h"
#include "util/parallel.h"
#include "util/resources.h"

namespace termalign {

namespace {

std::size_t row_bytes(const detail::FastTextModelFile& model) {
  return static_cast<std::size_t>(model.dim()) * sizeof(float);
}

// The words of a .bin model kept (their dictionary ids, most frequent first), chosen block by block on the
// threads (cc.en.300.bin has 2M words).
std::vector<std::int32_t> kept_word_ids(const detail::FastTextModelFile& model, const LoadOptions& options,
                                        int threads) {
  const std::int32_t word_count = model.word_count();
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t blocks = (static_cast<std::size_t>(word_count) + kBlock - 1) / kBlock;
  std::vector<std::vector<std::int32_t>> kept(blocks);
  parallel_for(blocks, threads, [&](std::size_t block) {
    const auto end = static_cast<std::int32_t>(std::min<std::size_t>((block + 1) * kBlock, word_count));
    for (auto id = static_cast<std::int32_t>(block * kBlock); id < end; ++id) {
      if (static_cast<std::size_t>(id) < options.most_frequent || detail::wanted_word(options, model.word(id)))
        kept[block].push_back(id);
    }
  });
  std::vector<std::int32_t> ids;
  for (const auto& block : kept) ids.insert(ids.end(), block.begin(), block.end());
  return ids;
}

// The embeddings of the words `ids` of `model`: each vector the mean of its rows, as getWordVector.
Embeddings word_vectors_of(const std::string& path, std::shared_ptr<const SubwordModel> model,
                           const std::vector<std::int32_t>& ids, int threads) {
  Embeddings embeddings;
  embeddings.path = path;
  embeddings.words.reserve(ids.size());
  embeddings.rows.reserve(ids.size());
  for (const std::int32_t id : ids) {
    std::string word(model->word(id));
    if (!is_valid_utf8(word)) {
      throw_input_error(path, 0, "dictionary word " + std::to_string(id + 1) + " is not valid UTF-8");
    }
    embeddings.rows.emplace(word, embeddings.words.size());
    embeddings.words.push_back(std::move(word));
  }
  detail::resize_in_huge_pages(embeddings.vectors, static_cast<Eigen::Index>(ids.size()), model->dim());
  // Each vector reads its rows from the file, a batch of words at a time: their rows are found, announced to the
  // kernel at once (read with a deep queue when the file is not in the page cache), then read and averaged.
  Progress progress(path + ": word vectors read", ids.size());
  constexpr std::size_t kBatch = std::size_t{1} << 16, kWordsPerStep = 1024;
  std::vector<std::vector<std::int32_t>> word_rows;
  for (std::size_t batch = 0; batch < ids.size(); batch += kBatch) {
    const std::size_t batch_end = std::min(ids.size(), batch + kBatch);
    word_rows.assign(batch_end - batch, {});
    const std::size_t steps = (batch_end - batch + kWordsPerStep - 1) / kWordsPerStep;
    const auto for_each_word = [&](auto&& visit) {
      parallel_for(steps, threads, [&](std::size_t step) {
        const std::size_t begin = batch + step * kWordsPerStep;
        const std::size_t end = std::min(batch_end, begin + kWordsPerStep);
        for (std::size_t row = begin; row < end; ++row) visit(row);
      });
    };
    for_each_word([&](std::size_t row) { model->subword_rows(embeddings.words[row], word_rows[row - batch]); });
    std::vector<std::int32_t> all;
    for (const auto& rows : word_rows) all.insert(all.end(), rows.begin(), rows.end());
    model->will_need(std::move(all));
    for_each_word([&](std::size_t row) {
      model->mean_of_rows(word_rows[row - batch], embeddings.vectors.row(static_cast<Eigen::Index>(row)).data());
    });
    progress.advance(batch_end - batch);
  }
  progress.finish();
  embeddings.subwords = std::move(model);
  return embeddings;
}

// Whether a gzip file's text starts with fastText's magic number: a gzipped .bin.
bool gzipped_fasttext_model(const std::string& path) {
  detail::GzipStream stream(path);
  std::int32_t magic = 0;
  return stream.read(reinterpret_cast<char*>(&magic), sizeof(magic)) == sizeof(magic) &&
         magic == detail::fasttext_magic;
}

// A .bin.gz in one pass: the dictionary, then the rows of the kept words and of the wanted words (for their
// subword vectors) picked out of the input matrix as it streams by; the model keeps the wanted words' rows.
Embeddings load_fasttext_bin_gz(const std::string& path, const LoadOptions& options, int threads,
                                detail::Clock::time_point start) {
  detail::GzipStream stream(path);
  LoadingCharge charge(path, options);
  std::vector<std::int32_t> ids, wanted_rows;
  auto model = std::make_shared<SubwordModel>(
      path, stream, std::filesystem::file_size(path), [&](const detail::FastTextModelFile& dictionary) {
        const detail::FastTextModelFile& model = dictionary;  // the SubwordModel, still being constructed
        ids = kept_word_ids(model, options, threads);
        std::vector<std::int32_t> rows, word_rows;
        for (const std::int32_t id : ids) {
          model.subword_rows(model.word(id), word_rows);
          rows.insert(rows.end(), word_rows.begin(), word_rows.end());
        }
        // The words a run may ask subword vectors of (TermComposer: as written or lower-cased).
        for (const auto* words : {&options.wanted, &options.subword_wanted}) {
          for (const std::string& word : *words) {
            for (const std::string& form : {word, to_lower(word)}) {
              model.subword_rows(form, word_rows);
              wanted_rows.insert(wanted_rows.end(), word_rows.begin(), word_rows.end());
            }
          }
        }
        rows.insert(rows.end(), wanted_rows.begin(), wanted_rows.end());
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        charge.vectors(ids.size(), (ids.size() + rows.size()) * row_bytes(model));
        return rows;
      });
  logger().debug("{}: {} bytes inflated by {}", path, stream.position(), detail::gzip_inflater());
  Embeddings embeddings = word_vectors_of(path, model, ids, threads);
  model->keep_only(std::move(wanted_rows));
  charge.keep(ids.size() * row_bytes(*model) + model->held_bytes());  // the rows only ids' words needed are freed
  detail::log_loaded(embeddings, static_cast<std::size_t>(model->word_count()), start);
  return embeddings;
}

}  // namespace

Embeddings load_fasttext_bin(const std::string& path, const LoadOptions& options) {
  const auto start = detail::Clock::now();
  const int threads = resolve_threads(options.threads);
  if (detail::has_gzip_magic(path)) return load_fasttext_bin_gz(path, options, threads, start);
  auto model = std::make_shared<const SubwordModel>(path);
  const std::vector<std::int32_t> ids = kept_word_ids(*model, options, threads);
  LoadingCharge charge(path, options);
  charge.vectors(ids.size(), ids.size() * row_bytes(*model));
  Embeddings embeddings = word_vectors_of(path, model, ids, threads);
  charge.keep(ids.size() * row_bytes(*model));
  detail::log_loaded(embeddings, static_cast<std::size_t>(model->word_count()), start);
  return embeddings;
}

bool is_gzipped_fasttext_model(const std::string& path) {
  return detail::has_gzip_magic(path) && gzipped_fasttext_model(path);
}

}  // namespace termalign
