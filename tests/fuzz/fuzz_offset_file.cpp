// libFuzzer target: the standalone offset file
// (offset.storage.file.filename, worker/storage/file_offset_store.h) is
// read back at startup, so any bytes there must parse or be refused
// without a crash; what parses formats to text that parses to the same
// entries.
#include <cstdlib>
#include <string>

#include "worker/storage/file_offset_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto r = kc::storage::parse_offset_file(text);
  if (!r) return 0;
  auto again = kc::storage::parse_offset_file(kc::storage::format_offset_file(*r));
  if (!again || *again != *r) std::abort();
  return 0;
}
