#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "mapping/mapping.h"
#include "mapping/refinement_check.h"
#include "termalign/error.h"

using namespace termalign;

namespace {
Matrix random_matrix(Eigen::Index rows, Eigen::Index cols, std::mt19937& generator) {
  std::normal_distribution<float> normal;
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = normal(generator);
  return m;
}

Matrix random_orthogonal(Eigen::Index d, std::mt19937& generator) {
  const Eigen::MatrixXd gaussian = random_matrix(d, d, generator).cast<double>();
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian);
  return Matrix(Eigen::MatrixXd(qr.householderQ()).cast<float>());
}
}  // namespace

TEST_CASE("Procrustes recovers a known rotation", "[mapping]") {
  std::mt19937 generator(42);
  for (Eigen::Index d : {3, 8, 50}) {
    const Matrix X = random_matrix(4 * d + 7, d, generator);
    const Matrix R = random_orthogonal(d, generator);
    const Matrix Z = X * R;
    const Matrix W = procrustes(X, Z);
    CAPTURE(d);
    CHECK((W - R).norm() < 1e-4);
    CHECK((W.transpose() * W - Matrix::Identity(d, d)).norm() < 1e-4);
  }
}

TEST_CASE("Procrustes over more pairs than one accumulation block (512 rows)", "[mapping]") {
  std::mt19937 generator(43);
  const Matrix X = random_matrix(1300, 20, generator);
  const Matrix R = random_orthogonal(20, generator);
  const Matrix W = procrustes(X, Matrix(X * R));
  CHECK((W - R).norm() < 1e-4);
}

TEST_CASE("transform_rows maps and normalises in place, whatever the threads", "[mapping]") {
  std::mt19937 generator(44);
  const Matrix rows = random_matrix(700, 12, generator);  // blocks of 256 rows: three, the last one partial
  for (const Matrix& transform : {random_orthogonal(12, generator), random_matrix(12, 12, generator),
                                  random_matrix(12, 5, generator), Matrix(Matrix::Identity(12, 12))}) {
    Matrix expected = rows * transform;
    normalize_rows(expected);
    Matrix one = rows, two = rows;
    transform_rows(one, transform, 1);
    transform_rows(two, transform, 2);
    REQUIRE(one.rows() == rows.rows());
    REQUIRE(one.cols() == transform.cols());
    CHECK((one - expected).cwiseAbs().maxCoeff() < 1e-5f);
    CHECK(one == two);  // bit for bit
  }
  // With the identity the product is skipped: exactly the normalised rows, as x I = x.
  Matrix normalised = rows, mapped = rows;
  normalize_rows(normalised);
  transform_rows(mapped, Matrix::Identity(12, 12), 2);
  CHECK(mapped == normalised);
}

TEST_CASE("Procrustes is orthogonal on noisy, unrelated data", "[mapping]") {
  std::mt19937 generator(7);
  const Matrix X = random_matrix(40, 6, generator), Z = random_matrix(40, 6, generator);
  const Matrix W = procrustes(X, Z);
  CHECK((W.transpose() * W - Matrix::Identity(6, 6)).norm() < 1e-4);
  // Among orthogonal maps, W minimises ||XW - Z||: a random rotation does no better.
  const Matrix R = random_orthogonal(6, generator);
  CHECK((X * W - Z).norm() <= (X * R - Z).norm() + 1e-4);
}

