// The report's page: inline SVG charts and the HTML sections over the runs and the gold that report.cpp read.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evaluation/report_parts.h"
#include "termalign/evaluation.h"
#include "io/io.h"

namespace termalign::detail {

namespace {

const std::array<const char*, 8> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};
const char* colour(std::size_t run) { return kColours[run % kColours.size()]; }

std::string decimal(double value) { return fmt::format("{:.6f}", value); }

// "the first 300 of 1,234 listed" when a table is cut.
std::string count_note(std::size_t listed, std::size_t total, const std::string& what) {
  if (listed == total) return fmt::format("<p class=note>{} {}.</p>\n", total, what);
  return fmt::format("<p class=note>{} {}; the first {} are listed.</p>\n", total, what, listed);
}

// --- Charts: inline SVG -------------------------------------------------------------------------------------

struct Series {
  std::string colour;
  std::vector<std::pair<double, double>> points;
};

constexpr double kChartWidth = 520, kChartHeight = 320, kLeft = 60, kRight = 16, kTop = 30, kBottom = 46;

// How the x axis's ticks read: fractions, whole numbers (ranks), or unlabelled (the bar chart names its groups).
enum class XTicks { fractions, integers, none };

std::string tick_label(double value, XTicks ticks) {
  if (ticks == XTicks::none) return "";
  return ticks == XTicks::integers ? fmt::format("{}", std::llround(value)) : fmt::format("{:.1f}", value);
}

// Axes from 0 to x_max and y_max with five ticks each; a dashed vertical line at `marker_x` when it is finite.
std::string chart_frame(const std::string& title, const std::string& x_label, const std::string& y_label,
                        double x_max, double y_max, XTicks x_ticks, double marker_x = NAN,
                        const std::string& marker_label = "") {
  const double plot_width = kChartWidth - kLeft - kRight, plot_height = kChartHeight - kTop - kBottom;
  std::string svg = fmt::format(
      "<svg class=chart width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\">"
      "<title>{2}</title><text x=\"{3}\" y=\"18\" class=ctitle>{2}</text>",
      kChartWidth, kChartHeight, escape(title), kLeft);
  for (int i = 0; i <= 5; ++i) {
    const double x = kLeft + plot_width * i / 5, y = kTop + plot_height * (5 - i) / 5;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" class=tick text-anchor=\"middle\">{4}</text>",
        x, kTop, kTop + plot_height, kTop + plot_height + 14, tick_label(x_max * i / 5, x_ticks));
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" class=tick text-anchor=\"end\">{5}</text>",
        kLeft, y, kLeft + plot_width, kLeft - 5, y + 4, tick_label(y_max * i / 5, XTicks::fractions));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", kLeft, kTop,
                     plot_width, plot_height);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=axis text-anchor=\"middle\">{}</text>", kLeft + plot_width / 2,
                     kChartHeight - 8, escape(x_label));
  svg += fmt::format(
      "<text x=\"14\" y=\"{0}\" class=axis text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>",
      kTop + plot_height / 2, escape(y_label));
  if (std::isfinite(marker_x) && marker_x <= x_max && x_max > 0) {
    const double x = kLeft + plot_width * marker_x / x_max;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"marker\"/>"
        "<text x=\"{3:.1f}\" y=\"{4}\" class=tick text-anchor=\"end\">{5}</text>",
        x, kTop, kTop + plot_height, x - 3, kTop + 12, escape(marker_label));
  }
  return svg;
}

std::string line_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                       double x_max, double y_max, XTicks x_ticks, const std::vector<Series>& series,
                       double marker_x = NAN, const std::string& marker_label = "") {
  std::string svg = chart_frame(title, x_label, y_label, x_max, y_max, x_ticks, marker_x, marker_label);
  const double plot_width = kChartWidth - kLeft - kRight, plot_height = kChartHeight - kTop - kBottom;
  for (const Series& line : series) {
    std::string points;
    for (const auto& [x, y] : line.points) {
      points += fmt::format("{:.1f},{:.1f} ", kLeft + plot_width * (x_max > 0 ? x / x_max : 0),
                            kTop + plot_height * (1 - (y_max > 0 ? y / y_max : 0)));
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" points=\"{}\"/>", line.colour,
                       points);
  }
  return svg + "</svg>\n";
}

