#include "termalign/compositional.h"

#include <algorithm>
#include <tuple>
#include <unordered_set>

#include "termalign/io.h"
#include "termalign/parallel.h"
#include "termalign/word_translation.h"

namespace termalign {

namespace {

// The distinct words (lower-cased) of the candidates' terms on one side, and each term's words as their ids.
struct SideWords {
  std::vector<std::string> words;
  std::unordered_map<std::string, std::uint32_t> ids;
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> terms;  // term id -> word ids, in order
};

SideWords side_words(const TermList& list, const std::vector<std::uint32_t>& term_ids) {
  SideWords side;
  for (const std::uint32_t term : term_ids) {
    auto [entry, inserted] = side.terms.try_emplace(term);
    if (!inserted) continue;
    for (const std::string& word : split_words(to_lower(list.terms[term]))) {
      const auto [found, added] = side.ids.try_emplace(word, static_cast<std::uint32_t>(side.words.size()));
      if (added) side.words.push_back(word);
      entry->second.push_back(found->second);
    }
  }
  return side;
}

std::uint64_t word_pair(std::uint32_t source, std::uint32_t target) {
  return (static_cast<std::uint64_t>(source) << 32) | target;
}

}  // namespace

void add_compositional_evidence(const TermList& source_terms, const TermList& target_terms,
                                const TermComposer& source, const TermComposer& target, const Mapping& mapping,
                                const PairList& seed, int threads, CandidateEvidence& evidence) {
  const SideWords source_side = side_words(source_terms, evidence.source);
  const SideWords target_side = side_words(target_terms, evidence.target);
  WordVectors source_vectors, target_vectors;
  run_both([&] { source_vectors = mapped_word_vectors(source_side.words, source, mapping.source_transform, 1); },
           [&] { target_vectors = mapped_word_vectors(target_side.words, target, mapping.target_transform, 1); },
           threads);

  // Translated word pairs: the seed's, and the 3 nearest words of the other side's list in either direction.
  constexpr std::size_t kNearest = 3;
  std::unordered_set<std::uint64_t> translated;
  const auto forward = nearest_rows(source_vectors, target_vectors, kNearest, threads);
  const auto backward = nearest_rows(target_vectors, source_vectors, kNearest, threads);
  for (std::uint32_t s = 0; s < forward.size(); ++s)
    for (const std::uint32_t t : forward[s]) translated.insert(word_pair(s, t));
  for (std::uint32_t t = 0; t < backward.size(); ++t)
    for (const std::uint32_t s : backward[t]) translated.insert(word_pair(s, t));
  for (const auto& [word, targets] : seed_translations(seed, false)) {
    const auto s = source_side.ids.find(word);
    if (s == source_side.ids.end()) continue;
    for (const std::string& target_word : targets) {
      const auto t = target_side.ids.find(target_word);
      if (t != target_side.ids.end()) translated.insert(word_pair(s->second, t->second));
    }
  }

  const std::size_t n = evidence.size();
  evidence.one_to_one.assign(n, 0.0f);
  evidence.translated_share.assign(n, 0.0f);
  evidence.edge_agreement.assign(n, 0.0f);
  constexpr std::size_t kBlock = 1024;
  parallel_for((n + kBlock - 1) / kBlock, threads, [&](std::size_t block) {
    std::vector<std::uint8_t> source_used, target_used;
    for (std::size_t i = block * kBlock; i < std::min(n, (block + 1) * kBlock); ++i) {
      const std::vector<std::uint32_t>& a = source_side.terms.at(evidence.source[i]);
      const std::vector<std::uint32_t>& b = target_side.terms.at(evidence.target[i]);
      if (a.empty() || b.empty()) continue;
      // Greedy one-to-one matching by cosine: the best remaining pair first.
      std::vector<std::tuple<float, std::size_t, std::size_t>> pairs;
      for (std::size_t x = 0; x < a.size(); ++x)
        for (std::size_t y = 0; y < b.size(); ++y)
          pairs.emplace_back(source_vectors.vectors.row(a[x]).dot(target_vectors.vectors.row(b[y])), x, y);
      std::sort(pairs.begin(), pairs.end(), [](const auto& p, const auto& q) {
        return std::get<0>(p) != std::get<0>(q) ? std::get<0>(p) > std::get<0>(q) : p < q;
      });
      source_used.assign(a.size(), 0);
      target_used.assign(b.size(), 0);
      float matched = 0;
      for (const auto& [similarity, x, y] : pairs) {
        if (source_used[x] || target_used[y]) continue;
        source_used[x] = target_used[y] = 1;
        matched += std::max(similarity, 0.0f);
      }
      evidence.one_to_one[i] = matched / static_cast<float>(std::max(a.size(), b.size()));
      std::size_t with_translation = 0;
      for (const std::uint32_t x : a)
        with_translation +=
            std::any_of(b.begin(), b.end(), [&](std::uint32_t y) { return translated.count(word_pair(x, y)); });
      for (const std::uint32_t y : b)
        with_translation +=
            std::any_of(a.begin(), a.end(), [&](std::uint32_t x) { return translated.count(word_pair(x, y)); });
      evidence.translated_share[i] =
          static_cast<float>(with_translation) / static_cast<float>(a.size() + b.size());
      bool edge = false;
      for (const std::uint32_t x : {a.front(), a.back()})
        for (const std::uint32_t y : {b.front(), b.back()}) edge = edge || translated.count(word_pair(x, y));
      evidence.edge_agreement[i] = edge ? 1.0f : 0.0f;
    }
  });
}

}  // namespace termalign
