#include "mapping/mapping.h"

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "io/io.h"
#include "mapping/refinement_check.h"
#include "scoring/scoring.h"
#include "termalign/error.h"
#include "termalign/interrupt.h"
#include "termalign/logging.h"
#include "util/parallel.h"
#include "util/seeded_shuffle.h"

namespace termalign {

using detail::compare_hits;
using detail::HitComparison;
using detail::share_of_hits;
using detail::worse_map;

namespace {
constexpr const char* kMappingHeader = "termalign-mapping 1";

bool unit_first(Normalization kind) {
  return kind == Normalization::unit || kind == Normalization::unit_center_unit;
}
bool centres(Normalization kind) {
  return kind == Normalization::center || kind == Normalization::unit_center_unit;
}
bool unit_last(Normalization kind) { return kind == Normalization::unit_center_unit; }

// Scales a vector (or a matrix row) to unit length; a zero vector stays zero.
void normalize(Eigen::Ref<RowVector> vector) {
  const float norm = vector.norm();
  if (norm > 0) vector /= norm;
}

// The CSLS neighbourhood of the refinement's dictionary induction (MUSE's and vecmap's choice).
constexpr int kRefineNeighbourhood = 10;

using MatrixD = Eigen::MatrixXd;

// SVD of a d x d cross-covariance source^T target (row i of each side a pair), computed in double: the sum over
// thousands of pairs loses little then.
Eigen::BDCSVD<MatrixD> cross_covariance_svd(const MatrixD& cross) {
  return Eigen::BDCSVD<MatrixD>(cross, Eigen::ComputeFullU | Eigen::ComputeFullV);
}

// source^T target in double for float rows (source and target may be the same matrix), the rows split into fixed
// parts of kPart rows, each part's product on one thread of `threads` (0: OpenMP's default), the parts summed in
// order: the same bits on any thread count. Each part goes block of rows by block of rows through two small double
// buffers: no double copy of the whole operands (fresh memory is slow to fault in: 12 MB each for 5,000 pairs at
// d = 300).
MatrixD transposed_product(const Matrix& source, const Matrix& target, int threads) {
  constexpr Eigen::Index kPart = 1024, kBlock = 256;
  const Eigen::Index rows = source.rows();
  const std::size_t parts = static_cast<std::size_t>(std::max<Eigen::Index>(1, (rows + kPart - 1) / kPart));
  std::vector<MatrixD> partial(parts);
  threads = resolve_threads(threads);
  const SerialEigenProducts serial_products;  // one thread per product, on the serial path too
  parallel_for(parts, threads, [&](std::size_t part) {
    const Eigen::Index begin = static_cast<Eigen::Index>(part) * kPart;
    const Eigen::Index end = std::min(rows, begin + kPart);
    MatrixD& sum = partial[part];
    sum = MatrixD::Zero(source.cols(), target.cols());
    MatrixD source_block(std::min(kBlock, std::max<Eigen::Index>(end - begin, 0)), source.cols());
    MatrixD target_block(source_block.rows(), target.cols());
    for (Eigen::Index first = begin; first < end; first += kBlock) {
      const Eigen::Index count = std::min(kBlock, end - first);
      source_block.topRows(count) = source.middleRows(first, count).cast<double>();
      target_block.topRows(count) = target.middleRows(first, count).cast<double>();
      sum.noalias() += source_block.topRows(count).transpose() * target_block.topRows(count);
    }
  });
  for (std::size_t part = 1; part < parts; ++part) partial[0] += partial[part];
  return std::move(partial[0]);
}

// W = G^-1/2 and its inverse G^1/2, symmetric, for the gram G = M^T M of M: n x d; M W has orthonormal columns.
struct Whitening {
  MatrixD transform, inverse;
};

Whitening whitening(const MatrixD& gram, Eigen::Index pairs, const char* side) {
  Eigen::SelfAdjointEigenSolver<MatrixD> eigen(gram);
  const Eigen::VectorXd& variances = eigen.eigenvalues();  // ascending
  if (eigen.info() != Eigen::Success || !(variances[0] > 1e-10 * variances[variances.size() - 1]))
    throw_usage_error(std::string("Whitening needs seed pairs that span every dimension, but the ") + side +
                      " seed vectors (" + std::to_string(pairs) + " pairs in dimension " +
                      std::to_string(gram.rows()) +
                      ") have a singular covariance: add seed pairs or turn whiten off.");
  return {eigen.operatorInverseSqrt(), eigen.operatorSqrt()};
}

}  // namespace

// The multi-step framework of Artetxe et al. (AAAI 2018) in vecmap's order: whitening, orthogonal mapping,
// re-weighting, de-whitening, dimensionality reduction. Whitening the seed rows (Xs Ws, Zt Wt) makes their
// cross-covariance Ws (Xs^T Zt) Wt (both transforms are symmetric): only d x d products here.
Mapping mapping_from_products(const SeedProducts& products, const MappingOptions& options) {
  // Single-threaded products whatever the caller's thread count or region (align runs this beside the
  // composition): a product's rounding depends on its thread count, and the mapping must not.
  SerialEigenProducts serial_products;
  const Eigen::Index d = products.cross.rows();
  const MatrixD identity = MatrixD::Identity(d, d);
  Whitening source_whitening{identity, identity}, target_whitening{identity, identity};
  MatrixD whitened_cross;
  if (options.whiten) {
    // The two eigendecompositions on two threads (each single-threaded inside the region: the same bits).
    run_both([&] { source_whitening = whitening(products.source_gram, products.pairs, "source"); },
             [&] { target_whitening = whitening(products.target_gram, products.pairs, "target"); }, 2);
    whitened_cross = source_whitening.transform * products.cross * target_whitening.transform;
  }
  const auto svd = cross_covariance_svd(options.whiten ? whitened_cross : products.cross);
  const MatrixD& U = svd.matrixU();
  const MatrixD& V = svd.matrixV();
  // Each side's transform from its own whitening and singular vectors: the two on two threads (each product
  // single-threaded, as above).
  const auto side = [&](const Whitening& whitening, const MatrixD& vectors, double reweight, bool dewhiten) {
    MatrixD transform = whitening.transform * vectors;
    if (reweight != 0) transform *= svd.singularValues().array().pow(reweight).matrix().asDiagonal();
    if (dewhiten) transform *= vectors.transpose() * whitening.inverse * vectors;
    if (options.dim_reduction > 0)
      return Matrix(transform.leftCols(static_cast<Eigen::Index>(options.dim_reduction)).cast<float>());
    // Rotating both sides alike changes no similarity. In the target's own coordinates, every step off gives
    // Procrustes: U V^T and the identity.
    transform *= V.transpose();
    return Matrix(transform.cast<float>());
  };
  const bool dewhiten_source = options.dewhiten == Dewhiten::source || options.dewhiten == Dewhiten::both;
  const bool dewhiten_target = options.dewhiten == Dewhiten::target || options.dewhiten == Dewhiten::both;
  Mapping mapping;
  run_both([&] { mapping.source_transform = side(source_whitening, U, options.src_reweight, dewhiten_source); },
           [&] { mapping.target_transform = side(target_whitening, V, options.tgt_reweight, dewhiten_target); },
           2);
  // Without target whitening, re-weighting or de-whitening the target's transform is V V^T: the identity, set
  // exactly (so the target vectors stay as they are and transform_rows skips their product).
  if (options.dim_reduction == 0 && !options.whiten && options.tgt_reweight == 0)
    mapping.target_transform = Matrix::Identity(d, d);
  return mapping;
}

namespace {

// (source row, target row) pairs, sorted.
using WordPairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// The words (n1 x d, n2 x d) mapped, renormalised, and paired with their mutual CSLS nearest neighbour.
WordPairs mutual_nearest_neighbours(const Matrix& source_words, const Matrix& target_words, const Mapping& mapping,
                                    int threads) {
  Matrix mapped_source = source_words * mapping.source_transform;
  Matrix mapped_target = target_words * mapping.target_transform;
  normalize_rows(mapped_source, threads);
  normalize_rows(mapped_target, threads);
  TileOptions tiles;
  tiles.threads = threads;
  SelectionOptions mutual_nearest;
  mutual_nearest.top_m = 1;
  mutual_nearest.mutual_m = 1;
  const NeighbourhoodMeans means = neighbourhood_means(mapped_source, mapped_target, kRefineNeighbourhood, tiles);
  WordPairs pairs;
  for (const Candidate& pair : select_csls_candidates(mapped_source, mapped_target, means, mutual_nearest, tiles))
    pairs.emplace_back(pair.source, pair.target);
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}
}  // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>> mutual_nearest_words(const Matrix& source_vocabulary,
                                                                          const Matrix& target_vocabulary,
                                                                          const Mapping& mapping,
                                                                          std::size_t words, int threads) {
  const auto top = [words](const Matrix& vocabulary) -> Matrix {
    return vocabulary.topRows(std::min<Eigen::Index>(static_cast<Eigen::Index>(words), vocabulary.rows()));
  };
  return mutual_nearest_neighbours(top(source_vocabulary), top(target_vocabulary), mapping, threads);
}