// One group of bars per subset, one bar per run, values in [0, 1].
std::string bar_chart(const std::string& title, const std::vector<std::string>& groups,
                      const std::vector<std::vector<double>>& values_by_run) {
  std::string svg =
      chart_frame(title, "gold subset", title, static_cast<double>(groups.size()), 1.0, XTicks::none);
  const double plot_width = kChartWidth - kLeft - kRight, plot_height = kChartHeight - kTop - kBottom;
  const double group_width = plot_width / static_cast<double>(groups.size());
  const double bar_width = group_width * 0.8 / static_cast<double>(std::max<std::size_t>(1, values_by_run.size()));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t run = 0; run < values_by_run.size(); ++run) {
      const double value = values_by_run[run][g], height = plot_height * std::clamp(value, 0.0, 1.0);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{} {:.3f}</title>"
          "</rect>",
          kLeft + group_width * (static_cast<double>(g) + 0.1) + bar_width * static_cast<double>(run),
          kTop + plot_height - height, bar_width, height, colour(run), escape(groups[g]), value);
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=glabel text-anchor=\"middle\">{}</text>",
                       kLeft + group_width * (static_cast<double>(g) + 0.5), kTop + plot_height + 14,
                       escape(groups[g]));
  }
  return svg + "</svg>\n";
}

// At most about `count` points of a curve, always its last.
template <typename Point>
std::vector<Point> thinned(const std::vector<Point>& points, std::size_t count) {
  const std::size_t step = std::max<std::size_t>(1, (points.size() + count - 1) / count);
  std::vector<Point> kept;
  for (std::size_t i = 0; i < points.size(); i += step) kept.push_back(points[i]);
  if (!points.empty() && (points.size() - 1) % step != 0) kept.push_back(points.back());
  return kept;
}

// --- Sections -----------------------------------------------------------------------------------------------

std::string legend(const std::vector<Run>& runs) {
  std::string html = "<p class=legend>";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    html += fmt::format("<span><i style=\"background:{}\"></i>{}</span> ", colour(r), escape(runs[r].label));
  }
  return html + "</p>\n";
}

// What pushed a ranked pair up, from its explain row: the re-ranker's largest contributions, else the parts of
// CSLS and the spelling bonus.
std::string pushed_up(const ExplainFile& explanation, std::size_t place) {
  const std::vector<double>& row = explanation.values[place];
  std::vector<std::pair<double, std::string>> contributions;
  const std::string prefix = "contribution:";
  for (std::size_t c = 0; c < explanation.columns.size(); ++c) {
    const std::string& name = explanation.columns[c];
    if (name.rfind(prefix, 0) != 0 || !(row[c] > 0)) continue;
    const std::string feature = name.substr(prefix.size());
    const std::optional<std::size_t> value = explanation.column("feature:" + feature);
    contributions.emplace_back(
        row[c], fmt::format("<b>{}</b> +{:.3f}{}", escape(feature), row[c],
                            value ? fmt::format(" <span class=dim>({:.3g})</span>", row[*value]) : ""));
  }
  if (!explanation.column("reranker_bias")) {
    std::string parts;
    for (const char* name : {"csls", "cosine", "r_T", "r_S", "orthographic_bonus"}) {
      if (const std::optional<std::size_t> c = explanation.column(name))
        parts += fmt::format("{}{} {:.3f}", parts.empty() ? "" : ", ", name, row[*c]);
    }
    return parts;
  }
  std::sort(contributions.begin(), contributions.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string parts;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, contributions.size()); ++i)
    parts += (i ? "; " : "") + contributions[i].second;
  return parts.empty() ? "no positive contribution" : parts;
}

