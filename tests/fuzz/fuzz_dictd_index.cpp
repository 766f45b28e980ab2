// libFuzzer target: a dictd index (parse_dictd_index) and an entry's text (parse_dictd_entry) on arbitrary bytes.
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "io/dictionary.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  termalign::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto entries = termalign::parse_dictd_index(text, "fuzz.index");
    // One entry per non-empty line, lines strictly increasing; a headword holds no TAB nor line end.
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0 && entries[i].line <= entries[i - 1].line) __builtin_trap();
      if (entries[i].headword.find_first_of("\t\n") != std::string::npos) __builtin_trap();
      if (entries[i].offset >= (std::uint64_t(1) << 60) || entries[i].length >= (std::uint64_t(1) << 60))
        __builtin_trap();
    }
  } catch (const termalign::Error& error) {
    if (error.kind() != termalign::ErrorKind::input) __builtin_trap();
  }
  // Any text is an entry: its headword and translations hold no line end, and no translation is empty.
  const termalign::DictdEntry entry = termalign::parse_dictd_entry(text);
  if (entry.headword.find('\n') != std::string::npos) __builtin_trap();
  for (const std::string& translation : entry.translations)
    if (translation.empty() || translation.find('\n') != std::string::npos) __builtin_trap();
  return 0;
}