namespace {
// Calls change(row) for every row of `vectors`, blocks of rows shared out among the threads: for changes of each
// row on its own, which then have the same bits whatever the threads.
void for_each_row(Matrix& vectors, int threads, const std::function<void(Eigen::Ref<RowVector>)>& change) {
  constexpr Eigen::Index kBlock = 1024;
  const Eigen::Index blocks = (vectors.rows() + kBlock - 1) / kBlock;
  parallel_for(static_cast<std::size_t>(blocks), threads, [&](std::size_t block) {
    const Eigen::Index first = static_cast<Eigen::Index>(block) * kBlock;
    for (Eigen::Index i = first; i < std::min(first + kBlock, vectors.rows()); ++i) change(vectors.row(i));
  });
}
}  // namespace

void normalize_rows(Matrix& vectors, int threads) {
  for_each_row(vectors, threads, [](Eigen::Ref<RowVector> row) { normalize(row); });
}

void transform_rows(Matrix& rows, const Matrix& transform, int threads) {
  TERMALIGN_CHECK(transform.rows() == rows.cols(), "the transform's rows match the vectors' dimension");
  if (transform.cols() != transform.rows()) {
    rows = rows * transform;
    normalize_rows(rows, threads);
    return;
  }
  if (transform.isIdentity(0.0f)) {
    normalize_rows(rows, threads);
    return;
  }
  // Fixed blocks, each one single-threaded product: a row's bits do not depend on the threads.
  constexpr Eigen::Index kBlock = 256;
  const Eigen::Index blocks = (rows.rows() + kBlock - 1) / kBlock;
  const int thread_count = resolve_threads(threads);
  std::vector<Matrix> buffers(static_cast<std::size_t>(thread_count));
  SerialEigenProducts serial_products;
  parallel_for(static_cast<std::size_t>(blocks), thread_count, [&](std::size_t block) {
    Matrix& mapped = buffers[static_cast<std::size_t>(current_thread()) % buffers.size()];
    const Eigen::Index first = static_cast<Eigen::Index>(block) * kBlock;
    const Eigen::Index count = std::min(kBlock, rows.rows() - first);
    mapped.resize(count, transform.cols());
    mapped.noalias() = rows.middleRows(first, count) * transform;
    for (Eigen::Index i = 0; i < count; ++i) normalize(mapped.row(i));
    rows.middleRows(first, count) = mapped;
  });
}