std::string gold_targets_cell(const Gold& gold, std::string_view source) {
  const auto found = gold.targets.find(source);
  if (found == gold.targets.end()) return "<span class=dim>not in the gold</span>";
  std::string cell;
  for (const std::string_view target : found->second) cell += (cell.empty() ? "" : ", ") + escape(target);
  return cell;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

std::string summary_section(const std::vector<Run>& runs) {
  struct Column {
    const char* key;
    const char* label;
  };
  const std::vector<Column> columns = {{"ap", "AP"},
                                       {"ap_interpolated", "AP interp."},
                                       {"n_sys", "nSys"},
                                       {"n_gold", "nGold"},
                                       {"tp", "TP"},
                                       {"fp", "FP"},
                                       {"fn", "FN"},
                                       {"precision", "P"},
                                       {"recall", "R"},
                                       {"f1", "F1"},
                                       {"p_at.1", "P@1"},
                                       {"p_at.10", "P@10"},
                                       {"p_at.100", "P@100"},
                                       {"p_at.1000", "P@1000"},
                                       {"cap", "cap"},
                                       {"past_cap", "past cap"},
                                       {"ap_capped", "AP within cap"}};
  std::string html =
      "<h2 id=summary>Scores</h2>\n<p class=note>As <code>termalign evaluate --json --breakdown</code> computes "
      "them (6 decimals here; the exact values are in the page's <code>evaluation</code> JSON block). Each AP "
      "has its 95 % interval (bootstrap over the source terms of the gold and of the run). With several runs, "
      "each one's AP difference to the first, its 95 % interval (paired bootstrap over source terms) and its "
      "p-value (paired randomisation): an interval that holds 0 shows no difference.</p>\n"
      "<div class=scroll><table class=summary><thead><tr><th>run</th>";
  for (const Column& column : columns) {
    html += fmt::format("<th>{}</th>", column.label);
    if (column.key == std::string("ap")) html += "<th>AP 95 % interval</th>";
  }
  // With several runs: each one's AP difference to the first, its 95 % paired-bootstrap interval over source terms
  // and the paired randomisation test's p-value (evaluate's).
  const bool compared = runs.size() > 1;
  if (compared) html += "<th>AP difference to the first</th><th>95 % interval</th><th>p</th>";
  html += "</tr></thead><tbody>\n";
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const EvaluationResult& result = runs[r].result;
    const std::map<std::string, std::string> cells = {
        {"ap", decimal(result.ap)},
        {"ap_interpolated", decimal(result.ap_interpolated)},
        {"n_sys", std::to_string(result.n_sys)},
        {"n_gold", std::to_string(result.n_gold)},
        {"tp", std::to_string(result.tp)},
        {"fp", std::to_string(result.fp)},
        {"fn", std::to_string(result.fn)},
        {"precision", decimal(result.precision)},
        {"recall", decimal(result.recall)},
        {"f1", decimal(result.f1)},
        {"p_at.1", decimal(result.p_at.at(1))},
        {"p_at.10", decimal(result.p_at.at(10))},
        {"p_at.100", decimal(result.p_at.at(100))},
        {"p_at.1000", decimal(result.p_at.at(1000))},
        {"cap", result.has_cap ? std::to_string(result.cap) : ""},
        {"past_cap", result.has_cap ? std::to_string(result.past_cap) : ""},
        {"ap_capped", result.has_cap ? decimal(result.ap_capped) : ""}};
    html += fmt::format("<tr><td title=\"{}\"><i class=swatch style=\"background:{}\"></i>{}</td>",
                        escape(runs[r].path), colour(r), escape(runs[r].label));
    for (const Column& column : columns) {
      html += fmt::format("<td data-run=\"{}\" data-key=\"{}\">{}</td>", r, column.key, cells.at(column.key));
      if (column.key == std::string("ap")) {
        html +=
            fmt::format("<td class=interval>[{:.4f}, {:.4f}]</td>", runs[r].interval.low, runs[r].interval.high);
      }
    }
    if (const std::optional<Difference>& d = runs[r].difference) {
      html += fmt::format("<td>{:+.4f}</td><td>[{:+.4f}, {:+.4f}]</td><td>{:.4f}</td>", d->ap, d->low, d->high,
                          d->p_value);
    } else if (compared) {
      html += "<td></td><td></td><td></td>";
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table></div>\n";
}

std::string curves_section(const std::vector<Run>& runs) {
  constexpr std::size_t kPoints = 600;
  std::vector<Series> precision_recall, ap_by_rank;
  double max_recall = 0, max_rank = 1, max_ap = 0;
  std::optional<std::size_t> cap;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    Series pr{colour(r), {}}, ap{colour(r), {}};
    for (const CurvePoint& point : thinned(runs[r].curve, kPoints)) {
      pr.points.emplace_back(point.recall, point.precision);
      ap.points.emplace_back(static_cast<double>(point.rank), point.ap);
    }
    if (!runs[r].curve.empty()) {
      max_recall = std::max(max_recall, runs[r].curve.back().recall);
      max_rank = std::max(max_rank, static_cast<double>(runs[r].curve.back().rank));
      max_ap = std::max(max_ap, runs[r].curve.back().ap);
    }
    if (runs[r].result.has_cap) cap = runs[r].result.cap;
    precision_recall.push_back(std::move(pr));
    ap_by_rank.push_back(std::move(ap));
  }
  // Round the axes up to a tenth so that the ticks read plainly.
  const auto tenth_above = [](double value) { return std::max(0.1, std::ceil(value * 10 - 1e-9) / 10); };
  std::string html = "<h2 id=curves>Curves</h2>\n" + legend(runs) + "<div class=charts>";
  html += line_chart("Precision against recall", "recall", "precision", tenth_above(max_recall), 1.0,
                     XTicks::fractions, precision_recall);
  html += line_chart("AP against rank", "rank", "AP down to the rank", max_rank, tenth_above(max_ap),
                     XTicks::integers, ap_by_rank, cap ? static_cast<double>(*cap) : NAN, "cap");
  return html + "</div>\n";
}

std::string breakdown_section(const std::vector<Run>& runs) {
  const std::vector<std::string> subsets = {"identical", "close", "far", "single-word", "multi-word"};
  std::string html =
      "<h2 id=breakdown>Breakdown</h2>\n<p class=note>Gold pairs by the spelling distance of their terms "
      "(identical; close: 1 to 3 code points; far) and by the words of the source term. A subset's AP sums the "
      "list's precision at its hits over the subset's size.</p>\n<div class=scroll><table><thead><tr>"
      "<th rowspan=2>subset</th><th rowspan=2>nGold</th>";
  for (const Run& run : runs) html += fmt::format("<th colspan=3>{}</th>", escape(run.label));
  html += "</tr><tr>";
  for (std::size_t r = 0; r < runs.size(); ++r) html += "<th>TP</th><th>R</th><th>AP</th>";
  html += "</tr></thead><tbody>\n";
  std::vector<std::vector<double>> recall(runs.size()), ap(runs.size());
  for (const std::string& subset : subsets) {
    html += fmt::format("<tr><td>{}</td><td>{}</td>", subset, runs.front().result.breakdown.at(subset).n_gold);
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const SubsetScore& score = runs[r].result.breakdown.at(subset);
      html += fmt::format(
          "<td data-run=\"{0}\" data-key=\"breakdown.{1}.tp\">{2}</td>"
          "<td data-run=\"{0}\" data-key=\"breakdown.{1}.recall\">{3}</td>"
          "<td data-run=\"{0}\" data-key=\"breakdown.{1}.ap\">{4}</td>",
          r, subset, score.tp, decimal(score.recall), decimal(score.ap));
      recall[r].push_back(score.recall);
      ap[r].push_back(score.ap);
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div>\n" + legend(runs) + "<div class=charts>";
  html += bar_chart("recall", subsets, recall) + bar_chart("AP", subsets, ap);
  return html + "</div>\n";
}

std::string wrong_pairs_section(const std::vector<Run>& runs, const Gold& gold, std::size_t max_rows) {
  std::string html =
      "<h2 id=wrong>Top-ranked wrong pairs</h2>\n<p class=note>Pairs of the list that the gold does not hold, "
      "best first. \"Gold targets\" are the gold's targets of the same source term (a source term outside the "
      "gold may have a right target the gold does not know). With an explain file: the parts of the score that "
      "pushed the pair up (a re-ranker's three largest contributions with the feature's value, else CSLS's "
      "parts and the spelling bonus).</p>\n";
  for (const Run& run : runs) {
    html += fmt::format("<h3>{}</h3>\n", escape(run.label));
    if (run.explanation) html += fmt::format("<p class=note>explained by {}</p>\n", escape(run.explanation->path));
    const bool has_score =
        (run.explanation && run.explanation->column("score")) || !run.predictions.scores.empty();
    html += "<div class=scroll><table class=wrong><thead><tr><th>rank</th><th>source</th><th>target</th>";
    if (has_score) html += "<th>score</th>";
    html += "<th>gold targets</th>";
    if (run.explanation) html += "<th>what pushed it up</th>";
    html += "</tr></thead><tbody>\n";
    std::size_t listed = 0;
    for (std::size_t place = 0; place < run.predictions.pairs.size() && listed < max_rows; ++place) {
      if (run.hit[place]) continue;
      ++listed;
      const auto& [source, target] = run.predictions.pairs[place];
      html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td>", place + 1, escape(source), escape(target));
      if (has_score) {
        const std::optional<std::size_t> explained =
            run.explanation ? run.explanation->column("score") : std::nullopt;
        const double score =
            explained ? run.explanation->values[place][*explained] : run.predictions.scores[place];
        html += fmt::format("<td>{:.4f}</td>", score);
      }
      html += fmt::format("<td>{}</td>", gold_targets_cell(gold, source));
      if (run.explanation) html += fmt::format("<td>{}</td>", pushed_up(*run.explanation, place));
      html += "</tr>\n";
    }
    std::size_t of_gold_sources = 0;
    for (std::size_t place = 0; place < run.predictions.pairs.size(); ++place)
      of_gold_sources += !run.hit[place] && gold.targets.count(run.predictions.pairs[place].first);
    html += "</tbody></table></div>\n" +
            count_note(listed, run.result.fp,
                       fmt::format("wrong pairs in the list ({} of them with a source term of the gold)",
                                   of_gold_sources));
  }
  return html;
}

std::string missed_section(const std::vector<Run>& runs, const Gold& gold, std::size_t max_rows) {
  std::string html =
      "<h2 id=missed>Gold pairs missed or ranked low</h2>\n<p class=note>Reasons, from the given files only: "
      "<b>no vector</b>: the run's explain file ranks the term with r_S or r_T NaN (a term without a vector); "
      "<b>not kept</b>: the list ends before the cap, so the pair was never a candidate or fell below its source "
      "term's per-term limit (top-m), which the files cannot tell apart; <b>unknown</b>: the list stops at the "
      "cap (or no term lists give it), so the pair was never a candidate or ranked below the cap, which the files "
      "cannot tell apart; <b>past the cap</b>: in the list, below the cap; <b>ranked low</b>: in the list, below "
      "a wrong pair of its source term. Without an explain file a term's vector is not known.</p>\n";
  for (const Run& run : runs) {
    const std::vector<MissRow> rows = miss_rows(run, gold);
    std::map<std::string, std::size_t> counts;
    for (const MissRow& row : rows) ++counts[row.reason];
    html += fmt::format("<h3>{}</h3>\n<p class=note>FN {}", escape(run.label), run.result.fn);
    for (const auto& [reason, count] : counts) html += fmt::format(" &middot; {} {}", escape(reason), count);
    html +=
        "</p>\n<div class=scroll><table class=missed><thead><tr><th>reason</th><th>source</th><th>target</th>"
        "<th>detail</th></tr></thead><tbody>\n";
    const std::size_t listed = std::min(rows.size(), max_rows);
    for (std::size_t i = 0; i < listed; ++i) {
      html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(rows[i].reason),
                          escape(rows[i].source), escape(rows[i].target), rows[i].detail);
    }
    html += "</tbody></table></div>\n" + count_note(listed, rows.size(), "gold pairs missed or ranked low");
  }
  return html;
}

std::string terms_section(const std::vector<Run>& runs, const Gold& gold, std::size_t max_rows) {
  constexpr std::size_t kTargetsShown = 10;
  const std::size_t listed = std::min(gold.sources.size(), max_rows);
  std::string html = fmt::format(
      "<h2 id=terms>Source terms</h2>\n<p class=note>Each gold source term's pairs in the list, best first (at "
      "most {}), with their ranks; the gold's targets are marked &#10003;.</p>\n"
      "<p><input id=term-search type=search placeholder=\"search the listed terms\" aria-label=\"search\"> "
      "<span id=term-count></span></p>\n<div class=scroll><table id=term-table><thead><tr><th>source</th>"
      "<th>gold targets</th>",
      kTargetsShown);
  for (const Run& run : runs) html += fmt::format("<th>{}</th>", escape(run.label));
  html += "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < listed; ++i) {
    const std::string_view source = gold.sources[i];
    std::string search = std::string(source);
    for (const std::string_view target : gold.targets.at(source)) search += "\t" + std::string(target);
    html += fmt::format("<tr data-term=\"{}\"><td>{}</td><td>{}</td>", escape(to_lower(search)), escape(source),
                        gold_targets_cell(gold, source));
    for (const Run& run : runs) {
      html += "<td>";
      const auto found = run.by_source.find(source);
      if (found == run.by_source.end()) {
        html += "<span class=dim>none</span>";
      } else {
        const std::vector<std::size_t>& places = found->second;
        for (std::size_t k = 0; k < std::min(places.size(), kTargetsShown); ++k) {
          const std::size_t place = places[k];
          html += fmt::format("<span class=\"{}\">{}{}<sub>{}</sub></span> ", run.hit[place] ? "gold" : "cand",
                              run.hit[place] ? "&#10003;" : "", escape(run.predictions.pairs[place].second),
                              place + 1);
        }
        if (places.size() > kTargetsShown)
          html += fmt::format("<span class=dim>+{}</span>", places.size() - kTargetsShown);
      }
      html += "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table></div>\n" + count_note(listed, gold.sources.size(), "gold source terms");
}

const char* kStyle = R"(body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;
background:#fff;max-width:1200px}h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;
padding-bottom:4px;margin-top:32px}h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;
font-size:13px}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f5f8}tbody tr:nth-child(even){background:#fafbfc}td[data-key]{text-align:right;
font-variant-numeric:tabular-nums}.scroll{overflow-x:auto;max-height:520px;overflow-y:auto}
.note{color:#555;font-size:13px}.dim{color:#888}.legend span{margin-right:16px}.legend i,.swatch{display:inline-block;
width:12px;height:12px;margin-right:5px;vertical-align:-1px}.charts{display:flex;flex-wrap:wrap;gap:16px}
.chart{background:#fff;border:1px solid #e3e3e3}.chart .grid{stroke:#eee}.chart .frame{fill:none;stroke:#999}
.chart .marker{stroke:#555;stroke-dasharray:4 3}.chart text{font-size:11px;fill:#444}.chart .ctitle{font-size:13px;
font-weight:600;fill:#222}.chart .axis{font-size:12px}.chart .glabel{font-size:11px}.gold{color:#117a3a;
font-weight:600}.cand{color:#333}sub{color:#888}nav a{margin-right:14px}code{background:#f3f3f3;padding:0 3px}
#term-search{padding:4px 8px;width:280px})";

// Filters the term table's rows by the search box (the only script; it loads nothing).
const char* kScript = R"(var box=document.getElementById('term-search');
var rows=document.querySelectorAll('#term-table tbody tr');
function filterTerms(){var q=box.value.toLowerCase(),n=0;
for(var i=0;i<rows.length;i++){var show=rows[i].getAttribute('data-term').indexOf(q)>=0;
rows[i].style.display=show?'':'none';if(show)n++;}
document.getElementById('term-count').textContent=n+' of '+rows.length+' terms';}
box.addEventListener('input',filterTerms);filterTerms();)";

}  // namespace termalign::detail