TEST_CASE("Normalisations and their reuse on new vectors", "[mapping]") {
  Matrix vectors(3, 2);
  vectors << 3, 4, 0, 2, 1, 0;
  SECTION("unit") {
    Normalizer normalizer{Normalization::unit, {}};
    Matrix copy = vectors;
    normalizer.fit_apply(copy);
    CHECK(copy(0, 0) == Approx(0.6f));
    CHECK(copy(0, 1) == Approx(0.8f));
    CHECK(copy.row(1).norm() == Approx(1.0f));
  }
  SECTION("center") {
    Normalizer normalizer{Normalization::center, {}};
    Matrix copy = vectors;
    normalizer.fit_apply(copy);
    CHECK(copy.colwise().sum().norm() < 1e-5);
    RowVector fresh(2);
    fresh << 4, 4;
    normalizer.apply(fresh);
    CHECK(fresh(0) == Approx(4 - 4.0f / 3));
    CHECK(fresh(1) == Approx(4 - 2.0f));
  }
  SECTION("unit-center-unit: rows unit, and apply() on a row equals what fit_apply did to it") {
    Normalizer normalizer{Normalization::unit_center_unit, {}};
    Matrix copy = vectors;
    normalizer.fit_apply(copy);
    for (Eigen::Index i = 0; i < copy.rows(); ++i) CHECK(copy.row(i).norm() == Approx(1.0f));
    RowVector first = vectors.row(0);
    normalizer.apply(first);
    CHECK((first - copy.row(0)).norm() < 1e-6);
    Matrix again = vectors;
    normalizer.apply_rows(again);
    CHECK((again - copy).norm() < 1e-6);
  }
}

TEST_CASE("Centring over several row blocks: the brute-force mean, the same bits on any thread count",
          "[mapping]") {
  // 2,600 rows: the mean is summed over fixed blocks of 1,024 rows (three blocks, one partial).
  std::mt19937 generator(21);
  Matrix vectors = random_matrix(2600, 37, generator);
  vectors.array() += 0.5f;  // a mean far from zero
  for (const Normalization kind : {Normalization::center, Normalization::unit_center_unit}) {
    INFO("normalisation " << to_string(kind));
    // Brute force in double: rows unit first (unit-center-unit), their mean, then centred (and unit again).
    Eigen::MatrixXd expected = vectors.cast<double>();
    if (kind == Normalization::unit_center_unit) expected.rowwise().normalize();
    const Eigen::RowVectorXd expected_mean = expected.colwise().mean();
    expected.rowwise() -= expected_mean;
    if (kind == Normalization::unit_center_unit) expected.rowwise().normalize();
    Normalizer first;
    first.kind = kind;
    Matrix fitted = vectors;
    first.fit_apply(fitted, 1);
    CHECK((first.mean.cast<double>() - expected_mean).cwiseAbs().maxCoeff() < 1e-6);
    CHECK((fitted.cast<double>() - expected).cwiseAbs().maxCoeff() < 1e-5);
    for (const int threads : {2, 3}) {
      Normalizer again;
      again.kind = kind;
      Matrix copy = vectors;
      again.fit_apply(copy, threads);
      CHECK(again.mean == first.mean);
      CHECK(copy == fitted);
    }
    // apply_rows with the fitted normaliser does the same to the vectors, on the threads.
    Matrix applied = vectors;
    first.apply_rows(applied, 2);
    CHECK(applied == fitted);
  }
}

TEST_CASE("A mapping saved and loaded back is the same", "[mapping]") {
  std::mt19937 generator(3);
  Mapping mapping;
  mapping.source_transform = random_orthogonal(5, generator);
  mapping.target_transform = random_matrix(5, 3, generator);
  mapping.source_transform = mapping.source_transform.leftCols(3).eval();
  mapping.source.kind = mapping.target.kind = Normalization::unit_center_unit;
  mapping.source.mean = random_matrix(1, 5, generator);
  mapping.target.mean = random_matrix(1, 5, generator);
  const std::string path = TERMALIGN_BINARY_DIR "/test_mapping_roundtrip.txt";
  save_mapping(path, mapping);
  const Mapping loaded = load_mapping(path);
  CHECK(loaded.source.kind == Normalization::unit_center_unit);
  CHECK(loaded.source_transform == mapping.source_transform);
  CHECK(loaded.target_transform == mapping.target_transform);
  CHECK(loaded.source.mean == mapping.source.mean);
  CHECK(loaded.target.mean == mapping.target.mean);
  std::remove(path.c_str());
}

