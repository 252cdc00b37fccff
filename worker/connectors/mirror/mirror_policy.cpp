#include "worker/connectors/mirror/mirror_policy.h"

#include <algorithm>


namespace kc::connectors::mirror {

using ConfigMap = kconnectd::Config;
using ConnectError = kconnectd::Error;
using OrderedJson = nlohmann::ordered_json;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    auto item = trim(list.substr(start, comma - start));
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

int64_t parse_long(const ConfigMap& c, const std::string& key, int64_t def, int64_t at_least) {
  auto it = c.find(key);
  if (it == c.end() || trim(it->second).empty()) return def;
  int64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoll(trim(it->second), &used);
    if (used != trim(it->second).size()) throw std::invalid_argument(key);
  } catch (const std::exception&) {
    throw ConnectError("Invalid value " + it->second + " for configuration " + key + ": Not a number of type LONG");
  }
  if (v < at_least)
    throw ConnectError("Invalid value " + it->second + " for configuration " + key + ": Value must be at least " +
                       std::to_string(at_least));
  return v;
}

bool parse_bool(const ConfigMap& c, const std::string& key, bool def) {
  auto it = c.find(key);
  if (it == c.end() || trim(it->second).empty()) return def;
  std::string v = trim(it->second);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (v == "true") return true;
  if (v == "false") return false;
  throw ConnectError("Invalid value " + it->second + " for configuration " + key + ": Expected value to be either true or false");
}

}  // namespace

bool ReplicationPolicy::is_internal_topic(const std::string& topic) const {
  return topic.rfind("__", 0) == 0 || topic.rfind('.', 0) == 0 || ends_with(topic, ".internal") ||
         ends_with(topic, "-internal");
}

std::string DefaultReplicationPolicy::format_remote_topic(const std::string& source_alias,
                                                          const std::string& topic) const {
  return source_alias + sep_ + topic;
}

std::optional<std::string> DefaultReplicationPolicy::topic_source(const std::string& topic) const {
  // The alias is what precedes the first separator; no separator, or
  // nothing before or after it, means a local topic.
  auto at = topic.find(sep_);
  if (sep_.empty() || at == std::string::npos || at == 0 || at + sep_.size() >= topic.size()) return std::nullopt;
  return topic.substr(0, at);
}

std::optional<std::string> DefaultReplicationPolicy::upstream_topic(const std::string& topic) const {
  auto source = topic_source(topic);
  if (!source) return std::nullopt;
  return topic.substr(source->size() + sep_.size());
}

std::unique_ptr<ReplicationPolicy> make_replication_policy(const std::string& class_name,
                                                           const std::string& separator) {
  const std::string n = trim(class_name);
  if (n == kDefaultPolicyClass || n == "DefaultReplicationPolicy") {
    if (separator.empty())
      throw ConnectError("Invalid value for configuration replication.policy.separator: String must be non-empty");
    return std::make_unique<DefaultReplicationPolicy>(separator);
  }
  if (n == kIdentityPolicyClass || n == "IdentityReplicationPolicy") return std::make_unique<IdentityReplicationPolicy>();
  throw ConnectError("Invalid value " + class_name + " for configuration replication.policy.class: Class " +
                     class_name + " could not be found (known: " + kDefaultPolicyClass + ", " + kIdentityPolicyClass +
                     ")");
}

RegexList::RegexList(const std::string& key, const std::string& list) {
  // Java regex syntax (MM2 compiles these with java.util.regex), on PCRE2.
  for (const auto& item : split_list(list)) {
    auto compiled = transforms::JavaRegex::compile(item);
    if (!compiled)
      throw ConnectError("Invalid value " + list + " for configuration " + key + ": '" + item +
                         "' is not a valid regular expression (" + compiled.error().message + ")");
    regexes_.push_back(std::move(*compiled));
  }
}

bool RegexList::matches(const std::string& topic) const {
  return std::any_of(regexes_.begin(), regexes_.end(),
                     [&](const transforms::JavaRegex& r) { return r.matches(topic); });
}

