// Word forms: Hunspell's dictionary forms from small dictionaries the tests write (a few words and affixes of
// French, German and Russian), the Snowball fallback, a language with neither, the families of forms of a term
// list, the candidates their members add and the re-ranker's word-form features.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "captured_log.h"
#include "command_output.h"
#include "io/io.h"
#include "pipeline/stages.h"
#include "rerank/features.h"
#include "scratch_file.h"
#include "shared_data.h"
#include "termalign/aligner.h"
#include "termalign/evaluation.h"
#include "text/word_forms.h"

using termalign::FormsAnalyser;
using termalign::TermForms;
using termalign::WordAnalyser;
using termalign_tests::scratch_file;

namespace {

// A folder of Hunspell dictionaries of fr, de and ru: a few words each, with the affixes of their forms.
std::string small_hunspell_dictionaries() {
  scratch_file("forms", "fr_FR.aff",
               "SET UTF-8\n"
               "SFX S Y 1\nSFX S 0 s .\n"
               "SFX F Y 2\nSFX F eau elle eau\nSFX F eau elles eau\n");
  scratch_file("forms", "fr_FR.dic", "4\nfichier/S\ninfection/S\njumeau/SF\nsœur/S\n");
  scratch_file("forms", "de_DE.aff", "SET UTF-8\nSFX E Y 3\nSFX E 0 e .\nSFX E 0 en .\nSFX E 0 er .\n");
  scratch_file("forms", "de_DE.dic", "3\nPfad/E\nneu/E\nautomatisch/E\n");
  scratch_file("forms", "ru_RU.aff",
               "SET UTF-8\n"
               "SFX A Y 3\nSFX A 0 а .\nSFX A 0 ы .\nSFX A 0 ов .\n"
               "SFX B Y 1\nSFX B ь и ь\n"
               "SFX C Y 2\nSFX C ый ое ый\nSFX C ый ом ый\n");
  scratch_file("forms", "en_US.aff", "SET UTF-8\nSFX S Y 1\nSFX S 0 s .\nSFX G Y 1\nSFX G 0 ing .\n");
  scratch_file("forms", "en_US.dic", "3\nfile/S\nedit/G\nanimation\n");
  const std::string dic = scratch_file("forms", "ru_RU.dic", "5\nфайл/A\nцвет/A\nцветов\nось/B\nконтекстный/C\n");
  return std::filesystem::path(dic).parent_path().string();
}

std::uint32_t family_in(const TermForms& forms, const std::vector<std::string>& terms, const std::string& term) {
  const auto found = std::find(terms.begin(), terms.end(), term);
  REQUIRE(found != terms.end());
  return forms.family[static_cast<std::size_t>(found - terms.begin())];
}

float citation_in(const TermForms& forms, const std::vector<std::string>& terms, const std::string& term) {
  const auto found = std::find(terms.begin(), terms.end(), term);
  REQUIRE(found != terms.end());
  return forms.citation[static_cast<std::size_t>(found - terms.begin())];
}

}  // namespace

TEST_CASE("Hunspell gives each word its dictionary forms, German nouns found capitalised", "[forms]") {
  const std::string dir = small_hunspell_dictionaries();
  WordAnalyser russian("ru", dir);
  CHECK(russian.kind() == FormsAnalyser::hunspell);
  CHECK(russian.name().find("hunspell ru_RU") == 0);
  CHECK(russian.forms("файла") == std::vector<std::string>{"файл"});
  CHECK(russian.forms("оси") == std::vector<std::string>{"ось"});
  CHECK(russian.forms("неизвестное").empty());
  WordAnalyser german("de", dir);
  CHECK(german.forms("pfade") == std::vector<std::string>{"pfad"});  // known as `Pfade` only
  CHECK(german.forms("automatische") == std::vector<std::string>{"automatisch"});
  WordAnalyser french("fr", dir);
  const std::vector<std::string> jumelles = french.forms("jumelles");
  CHECK(std::find(jumelles.begin(), jumelles.end(), "jumeau") != jumelles.end());
}