void Normalizer::fit_apply(Matrix& vectors, int threads) {
  TERMALIGN_CHECK(kind != Normalization::automatic, "the normalisation is resolved before it is applied");
  mean.resize(0);
  if (!centres(kind)) {  // unit or none: the rows as apply() leaves them
    apply_rows(vectors, threads);
    return;
  }
  // Two passes over the rows, both on the threads: the rows normalised (when the kind asks) and summed in double
  // by fixed blocks, which are added in order, so the mean has the same bits for any thread count; then centred
  // and normalised again.
  constexpr Eigen::Index kBlock = 1024;
  const Eigen::Index blocks = (vectors.rows() + kBlock - 1) / kBlock;
  std::vector<Eigen::RowVectorXd> sums(static_cast<std::size_t>(blocks));
  const bool normalise_first = unit_first(kind);
  parallel_for(sums.size(), threads, [&](std::size_t block) {
    Eigen::RowVectorXd& sum = sums[block];
    sum = Eigen::RowVectorXd::Zero(vectors.cols());
    const Eigen::Index first = static_cast<Eigen::Index>(block) * kBlock;
    for (Eigen::Index i = first; i < std::min(first + kBlock, vectors.rows()); ++i) {
      if (normalise_first) normalize(vectors.row(i));
      sum += vectors.row(i).cast<double>();
    }
  });
  Eigen::RowVectorXd total = Eigen::RowVectorXd::Zero(vectors.cols());
  for (const Eigen::RowVectorXd& sum : sums) total += sum;
  mean = vectors.rows() > 0 ? RowVector((total / static_cast<double>(vectors.rows())).cast<float>())
                            : RowVector::Zero(vectors.cols());
  const bool normalise_last = unit_last(kind);
  for_each_row(vectors, threads, [&](Eigen::Ref<RowVector> row) {
    row -= mean;
    if (normalise_last) normalize(row);
  });
}

