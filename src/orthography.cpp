#include "termalign/orthography.h"

#include <unicode/translit.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "termalign/error.h"
#include "termalign/io.h"
#include "termalign/parallel.h"

namespace termalign {

namespace {

// One transliterator per thread: ICU's Transliterator::transliterate is not safe to share between threads.
const icu::Transliterator& latin_transliterator() {
  thread_local std::unique_ptr<icu::Transliterator> transliterator = [] {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::Transliterator> created(icu::Transliterator::createInstance(
        icu::UnicodeString::fromUTF8("Any-Latin; Latin-ASCII; Lower"), UTRANS_FORWARD, status));
    TERMALIGN_CHECK(U_SUCCESS(status) && created, "ICU has no Any-Latin transliterator");
    return created;
  }();
  return *transliterator;
}

// FNV-1a over the bytes of one n-gram, with its length mixed in so bigrams and trigrams never share a hash.
std::uint32_t hash_ngram(const std::string& text, std::size_t begin, std::size_t end) {
  std::uint32_t hash = 2166136261u ^ static_cast<std::uint32_t>(end - begin);
  for (std::size_t i = begin; i < end; ++i) hash = (hash ^ static_cast<unsigned char>(text[i])) * 16777619u;
  return hash;
}

bool is_trigram(std::uint32_t hash) { return (hash & 1u) == 1u; }

}  // namespace

std::string latin_spelling(const std::string& term, bool transliterate) {
  if (!transliterate) return to_lower(term);
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(term);
  latin_transliterator().transliterate(text);
  std::string spelling;
  text.toUTF8String(spelling);
  return spelling;
}

NgramProfile ngram_profile(const std::string& spelling) {
  // Byte n-grams of the UTF-8 text: after transliteration nearly every term is ASCII.
  const std::string marked = "#" + spelling + "#";
  NgramProfile profile;
  for (std::size_t n = 2; n <= 3; ++n) {
    for (std::size_t i = 0; i + n <= marked.size(); ++i) {
      // The lowest bit tells trigrams (1) from bigrams (0), so the inverted index can use trigrams only.
      profile.push_back((hash_ngram(marked, i, i + n) & ~1u) | (n == 3 ? 1u : 0u));
    }
  }
  std::sort(profile.begin(), profile.end());
  return profile;
}

double ngram_similarity(const NgramProfile& a, const NgramProfile& b) {
  if (a.empty() && b.empty()) return 0;
  std::size_t shared = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++shared, ++i, ++j;
    }
  }
  return 2.0 * static_cast<double>(shared) / static_cast<double>(a.size() + b.size());
}

double orthographic_similarity(const std::string& a, const std::string& b, bool transliterate) {
  return ngram_similarity(ngram_profile(latin_spelling(a, transliterate)),
                          ngram_profile(latin_spelling(b, transliterate)));
}

std::vector<NgramProfile> ngram_profiles(const std::vector<std::string>& terms, bool transliterate, int threads) {
  std::vector<NgramProfile> profiles(terms.size());
  parallel_for(terms.size(), threads,
               [&](std::size_t i) { profiles[i] = ngram_profile(latin_spelling(terms[i], transliterate)); });
  return profiles;
}

std::vector<OrthographicMatch> orthographic_neighbours(const std::vector<NgramProfile>& sources,
                                                       const std::vector<NgramProfile>& targets, std::size_t m,
                                                       double minimum, int threads) {
  if (m == 0 || sources.empty() || targets.empty()) return {};
  // Inverted index: trigram -> targets holding it (each target once per distinct trigram).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> postings;
  for (std::uint32_t t = 0; t < targets.size(); ++t) {
    const NgramProfile& profile = targets[t];
    for (std::size_t i = 0; i < profile.size(); ++i) {
      if (is_trigram(profile[i]) && (i == 0 || profile[i] != profile[i - 1])) postings.emplace_back(profile[i], t);
    }
  }
  std::sort(postings.begin(), postings.end());
  // Trigrams shared by very many targets ("ion", "ent") say little and would make the search quadratic: they are
  // left out of the look-up (the similarity itself still counts them).
  const std::size_t longest_posting = std::max<std::size_t>(1000, targets.size() / 50);

  std::vector<std::vector<OrthographicMatch>> per_source(sources.size());
  const int thread_count = resolve_threads(threads);
  std::vector<std::vector<std::uint32_t>> seen_by_thread(thread_count);
  parallel_for(sources.size(), thread_count, [&](std::size_t s) {
    std::vector<std::uint32_t>& seen = seen_by_thread[current_thread()];
    seen.clear();
    const NgramProfile& profile = sources[s];
    for (std::size_t i = 0; i < profile.size(); ++i) {
      if (!is_trigram(profile[i]) || (i > 0 && profile[i] == profile[i - 1])) continue;
      auto range = std::equal_range(postings.begin(), postings.end(), std::make_pair(profile[i], 0u),
                                    [](const auto& a, const auto& b) { return a.first < b.first; });
      if (static_cast<std::size_t>(range.second - range.first) > longest_posting) continue;
      for (auto it = range.first; it != range.second; ++it) seen.push_back(it->second);
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    std::vector<OrthographicMatch>& best = per_source[s];
    for (std::uint32_t t : seen) {
      const double similarity = ngram_similarity(profile, targets[t]);
      if (similarity >= minimum)
        best.push_back({static_cast<std::uint32_t>(s), t, static_cast<float>(similarity)});
    }
    auto better = [](const OrthographicMatch& a, const OrthographicMatch& b) {
      return a.similarity != b.similarity ? a.similarity > b.similarity : a.target < b.target;
    };
    if (best.size() > m) {
      std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(m), best.end(), better);
      best.resize(m);
    }
    std::sort(best.begin(), best.end(), better);
  });
  std::vector<OrthographicMatch> matches;
  for (auto& best : per_source) matches.insert(matches.end(), best.begin(), best.end());
  return matches;
}

}  // namespace termalign
