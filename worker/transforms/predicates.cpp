// The predicates of KIP-585: HasHeaderKey, RecordIsTombstone, TopicNameMatches.
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"
#include "worker/transforms/java_regex.h"

namespace kc::transforms::detail {

namespace {

class HasHeaderKey final : public Predicate {
 public:
  static constexpr std::string_view kName = "HasHeaderKey";
  static constexpr std::string_view kDoc =
      "A predicate which is true for records with at least one header with the configured name.";
  static std::vector<ConfigKeyDef> defs() { return {{"name", "STRING", std::nullopt, "MEDIUM", "The header name."}}; }
  Status configure(const Config& config) override {
    auto n = ConfigReader(config, defs()).required_string("name");
    if (!n) return n.error();
    if (n->empty()) return invalid_value("name", "", "String must be non-empty");
    name_ = *n;
    return ok_status();
  }
  bool test(const data::ConnectRecord& r) const override { return r.headers.last_with_name(name_) != nullptr; }

 private:
  std::string name_;
};

class RecordIsTombstone final : public Predicate {
 public:
  static constexpr std::string_view kName = "RecordIsTombstone";
  static constexpr std::string_view kDoc =
      "A predicate which is true for records which are tombstones (i.e. have null value).";
  static std::vector<ConfigKeyDef> defs() { return {}; }
  Status configure(const Config&) override { return ok_status(); }
  bool test(const data::ConnectRecord& r) const override { return r.value.is_null(); }
};

class TopicNameMatches final : public Predicate {
 public:
  static constexpr std::string_view kName = "TopicNameMatches";
  static constexpr std::string_view kDoc =
      "A predicate which is true for records with a topic name that matches the configured regular expression.";
  static std::vector<ConfigKeyDef> defs() {
    return {{"pattern", "STRING", std::nullopt, "MEDIUM",
             "A Java regular expression for matching against the name of a record's topic."}};
  }
  Status configure(const Config& config) override {
    auto p = ConfigReader(config, defs()).required_string("pattern");
    if (!p) return p.error();
    if (p->empty()) return invalid_value("pattern", "", "String must be non-empty");
    auto re = JavaRegex::compile(*p);
    if (!re) return invalid_value("pattern", *p, "Invalid regex: " + re.error().message);
    regex_ = std::move(*re);
    return ok_status();
  }
  bool test(const data::ConnectRecord& r) const override { return regex_ && regex_->matches(r.topic); }

 private:
  std::optional<JavaRegex> regex_;
};

}  // namespace

void add_predicates(std::vector<PluginInfo>& out) { add_plugins<HasHeaderKey, RecordIsTombstone, TopicNameMatches>(out); }

}  // namespace kc::transforms::detail