void Normalizer::apply(Eigen::Ref<RowVector> vector) const {
  if (unit_first(kind)) normalize(vector);
  if (centres(kind)) {
    TERMALIGN_CHECK(mean.size() == vector.size(), "normaliser applied before it was fitted");
    vector -= mean;
  }
  if (unit_last(kind)) normalize(vector);
}

void Normalizer::apply_rows(Matrix& vectors, int threads) const {
  TERMALIGN_CHECK(!centres(kind) || mean.size() == vectors.cols(), "normaliser applied before it was fitted");
  for_each_row(vectors, threads, [this](Eigen::Ref<RowVector> row) { apply(row); });  // one pass over the rows
}

Matrix procrustes(const Matrix& source, const Matrix& target) {
  TERMALIGN_CHECK(source.rows() == target.rows() && source.cols() == target.cols(),
                  "Procrustes needs two matrices of the same shape");
  const auto svd = cross_covariance_svd(transposed_product(source, target, 1));
  return (svd.matrixU() * svd.matrixV().transpose()).cast<float>();
}

SeedProducts seed_products(const Matrix& Xs, const Matrix& Zt, const MappingOptions& options, int threads) {
  TERMALIGN_CHECK(Xs.rows() == Zt.rows() && Xs.cols() == Zt.cols(), "the seed pairs need one row per side");
  const std::size_t dim = static_cast<std::size_t>(Xs.cols());
  if (options.dim_reduction > dim)
    throw_usage_error("dim_reduction (" + std::to_string(options.dim_reduction) +
                      ") cannot exceed the dimension of the vectors (" + std::to_string(dim) + ").");
  SeedProducts products;
  products.pairs = Xs.rows();
  products.cross = transposed_product(Xs, Zt, threads);
  if (options.whiten) {
    products.source_gram = transposed_product(Xs, Xs, threads);
    products.target_gram = transposed_product(Zt, Zt, threads);
  }
  return products;
}