TEST_CASE("Analysers opened and closed on two threads at once analyse alike and lose nothing", "[forms]") {
  // Hunspell's UTF-8 dictionaries share a case table they count without a lock; under the sanitizers a table two
  // openings both allocated shows as a leak when the process ends.
  const std::string dir = small_hunspell_dictionaries();
  constexpr int kRounds = 24;
  std::vector<std::vector<std::string>> russian(kRounds), french(kRounds);
  std::thread other([&] {
    for (int round = 0; round < kRounds; ++round) russian[round] = WordAnalyser("ru", dir).forms("файла");
  });
  for (int round = 0; round < kRounds; ++round) french[round] = WordAnalyser("fr", dir).forms("fichiers");
  other.join();
  for (int round = 0; round < kRounds; ++round) {
    CHECK(russian[round] == std::vector<std::string>{"файл"});
    CHECK(french[round] == std::vector<std::string>{"fichier"});
  }
}

TEST_CASE("A term list's families of forms, citation forms and the word shared most", "[forms]") {
  const std::string dir = small_hunspell_dictionaries();
  const std::vector<std::string> russian = {
      "файл", "файла", "Файлы", "оси y", "ось y", "цвет", "цветов", "контекстное меню", "контекстном меню",
      "меню"};
  WordAnalyser analyser("ru", dir);
  const TermForms forms = termalign::term_forms(russian, analyser);
  REQUIRE(forms.family.size() == russian.size());
  CHECK(forms.analyser.find("hunspell ru_RU") == 0);
  CHECK(family_in(forms, russian, "файл") == family_in(forms, russian, "файла"));
  CHECK(family_in(forms, russian, "файл") == family_in(forms, russian, "Файлы"));
  CHECK(forms.family_size[family_in(forms, russian, "файл")] == 3);
  CHECK(family_in(forms, russian, "оси y") == family_in(forms, russian, "ось y"));
  CHECK(family_in(forms, russian, "оси y") != family_in(forms, russian, "файл"));
  CHECK(family_in(forms, russian, "контекстное меню") == family_in(forms, russian, "контекстном меню"));
  CHECK(family_in(forms, russian, "меню") != family_in(forms, russian, "контекстное меню"));
  // `цветов` is a word of the dictionary too (its own dictionary form, as French `marque` is besides a form of
  // `marquer`): its own family.
  CHECK(family_in(forms, russian, "цветов") != family_in(forms, russian, "цвет"));
  CHECK(citation_in(forms, russian, "цветов") == 1.0f);
  CHECK(citation_in(forms, russian, "файл") == 1.0f);
  CHECK(citation_in(forms, russian, "файла") == 0.0f);
  CHECK(citation_in(forms, russian, "ось y") == 1.0f);  // `y`, unknown, is the only word of its stem
  CHECK(citation_in(forms, russian, "оси y") == 0.5f);
  CHECK(citation_in(forms, russian, "контекстное меню") == 0.5f);

  const std::vector<std::string> german = {"pfad", "Pfade", "neue pfad", "neuer pfad", "automatische"};
  WordAnalyser german_analyser("de", dir);
  const TermForms german_forms = termalign::term_forms(german, german_analyser);
  CHECK(family_in(german_forms, german, "pfad") == family_in(german_forms, german, "Pfade"));
  CHECK(family_in(german_forms, german, "neue pfad") == family_in(german_forms, german, "neuer pfad"));
  CHECK(citation_in(german_forms, german, "pfad") == 1.0f);
  CHECK(citation_in(german_forms, german, "Pfade") == 0.0f);
  CHECK(citation_in(german_forms, german, "automatische") == 0.0f);

  const std::vector<std::string> french = {"infection",    "infections",     "infections bactériennes",
                                           "sœur jumelle", "sœurs jumelles", "fichier"};
  WordAnalyser french_analyser("fr", dir);
  const TermForms french_forms = termalign::term_forms(french, french_analyser);
  CHECK(family_in(french_forms, french, "infection") == family_in(french_forms, french, "infections"));
  CHECK(family_in(french_forms, french, "infections") !=
        family_in(french_forms, french, "infections bactériennes"));
  // `jumelle` is 6 letters from `jumeau`, further than inflection goes (berechnung / berechnen is 5): as a word
  // the dictionary does not know, it and `jumelles` share their Snowball stem, and the shorter is the citation
  // form.
  CHECK(family_in(french_forms, french, "sœur jumelle") == family_in(french_forms, french, "sœurs jumelles"));
  CHECK(citation_in(french_forms, french, "infection") == 1.0f);
  CHECK(citation_in(french_forms, french, "infections") == 0.0f);
  CHECK(citation_in(french_forms, french, "sœur jumelle") == 1.0f);
  CHECK(citation_in(french_forms, french, "sœurs jumelles") == 0.0f);
}

