#pragma once
// Connect's Transformation (KIP-66) and Predicate (KIP-585) contracts over
// kc::data records, plus the ConfigDef-style key definitions every plugin
// publishes so that REST can list and validate them.
//
// A transformation works in place on a ConnectRecord: apply() either keeps
// the (possibly rewritten) record, drops it (Connect's `return null`), or
// fails with Connect's exception message. A RecordRef says whether the
// record is a SinkRecord or a SourceRecord, as Connect's transforms care
// (InsertField's offset.field needs a SinkRecord).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "worker/data/record.h"

namespace kc::transforms {

/// A plugin's own config: keys without the `transforms.<alias>.` prefix,
/// string values exactly as a connector config holds them.
using Config = std::map<std::string, std::string>;

/// One ConfigDef key as Connect documents it (ConfigDef.ConfigKey):
/// name, type ("STRING", "INT", "LIST", "BOOLEAN"), default (nullopt = no
/// default: the key is required; "" is an empty default), importance
/// ("HIGH", "MEDIUM", "LOW") and doc text.
struct ConfigKeyDef {
  std::string name;
  std::string type;
  std::optional<std::string> default_value;
  std::string importance;
  std::string doc;
  /// True when the Java default is null (an optional key without a value).
  bool default_null = false;
};

/// The record a transform or predicate sees. `rec` is the record itself;
/// exactly one of `sink` / `source` points at the same object, saying
/// which kind of Connect record it is (SinkRecord or SourceRecord).
struct RecordRef {
  data::ConnectRecord& rec;
  data::SinkRecord* sink = nullptr;
  data::SourceRecord* source = nullptr;

  static RecordRef of(data::SinkRecord& r) { return RecordRef{r, &r, nullptr}; }
  static RecordRef of(data::SourceRecord& r) { return RecordRef{r, nullptr, &r}; }
};

/// What apply() did with a record.
enum class Outcome { kKept, kDropped };

/// Connect's Transformation<R>. configure() once, then apply() from one
/// thread at a time (transforms may keep schema caches).
class Transformation {
 public:
  virtual ~Transformation() = default;
  /// Transformation.configure(props). Errors are ConfigExceptions with
  /// Connect's message; Error::field names the offending key of the
  /// plugin's own config (empty when Connect names none).
  virtual Status configure(const Config& config) = 0;
  /// Transformation.apply(record), in place. kDropped is Connect's null
  /// return. Errors carry Connect's message (DataException and friends).
  virtual Result<Outcome> apply(RecordRef record) = 0;
};

/// Connect's Predicate<R>.
class Predicate {
 public:
  virtual ~Predicate() = default;
  /// Predicate.configure(props); errors as Transformation::configure.
  virtual Status configure(const Config& config) = 0;
  /// Predicate.test(record).
  virtual bool test(const data::ConnectRecord& record) const = 0;
};

}  // namespace kc::transforms