TEST_CASE("A malformed mapping file is an input error with its line", "[mapping]") {
  const std::string path = TERMALIGN_BINARY_DIR "/test_mapping_bad.txt";
  std::FILE* file = std::fopen(path.c_str(), "w");
  std::fputs("termalign-mapping 1\ndim 2 2\nnormalization unit\n0 0\n0 0\n1 0\n0 x\n", file);
  std::fclose(file);
  CHECK_THROWS_WITH(load_mapping(path), Catch::Contains("test_mapping_bad.txt:7"));
  const std::string good = "termalign-mapping 1\ndim 2 2\nnormalization unit\n0 0\n0 0\n1 0\n0 1\n1 0\n0 1\n";
  const auto load = [&](const std::string& text) {
    std::FILE* out = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), out);
    std::fclose(out);
    return load_mapping(path);
  };
  CHECK(load(good + "\n").source_transform.isIdentity());
  // A row with a value too many, and a second mapping after the first, are not read past in silence.
  CHECK_THROWS_WITH(load("termalign-mapping 1\ndim 2 2\nnormalization unit\n0 0 0\n"),
                    Catch::Contains("test_mapping_bad.txt:4: expected 2 numbers, found more."));
  CHECK_THROWS_WITH(
      load(good + "\n" + good),
      Catch::Contains("test_mapping_bad.txt:11: the mapping ends at line 9; this line is after it."));
  CHECK_THROWS_WITH(load("termalign-mapping 1\ndim 2 2\nnormalization auto\n0 0\n0 0\n1 0\n0 1\n1 0\n0 1\n"),
                    Catch::Contains("test_mapping_bad.txt:3: a mapping's normalization is the one it was fitted"));
  std::remove(path.c_str());
}

namespace {
// Every step of the framework off (the library's defaults turn several on): plain Procrustes.
MappingOptions procrustes_only() {
  MappingOptions options;
  options.whiten = false;
  options.src_reweight = options.tgt_reweight = 0;
  options.dewhiten = Dewhiten::none;
  options.dim_reduction = 0;
  options.refine_iterations = 0;
  return options;
}

Mapping fit_seed_only(const Matrix& X, const Matrix& Z, const MappingOptions& options) {
  const Matrix none(0, X.cols());
  return fit_mapping(X, Z, none, none, options);
}

// Columns scaled unevenly, so that whitening has something to undo.
Matrix anisotropic(const Matrix& M) {
  Matrix scaled = M;
  for (Eigen::Index j = 0; j < M.cols(); ++j) scaled.col(j) *= 0.2f + 0.4f * static_cast<float>(j);
  return scaled;
}
}  // namespace

TEST_CASE("Multi-step mapping with every step off is Procrustes", "[mapping]") {
  std::mt19937 generator(11);
  const Matrix X = random_matrix(60, 8, generator), Z = random_matrix(60, 8, generator);
  const Mapping mapping = fit_seed_only(X, Z, procrustes_only());
  CHECK((mapping.source_transform - procrustes(X, Z)).norm() < 1e-5);
  CHECK((mapping.target_transform - Matrix::Identity(8, 8)).norm() < 1e-5);
}

TEST_CASE("Re-weighting multiplies by the singular values of the cross-covariance", "[mapping]") {
  std::mt19937 generator(12);
  const Matrix X = random_matrix(50, 6, generator), Z = random_matrix(50, 6, generator);
  const Eigen::MatrixXd cross = X.cast<double>().transpose() * Z.cast<double>();  // = U S V^T
  SECTION("source power 1: U S V^T, the cross-covariance itself; target I") {
    MappingOptions options = procrustes_only();
    options.src_reweight = 1;
    const Mapping mapping = fit_seed_only(X, Z, options);
    CHECK((mapping.source_transform.cast<double>() - cross).norm() < 1e-4 * cross.norm());
    CHECK((mapping.target_transform - Matrix::Identity(6, 6)).norm() < 1e-5);
  }
  SECTION("target power 1: source U V^T, target V S V^T, whose square is cross^T cross") {
    MappingOptions options = procrustes_only();
    options.tgt_reweight = 1;
    const Mapping mapping = fit_seed_only(X, Z, options);
    CHECK((mapping.source_transform - procrustes(X, Z)).norm() < 1e-5);
    const Eigen::MatrixXd target = mapping.target_transform.cast<double>();
    const Eigen::MatrixXd expected = cross.transpose() * cross;
    CHECK((target * target - expected).norm() < 1e-4 * expected.norm());
    CHECK((target - target.transpose()).norm() < 1e-4 * target.norm());
  }
}