TEST_CASE("English marks number with -s: its -ing forms count as citation forms", "[forms]") {
  const std::vector<std::string> english = {"file", "files", "editing", "edit"};
  WordAnalyser analyser("en", small_hunspell_dictionaries());
  const TermForms forms = termalign::term_forms(english, analyser);
  CHECK(family_in(forms, english, "file") == family_in(forms, english, "files"));
  CHECK(family_in(forms, english, "edit") == family_in(forms, english, "editing"));
  CHECK(citation_in(forms, english, "files") == 0.0f);
  CHECK(citation_in(forms, english, "editing") == 1.0f);
  // A word the dictionary does not know takes the dictionary form of the known word of its Snowball stem.
  const std::vector<std::string> animations = {"animation", "animations"};
  const TermForms inherited = termalign::term_forms(animations, analyser);
  CHECK(inherited.family[0] == inherited.family[1]);
  CHECK(inherited.citation == std::vector<float>{1, 0});
  // An English word neither the dictionary nor the list's other words know: its -s ending tells a plural.
  const std::vector<std::string> alone = {"breakpoints", "status"};
  CHECK(termalign::term_forms(alone, analyser).citation == std::vector<float>{0, 1});
  // Russian: a genitive plural shorter than its dictionary form.
  const std::vector<std::string> russian = {"таблица", "таблицы", "таблиц"};
  scratch_file("forms", "ru_RU.aff", "SET UTF-8\nSFX T Y 2\nSFX T а ы а\nSFX T а 0 а\n");
  const std::string dir =
      std::filesystem::path(scratch_file("forms", "ru_RU.dic", "1\nтаблица/T\n")).parent_path();
  WordAnalyser russian_analyser("ru", dir);
  const TermForms russian_forms = termalign::term_forms(russian, russian_analyser);
  CHECK(russian_forms.shortened == std::vector<float>{0, 0, 1});
}

TEST_CASE("Without a Hunspell dictionary a language falls back to its Snowball stemmer, else to none", "[forms]") {
  const std::string empty =
      std::filesystem::path(scratch_file("forms-none", "README", "no dictionaries\n")).parent_path().string();
  WordAnalyser french("fr", empty);
  CHECK(french.kind() == FormsAnalyser::snowball);
  const std::vector<std::string> terms = {"fichiers", "fichier", "fichiers sources", "fichier source"};
  const TermForms forms = termalign::term_forms(terms, french);
  CHECK(family_in(forms, terms, "fichier") == family_in(forms, terms, "fichiers"));
  CHECK(family_in(forms, terms, "fichier source") == family_in(forms, terms, "fichiers sources"));
  CHECK(family_in(forms, terms, "fichier") != family_in(forms, terms, "fichier source"));
  // Without dictionary forms: the shortest word of its stem is the citation form.
  CHECK(citation_in(forms, terms, "fichier") == 1.0f);
  CHECK(citation_in(forms, terms, "fichiers") == 0.0f);

  WordAnalyser unknown("xx", empty);
  CHECK(unknown.kind() == FormsAnalyser::none);
  CHECK(unknown.name() == "none");
  CapturedLog log;
  TermForms source, target;
  termalign::term_forms_of_pair(terms, "fr", {"a", "b"}, "xx", empty, 2, source, target);
  CHECK(source.family.size() == terms.size());
  CHECK(target.empty());
  CHECK(log.lines_with("info", "no Hunspell dictionary of 'xx'").size() == 1);
  termalign::term_forms_of_pair(terms, "", {"a", "b"}, "", empty, 2, source, target);
  CHECK(source.empty());
  CHECK(log.lines_with("info", "language is not known").size() == 2);
}

