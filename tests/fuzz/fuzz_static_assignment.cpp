// libFuzzer target: the kept assignment file (static.membership.assignment.file,
// worker/coordinator/static_assignment.h) is read back at startup, so any
// bytes there must parse or be refused without a crash; a parsed record
// formats to text that parses to the same record.
#include <cstdlib>
#include <string>

#include "worker/coordinator/static_assignment.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto r = kc::coordinator::parse_static_assignment(text);
  if (!r) return 0;
  auto formatted = kc::coordinator::format_static_assignment(*r);
  if (!formatted) return 0;  // an over-long name cannot be written back
  auto again = kc::coordinator::parse_static_assignment(*formatted);
  if (!again || !(*again == *r)) std::abort();
  return 0;
}