TEST_CASE("Whitening gives both sides' seed vectors orthonormal columns", "[mapping]") {
  std::mt19937 generator(13);
  const Matrix X = anisotropic(random_matrix(70, 7, generator)), Z = random_matrix(70, 7, generator);
  MappingOptions options = procrustes_only();
  options.whiten = true;
  const Mapping mapping = fit_seed_only(X, Z, options);
  // The transforms are W U V^T, with U, V orthogonal: (X W U V^T)^T (X W U V^T) = I exactly when W whitens X.
  const Eigen::MatrixXd source = (X * mapping.source_transform).cast<double>();
  const Eigen::MatrixXd target = (Z * mapping.target_transform).cast<double>();
  CHECK((source.transpose() * source - Eigen::MatrixXd::Identity(7, 7)).norm() < 1e-4);
  CHECK((target.transpose() * target - Eigen::MatrixXd::Identity(7, 7)).norm() < 1e-4);
}

TEST_CASE("Whitening on fewer seed pairs than dimensions is a usage error", "[mapping]") {
  std::mt19937 generator(14);
  const Matrix X = random_matrix(5, 8, generator), Z = random_matrix(5, 8, generator);
  MappingOptions options = procrustes_only();
  options.whiten = true;
  CHECK_THROWS_WITH(fit_seed_only(X, Z, options), Catch::Contains("singular"));
  options.whiten = false;
  CHECK_NOTHROW(fit_seed_only(X, Z, options));
}

TEST_CASE("Whitening, de-whitening both sides, recovers a rotation between the sides", "[mapping]") {
  std::mt19937 generator(15);
  const Eigen::Index d = 9;
  const Matrix X = anisotropic(random_matrix(80, d, generator));
  const Matrix R = random_orthogonal(d, generator);
  const Matrix Z = X * R;
  MappingOptions options = procrustes_only();
  options.whiten = true;
  options.dewhiten = Dewhiten::both;
  const Mapping mapping = fit_seed_only(X, Z, options);
  // Each source lands on its target: X A = Z B (= X R B), so A = R B.
  const Matrix mapped_source = X * mapping.source_transform, mapped_target = Z * mapping.target_transform;
  CHECK((mapped_source - mapped_target).norm() < 1e-3 * mapped_target.norm());
  CHECK((mapping.source_transform - R * mapping.target_transform).norm() < 1e-3);
  // De-whitening restores the original geometry: the mapped sources keep their Gram matrix.
  const Matrix gram = X * X.transpose(), mapped_gram = mapped_source * mapped_source.transpose();
  CHECK((mapped_gram - gram).norm() < 1e-3 * gram.norm());
}