TEST_CASE("The lists' languages: the options, the dataset's pair, else the term lists' names", "[forms]") {
  termalign::AlignConfig config;
  config.input.src_terms = "some/where/terms-en.txt";
  config.input.tgt_terms = "terms-ru.txt";
  CHECK(termalign::pipeline::forms_languages(config) == std::pair<std::string, std::string>{"en", "ru"});
  config.forms.tgt_language = "de";
  CHECK(termalign::pipeline::forms_languages(config).second == "de");
  config.input.src_terms = "english-terms.txt";
  CHECK(termalign::pipeline::forms_languages(config).first.empty());
}

TEST_CASE("The members of a strong candidate's family join the candidates, scored by CSLS", "[forms]") {
  // Targets 0, 1, 2 one family; 3 and 4 another; 5 alone. Source 0's best target is 1, source 1's is 5.
  TermForms forms;
  forms.family = {0, 0, 0, 1, 1, 2};
  forms.family_size = {3, 2, 1};
  forms.citation = {1, 0, 0, 1, 0, 1};
  termalign::ComposedTerms X, Z;
  X.vectors = termalign::Matrix::Identity(2, 6);
  X.term_ids = {0, 1};
  Z.vectors = termalign::Matrix::Identity(6, 6);
  Z.term_ids = {0, 1, 2, 3, 4, 5};
  termalign::NeighbourhoodMeans means{Eigen::VectorXf::Zero(2), Eigen::VectorXf::Zero(6)};
  std::vector<termalign::Candidate> candidates = {
      {0.9f, 0.45f, 0, 1}, {0.1f, 0.05f, 0, 3}, {0.8f, 0.4f, 1, 5}, {0.2f, 0.1f, 1, 4}};
  SECTION("the best target's family only") {
    CHECK(termalign::pipeline::add_family_candidates(forms, X, Z, means, 1, 2, candidates) == 2);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (const auto& c : candidates) pairs.emplace_back(c.source, c.target);
    std::sort(pairs.begin(), pairs.end());
    CHECK(pairs ==
          std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 4}, {1, 5}});
    // Scored as the scoring scores: 2 cos - r_S - r_T.
    for (const auto& c : candidates)
      if (c.source == 0 && c.target == 0) CHECK(c.score == Approx(2.0f));
  }
  SECTION("the two best targets' families") {
    CHECK(termalign::pipeline::add_family_candidates(forms, X, Z, means, 2, 1, candidates) ==
          4);  // + (0, 4), (1, 3)
  }
  SECTION("none") { CHECK(termalign::pipeline::add_family_candidates(forms, X, Z, means, 0, 2, candidates) == 0); }
}