namespace {

// The rows of `rows` listed in `ids`, in that order.
Matrix pick_rows(const Matrix& rows, const std::vector<Eigen::Index>& ids) {
  Matrix picked(static_cast<Eigen::Index>(ids.size()), rows.cols());
  for (std::size_t i = 0; i < ids.size(); ++i) picked.row(static_cast<Eigen::Index>(i)) = rows.row(ids[i]);
  return picked;
}

// A row's bytes: rows of the same word (a seed word with several translations) have the same ones.
std::string row_key(const Matrix& rows, Eigen::Index i) {
  return std::string(reinterpret_cast<const char*>(rows.row(i).data()), sizeof(float) * rows.cols());
}

// The seed pairs split into those the refinement fits on and those that check it: every pair of a source word
// goes to the same side (a seeded shuffle of the source words, the same on every machine), `share` of the words
// are held out. No pair is held out when that leaves fewer than kMinValidation words on either side.
struct SeedSplit {
  std::vector<Eigen::Index> fit, held_out;
};
constexpr std::size_t kMinValidation = 20;
constexpr std::uint64_t kSplitSeed = 0x7465726d616c6967ULL;  // "termalig"

SeedSplit split_seed(const Matrix& Xs, double share, std::uint64_t seed) {
  std::unordered_map<std::string, std::size_t> word_of_key;
  std::vector<std::size_t> word_of_row(static_cast<std::size_t>(Xs.rows()));
  for (Eigen::Index i = 0; i < Xs.rows(); ++i)
    word_of_row[static_cast<std::size_t>(i)] =
        word_of_key.emplace(row_key(Xs, i), word_of_key.size()).first->second;
  const std::size_t words = word_of_key.size();
  const auto held = static_cast<std::size_t>(std::llround(share * static_cast<double>(words)));
  SeedSplit split;
  if (held < kMinValidation || words - held < kMinValidation) {
    for (Eigen::Index i = 0; i < Xs.rows(); ++i) split.fit.push_back(i);
    return split;
  }
  // The same split on every machine (seeded_shuffle, not the standard library's implementation-defined one).
  std::vector<std::size_t> order(words);
  std::iota(order.begin(), order.end(), 0);
  detail::seeded_shuffle(order, kSplitSeed + seed);
  std::vector<bool> is_held(words, false);
  for (std::size_t i = 0; i < held; ++i) is_held[order[i]] = true;
  for (Eigen::Index i = 0; i < Xs.rows(); ++i)
    (is_held[word_of_row[static_cast<std::size_t>(i)]] ? split.held_out : split.fit).push_back(i);
  return split;
}

// The check of the refinement: the distinct held-out seed source words with their seed translations, retrieved
// among the held-out targets and the refinement's target words (source side: the held-out sources and the source
// words, for the targets' neighbourhoods). Rows of the same word count as that word. Built once; hits() maps the
// rows with each candidate map.
class HeldOutCheck {
 public:
  HeldOutCheck(const Matrix& held_source, const Matrix& held_target, const Matrix& source_words,
               const Matrix& target_words) {
    // Target ids by word (row bytes); the gold of each distinct held-out source word.
    std::unordered_map<std::string, std::uint32_t> target_id;
    const auto add_targets = [&](const Matrix& rows) {
      for (Eigen::Index i = 0; i < rows.rows(); ++i)
        id_of_target_.push_back(
            target_id.emplace(row_key(rows, i), static_cast<std::uint32_t>(target_id.size())).first->second);
    };
    add_targets(held_target);
    add_targets(target_words);
    std::unordered_map<std::string, std::size_t> source_query;
    std::vector<Eigen::Index> query_rows;
    for (Eigen::Index i = 0; i < held_source.rows(); ++i) {
      const auto [found, added] = source_query.emplace(row_key(held_source, i), query_rows.size());
      if (added) {
        query_rows.push_back(i);
        gold_.emplace_back();
      }
      gold_[found->second].push_back(id_of_target_[static_cast<std::size_t>(i)]);
    }
    const auto queries = static_cast<Eigen::Index>(query_rows.size());
    sources_.resize(queries + source_words.rows(), held_source.cols());
    sources_.topRows(queries) = pick_rows(held_source, query_rows);
    sources_.bottomRows(source_words.rows()) = source_words;
    targets_.resize(held_target.rows() + target_words.rows(), held_target.cols());
    targets_.topRows(held_target.rows()) = held_target;
    targets_.bottomRows(target_words.rows()) = target_words;
  }