TEST_CASE("Dimensionality reduction keeps the leading dimensions of the orthogonal map", "[mapping]") {
  std::mt19937 generator(16);
  const Matrix X = random_matrix(40, 8, generator), Z = random_matrix(40, 8, generator);
  MappingOptions options = procrustes_only();
  options.dim_reduction = 3;
  const Mapping mapping = fit_seed_only(X, Z, options);
  REQUIRE(mapping.source_transform.rows() == 8);
  REQUIRE(mapping.source_transform.cols() == 3);
  REQUIRE(mapping.target_transform.rows() == 8);
  REQUIRE(mapping.target_transform.cols() == 3);
  // The kept columns are the first 3 singular vectors: A^T (X^T Z) B is the diagonal of the 3 largest singular
  // values, computed here by an independent SVD.
  const Eigen::MatrixXd cross = X.cast<double>().transpose() * Z.cast<double>();
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(cross);
  const Eigen::MatrixXd A = mapping.source_transform.cast<double>(), B = mapping.target_transform.cast<double>();
  const Eigen::MatrixXd leading = svd.singularValues().head(3).asDiagonal();
  CHECK((A.transpose() * cross * B - leading).norm() < 1e-4 * cross.norm());
  CHECK((A.transpose() * A - Eigen::MatrixXd::Identity(3, 3)).norm() < 1e-5);

  options.dim_reduction = 9;
  CHECK_THROWS_WITH(fit_seed_only(X, Z, options), Catch::Contains("dim_reduction"));
}

namespace {
// Share of source rows whose nearest target row (cosine, after the mapping) is target_of[i].
double nearest_neighbour_accuracy(const Matrix& source, const Matrix& target, const Mapping& mapping,
                                  const std::vector<Eigen::Index>& target_of) {
  Matrix mapped_source = source * mapping.source_transform, mapped_target = target * mapping.target_transform;
  normalize_rows(mapped_source);
  normalize_rows(mapped_target);
  std::size_t correct = 0;
  for (Eigen::Index i = 0; i < source.rows(); ++i) {
    Eigen::Index best = 0;
    (mapped_target * mapped_source.row(i).transpose()).maxCoeff(&best);
    if (best == target_of[static_cast<std::size_t>(i)]) ++correct;
  }
  return static_cast<double>(correct) / static_cast<double>(source.rows());
}
}  // namespace

TEST_CASE("Self-learning refinement recovers a noisy rotation from a poor seed", "[mapping]") {
  std::mt19937 generator(17);
  const Eigen::Index words = 600, d = 16;
  Matrix source = random_matrix(words, d, generator);
  normalize_rows(source);
  const Matrix R = random_orthogonal(d, generator);
  // Target row target_of[i] is source row i rotated, plus noise; the target words come in another order.
  std::vector<Eigen::Index> target_of(static_cast<std::size_t>(words));
  for (Eigen::Index i = 0; i < words; ++i) target_of[static_cast<std::size_t>(i)] = i;
  std::shuffle(target_of.begin(), target_of.end(), generator);
  const Matrix noise = 0.1f * random_matrix(words, d, generator) / std::sqrt(static_cast<float>(d));
  const Matrix rotated = source * R + noise;
  Matrix target(words, d);
  for (Eigen::Index i = 0; i < words; ++i) target.row(target_of[static_cast<std::size_t>(i)]) = rotated.row(i);
  normalize_rows(target);

  // Seed: a few true pairs and a few wrong ones.
  const Eigen::Index true_pairs = 18, wrong_pairs = 6;
  Matrix Xs(true_pairs + wrong_pairs, d), Zt(true_pairs + wrong_pairs, d);
  for (Eigen::Index i = 0; i < true_pairs; ++i) {
    Xs.row(i) = source.row(i);
    Zt.row(i) = target.row(target_of[static_cast<std::size_t>(i)]);
  }
  for (Eigen::Index i = 0; i < wrong_pairs; ++i) {
    Xs.row(true_pairs + i) = source.row(100 + i);
    Zt.row(true_pairs + i) = target.row(target_of[static_cast<std::size_t>(200 + i)]);
  }

  MappingOptions options = procrustes_only();
  const Mapping seed_only = fit_mapping(Xs, Zt, source, target, options, 2);
  options.refine_iterations = 10;
  options.refine_words = static_cast<std::size_t>(words);
  const Mapping refined = fit_mapping(Xs, Zt, source, target, options, 2);
  const double before = nearest_neighbour_accuracy(source, target, seed_only, target_of);
  const double after = nearest_neighbour_accuracy(source, target, refined, target_of);
  // The noise leaves some words closer to another word's translation even under the true rotation.
  Mapping truth;
  truth.source_transform = R;
  truth.target_transform = Matrix::Identity(d, d);
  const double ceiling = nearest_neighbour_accuracy(source, target, truth, target_of);
  CAPTURE(before, after, ceiling);
  WARN("nearest-neighbour accuracy " << before << " -> " << after << " (true rotation " << ceiling << ")");
  CHECK(after > before + 0.2);
  CHECK(after > ceiling - 0.02);
}

