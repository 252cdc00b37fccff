#include "worker/connectors/connector.h"

namespace kc::connectors {

SharedJson::SharedJson() {
  static const auto empty = std::make_shared<const OrderedJson>(OrderedJson::object());
  value_ = empty;
}

SharedJson::SharedJson(OrderedJson value) : value_(std::make_shared<const OrderedJson>(std::move(value))) {}

Data Data::string(std::optional<std::string> s) {
  Data d;
  if (s) {
    d.schema = Schema{SchemaType::String, false};
    d.value = std::move(*s);
  } else {
    d.schema = Schema{SchemaType::String, true};
    d.value = nullptr;
  }
  return d;
}

Data Data::bytes(const std::string& b) {
  Data d;
  d.schema = Schema{SchemaType::Bytes, false};
  d.value = nlohmann::json::binary(std::vector<uint8_t>(b.begin(), b.end()));
  return d;
}

const char* connector_type_name(ConnectorType t) {
  switch (t) {
    case ConnectorType::Source: return "source";
    case ConnectorType::Sink: return "sink";
  }
  return "unknown";
}

}  // namespace kc::connectors
