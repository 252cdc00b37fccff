#pragma once
// Built-in connectors.
//
// FileStreamSource (org.apache.kafka.connect.file.FileStreamSourceConnector)
//   config: `file` (path; required here), `topic` (required), `batch.size`
//   (max records per poll, default 2000). One task. Emits each complete line
//   (without its "\n" / "\r\n") as a string value with a null key. Source
//   partition {"filename": <file>}, offset {"position": <byte offset after
//   the line>}, as Connect's. Resumes from the committed position.
//
// FileStreamSink (org.apache.kafka.connect.file.FileStreamSinkConnector)
//   config: `file` (path; empty = stdout), `topics` (comma list). Appends each
//   record value's string form plus "\n"; flush() fflush+fsync.
//
// Both are written against the plugin ABI with plugin.hpp (builtin_file.cpp).
//
// SequenceSource (kc.connect.SequenceSourceConnector, alias SequenceSource;
//   written against the plugin ABI with plugin.hpp: builtin_sequence.cpp)
//   config: `topic`, `tasks.max` (tasks created), `throughput` (records per
//   second per task, default 10; <= 0 = unthrottled), `max.records` (per
//   task: seqs 0 .. max.records-1 in all, across restarts, then nothing
//   more; default -1 = no limit). Task n of connector C
//   emits key "C-n" and a Struct value {task: "C-n", seq: <seq>} (schema
//   kconnectd.Sequence) with seq = 0, 1, 2, ...; partition
//   {"connector":"C","task":n}, offset {"seq":<seq>}. Resumes after the
//   committed seq.

#include <memory>

#include "worker/connectors/config_def.h"
#include "worker/connectors/connector.h"

namespace kc::connectors {

class PluginRegistry;

/// Full class names of the built-ins.
inline constexpr const char* kFileStreamSourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector";
inline constexpr const char* kFileStreamSinkClass = "org.apache.kafka.connect.file.FileStreamSinkConnector";
inline constexpr const char* kSequenceSourceClass = "kc.connect.SequenceSourceConnector";

/// A new FileStreamSource connector instance (see the file comment): the
/// adapter of its plugin ABI class (builtin_file.cpp).
std::unique_ptr<Connector> make_file_stream_source();
/// A new FileStreamSink connector instance (the same).
std::unique_ptr<Connector> make_file_stream_sink();
/// A new SequenceSource connector instance. SequenceSource is written
/// against the plugin ABI (builtin_sequence.cpp, plugin.hpp); this is its
/// adapter.
std::unique_ptr<Connector> make_sequence_source();
/// A new MirrorSourceConnector instance: the adapter of its plugin ABI
/// class (worker/connectors/mirror, README there).
std::unique_ptr<Connector> make_mirror_source();
/// A new PostgresSinkConnector instance: the adapter of its plugin ABI
/// class (worker/connectors/postgres, README there).
std::unique_ptr<Connector> make_postgres_sink();
/// Adds the built-ins written against the plugin ABI (FileStreamSource,
/// FileStreamSink, SequenceSource, MirrorSource, PostgresSink),
/// registered through their entry point function as a .so's would be.
void register_builtin_abi_connectors(PluginRegistry& r);

/// FileStreamSource keys: file (required, non-empty), topic (required, one
/// non-empty topic), batch.size (INT >= 1, default 2000).
ConfigDefs file_stream_source_config_defs();
/// FileStreamSink keys: file (default "" = stdout), topics, topics.regex.
ConfigDefs file_stream_sink_config_defs();
/// FileStreamSink rule (SinkConnectorConfig's): exactly one of topics and
/// topics.regex must be set; the error goes on both keys.
void file_stream_sink_config_rule(const ConfigMap& config, ConfigErrors& errors);
/// SequenceSource keys: topic (required, non-empty), throughput (DOUBLE,
/// default 10), max.records (LONG >= -1, default -1 = no limit).
ConfigDefs sequence_source_config_defs();

}  // namespace kc::connectors
