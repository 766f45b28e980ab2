// libFuzzer target: load_config on arbitrary bytes; what loads must survive a round trip through to_toml.
#include "fuzz_input.h"
#include "io/io.h"
#include "termalign/config.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  termalign::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  termalign::fuzz::read_from_file(data, size, ".toml", [](const std::string& path) {
    termalign::AlignConfig config;
    termalign::load_config(path, config);
    try {
      config.validate();
    } catch (const termalign::Error& error) {
      if (error.kind() != termalign::ErrorKind::usage) throw;
    }
    // The resolved configuration reloads to itself.
    const std::string resolved = termalign::to_toml(config);
    const std::string resolved_path = path + ".resolved.toml";
    termalign::write_file_atomically(resolved_path, resolved);
    termalign::AlignConfig reloaded;
    termalign::load_config(resolved_path, reloaded);
    if (termalign::to_toml(reloaded) != resolved) __builtin_trap();
  });
  return 0;
}