TEST_CASE("The word-form features: citation, agreement and the rank within the family", "[forms][reranker]") {
  termalign::CandidateEvidence e;
  // Source 0 (`file`, citation) with targets 0 (`файл`), 1 (`файла`), 2 (`меню`); source 1 (`files`) with 1.
  e.source = {0, 0, 0, 1};
  e.target = {0, 1, 2, 1};
  e.csls = {0.5f, 0.7f, 0.1f, 0.6f};
  e.cosine = e.csls;
  e.reverse_rank = {1, 1, 1, 1};
  e.orthographic = {0, 0, 0, 0};
  e.word_alignment = {0, 0, 0, 0};
  e.identical = {0, 0, 0, 0};
  e.source_words = e.target_words = {1, 1, 1, 1};
  e.source_length = e.target_length = {4, 4, 4, 4};
  e.one_to_one = e.translated_share = e.edge_agreement = e.seed_share = e.seed_conflict = {0, 0, 0, 0};
  e.source_forms.family = {0, 0};
  e.source_forms.family_size = {2};
  e.source_forms.citation = {1, 0};
  e.target_forms.family = {0, 0, 1};
  e.target_forms.family_size = {2, 1};
  e.target_forms.citation = {1, 0, 1};
  const termalign::FeatureTable table = termalign::candidate_feature_table(e, 1);
  const auto value = [&](const std::string& name, Eigen::Index row) {
    const auto found = std::find(table.names.begin(), table.names.end(), name);
    REQUIRE(found != table.names.end());
    return table.values(row, found - table.names.begin());
  };
  CHECK(termalign::feature_group("form_citation_agreement") == "word-forms");
  CHECK(value("form_citation_agreement", 0) == 1.0f);  // file -> файл
  CHECK(value("form_citation_agreement", 1) == 0.0f);  // file -> файла
  CHECK(value("form_citation_agreement", 3) == 1.0f);  // files -> файла
  CHECK(value("form_target_citation_best", 0) == 1.0f);
  CHECK(value("form_target_citation_best", 1) == 0.0f);
  CHECK(value("form_source_citation_best", 3) == 0.0f);
  CHECK(value("form_target_family_size", 0) == 2.0f);
  CHECK(value("form_target_family_size", 2) == 1.0f);
  CHECK(value("form_family_candidates", 0) == 2.0f);
  CHECK(value("form_family_candidates", 2) == 1.0f);
  // Within source 0's candidates of the family {файл, файла}: файла (0.7) first, файл second.
  CHECK(value("form_family_rank", 1) == 1.0f);
  CHECK(value("form_family_rank", 0) == 0.5f);
  CHECK(value("form_family_rank", 2) == 1.0f);
  CHECK(value("form_family_below_best_s", 0) < 0.0f);
  CHECK(value("form_target_frequency_best", 0) == 0.0f);  // no corpora

  // Without families (forms off, or no analyser): every term its own family, in citation form.
  e.source_forms = TermForms();
  e.target_forms = TermForms();
  const termalign::FeatureTable plain = termalign::candidate_feature_table(e, 1);
  const auto plain_value = [&](const std::string& name, Eigen::Index row) {
    const auto found = std::find(plain.names.begin(), plain.names.end(), name);
    REQUIRE(found != plain.names.end());
    return plain.values(row, found - plain.names.begin());
  };
  for (Eigen::Index row = 0; row < 4; ++row) {
    CHECK(plain_value("form_citation_agreement", row) == 1.0f);
    CHECK(plain_value("form_target_family_size", row) == 1.0f);
    CHECK(plain_value("form_family_rank", row) == 1.0f);
  }
}

TEST_CASE("The explanation shows the word-form features; without forms they take their neutral values",
          "[forms][explain]") {
  termalign::AlignConfig config = termalign_tests::sample_inputs();
  config.forms.hunspell_dir = small_hunspell_dictionaries();  // French from it, English by Snowball
  const std::string scratch =
      std::filesystem::path(scratch_file("forms-explain", ".kept", "")).parent_path().string();
  const auto explained_column = [&](bool forms, const std::string& name) {
    config.forms.enabled = forms;
    config.output.out = scratch + (forms ? "/with.tsv" : "/without.tsv");
    config.output.explain = scratch + (forms ? "/with.explain.tsv" : "/without.explain.tsv");
    CapturedLog log;
    termalign::run_align(config);
    CHECK(log.lines_with("info", "word forms (").size() == (forms ? 1 : 0));
    std::ifstream in(config.output.explain);
    std::string line, cell;
    REQUIRE(std::getline(in, line));
    std::vector<std::string> header;
    for (std::istringstream cells(line); std::getline(cells, cell, '\t');) header.push_back(cell);
    const auto found = std::find(header.begin(), header.end(), "feature:" + name);
    REQUIRE(found != header.end());
    std::vector<float> values;
    while (std::getline(in, line)) {
      std::istringstream cells(line);
      for (std::size_t column = 0; std::getline(cells, cell, '\t'); ++column)
        if (column == static_cast<std::size_t>(found - header.begin())) values.push_back(std::stof(cell));
    }
    return values;
  };
  const std::vector<float> with = explained_column(true, "form_target_family_size");
  const std::vector<float> without = explained_column(false, "form_target_family_size");
  REQUIRE(!with.empty());
  CHECK(*std::max_element(with.begin(), with.end()) > 1.0f);  // the sample's French list has families
  CHECK(std::all_of(without.begin(), without.end(), [](float size) { return size == 1.0f; }));
}