  // For each held-out source word, whether its CSLS nearest neighbour under `mapping` is one of its seed
  // translations (top1: 1 or 0), and whether one of its kTopHits nearest is (top).
  struct Hits {
    std::vector<char> top1, top;
  };
  static constexpr std::size_t kTopHits = 5;
  Hits hits(const Mapping& mapping, int threads) const {
    Matrix sources = sources_, targets = targets_;
    transform_rows(sources, mapping.source_transform, threads);
    transform_rows(targets, mapping.target_transform, threads);
    TileOptions tiles;
    tiles.threads = threads;
    SelectionOptions nearest;
    nearest.top_m = kTopHits;
    Hits hits{std::vector<char>(gold_.size(), 0), std::vector<char>(gold_.size(), 0)};
    std::vector<float> best_score(gold_.size(), -std::numeric_limits<float>::infinity());
    // The neighbourhoods of every row, then the queries' nearest targets only (csls_select would rank every
    // source row's: the same values, for the few hundred queries out of thousands of rows).
    const auto queries = static_cast<Eigen::Index>(gold_.size());
    NeighbourhoodMeans means = neighbourhood_means(sources, targets, kRefineNeighbourhood, tiles);
    means.source.conservativeResize(queries);
    const Matrix query_rows = sources.topRows(queries);
    for (const Candidate& near : select_csls_candidates(query_rows, targets, means, nearest, tiles)) {
      const std::vector<std::uint32_t>& translations = gold_[near.source];
      const bool hit =
          std::find(translations.begin(), translations.end(), id_of_target_[near.target]) != translations.end();
      hits.top[near.source] |= hit;
      if (near.score > best_score[near.source]) {  // the nearest so far (ties: the first listed)
        best_score[near.source] = near.score;
        hits.top1[near.source] = hit;
      }
    }
    return hits;
  }

 private:
  Matrix sources_, targets_;                      // unmapped: the queries first, then the source words; targets
  std::vector<std::uint32_t> id_of_target_;       // word id of each row of targets_
  std::vector<std::vector<std::uint32_t>> gold_;  // per query: its translations' word ids
};

// The seed products of the pairs `fit` of (Xs, Zt) plus the induced word pairs.
SeedProducts products_with_dictionary(const Matrix& Xs, const Matrix& Zt, const std::vector<Eigen::Index>& fit,
                                      const Matrix& source_words, const Matrix& target_words,
                                      const WordPairs& dictionary, const MappingOptions& options, int threads) {
  // The induced pairs come after the seed pairs, which always stay in the training set.
  const auto seed = static_cast<Eigen::Index>(fit.size());
  const Eigen::Index rows = seed + static_cast<Eigen::Index>(dictionary.size());
  Matrix source_pairs(rows, Xs.cols()), target_pairs(rows, Zt.cols());
  for (Eigen::Index i = 0; i < seed; ++i) {
    source_pairs.row(i) = Xs.row(fit[static_cast<std::size_t>(i)]);
    target_pairs.row(i) = Zt.row(fit[static_cast<std::size_t>(i)]);
  }
  for (std::size_t i = 0; i < dictionary.size(); ++i) {
    source_pairs.row(seed + static_cast<Eigen::Index>(i)) = source_words.row(dictionary[i].first);
    target_pairs.row(seed + static_cast<Eigen::Index>(i)) = target_words.row(dictionary[i].second);
  }
  return seed_products(source_pairs, target_pairs, options, threads);
}

// The mapping fitted on the seed pairs `fit` of (Xs, Zt) plus the induced word pairs.
Mapping fit_with_dictionary(const Matrix& Xs, const Matrix& Zt, const std::vector<Eigen::Index>& fit,
                            const Matrix& source_words, const Matrix& target_words, const WordPairs& dictionary,
                            const MappingOptions& options, int threads) {
  return mapping_from_products(
      products_with_dictionary(Xs, Zt, fit, source_words, target_words, dictionary, options, threads), options);
}

}  // namespace

Mapping fit_mapping(const Matrix& Xs, const Matrix& Zt, const Matrix& source_vocabulary,
                    const Matrix& target_vocabulary, const MappingOptions& options, int threads) {
  return mapping_from_products(
      refined_seed_products(Xs, Zt, source_vocabulary, target_vocabulary, options, threads), options);
}

