#include "worker/connectors/connector.h"

namespace kc::connectors {

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
