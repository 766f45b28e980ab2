// Term lists built in memory, for tests that need no file.
#pragma once

#include <string>
#include <vector>

#include "termalign/lexicon.h"

namespace termalign_tests {

// `terms` as a term list, ids in their order.
inline termalign::TermList term_list(const std::vector<std::string>& terms) {
  termalign::TermList list;
  for (const std::string& term : terms) {
    list.ids.emplace(term, static_cast<std::uint32_t>(list.terms.size()));
    list.terms.push_back(term);
  }
  return list;
}

}  // namespace termalign_tests