SeedProducts refined_seed_products(const Matrix& Xs, const Matrix& Zt, const Matrix& source_vocabulary,
                                   const Matrix& target_vocabulary, const MappingOptions& options, int threads) {
  if (options.refine_iterations == 0) return seed_products(Xs, Zt, options, threads);

  const auto most_frequent = [&](const Matrix& vocabulary) -> Matrix {
    return vocabulary.topRows(
        std::min<Eigen::Index>(static_cast<Eigen::Index>(options.refine_words), vocabulary.rows()));
  };
  const Matrix source_words = most_frequent(source_vocabulary), target_words = most_frequent(target_vocabulary);
  TERMALIGN_CHECK(source_words.cols() == Xs.cols() && target_words.cols() == Zt.cols(),
                  "the vocabularies and the seed pairs must have the same dimension");
  if (source_words.rows() == 0 || target_words.rows() == 0)
    throw_usage_error("Self-learning refinement needs word vectors on both sides.");

  // Each iteration is fitted on the seed pairs outside a held-out slice and kept only if its map still retrieves
  // the held-out pairs (HitComparison): the induced dictionary is sought among the first rows of each vector file,
  // which may not be translations of each other (vectors not sorted by frequency, corpora of other domains), and
  // a noisy dictionary makes the map worse. The kept dictionary is then fitted with all the seed pairs.
  const SeedSplit split = split_seed(Xs, options.refine_validation, options.refine_split_seed);
  const bool checked = !split.held_out.empty();
  std::optional<HeldOutCheck> check;
  if (checked)
    check.emplace(pick_rows(Xs, split.held_out), pick_rows(Zt, split.held_out), source_words, target_words);
  const auto criterion = [&](const Mapping& candidate) { return check->hits(candidate, threads); };
  Mapping mapping = fit_with_dictionary(Xs, Zt, split.fit, source_words, target_words, {}, options, threads);
  HeldOutCheck::Hits best;  // the held-out hits of the best map so far (by P@1)
  if (checked) {
    best = criterion(mapping);
    logger().info(
        "refinement: the seed map retrieves {:.1f} % of {} held-out seed words (CSLS P@1; P@{} {:.1f} %)",
        100 * share_of_hits(best.top1), best.top1.size(), HeldOutCheck::kTopHits, 100 * share_of_hits(best.top));
  } else if (options.refine_validation > 0) {
    logger().warn("refinement unchecked: {} seed pairs are too few to hold {} % out (at least {} words each side)",
                  Xs.rows(), 100 * options.refine_validation, kMinValidation);
  }
  WordPairs kept;
  for (std::size_t iteration = 1; iteration <= options.refine_iterations; ++iteration) {
    throw_if_interrupted();
    const WordPairs dictionary = mutual_nearest_neighbours(source_words, target_words, mapping, threads);
    if (dictionary == kept) {
      logger().info("refinement iteration {}/{}: converged (the dictionary did not change)", iteration,
                    options.refine_iterations);
      break;
    }
    Mapping refitted =
        fit_with_dictionary(Xs, Zt, split.fit, source_words, target_words, dictionary, options, threads);
    if (!checked) {
      logger().info("refinement iteration {}/{}: {} mutual CSLS nearest-neighbour pairs among {} x {} words",
                    iteration, options.refine_iterations, dictionary.size(), source_words.rows(),
                    target_words.rows());
    } else {
      const HeldOutCheck::Hits hits = criterion(refitted);
      const HitComparison top1 = compare_hits(best.top1, hits.top1), top = compare_hits(best.top, hits.top);
      logger().info(
          "refinement iteration {}/{}: {} mutual CSLS nearest-neighbour pairs among {} x {} words; "
          "held-out seed P@1 {:.1f} % (best before: {:.1f} %; {} words lost, {} gained), P@{} {:.1f} % "
          "({:.1f} %; {} lost, {} gained)",
          iteration, options.refine_iterations, dictionary.size(), source_words.rows(), target_words.rows(),
          100 * top1.after, 100 * top1.before, top1.lost, top1.gained, HeldOutCheck::kTopHits, 100 * top.after,
          100 * top.before, top.lost, top.gained);
      if (worse_map(top1, top)) {
        logger().warn(
            "refinement stopped at iteration {}: its map retrieves fewer held-out seed words (P@1 {:.1f} % "
            "against {:.1f} %, P@{} {:.1f} % against {:.1f} %), so its induced dictionary is noise. The "
            "dictionary is sought among the first {} rows of each vector file: are both files sorted by "
            "frequency, and their first words translations of each other? The map of {} is kept.",
            iteration, 100 * top1.after, 100 * top1.before, HeldOutCheck::kTopHits, 100 * top.after,
            100 * top.before, options.refine_words,
            iteration == 1 ? std::string("the seed lexicon alone") : "iteration " + std::to_string(iteration - 1));
        break;
      }
      if (top1.after > top1.before) best = hits;
    }
    mapping = std::move(refitted);
    kept = dictionary;
  }
  std::vector<Eigen::Index> all(static_cast<std::size_t>(Xs.rows()));
  std::iota(all.begin(), all.end(), 0);
  return products_with_dictionary(Xs, Zt, all, source_words, target_words, kept, options, threads);
}

