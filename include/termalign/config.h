// Plain option structs for `termalign align`, every field with its default; one validate(); TOML in and out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace termalign {

// `automatic`: resolved_normalization's choice, by the seed.
enum class Normalization { none, unit, center, unit_center_unit, automatic };
enum class Neighbourhood { terms, vocabulary };
enum class Dewhiten { none, source, target, both };
// The similarity tiles' arithmetic (scoring.h): fp32, or bf16 tiles whose decisive values are rescored in fp32
// (the same output, faster where the CPU multiplies bf16 natively); automatic: bf16 on such CPUs, else fp32.
enum class Precision { fp32, bf16, automatic };

// As the seed lexicon, a seed induced from the vectors instead of read from a file (seed.h): the words written
// alike in the two vocabularies (vecmap's --identical); those plus the words spelt alike or nearly so once
// transliterated to Latin (`файл` / `file`); or the seedless default, `auto`, which today starts from the latter
// (a superset of the former: comparing the two by an unsupervised criterion chose by noise, and chose the worse on
// German, docs/accuracy.md).
constexpr const char* kIdenticalSeed = "identical";
constexpr const char* kTransliteratedSeed = "transliterated";
constexpr const char* kAutoSeed = "auto";
inline bool is_induced_seed(const std::string& seed) {
  return seed == kIdenticalSeed || seed == kTransliteratedSeed || seed == kAutoSeed;
}

struct InputOptions {
  std::string src_vectors, tgt_vectors;  // .vec, .vec.gz or .bin
  std::string seed;                      // seed lexicon, src<TAB>tgt, or an induced seed (is_induced_seed)
  // Bilingual dictionaries as evidence (io/dictionary.h): dictd databases (their .index or .dict.dz path, or base
  // name; the direction from the name, freedict-eng-deu forward and freedict-deu-eng backward for en-de) or
  // two-column files (src<TAB>tgt, or two words per line). Without a seed lexicon (none given, or an induced one)
  // their clean, frequent single-word pairs are the mapping's seed.
  std::vector<std::string> dictionary;
  // Without a seed lexicon: each frequent source word's dictionary translations kept in the mapping's seed, the
  // most frequent first (dictionary_seed).
  std::size_t dictionary_seed_translations = 3;
  // The dictionaries' features (and the models trained with them) rank the run when they translate at least this
  // share of the source terms' distinct words; below it their candidates stay. Chosen on enru/train with FreeDict
  // English-Russian (12 %): the models trained with a dictionary (46 % on enfr/train) lost 0.017 AP there.
  double dictionary_min_coverage = 0.25;
  std::string src_terms, tgt_terms;      // term lists
  std::size_t most_frequent = 20000;     // frequent words loaded besides the needed ones (neighbourhoods)
  // The re-ranker of the candidates: "default" (the bundled model trained on enfr/train, the one with the corpus
  // features when both corpora are given), "none" (the unsupervised score: CSLS plus the orthographic bonus), or
  // a model file of `termalign train-reranker`.
  std::string reranker = "default";
  // Comparable corpora of the two languages (one sentence per line): occurrence and context evidence of the terms
  // for the re-ranker (corpus_evidence.h). Both or neither.
  std::string src_corpus, tgt_corpus;
  int corpus_window = 5;  // context words on each side of a term occurrence
  // Optional vectors trained on the corpora (`termalign train-vectors`), combined with the general ones: each side
  // mapped on its own, a term's similarity is (1 - corpus_weight) x general cosine + corpus_weight x corpus
  // cosine.
  std::string src_corpus_vectors, tgt_corpus_vectors;
  double corpus_weight = 0.5;
  // A seed lexicon whose columns look swapped against the vectors is an error unless this is set (then a warning).
  bool allow_reversed = false;
  // A BUCC dataset folder and its language pair "l1-l2" (read from its file names when empty): terms-<l1>.txt and
  // terms-<l2>.txt fill the term lists when they are not given, and seed-<l1>-<l2>.txt the seed when the folder
  // has one; without it (as the task's folders) the seed is kAutoSeed (resolve_dataset).
  std::string data_dir, pair;
  // With data_dir: its corpora corpus-<l1>.txt and corpus-<l2>.txt, when both are there and neither corpus is
  // given, are the run's corpora (the task's comparable corpora C1, C2: evidence for the re-ranker).
  bool dataset_corpora = true;
  // Optional: a mapping written by save_mapping, loaded instead of fitting one (`mapping` in [output] of the
  // configuration file and --mapping, their names since before it moved among the inputs).
  std::string saved_mapping;
};

