#include "rerank/logistic.h"

#include <Eigen/Cholesky>
#include <cmath>

#include "termalign/error.h"
#include "termalign/interrupt.h"

namespace termalign {

namespace detail {

Eigen::VectorXd logistic_scores(const Reranker& model, const Matrix& features_matrix) {
  const Eigen::MatrixXd x = features_matrix.cast<double>();
  Eigen::VectorXd scores(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    scores(i) = model.bias + ((x.row(i).transpose() - model.mean).cwiseQuotient(model.scale)).dot(model.weights);
  }
  return scores;
}

Matrix logistic_contributions(const Reranker& model, const Matrix& features_matrix) {
  const Eigen::Index f = features_matrix.cols();
  Matrix parts(features_matrix.rows(), f + 1);
  for (Eigen::Index i = 0; i < features_matrix.rows(); ++i) {
    for (Eigen::Index j = 0; j < f; ++j)
      parts(i, j) =
          static_cast<float>(model.weights(j) * (features_matrix(i, j) - model.mean(j)) / model.scale(j));
    parts(i, f) = static_cast<float>(model.bias);
  }
  return parts;
}

}  // namespace detail

Reranker train_logistic(const Matrix& features_matrix, const std::vector<std::string>& names,
                        const std::vector<std::uint8_t>& labels, double l2) {
  const Eigen::Index n = features_matrix.rows(), f = features_matrix.cols();
  TERMALIGN_CHECK(static_cast<std::size_t>(n) == labels.size(), "one label per candidate");
  TERMALIGN_CHECK(static_cast<std::size_t>(f) == names.size(), "one name per feature");
  Reranker model;
  model.features = names;
  const Eigen::MatrixXd raw = features_matrix.cast<double>();
  model.mean = n ? Eigen::VectorXd(raw.colwise().mean().transpose()) : Eigen::VectorXd::Zero(f);
  model.scale = Eigen::VectorXd::Ones(f);
  for (Eigen::Index j = 0; j < f && n > 1; ++j) {
    const double deviation =
        std::sqrt((raw.col(j).array() - model.mean(j)).square().sum() / static_cast<double>(n));
    if (deviation > 1e-12) model.scale(j) = deviation;
  }
  // Design matrix with a trailing column of ones for the bias.
  Eigen::MatrixXd x(n, f + 1);
  x.leftCols(f) = (raw.rowwise() - model.mean.transpose()).array().rowwise() / model.scale.transpose().array();
  x.col(f).setOnes();
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) y(i) = labels[static_cast<std::size_t>(i)] ? 1.0 : 0.0;
  Eigen::VectorXd w = Eigen::VectorXd::Zero(f + 1);
  Eigen::VectorXd penalty = Eigen::VectorXd::Constant(f + 1, l2);
  penalty(f) = 0;
  for (int iteration = 0; iteration < 50; ++iteration) {
    throw_if_interrupted();
    const Eigen::VectorXd p =
        (-(x * w)).array().exp().matrix().unaryExpr([](double e) { return 1.0 / (1.0 + e); });
    const Eigen::VectorXd gradient = x.transpose() * (p - y) + penalty.cwiseProduct(w);
    const Eigen::VectorXd curvature = (p.array() * (1.0 - p.array())).matrix();
    Eigen::MatrixXd hessian = x.transpose() * curvature.asDiagonal() * x;
    hessian.diagonal() += penalty + Eigen::VectorXd::Constant(f + 1, 1e-9);
    const Eigen::VectorXd step = hessian.ldlt().solve(gradient);
    w -= step;
    if (step.norm() < 1e-8) break;
  }
  model.weights = w.head(f);
  model.bias = w(f);
  return model;
}

}  // namespace termalign