void save_mapping(const std::string& path, const Mapping& mapping) {
  std::string text;
  auto append_row = [&text](const float* values, Eigen::Index n) {
    char buffer[32];
    for (Eigen::Index j = 0; j < n; ++j) {
      std::snprintf(buffer, sizeof buffer, j ? " %.9g" : "%.9g", static_cast<double>(values[j]));
      text += buffer;
    }
    text += '\n';
  };
  const Eigen::Index d = mapping.source_transform.rows(), mapped = mapping.source_transform.cols();
  TERMALIGN_CHECK(mapping.target_transform.rows() == d && mapping.target_transform.cols() == mapped,
                  "both transforms must have the same shape");
  text += std::string(kMappingHeader) + "\n";
  text += "dim " + std::to_string(d) + " " + std::to_string(mapped) + "\n";
  text += std::string("normalization ") + to_string(mapping.source.kind) + "\n";
  for (const Normalizer* side : {&mapping.source, &mapping.target}) {
    const RowVector mean = side->mean.size() ? side->mean : RowVector::Zero(d);
    append_row(mean.data(), d);
  }
  for (const Matrix* transform : {&mapping.source_transform, &mapping.target_transform}) {
    for (Eigen::Index i = 0; i < d; ++i) append_row(transform->row(i).data(), mapped);
  }
  write_file_atomically(path, text);
}

Mapping load_mapping(const std::string& path) {
  std::istringstream stream(read_file(path));
  std::string line;
  std::size_t line_number = 0;
  auto next_line = [&]() -> std::istringstream {
    if (!std::getline(stream, line)) throw_input_error(path, line_number + 1, "the mapping file ends too early.");
    ++line_number;
    return std::istringstream(line);
  };
  next_line();
  if (line != kMappingHeader) throw_input_error(path, 1, "not a termalign mapping file (bad header).");
  std::string word, name;
  long d = 0, mapped = 0;
  if (!(next_line() >> word >> d >> mapped) || word != "dim" || d <= 0 || mapped <= 0 || mapped > d) {
    throw_input_error(path, 2, "expected 'dim D D2' with 0 < D2 <= D.");
  }
  if (!(next_line() >> word >> name) || word != "normalization") {
    throw_input_error(path, 3, "expected 'normalization NAME'.");
  }
  Mapping mapping;
  try {
    mapping.source.kind = mapping.target.kind = parse_normalization(name);
  } catch (const Error& error) {
    throw_input_error(path, 3, error.what());
  }
  if (mapping.source.kind == Normalization::automatic)
    throw_input_error(path, 3, "a mapping's normalization is the one it was fitted with, not 'auto'.");
  auto read_row = [&](float* values, long n) {
    auto row = next_line();
    for (long j = 0; j < n; ++j) {
      if (!(row >> values[j]) || !std::isfinite(values[j])) {
        throw_input_error(path, line_number, "expected " + std::to_string(n) + " finite numbers.");
      }
    }
    if (std::string extra; row >> extra) {
      throw_input_error(path, line_number, "expected " + std::to_string(n) + " numbers, found more.");
    }
  };
  for (Normalizer* side : {&mapping.source, &mapping.target}) {
    side->mean.resize(d);
    read_row(side->mean.data(), d);
  }
  for (Matrix* transform : {&mapping.source_transform, &mapping.target_transform}) {
    transform->resize(d, mapped);
    for (long i = 0; i < d; ++i) read_row(transform->row(i).data(), mapped);
  }
  // Anything after the last row (two mappings in one file, say) would be ignored: an error.
  const std::size_t last_row = line_number;
  while (std::getline(stream, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      throw_input_error(path, line_number,
                        "the mapping ends at line " + std::to_string(last_row) + "; this line is after it.");
    }
  }
  return mapping;
}

}  // namespace termalign