struct OutputOptions {
  std::string out;                  // the submission (two columns)
  std::string scores;               // optional: the same list with a score column
  std::string save_mapping;         // optional: write the fitted mapping here
  std::string save_mapped_vectors;  // optional: PREFIX; writes PREFIX.src.vec and PREFIX.tgt.vec, the mapped words
  std::string explain;              // optional: TSV of every output pair with the parts of its score
};

struct MappingOptions {
  // Applied to both sides before the map; `automatic` is center with a seed lexicon or a dictionary, and
  // unit-center-unit with a seed induced from the vectors alone (resolved_normalization).
  Normalization normalization = Normalization::automatic;
  std::size_t min_seed_pairs = 50;  // fewer usable seed pairs is an error
  // The multi-step framework of Artetxe et al. (AAAI 2018); with every step off it is orthogonal Procrustes.
  bool whiten = true;                  // whiten each side (on the seed pairs) before the orthogonal map
  double src_reweight = 0.5;           // re-weight the source side by the singular values to this power (0 = off)
  double tgt_reweight = 0.5;           // the same for the target side
  Dewhiten dewhiten = Dewhiten::both;  // undo the whitening of: none, source, target or both sides
  std::size_t dim_reduction = 0;       // keep this many dimensions after the map (0 = all)
  // Self-learning refinement: induce a dictionary from mutual CSLS nearest neighbours, refit, iterate.
  std::size_t refine_iterations = 3;  // 0 = off
  std::size_t refine_words = 3000;    // the dictionary is induced among this many most frequent words per side
  // Share of the seed's source words held out to check each iteration: one whose map retrieves significantly
  // fewer of them (CSLS P@1), under 80 % of the best map's share, is dropped and the refinement stops
  // (0 = unchecked).
  double refine_validation = 0.2;
  // The seed of the held-out words' shuffle (the same on every machine). A self-learning run is chaotic: its
  // choices turn on a few words, so another seed (or another compiler's rounding) moves a seedless run's AP by
  // about as much as that seed moves it (docs/accuracy.md); measuring over a few seeds shows the spread.
  std::uint64_t refine_split_seed = 0;
  // Induced seeds (kTransliteratedSeed, kAutoSeed): two words of at least 4 letters whose Latin spellings are
  // this alike (character n-gram Dice), each the other's closest, pair up besides those spelt the same.
  double seed_spelling_similarity = 0.8;
  // With an induced seed, the lexicon the re-ranker's seed evidence reads (the word translations, the seed
  // agreement): the mutual CSLS nearest neighbours among this many most frequent words of each side under the
  // fitted mapping, as a seed lexicon of frequent words would give them (0 = the induced seed itself).
  std::size_t seed_lexicon_words = 10000;
  // Induced seeds: rounds of reading the seed off the term lists (term_word_pairs): the mutual CSLS nearest term
  // pairs under the mapping so far, split into word pairs, become the seed of the next fit, until a round's
  // pairs are those of the last (0 = off: the start seed alone).
  std::size_t seed_term_rounds = 10;
  std::size_t seed_term_pairs = 0;  // the most confident term pairs read in each round (0 = all)
  // The term rounds stop when a round's word pairs are at least this share of the last round's: the map they
  // would fit is that round's, up to the refinement's own changes. Chosen on ende/train and enru/train (the rounds
  // repeat 85-91 % of the last round's pairs after 2 and 4-5 rounds, with the mean CSLS of the term pairs flat).
  double seed_term_converged = 0.85;
  // The first term round's fit replaces the start only when the mean CSLS of the mutual nearest term pairs under
  // it is this factor of the start's: a start that already maps the terms well (the words written alike between
  // English and French) is worth more than the fewer pairs read off the terms. Chosen on the dev sets: under the
  // first round's fit against the start's, enru/train +35 %, ende/train +7.3 %, enfr/train +1.4 %; every factor
  // between the last two makes the same choices.
  double seed_start_gain = 1.05;
  // Induced seeds, with a re-ranker: rounds of reading the seed off the run's own ranking (Aligner::candidates):
  // the seed_ranked_pairs best pairs of the re-ranked list, split into word pairs as in the term rounds, become
  // the whole seed of the next fit, whose run is ranked again (0 = off).
  std::size_t seed_ranked_rounds = 2;
  std::size_t seed_ranked_pairs = 1000;
  // After ranked rounds, the final list ranks each candidate by its mean score over the runs (the first run and
  // each round's): a self-learning run's pairs vary from run to run, their mean less (false: the last run's own).
  bool seed_ranked_fusion = true;
};

