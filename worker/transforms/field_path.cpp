// KIP-821 field paths: splitting a V2 path into steps, with backtick quoting.
#include "worker/transforms/field_path.h"

namespace kc::transforms::detail {

namespace {

Error incomplete_backtick_pair(std::string_view path, size_t open) {
  return Error{"", "Incomplete backtick pair in path: [" + std::string(path) +
                       "], consider adding a backslash before backtick at position " + std::to_string(open) +
                       " to escape it"};
}

// Reads the quoted step whose opening backtick is at `open` into `step`;
// returns the index just past the step and its separating dot.
Result<size_t> read_quoted_step(std::string_view path, size_t open, std::string& step) {
  size_t copied = open + 1;  // path[copied..] is not yet in `step`
  size_t search = open + 1;
  while (true) {
    const size_t tick = path.find('`', search);
    if (tick == std::string_view::npos) return incomplete_backtick_pair(path, open);
    // path[tick - 1] is at worst the opening backtick, never out of range.
    const bool escaped = path[tick - 1] == '\\';
    if (tick + 1 == path.size()) {
      if (escaped) return incomplete_backtick_pair(path, open);
      step.append(path.substr(copied, tick - copied));
      return tick + 1;
    }
    if (path[tick + 1] != '.') {  // a backtick inside the name
      search = tick + 1;
      continue;
    }
    if (escaped) {  // "\`." : a literal backtick, drop the backslash
      step.append(path.substr(copied, tick - 1 - copied));
      step.push_back('`');
      copied = search = tick + 1;
      continue;
    }
    step.append(path.substr(copied, tick - copied));
    return tick + 2;
  }
}

}  // namespace

Result<std::vector<std::string>> parse_field_path(std::string_view path, FieldSyntaxVersion version) {
  if (version == FieldSyntaxVersion::kV1 || path.empty()) return std::vector<std::string>{std::string(path)};
  std::vector<std::string> steps;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '`') {
      std::string step;
      auto next = read_quoted_step(path, i, step);
      if (!next) return next.error();
      steps.push_back(std::move(step));
      i = *next;
      continue;
    }
    const size_t dot = path.find('.', i);
    if (dot == std::string_view::npos) {
      steps.emplace_back(path.substr(i));
      break;
    }
    steps.emplace_back(path.substr(i, dot - i));
    i = dot + 1;
  }
  if (path.back() == '.') steps.emplace_back();
  return steps;
}

}  // namespace kc::transforms::detail
