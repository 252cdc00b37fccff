#include "worker/connectors/connector.h"

namespace kc::connectors {

SharedJson::SharedJson() {
  static const auto empty = std::make_shared<const OrderedJson>(OrderedJson::object());
  value_ = empty;
}

SharedJson::SharedJson(OrderedJson value) : value_(std::make_shared<const OrderedJson>(std::move(value))) {}

SharedJson::SharedJson(std::shared_ptr<const OrderedJson> value) : SharedJson() {
  if (value) value_ = std::move(value);
}

Data Data::string(std::optional<std::string> s) {
  if (!s) return Data{data::OPTIONAL_STRING_SCHEMA(), data::Value()};
  return Data{data::STRING_SCHEMA(), data::Value(std::move(*s))};
}

Data Data::bytes(std::string b) { return Data{data::BYTES_SCHEMA(), data::Value(data::Bytes{std::move(b)})}; }

bool operator==(const Data& a, const Data& b) {
  const bool same_schema = a.schema == b.schema || (a.schema && b.schema && *a.schema == *b.schema);
  return same_schema && a.value == b.value;
}

const char* connector_type_name(ConnectorType t) {
  switch (t) {
    case ConnectorType::Source: return "source";
    case ConnectorType::Sink: return "sink";
  }
  return "unknown";
}

}  // namespace kc::connectors