struct CompositionOptions {
  bool lowercase_fallback = true;  // an unknown token: lower-cased, then a cased word of that form (row_any_case)
  bool split_compounds = true;     // then split it on hyphens and apostrophes
  // then the known words of a closed compound (closed_compound_rows: `dateiformat`), in a list where at least
  // closed_compound_share of the words are such compounds (closed_compounds_for: German, not English or French)
  bool split_closed_compounds = true;
  double closed_compound_share = 0.02;
  bool subword_oov = true;   // then, with .bin vectors, use its character n-gram vector
  bool joined_terms = true;  // a multi-word term's own vector when the vectors have its joined token
                             // (joined_term_token, as `train-vectors --terms` makes them)
};

struct ScoringOptions {
  int k = 3;  // CSLS neighbourhood size
  Neighbourhood neighbourhood = Neighbourhood::terms;
  std::size_t neighbourhood_words = 20000;  // with vocabulary: the N most frequent words of each side
  std::size_t candidate_pool = 0;  // one-pass CSLS: targets kept per source term (0 = 4 x top_m); speed only
  std::size_t tile_rows = 512;     // source terms per tile
  std::size_t tile_cols = 2048;    // target terms per tile
  int threads = 0;                 // 0 = all cores; never changes the output
  // Word vectors kept for the evidence after the scoring wait in a temporary file beside the output while it runs
  // when they take more than this many MiB (0 = never); never changes the output.
  std::size_t spill_mb = 128;
  Precision precision =
      Precision::automatic;  // fp32, bf16 or auto (bf16 where the CPU has it); never changes the output
};

struct RankingOptions {
  std::size_t top_m = 10;    // keep each source term's m best targets (0 = no per-source limit)
  std::size_t mutual_m = 0;  // keep only pairs that are mutually within the top m (0 = off)
  std::size_t cap = 0;       // 0 = the BUCC cap floor(10 x (|D1| + |D2|) / 2); a smaller value cuts further
  // With dictionaries: besides the translations of a whole source term, the target terms in which every word of
  // it has a translation, at most this many per source term (add_dictionary_candidates).
  std::size_t dictionary_candidates = 3;
};

struct OrthographyOptions {
  double weight = 0.1;  // unsupervised score = CSLS + weight x orthographic similarity of the two terms (0 = off);
                        // a re-ranker weighs the spelling evidence itself
  bool transliterate = true;      // Cyrillic and Greek letters are transliterated to Latin before comparing
  std::size_t candidates = 5;     // also add each source term's m orthographically closest targets (0 = none)
  std::size_t work_bound = 2048;  // their search: n-gram postings read per source term at most (0 = no bound)
};

// Word forms (text/word_forms.h): the families of forms in each term list (the terms whose words share their
// dictionary forms: `файл`, `файла`, `файлы`) as the re-ranker's evidence, and their members as candidates.
struct FormsOptions {
  bool enabled = true;  // with the full evidence (a re-ranker); false: runs as without an analyser
  // The lists' languages (ISO 639-1: en, fr, de, ru); empty: the pair of the dataset folder, else the term list's
  // file name terms-<language>.txt, else none (an info line says so: that side has no families).
  std::string src_language, tgt_language;
  std::string hunspell_dir = "/usr/share/hunspell";  // the Hunspell dictionaries (<ll>_<LL>.aff and .dic)
  // The members of the family of each source term's best `family_candidates` targets (by CSLS) that are not its
  // candidates yet join them (0 = none).
  std::size_t family_candidates = 2;
  // Within each source term's candidates of one family, the family's scores go in the order of their agreement
  // with the source term (the shares of words in citation form alike, then the target not shortened and closest to
  // its forms, then the score): the task's gold respects grammatical number, and the models, trained on French,
  // weigh it little for a language of many cases (pipeline::agreement_order).
  bool agreement_order = true;
};

// The value of input.reranker that means the bundled model (the default), and the one that means none.
constexpr const char* kDefaultReranker = "default";
constexpr const char* kNoReranker = "none";