TEST_CASE("Refinement that would drift is stopped and keeps the seed map's quality", "[mapping]") {
  // Translations of the seed words and of the test words, but the first rows of the two vocabularies (where the
  // refinement seeks its dictionary) are unrelated words: a dictionary induced among them is noise.
  std::mt19937 generator(23);
  const Eigen::Index d = 100, seed_words = 200, test_words = 300, unrelated = 1000;
  const Matrix R = random_orthogonal(d, generator);
  const auto translate = [&](const Matrix& source) {
    Matrix target = source * R + 1.5f * random_matrix(source.rows(), d, generator) / std::sqrt(float(d));
    normalize_rows(target);
    return target;
  };
  Matrix Xs = random_matrix(seed_words, d, generator), test = random_matrix(test_words, d, generator);
  normalize_rows(Xs);
  normalize_rows(test);
  const Matrix Zt = translate(Xs), test_target = translate(test);
  Matrix source_first = random_matrix(unrelated, d, generator),
         target_first = random_matrix(unrelated, d, generator);
  normalize_rows(source_first);
  normalize_rows(target_first);
  Matrix source_vocabulary(unrelated + test_words, d), target_vocabulary(unrelated + test_words, d);
  source_vocabulary << source_first, test;
  target_vocabulary << target_first, test_target;
  std::vector<Eigen::Index> target_of(static_cast<std::size_t>(test_words));  // retrieved among all target words
  for (Eigen::Index i = 0; i < test_words; ++i) target_of[static_cast<std::size_t>(i)] = unrelated + i;

  MappingOptions options;  // the default: multi-step mapping, 3 checked iterations
  options.refine_words = static_cast<std::size_t>(unrelated);
  MappingOptions seed_only = options;
  seed_only.refine_iterations = 0;
  MappingOptions unchecked = options;
  unchecked.refine_validation = 0;
  const auto accuracy = [&](const MappingOptions& fit) {
    return nearest_neighbour_accuracy(
        test, target_vocabulary, fit_mapping(Xs, Zt, source_vocabulary, target_vocabulary, fit, 2), target_of);
  };
  const double seed_map = accuracy(seed_only), checked = accuracy(options), drifted = accuracy(unchecked);
  CAPTURE(seed_map, checked, drifted);
  // Without the check the noise dictionary drags the map down; with it the seed map's quality stays.
  CHECK(drifted < seed_map - 0.1);
  CHECK(checked >= seed_map - 0.01);
  // With real pairs among the first rows the check lets the refinement run: the map is not the seed map's.
  Matrix aligned_target = target_vocabulary;
  aligned_target.topRows(unrelated) = translate(source_first);
  const Mapping refined = fit_mapping(Xs, Zt, source_vocabulary, aligned_target, options, 2);
  const Mapping seed_fit = fit_mapping(Xs, Zt, source_vocabulary, aligned_target, seed_only, 2);
  CHECK(!refined.source_transform.isApprox(seed_fit.source_transform, 1e-4f));
  CHECK(nearest_neighbour_accuracy(test, aligned_target, refined, target_of) >=
        nearest_neighbour_accuracy(test, aligned_target, seed_fit, target_of) - 0.01);
}

