// Re-ranker model files: writing them, and reading them with their features checked against the feature table.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "io/io.h"
#include "rerank/boosted_trees.h"
#include "rerank/features.h"
#include "rerank/reranker.h"
#include "termalign/error.h"
#include "termalign/logging.h"

namespace termalign {

namespace {

constexpr const char* kLogisticHeader = "termalign-reranker 1";
constexpr const char* kTreesHeader = "termalign-reranker-trees 1";
constexpr const char* kStagesHeader = "termalign-reranker-stages 2";
constexpr const char* kSecondStageLine = "second stage";
constexpr const char* kRevisionLine = "feature revision ";

// Each line after "# ", its control characters (a line end in a file name) as '?', so that it stays one line.
std::string format_provenance(const Reranker& model) {
  std::string text;
  for (std::string line : model.provenance) {
    for (char& c : line)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
    text += "# " + line + "\n";
  }
  return text;
}

// One stage's text: its learner, features and weights or trees (neither its provenance nor a first stage).
std::string format_stage(const Reranker& model) {
  if (model.learner != Learner::logistic) {
    std::string text = std::string(kTreesHeader) + "\nlearner " + to_string(model.learner) + "\nfeatures";
    for (const std::string& name : model.features) text += " " + name;
    return text + "\n" + model.booster + "\n";
  }
  std::string text = std::string(kLogisticHeader) + "\n";
  char line[256];
  for (std::size_t j = 0; j < model.features.size(); ++j) {
    const auto index = static_cast<Eigen::Index>(j);
    std::snprintf(line, sizeof line, "%s %.17g %.17g %.17g\n", model.features[j].c_str(), model.mean(index),
                  model.scale(index), model.weights(index));
    text += line;
  }
  std::snprintf(line, sizeof line, "bias %.17g\n", model.bias);
  text += line;
  return text;
}

}  // namespace

std::string format_reranker(const Reranker& model) {
  // The file's provenance is the model's: a stage's own is not written (the file could not be read back).
  if (!model.first_stage) return format_provenance(model) + format_stage(model);
  return format_provenance(model) + kStagesHeader + "\n" + format_stage(*model.first_stage) + kSecondStageLine +
         "\n" + format_stage(model);
}

void save_reranker(const std::string& path, const Reranker& model) {
  write_file_atomically(path, format_reranker(model));
}

namespace {

// The end (one past its closing brace) of the JSON object that starts at text[begin] ('{'), or npos when it does
// not close: braces are counted outside strings.
std::size_t json_object_end(const std::string& text, std::size_t begin) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string::npos;
}

bool blank(const std::string& text, std::size_t from = 0) {
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(std::min(from, text.size())), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

// Which stage of its file a model's text is: it decides which features it may read and how messages name it.
enum class Stage { only, first, second };

// A stage's feature `name`, checked against the feature table: an error naming it (through `fail`, at its line)
// when no feature has that name, or when it is a first stage's column outside a second stage.
template <typename Fail>
void check_feature(const std::string& name, Stage stage, const Fail& fail) {
  const detail::Feature* feature = detail::find_feature(name);
  if (!feature) {
    fail("unknown feature '" + name +
         "': this termalign computes no feature of that name. Models trained before the similarities became "
         "run-relative (features such as 'csls', now 'csls_q') must be trained again with `termalign "
         "train-reranker`.");
  } else if (feature->group == detail::FeatureGroup::first_stage && stage != Stage::second) {
    fail("the feature '" + name +
         "' is a first stage's column: only the second stage of a two-stage model reads it.");
  }
}

// One stage's text (a model of one stage), its first line being line `first_line` of `origin`.
Reranker parse_stage(const std::string& text, const std::string& origin, std::size_t first_line, Stage stage) {
  const std::string prefix = stage == Stage::first    ? "first stage: "
                             : stage == Stage::second ? "second stage: "
                                                      : "";
  const auto fail = [&](std::size_t line, const std::string& message) {
    throw_input_error(origin, first_line - 1 + line, prefix + message);
  };
  std::istringstream stream(text);
  std::string line;
  Reranker model;
  std::getline(stream, line);
  if (line == kStagesHeader) fail(1, "a model has at most two stages.");
  if (line == kTreesHeader) {
    std::string word, name;
    if (!std::getline(stream, line) || !(std::istringstream(line) >> word >> name) || word != "learner")
      fail(2, "expected 'learner trees' or 'learner ranking'.");
    if (name != to_string(Learner::trees) && name != to_string(Learner::ranking))
      fail(2, "unknown learner '" + name + "' (a trees model is 'trees' or 'ranking').");
    model.learner = parse_learner(name);
    std::istringstream names;
    if (!std::getline(stream, line) || !((names.str(line), names) >> word) || word != "features")
      fail(3, "expected 'features NAME...'.");
    while (names >> name) {
      check_feature(name, stage, [&](const std::string& message) { fail(3, message); });
      model.features.push_back(name);
    }
    if (model.features.empty()) fail(3, "expected 'features NAME...': the model names no feature.");
    const std::size_t json = static_cast<std::size_t>(stream.tellg());
    const std::size_t json_end =
        text.compare(std::min(json, text.size()), 1, "{") == 0 ? json_object_end(text, json) : std::string::npos;
    if (json_end == std::string::npos) fail(4, "expected the XGBoost model (one JSON object) from this line.");
    if (!blank(text, json_end)) {  // the line of the first character after the JSON
      const std::size_t next = text.find_first_not_of(" \t\r\n\v\f", json_end);
      const std::size_t after =
          4 + static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(json),
                                                  text.begin() + static_cast<std::ptrdiff_t>(next), '\n'));
      fail(after, "text after the XGBoost model (a two-stage model needs its first line '" +
                      std::string(kStagesHeader) + "').");
    }
    model.booster = text.substr(json, json_end - json);
    BoostedTreesInfo info;
    try {
      info = inspect_boosted_trees(model.booster);
    } catch (const Error& error) {
      fail(4, std::string("not an XGBoost model: ") + error.what());
    }
    if (info.features != model.features.size())
      fail(3, "the line names " + std::to_string(model.features.size()) +
                  " features, but its XGBoost model reads " + std::to_string(info.features) + ".");
    if (!info.names.empty() && info.names != model.features) {
      std::size_t j = 0;
      while (info.names[j] == model.features[j]) ++j;
      fail(3, "feature " + std::to_string(j + 1) + " is '" + model.features[j] +
                  "', but its XGBoost model was trained on '" + info.names[j] + "' there.");
    }
    model.compiled = compile_boosted_trees(model.booster);
    return model;
  }
  if (line != kLogisticHeader) fail(1, "not a termalign re-ranker model (bad header).");
  std::vector<double> means, scales, weights;
  for (std::size_t number = 2;; ++number) {
    std::string name, extra;
    double a = 0, b = 0, c = 0;
    if (!std::getline(stream, line)) fail(number, "expected 'bias VALUE' at the end.");
    std::istringstream fields(line);
    if (!(fields >> name)) fail(number, "expected 'feature mean scale weight'.");
    if (name == "bias") {
      if (!(fields >> model.bias) || fields >> extra) fail(number, "expected 'bias VALUE'.");
      for (std::size_t after = number + 1; std::getline(stream, line); ++after)
        if (!blank(line)) fail(after, "text after the bias, the model's last line.");
      break;
    }
    if (!(fields >> a >> b >> c) || fields >> extra) fail(number, "expected 'feature mean scale weight'.");
    if (!(b > 0)) fail(number, "the scale must be positive.");
    check_feature(name, stage, [&](const std::string& message) { fail(number, message); });
    model.features.push_back(name);
    means.push_back(a), scales.push_back(b), weights.push_back(c);
  }
  const auto f = static_cast<Eigen::Index>(means.size());
  model.mean = Eigen::Map<Eigen::VectorXd>(means.data(), f);
  model.scale = Eigen::Map<Eigen::VectorXd>(scales.data(), f);
  model.weights = Eigen::Map<Eigen::VectorXd>(weights.data(), f);
  return model;
}

