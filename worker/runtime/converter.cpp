#include "worker/runtime/converter.h"

namespace kc::runtime {

using connectors::Data;

Result<std::optional<std::string>> Converter::from_connect(std::string_view topic, const Data& data) const {
  return converter_->from_connect(topic, data.schema, data.value);
}

Result<Data> Converter::to_connect(std::string_view topic, const std::optional<std::string>& bytes) const {
  auto sv = converter_->to_connect(topic, bytes);
  if (!sv) return sv.error();
  return Data{std::move(sv->schema), std::move(sv->value)};
}

bool Converter::from_connect_view(const Data& data, std::optional<std::string_view>& out) const {
  switch (identity_) {
    case Identity::None: return false;
    case Identity::Utf8String:
      if (data.value.is_null()) {
        out.reset();
        return true;
      }
      if (const auto* s = data.value.get_if<std::string>()) {
        out = std::string_view(*s);
        return true;
      }
      return false;
    case Identity::ByteArray:
      // A schema other than BYTES is from_connect's error to report.
      if (data.schema && data.schema->type() != data::Type::BYTES) return false;
      if (data.value.is_null()) {
        out.reset();
        return true;
      }
      if (const auto* b = data.value.get_if<data::Bytes>()) {
        out = std::string_view(b->data);
        return true;
      }
      return false;
  }
  return false;
}

Result<Data> Converter::to_connect_owned(std::string_view topic, std::optional<std::string>&& bytes) const {
  switch (identity_) {
    case Identity::None: break;
    case Identity::Utf8String:
      if (!bytes) return Data{data::OPTIONAL_STRING_SCHEMA(), data::Value()};
      return Data{data::OPTIONAL_STRING_SCHEMA(), data::Value(std::move(*bytes))};
    case Identity::ByteArray:
      if (!bytes) return Data{data::OPTIONAL_BYTES_SCHEMA(), data::Value()};
      return Data{data::OPTIONAL_BYTES_SCHEMA(), data::Value(data::Bytes{std::move(*bytes)})};
  }
  return to_connect(topic, bytes);
}

Result<std::unique_ptr<Converter>> make_converter(std::string_view class_name,
                                                  const std::map<std::string, std::string>& config, bool is_key) {
  auto made = converters::make_converter(class_name, config, is_key);
  if (!made) {
    Error e = made.error();
    if (e.field.empty()) e.field = "converter";
    return e;
  }
  auto c = std::unique_ptr<Converter>(new Converter());
  c->converter_ = std::move(made).value();
  if (const auto* s = dynamic_cast<const converters::StringConverter*>(c->converter_.get()); s && s->encoding() == "UTF-8")
    c->identity_ = Converter::Identity::Utf8String;
  else if (dynamic_cast<const converters::ByteArrayConverter*>(c->converter_.get()))
    c->identity_ = Converter::Identity::ByteArray;
  return c;
}

}  // namespace kc::runtime