TEST_CASE("The refinement's check stops a map only when its P@1 and its P@5 both fall", "[mapping]") {
  using termalign::detail::compare_hits;
  using termalign::detail::HitComparison;
  using termalign::detail::worse_map;
  // Held-out words: `lost` hits of the best map missed by the new one, `gained` the reverse, `kept` hit by both.
  const auto comparison = [](std::size_t lost, std::size_t gained, std::size_t kept, std::size_t words) {
    std::vector<char> before(words, 0), after(words, 0);
    std::size_t i = 0;
    for (std::size_t k = 0; k < kept; ++k, ++i) before[i] = after[i] = 1;
    for (std::size_t k = 0; k < lost; ++k, ++i) before[i] = 1;
    for (std::size_t k = 0; k < gained; ++k, ++i) after[i] = 1;
    const HitComparison result = compare_hits(before, after);
    REQUIRE(result.lost == lost);
    REQUIRE(result.gained == gained);
    return result;
  };
  // The figures logged on the cases of its comment (245, 200, 1000, 472 and 1381 held-out words).
  // A noisy seed: P@1 10.2 % -> 5.7 %, but P@5 18.4 % -> 22.4 %: the refinement goes on.
  CHECK_FALSE(worse_map(comparison(16, 5, 9, 245), comparison(4, 14, 41, 245)));
  // The same P@1 with a P@5 that falls as much: stopped.
  CHECK(worse_map(comparison(16, 5, 9, 245), comparison(14, 4, 41, 245)));
  // Rows in unrelated orders: P@1 21.5 % -> 17.0 %, P@5 41.5 % -> 38.5 %; and 21.8 % -> 4.8 %.
  CHECK(worse_map(comparison(22, 13, 21, 200), comparison(17, 11, 66, 200)));
  CHECK(worse_map(comparison(189, 19, 29, 1000), comparison(337, 26, 91, 1000)));
  // enfr/train: P@1 within a point, not significant.
  CHECK_FALSE(worse_map(comparison(47, 43, 129, 472), comparison(17, 19, 279, 472)));
  // A significant fall that keeps 80 % of the hits (identical strings as the seed: 52.9 % -> 47.3 %).
  CHECK_FALSE(worse_map(comparison(142, 64, 589, 1381), comparison(102, 24, 923, 1381)));
}

TEST_CASE("Seed products: the brute-force double products, the same bits on any thread count", "[mapping]") {
  std::mt19937 generator(21);
  // 2,600 pairs: three parts of the fixed split (1,024 rows), the last one partial, each of several blocks.
  const Matrix X = anisotropic(random_matrix(2600, 12, generator)), Z = random_matrix(2600, 12, generator);
  MappingOptions options = procrustes_only();
  options.whiten = true;
  const SeedProducts one = seed_products(X, Z, options, 1);
  REQUIRE(one.pairs == 2600);
  const Eigen::MatrixXd x = X.cast<double>(), z = Z.cast<double>();
  const Eigen::MatrixXd cross = x.transpose() * z, source_gram = x.transpose() * x,
                        target_gram = z.transpose() * z;
  CHECK((one.cross - cross).norm() < 1e-9 * cross.norm());
  CHECK((one.source_gram - source_gram).norm() < 1e-9 * source_gram.norm());
  CHECK((one.target_gram - target_gram).norm() < 1e-9 * target_gram.norm());
  for (const int threads : {2, 3}) {
    INFO(threads << " threads");
    const SeedProducts several = seed_products(X, Z, options, threads);
    CHECK(several.cross == one.cross);
    CHECK(several.source_gram == one.source_gram);
    CHECK(several.target_gram == one.target_gram);
  }
  // Without whitening, no grams; the mapping from the products is fit_mapping's.
  const SeedProducts plain = seed_products(X, Z, procrustes_only(), 2);
  CHECK(plain.source_gram.size() == 0);
  CHECK(plain.target_gram.size() == 0);
  const Mapping from_products = mapping_from_products(one, options);
  const Mapping fitted = fit_seed_only(X, Z, options);
  CHECK(from_products.source_transform == fitted.source_transform);
  CHECK(from_products.target_transform == fitted.target_transform);
  options.dim_reduction = 13;
  CHECK_THROWS_WITH(seed_products(X, Z, options, 2), Catch::Contains("dim_reduction"));
}