MirrorConfig parse_mirror_config(const ConfigMap& config) {
  MirrorConfig m;
  auto get = [&](const std::string& k) -> std::optional<std::string> {
    auto it = config.find(k);
    if (it == config.end()) return std::nullopt;
    return it->second;
  };
  m.source_alias = trim(get("source.cluster.alias").value_or(""));
  if (m.source_alias.empty())
    throw ConnectError("MirrorSourceConnector requires the 'source.cluster.alias' setting (the source cluster's name, "
                       "e.g. 'primary')");
  m.target_alias = trim(get("target.cluster.alias").value_or(""));
  if (!m.target_alias.empty() && m.target_alias == m.source_alias)
    throw ConnectError("source.cluster.alias and target.cluster.alias must differ (both are '" + m.source_alias + "')");
  const std::string src = "source.cluster.", dst = "target.cluster.";
  for (const auto& [k, v] : config) {
    if (k.rfind(src, 0) == 0 && k != "source.cluster.alias") m.source_client[k.substr(src.size())] = v;
    if (k.rfind(dst, 0) == 0 && k != "target.cluster.alias") m.target_client[k.substr(dst.size())] = v;
  }
  auto bs = m.source_client.find("bootstrap.servers");
  if (bs == m.source_client.end() || trim(bs->second).empty())
    throw ConnectError("MirrorSourceConnector requires the 'source.cluster.bootstrap.servers' setting (host:port list "
                       "of the source cluster)");
  if (!m.target_client.empty() && trim(m.target_client["bootstrap.servers"]).empty())
    throw ConnectError("target.cluster.* settings were given without 'target.cluster.bootstrap.servers'");
  m.topics = get("topics").value_or(kDefaultTopics);
  m.topics_exclude = get("topics.exclude").value_or(kDefaultTopicsExclude);
  m.policy_class = get("replication.policy.class").value_or(kDefaultPolicyClass);
  m.separator = get("replication.policy.separator").value_or(".");
  m.refresh_ms = parse_long(config, "refresh.topics.interval.ms", kDefaultRefreshMs, 1);
  m.refresh_enabled = parse_bool(config, "refresh.topics.enabled", true);
  m.replication_factor = static_cast<int>(parse_long(config, "replication.factor", -1, -1));
  if (m.replication_factor == 0)
    throw ConnectError("Invalid value 0 for configuration replication.factor: must be -1 (broker default) or at least 1");
  m.poll_batch = static_cast<int>(parse_long(config, "mirror.poll.max.records", 1000, 1));
  // Fail now, with the key named, rather than in the first listing.
  TopicFilter check(m);
  return m;
}

TopicFilter::TopicFilter(const MirrorConfig& config)
    : include_("topics", config.topics),
      exclude_("topics.exclude", config.topics_exclude),
      policy_(make_replication_policy(config.policy_class, config.separator)),
      target_alias_(config.target_alias) {}

bool TopicFilter::is_cycle(const std::string& topic) const {
  // Follow the chain of sources (a.b.t -> b.t -> t); MM2's isCycle.
  std::string t = topic;
  for (int depth = 0; depth < 64; ++depth) {
    auto source = policy_->topic_source(t);
    if (!source) return false;
    if (!target_alias_.empty() && *source == target_alias_) return true;
    auto up = policy_->upstream_topic(t);
    if (!up || *up == t) return false;
    t = *up;
  }
  return false;
}

bool TopicFilter::should_replicate(const std::string& topic) const {
  return include_.matches(topic) && !exclude_.matches(topic) && !policy_->is_internal_topic(topic) && !is_cycle(topic);
}

std::vector<std::vector<TopicPartition>> split_partitions(std::vector<TopicPartition> partitions, int max_tasks) {
  std::sort(partitions.begin(), partitions.end());  // by topic, then partition
  partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  const size_t n = std::min<size_t>(static_cast<size_t>(std::max(1, max_tasks)), partitions.size());
  std::vector<std::vector<TopicPartition>> out(n);
  for (size_t i = 0; i < partitions.size(); ++i) out[i % n].push_back(partitions[i]);
  return out;
}

std::string encode_partitions(const std::vector<TopicPartition>& partitions) {
  std::string out;
  for (const auto& [t, p] : partitions) out += (out.empty() ? "" : ",") + t + "-" + std::to_string(p);
  return out;
}

std::vector<TopicPartition> decode_partitions(const std::string& text) {
  std::vector<TopicPartition> out;
  for (const auto& item : split_list(text)) {
    auto dash = item.rfind('-');
    bool ok = dash != std::string::npos && dash > 0 && dash + 1 < item.size();
    int32_t p = -1;
    if (ok) {
      try {
        size_t used = 0;
        p = std::stoi(item.substr(dash + 1), &used);
        ok = used == item.size() - dash - 1 && p >= 0;
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok)
      throw ConnectError(std::string("Invalid value for ") + kTaskPartitionsKey + ": '" + item +
                         "' is not of the form topic-partition");
    out.emplace_back(item.substr(0, dash), p);
  }
  return out;
}

OrderedJson source_partition(const std::string& alias, const std::string& topic, int32_t partition) {
  return OrderedJson{{"cluster", alias}, {"topic", topic}, {"partition", partition}};
}

std::optional<int64_t> resume_offset(const std::optional<OrderedJson>& committed) {
  if (!committed || !committed->is_object()) return std::nullopt;
  auto it = committed->find("offset");
  if (it == committed->end() || !it->is_number_integer()) return std::nullopt;
  const int64_t o = it->get<int64_t>();
  if (o < 0) return std::nullopt;
  return o + 1;
}

}  // namespace kc::connectors::mirror