// A model's text from its header on, the header being line 1 + `skipped` of `origin`.
Reranker parse_body(const std::string& text, const std::string& origin, std::size_t skipped) {
  const std::size_t first_end = text.find('\n');
  if (text.compare(0, first_end, kStagesHeader) != 0) return parse_stage(text, origin, 1 + skipped, Stage::only);
  const std::string marker = std::string("\n") + kSecondStageLine + "\n";
  const std::size_t first_begin = first_end + 1, split = text.find(marker, first_end);
  if (split == std::string::npos) {
    throw_input_error(
        origin, 0, std::string("a two-stage model needs a line '") + kSecondStageLine + "' between its stages.");
  }
  const std::size_t second_line =
      2 + 1 +
      static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(first_begin),
                                          text.begin() + static_cast<std::ptrdiff_t>(split + 1), '\n'));
  Reranker first =
      parse_stage(text.substr(first_begin, split + 1 - first_begin), origin, 2 + skipped, Stage::first);
  Reranker model = parse_stage(text.substr(split + marker.size()), origin, second_line + skipped, Stage::second);
  model.first_stage = std::make_shared<const Reranker>(std::move(first));
  return model;
}

}  // namespace

Reranker parse_reranker(const std::string& whole_text, const std::string& origin) {
  // The provenance: lines "# ..." before the header (after a byte order mark, as in every text input).
  std::vector<std::string> provenance;
  int revision = 0;
  std::size_t begin = whole_text.compare(0, kUtf8Bom.size(), kUtf8Bom) == 0 ? kUtf8Bom.size() : 0;
  while (begin < whole_text.size() && whole_text[begin] == '#') {
    const std::size_t end = std::min(whole_text.find('\n', begin), whole_text.size());
    std::string line = whole_text.substr(begin, end - begin);
    line.erase(0, line.compare(0, 2, "# ") == 0 ? 2 : 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF file then fails at its header
    if (line.rfind(kRevisionLine, 0) == 0) {
      const std::string number = line.substr(std::strlen(kRevisionLine));
      char* stop = nullptr;
      const long value = std::strtol(number.c_str(), &stop, 10);
      if (number.empty() || *stop != '\0' || value <= 0 || value > 1000000)
        throw_input_error(origin, provenance.size() + 1,
                          "expected '# feature revision N' (N a positive integer).");
      if (revision != 0) throw_input_error(origin, provenance.size() + 1, "a second '# feature revision' line.");
      revision = static_cast<int>(value);
    }
    provenance.push_back(std::move(line));
    begin = end + 1;
  }
  const std::size_t skipped = provenance.size();
  Reranker model = parse_body(whole_text.substr(std::min(begin, whole_text.size())), origin, skipped);
  model.provenance = std::move(provenance);
  model.feature_revision = revision;
  return model;
}

Reranker load_reranker(const std::string& path) {
  Reranker model = parse_reranker(read_file(path), path);
  // One warning per file as it is: a run loads its model in its checks, then to score (and explain once more).
  static std::mutex warned_mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(warned_mutex);
    if (model.feature_revision == kFeatureRevision || !warned.insert(path + "\n" + file_signature(path)).second)
      return model;
  }
  if (model.feature_revision == 0) {
    logger().warn(
        "{}: the model does not say which revision of the features it was trained on (no '# feature revision' "
        "line: trained before termalign recorded it, or written by hand); if an earlier termalign "
        "trained it, some features may mean something else now and its ranking be off: train it again with "
        "train-reranker",
        path);
  } else if (model.feature_revision != kFeatureRevision) {
    logger().warn(
        "{}: the model was trained on feature revision {}, but this termalign computes revision {}: some "
        "features mean something else now, and its ranking will be off; train it again with this train-reranker",
        path, model.feature_revision, kFeatureRevision);
  }
  return model;
}

}  // namespace termalign