TEST_CASE("The agreement order gives a family's best scores to the forms that agree with the source term",
          "[forms]") {
  termalign::CandidateEvidence e;
  // Source 0 `file` (citation form), source 1 `files`. Targets: 0 файл, 1 файла, 2 файлы, 3 a form shorter than
  // its dictionary form (as `таблиц` of `таблица`), all one family; 4 меню, its own.
  e.source = {0, 0, 0, 0, 1, 1, 1};
  e.target = {0, 1, 4, 3, 2, 3, 0};
  e.source_forms.family = {0, 0};
  e.source_forms.family_size = {2};
  e.source_forms.citation = {1, 0};
  e.source_forms.shortened = {0, 0};
  e.target_forms.family = {0, 0, 0, 0, 1};
  e.target_forms.family_size = {4, 1};
  e.target_forms.citation = {1, 0, 0, 0, 1};
  e.target_forms.shortened = {0, 0, 0, 1, 0};
  Eigen::VectorXd scores(7);
  scores << 0.2, 0.9, 0.4, 0.95, 0.3, 0.8, 0.5;
  const Eigen::VectorXd ordered = termalign::pipeline::agreement_order(e, scores);
  // file: файл takes the family's best, 0.95; then файла; the shortened form last. меню keeps its own.
  CHECK(ordered(0) == 0.95);
  CHECK(ordered(1) == 0.9);
  CHECK(ordered(2) == 0.4);
  CHECK(ordered(3) == 0.2);
  // files, inflected: its candidates keep the model's order.
  CHECK(ordered.tail(3) == scores.tail(3));
  // Without the source list's families nothing moves.
  e.source_forms = TermForms();
  CHECK(termalign::pipeline::agreement_order(e, scores) == scores);
}

TEST_CASE("evaluate counts and lists the first candidates that are another form of a gold target", "[forms]") {
  const std::string dir = small_hunspell_dictionaries();
  termalign::PairList gold, predictions;
  gold.pairs = {{"File", "файл"}, {"axis", "ось"}, {"color", "цвет"}, {"menu", "меню"}};
  // `file`'s first candidate is a form of its gold target, `axis`'s is its gold target, `color`'s another word;
  // `menu` has no candidate.
  predictions.pairs = {{"file", "файла"}, {"axis", "ось"}, {"file", "файл"}, {"color", "оси"}};
  const termalign::InflectedFirst counted = termalign::inflected_first_candidates(gold, predictions, "ru", dir);
  CHECK(counted.analyser.find("hunspell ru_RU") == 0);
  CHECK(counted.source_terms == 4);
  CHECK(counted.with_candidate == 3);
  CHECK(counted.correct == 1);
  CHECK(counted.inflected == 1);
  REQUIRE(counted.cases.size() == 1);
  CHECK(counted.cases[0].source == "File");
  CHECK(counted.cases[0].candidate == "файла");
  CHECK(counted.cases[0].gold == "файл");
  CHECK(termalign::format_inflected("run", counted) ==
        "run\tsource\tcandidate\tgold_target\nrun\tFile\tфайла\tфайл\n");

  // A language with neither a dictionary nor a stemmer counts nothing.
  const termalign::InflectedFirst none = termalign::inflected_first_candidates(gold, predictions, "xx", dir);
  CHECK(none.analyser == "none");
  CHECK(none.inflected == 0);
  CHECK(none.cases.empty());

  // The CLI prints the count and writes the cases with --inflected, which needs --forms-language.
  std::string gold_text, prediction_text;
  for (const auto& [s, t] : gold.pairs) gold_text += s + "\t" + t + "\n";
  for (const auto& [s, t] : predictions.pairs) prediction_text += s + "\t" + t + "\n";
  const std::string gold_file = scratch_file("forms", "gold.tsv", gold_text);
  const std::string prediction_file = scratch_file("forms", "run.tsv", prediction_text);
  const std::string listed = gold_file + ".inflected.tsv";
  std::filesystem::remove(listed);
  const std::string evaluate = std::string("'") + TERMALIGN_CLI + "' evaluate --gold '" + gold_file +
                               "' --pred '" + prediction_file + "' --hunspell-dir '" + dir + "' --inflected '" +
                               listed + "'";
  const CommandResult result = run(evaluate + " --forms-language ru 2>/dev/null");
  REQUIRE(result.exit_code == 0);
  CHECK(result.output.find("another form of a gold target for 1 of 3 gold source terms with a pair (1 first") !=
        std::string::npos);
  CHECK(termalign::read_file(listed) ==
        "run\tsource\tcandidate\tgold_target\n" + prediction_file + "\tFile\tфайла\tфайл\n");
  CHECK(run(evaluate + " 2>/dev/null").exit_code == 2);
}
