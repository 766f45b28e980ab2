// The composition with a serial step beside it: the pipeline's scheduler (pipeline/scheduler.cpp) overlaps the
// mapping's decompositions with the composition this way; it is not part of the public composition API.
#pragma once

#include <functional>
#include <vector>

#include "mapping/composition.h"

namespace termalign::detail {

// compose_lists, while one of the threads runs alongside() (when given; see parallel_for_alongside): a serial
// step, such as the mapping's SVD, that needs none of these vectors.
std::vector<ComposedTerms> compose_lists_alongside(const std::vector<TermsToCompose>& lists, int threads,
                                                   const std::function<void()>& alongside);

}  // namespace termalign::detail
