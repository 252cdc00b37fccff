#include "worker/transforms/dry_run.h"

namespace kc::transforms {

namespace nt = data::notation;

Result<Config> connector_config_from_json(const Json& doc) {
  if (!doc.is_object()) return Error{"", "the connector config must be a JSON object"};
  const Json& c = doc.contains("config") && doc["config"].is_object() ? doc["config"] : doc;
  Config out;
  for (const auto& [k, v] : c.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  if (&c != &doc && doc.contains("name") && doc["name"].is_string()) out["name"] = doc["name"].get<std::string>();
  return out;
}

Result<TransformDryRun> TransformDryRun::create(const Config& config, std::vector<ConfigError>* errors) {
  auto chain = TransformChain::build(config, errors);
  if (!chain) return chain.error();
  TransformDryRun d;
  d.chain_ = std::make_shared<TransformChain>(std::move(*chain));
  return d;
}

Json TransformDryRun::process(const Json& record) {
  if (!record.is_object()) return nt::error_line("input", "each line must be a JSON object (a record)");
  auto r = nt::record_from_json(record);
  if (!r) return nt::error_line("input", r.error().to_string());
  ApplyError err;
  Result<Outcome> out = Outcome::kKept;
  if (r->sink) {
    out = chain_->apply(r->record, &err);
  } else {
    data::SourceRecord src;
    static_cast<data::ConnectRecord&>(src) = static_cast<const data::ConnectRecord&>(r->record);
    out = chain_->apply(src, &err);
    static_cast<data::ConnectRecord&>(r->record) = std::move(static_cast<data::ConnectRecord&>(src));
  }
  if (!out) return nt::error_line("apply", err.message, err.alias);
  if (*out == Outcome::kDropped) return Json();
  return nt::record_to_json(*r);
}

}  // namespace kc::transforms
