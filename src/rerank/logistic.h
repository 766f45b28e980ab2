// The logistic regression learner: a model over standardised features, fitted by Newton's method.
#pragma once

#include <Eigen/Core>

#include "rerank/reranker.h"

namespace termalign::detail {

// The logit of each row of `features_matrix` (the model's columns in its order) by a logistic model.
Eigen::VectorXd logistic_scores(const Reranker& model, const Matrix& features_matrix);
// Each row's contribution of each feature to its logit (the last column: the bias).
Matrix logistic_contributions(const Reranker& model, const Matrix& features_matrix);

}  // namespace termalign::detail