// Whether candidates are re-ranked by a model (input.reranker is not "none").
struct AlignConfig;
bool uses_reranker(const AlignConfig& config);

struct AlignConfig {
  InputOptions input;
  OutputOptions output;
  MappingOptions mapping;
  CompositionOptions composition;
  ScoringOptions scoring;
  RankingOptions ranking;
  OrthographyOptions orthography;
  FormsOptions forms;

  // Rejects bad values and combinations with a sentence a user can act on (usage error).
  void validate() const;
};

// The normalisation a run applies: config.mapping.normalization, or for `automatic` unit-center-unit when the seed
// is induced from the vectors alone (an induced seed and no dictionary) and center otherwise. Measured on
// ../shared/data's dev sets without a seed (docs/accuracy.md): unit-center-unit maps the terms better (en-ru
// unsupervised score 0.261 -> 0.297, en-de 0.350 -> 0.386, en-fr unchanged); runs with a seed keep center.
Normalization resolved_normalization(const AlignConfig& config);

// With input.data_dir: the dataset's files for the empty inputs (terms, seed), checked to exist. An empty
// input.pair ("en-fr") is set from the folder's file names (seed-<l1>-<l2>.txt, terms-<l1>-<l2>.txt) when they
// name one pair only, else it is a usage error. Returns the dataset's gold (terms-<l1>-<l2>.txt) when the folder
// has one, else "". Without data_dir, notes in the log (with `note`) term lists named terms-<l>.txt whose folder
// holds corpora that the run does not use.
std::string resolve_dataset(AlignConfig& config, bool note = true);

// Reads a TOML file over `config` (keys absent from the file keep their value). An unknown key, a value of the
// wrong type or an unknown enum name is a usage error naming the file and key.
void load_config(const std::string& path, AlignConfig& config);
// The same over TOML text (e.g. a snippet of a larger file): `origin` names it in errors and anchors relative
// paths.
void apply_toml(AlignConfig& config, const std::string& toml_text, const std::string& origin);
// The fully resolved configuration as TOML; loading it alone reproduces the run.
std::string to_toml(const AlignConfig& config);
// The options of `config` other than the files (inputs, outputs, data_dir) that differ from AlignConfig's
// defaults, as "section.key = value" (TOML values): with the files' fingerprints, what a trained model records of
// the run that generated its candidates.
std::vector<std::string> changed_options(const AlignConfig& config);

// One option of AlignConfig as the option table lists it: its TOML section and key, and its CLI flag without the
// dashes ("top-m"); a program's name for it is the flag with underscores ("top_m", the Python module's keyword).
struct OptionName {
  std::string section, key, flag;
};
// Every option of AlignConfig, in the order of the resolved configuration (the table TOML reading and writing
// use).
std::vector<OptionName> option_names();

// A value a program gives one option (the Python module's keywords): a field takes the alternative of its type;
// an integer is also a number, and an enumeration takes its name.
// A list option (input.dictionary) takes a list of strings, or one string as a list of one.
using OptionValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>>;
// Sets the option named `name`: its flag with dashes or underscores ("top-m", "top_m") or "section.key". A usage
// error names the option on an unknown name, a value of the wrong type or out of range, or an unknown enum name.
void set_option(AlignConfig& config, const std::string& name, const OptionValue& value);
// The same from text as typed on a command line: true/false (also 1/0, yes/no, on/off), a number, a string or an
// enum name, as the option's type wants.
void set_option_text(AlignConfig& config, const std::string& name, const std::string& text);
// An option's value as text (as set_option_text reads it): what --help shows as the default.
std::string option_text(const AlignConfig& config, const std::string& name);
// The kind of value an option takes, as --help names it: BOOLEAN, UINT, INT, FLOAT, TEXT (a path or a name) or
// ENUM (one of the names its help lists).
std::string option_type_name(const std::string& name);

const char* to_string(Normalization normalization);
const char* to_string(Neighbourhood neighbourhood);
const char* to_string(Dewhiten dewhiten);
const char* to_string(Precision precision);                  // "fp32", "bf16", "auto"
Normalization parse_normalization(const std::string& name);  // usage error on an unknown name
Neighbourhood parse_neighbourhood(const std::string& name);
Dewhiten parse_dewhiten(const std::string& name);
Precision parse_precision(const std::string& name);

}  // namespace termalign
