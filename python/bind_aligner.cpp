// The module's classes Candidates and Aligner: the align pipeline by stages.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "module_support.h"
#include "termalign/aligner.h"
#include "termalign/embeddings.h"
#include "termalign/lexicon.h"
#include "mapping/mapping.h"
#include "scoring/scoring.h"

namespace termalign::python {

void bind_aligner(py::module_& m) {
  py::class_<CandidateSet>(m, "Candidates", "Aligner.collect_evidence's candidates and their evidence.")
      .def("__len__", [](const CandidateSet& candidates) { return candidates.evidence.size(); })
      .def_property_readonly(
          "decisions",
          [](const CandidateSet& candidates) {
            const RunDecisions& decided = candidates.decisions;
            py::dict result;
            result["seed"] = to_string(decided.seed);
            result["ranked_rounds"] = decided.ranked_rounds;
            result["mean_over_runs"] = decided.fusion;
            result["earlier_runs"] = candidates.earlier_scores.size();
            if (decided.dictionary) {
              result["dictionary_coverage"] = decided.dictionary_coverage;
              result["dictionary_features"] = decided.dictionary_features;
            }
            result["reranker"] = decided.reranker;
            return result;
          },
          "What the run decided on the way: the seed's kind, the ranked rounds, the mean over the runs, the "
          "dictionary's role and the re-ranker, as align()'s resolved configuration ends with them.");

  py::class_<Aligner>(m, "Aligner",
                      "The align pipeline by stages, keeping the vectors it loaded for the runs after:\n"
                      "load_vectors / set_vectors -> fit_mapping / set_mapping -> compose -> score -> "
                      "collect_evidence -> rank (align()'s list); with an induced seed, ranked_rounds times "
                      "fit_ranked_round -> compose -> score -> collect_evidence before rank;\n"
                      "align() runs it whole (as termalign.align) with the kept vectors.")
      .def(py::init([](py::object config, py::kwargs options) {
             refuse_output_files(options, "Aligner");
             return std::make_unique<Aligner>(make_config(config, options));
           }),
           py::arg("config") = py::none())
      .def(
          "set_options",
          [](Aligner& aligner, py::kwargs options) {
            apply_aligner_keywords(aligner.config(), options, "Aligner.set_options");
          },
          "Changes options for the next stages and runs (the loaded vectors are kept when the inputs are the "
          "same).")
      .def_property_readonly(
          "config", [](const Aligner& aligner) { return to_toml(aligner.config()); },
          "The resolved configuration as TOML text.")
      .def(
          "load_vectors",
          [](Aligner& aligner) {
            follow_python_level();
            const Embeddings *source, *target;
            without_gil([&] {
              source = &aligner.vectors(Side::source);
              target = &aligner.vectors(Side::target);
            });
            return py::make_tuple(py::make_tuple(source->words, to_numpy(source->vectors)),
                                  py::make_tuple(target->words, to_numpy(target->vectors)));
          },
          "Loads (once) the configured vectors as a run needs them: ((source_words, source_matrix), "
          "(target_words, "
          "target_matrix)), raw float32 rows.")
      .def(
          "set_vectors",
          [](Aligner& aligner, std::vector<std::string> source_words,
             py::array_t<float, py::array::c_style | py::array::forcecast> source_vectors,
             std::vector<std::string> target_words,
             py::array_t<float, py::array::c_style | py::array::forcecast> target_vectors) {
            Embeddings source = make_embeddings(std::move(source_words), source_vectors, "source_vectors");
            Embeddings target = make_embeddings(std::move(target_words), target_vectors, "target_vectors");
            without_gil([&] { aligner.set_vectors(std::move(source), std::move(target)); });
          },
          py::arg("source_words"), py::arg("source_vectors"), py::arg("target_words"), py::arg("target_vectors"),
          "Uses these vectors (words most frequent first, one float row each) instead of the configured files.")
      .def(
          "fit_mapping",
          [](Aligner& aligner, py::object seed) {
            follow_python_level();
            std::unique_ptr<PairList> pairs;
            if (!seed.is_none()) pairs = std::make_unique<PairList>(pair_list(seed, PairFileKind::seed_lexicon));
            const Mapping* mapping = without_gil([&] { return &aligner.fit_mapping(pairs.get()); });
            return mapping_dict(*mapping);
          },
          py::arg("seed") = py::none(),
          "Normalises the vectors and fits the mapping on the seed (a file or (source, target) pairs; default: "
          "the configured seed). Returns its normalisation, transforms and means as NumPy arrays.")
      .def_property_readonly(
          "ranked_rounds", &Aligner::ranked_rounds,
          "How many ranked rounds a run of this configuration makes after its first (an induced "
          "seed, re-ranked, without a dictionary): fit_ranked_round, compose, score and "
          "collect_evidence again, each time.")
      .def(
          "fit_ranked_round",
          [](Aligner& aligner, const CandidateSet& last) {
            follow_python_level();
            const Mapping* mapping = without_gil([&] { return &aligner.fit_ranked_round(last); });
            return mapping_dict(*mapping);
          },
          py::arg("candidates"),
          "A ranked round: refits the mapping on the word pairs of the best pairs of these candidates' own "
          "ranking (the last collect_evidence's); their scores are kept, so that the next collect_evidence's "
          "candidates rank by the mean over the runs, as align() does.")
      .def(
          "set_mapping",
          [](Aligner& aligner, py::object path) {
            const std::string file = fspath(path);
            without_gil([&] { aligner.set_mapping(load_mapping(file)); });
          },
          py::arg("path"), "Uses a mapping saved by `termalign align --save-mapping` instead of fitting one.")
      .def_property_readonly(
          "mapping", [](const Aligner& aligner) { return mapping_dict(aligner.mapping()); },
          "The current mapping (fitted by fit_mapping or set by set_mapping), as fit_mapping returns it: a dict "
          "of its normalisation and its transforms and means as NumPy arrays.")
      .def(
          "compose",
          [](Aligner& aligner, std::vector<std::string> terms, const std::string& side) {
            follow_python_level();
            const Side which = parse_side(side);
            const ComposedTerms composed = without_gil([&] { return aligner.compose(terms, which); });
            return py::make_tuple(to_numpy(composed.vectors), to_numpy_vector(composed.term_ids));
          },
          py::arg("terms"), py::arg("side") = "source",
          "The terms' unit vectors in the shared space and, per row, the term's index in `terms` (terms with no "
          "usable word are left out).")
      .def(
          "score",
          [](const Aligner& aligner, py::array_t<float, py::array::c_style | py::array::forcecast> X,
             py::array_t<float, py::array::c_style | py::array::forcecast> Z) {
            follow_python_level();
            const Matrix x = from_numpy(X, "X"), z = from_numpy(Z, "Z");
            const CslsSelection scored = without_gil([&] { return aligner.score(x, z); });
            py::dict result;
            put_candidates(result, scored.candidates, "");
            result["source_means"] = to_numpy_vector(std::vector<float>(
                scored.means.source.data(), scored.means.source.data() + scored.means.source.size()));
            result["target_means"] = to_numpy_vector(std::vector<float>(
                scored.means.target.data(), scored.means.target.data() + scored.means.target.size()));
            if (scored.has_reverse) put_candidates(result, scored.reverse, "reverse_");
            return result;
          },
          py::arg("X"), py::arg("Z"),
          "CSLS between the rows of X and Z (unit rows): each X row's candidates (rows of X and Z, CSLS, cosine), "
          "best first, and both sides' neighbourhood means; with a re-ranker, each Z row's best X rows too "
          "(reverse_source, reverse_target, reverse_csls, reverse_cosine).")
      .def(
          "collect_evidence",
          [](Aligner& aligner, std::vector<std::string> source_terms, std::vector<std::string> target_terms,
             py::array_t<float, py::array::c_style | py::array::forcecast> X,
             std::vector<std::uint32_t> source_ids,
             py::array_t<float, py::array::c_style | py::array::forcecast> Z,
             std::vector<std::uint32_t> target_ids, py::dict scores) {
            follow_python_level();
            ComposedTerms x{from_numpy(X, "X"), std::move(source_ids), {}};
            ComposedTerms z{from_numpy(Z, "Z"), std::move(target_ids), {}};
            CslsSelection scored;
            scored.candidates = take_candidates(scores, "");
            scored.means.source = to_eigen(scores_column<std::vector<float>>(scores, "source_means"));
            scored.means.target = to_eigen(scores_column<std::vector<float>>(scores, "target_means"));
            scored.has_reverse = scores.contains("reverse_source");
            if (scored.has_reverse) scored.reverse = take_candidates(scores, "reverse_");
            return without_gil([&] {
              return aligner.collect_evidence(source_terms, target_terms, std::move(x), std::move(z),
                                              std::move(scored));
            });
          },
          py::arg("source_terms"), py::arg("target_terms"), py::arg("X"), py::arg("source_ids"), py::arg("Z"),
          py::arg("target_ids"), py::arg("scores"),
          "The candidates of score()'s dict over compose()'s X and Z of these lists, with the evidence the "
          "ranking "
          "reads (the targets' own and the orthographic candidates added; with a re-ranker, its features).")
      .def(
          "rank",
          [](const Aligner& aligner, const CandidateSet& candidates) {
            const std::vector<RankedIndex> ranked = without_gil([&] { return aligner.rank(candidates); });
            py::list list(ranked.size());
            for (std::size_t i = 0; i < ranked.size(); ++i) {
              list[i] = py::make_tuple(candidates.source_terms.terms[ranked[i].source],
                                       candidates.target_terms.terms[ranked[i].target],
                                       static_cast<double>(ranked[i].score));
            }
            return list;
          },
          py::arg("candidates"),
          "The final list of collect_evidence()'s candidates: (source, target, score) tuples, each source's best "
          "top_m, cut at the cap: align()'s list.")
      .def(
          "align",
          [](Aligner& aligner, py::kwargs options) {
            apply_aligner_keywords(aligner.config(), options, "Aligner.align");
            follow_python_level();
            const std::vector<RankedPair> pairs = without_gil([&] { return aligner.align(); });
            return to_tuples(pairs);
          },
          "termalign.align with this Aligner's configuration (options given here change it) and kept vectors.")
      .def_property_readonly("files_read", &Aligner::files_read, "Vector files read so far.");
}

}  // namespace termalign::python
