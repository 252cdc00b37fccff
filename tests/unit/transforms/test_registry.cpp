// The registry lists every built-in under Connect's class names, in
// class-name order with the predicates last, each with one working factory.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "worker/transforms/registry.h"

using namespace kc::transforms;

TEST_CASE("registry lists every built-in plugin under Connect's class names", "[transforms][registry]") {
  const std::vector<std::string> transforms = {
      "Cast$Key", "Cast$Value", "DropHeaders", "ExtractField$Key", "ExtractField$Value", "Filter", "Flatten$Key",
      "Flatten$Value", "HeaderFrom$Key", "HeaderFrom$Value", "HoistField$Key", "HoistField$Value", "InsertField$Key",
      "InsertField$Value", "InsertHeader", "MaskField$Key", "MaskField$Value", "RegexRouter", "ReplaceField$Key",
      "ReplaceField$Value", "SetSchemaMetadata$Key", "SetSchemaMetadata$Value", "TimestampConverter$Key",
      "TimestampConverter$Value", "TimestampRouter", "ValueToKey"};
  const std::vector<std::string> predicates = {"HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"};
  const auto& all = plugins();
  REQUIRE(all.size() == transforms.size() + predicates.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const PluginInfo& p = all[i];
    const bool is_transform = i < transforms.size();
    const std::string simple = is_transform ? transforms[i] : predicates[i - transforms.size()];
    INFO(simple);
    CHECK(p.class_name == std::string(is_transform ? kTransformPackage : kPredicatePackage) + simple);
    CHECK(p.aliases == std::vector<std::string>{simple});
    CHECK_FALSE(p.doc.empty());
    CHECK(find_plugin(simple) == &p);
    if (is_transform) {
      CHECK(p.kind == PluginKind::kTransformation);
      REQUIRE(p.make_transformation);
      CHECK(p.make_transformation() != nullptr);
      CHECK_FALSE(p.make_predicate);
    } else {
      CHECK(p.kind == PluginKind::kPredicate);
      REQUIRE(p.make_predicate);
      CHECK(p.make_predicate() != nullptr);
      CHECK_FALSE(p.make_transformation);
    }
  }
}
