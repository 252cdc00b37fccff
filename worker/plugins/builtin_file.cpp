// FileStreamSource and FileStreamSink written against the plugin ABI
// (include/kconnectd/plugin.hpp), as a plugin author would: compiled into
// the daemon and registered through the entry point builtin_file_plugins_register
// (builtin.cpp), not dlopen. Behaviour, class names, config defs and docs:
// builtin.h.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <kconnectd/plugin.hpp>

#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"

namespace kc::connectors {
namespace {

namespace kp = kconnectd;

/// Set and not only blanks (how SinkConnectorConfig reads topics / topics.regex).
bool is_set(const kp::Config& c, const char* key) {
  auto it = c.find(key);
  return it != c.end() && it->second.find_first_not_of(" \t") != std::string::npos;
}

constexpr const char* kSingleTopic = "FileStreamSource 'topic' must be a single topic";

// ---------------------------------------------------------------- FileStreamSource

class FileSourceTask : public kp::SourceTask {
 public:
  void start(const kp::Config& config, const kp::SourceTaskContext& ctx) override {
    file_ = kp::require_setting(config, "file", "FileStreamSource");
    topic_ = kp::require_setting(config, "topic", "FileStreamSource");
    batch_size_ = kp::int_setting(config, "batch.size", 2000);
    if (batch_size_ < 1) throw kp::Error("batch.size must be at least 1");
    partition_.set("filename", file_);
    if (auto off = ctx.offset(partition_))
      if (auto pos = off->get_int64("position")) position_ = *pos;
    schema_ = kp::Schema::string();
  }

  // Up to batch.size lines per poll, reading on until the batch is full or
  // the file has no more whole lines. Only the poll's last record carries
  // the source partition and offset: the runtime commits the last offset
  // of a poll anyway, and the others would cost an allocation each.
  void poll(kp::SourceRecords& out) override {
    if (!fp_) {
      fp_ = std::fopen(file_.c_str(), "rb");
      if (!fp_ || std::fseek(fp_, static_cast<long>(position_), SEEK_SET) != 0) {
        if (fp_) std::fclose(fp_);
        fp_ = nullptr;
        context().wait_stopped(std::chrono::milliseconds(200));  // a stop ends it (README "Waits")
        return;
      }
    }
    find_lines();
    for (size_t i = 0; i < lines_.size(); ++i) {
      // Key stays null (no schema).
      auto r = out.add();
      r.topic(topic_).value(schema_, std::string_view(buffer_.data() + lines_[i].first, lines_[i].second));
      if (i + 1 == lines_.size()) {
        r.source_partition(partition_);
        r.source_offset().set("position", position_ + static_cast<int64_t>(head_));
      }
    }
    position_ += static_cast<int64_t>(head_);
    // No file-growth event is watched: a nap, which a stop ends (README "Waits").
    if (lines_.empty()) context().wait_stopped(std::chrono::milliseconds(50));
  }

  void stop() override {
    if (fp_) std::fclose(fp_);
    fp_ = nullptr;
  }

 private:
  static constexpr size_t kChunk = 65536;

  /// Drops the lines emitted before, then fills `lines_` with up to
  /// batch.size whole lines (start and length in `buffer_`, without the
  /// newline and a '\r' before it), reading the file on as needed. `head_`
  /// ends just after the last of them.
  void find_lines() {
    buffer_.erase(0, head_);  // buffer_[0] is at file position position_
    head_ = 0;
    lines_.clear();
    while (static_cast<int64_t>(lines_.size()) < batch_size_) {
      const void* found = std::memchr(buffer_.data() + head_, '\n', buffer_.size() - head_);
      if (!found) {
        if (!read_chunk()) break;
        continue;
      }
      const size_t nl = static_cast<size_t>(static_cast<const char*>(found) - buffer_.data());
      size_t len = nl - head_;
      if (len > 0 && buffer_[nl - 1] == '\r') --len;
      lines_.emplace_back(head_, len);
      head_ = nl + 1;
    }
  }

  /// Appends up to kChunk bytes of the file to `buffer_`; false at its end.
  bool read_chunk() {
    const size_t old = buffer_.size();
    buffer_.resize(old + kChunk);
    const size_t n = std::fread(buffer_.data() + old, 1, kChunk, fp_);
    buffer_.resize(old + n);
    if (n == 0) std::clearerr(fp_);
    return n > 0;
  }

  std::string file_;
  std::string topic_;
  kp::Json partition_;  ///< {"filename": file}, shared by the records
  kp::Schema schema_;   ///< STRING_SCHEMA, as Connect's FileStreamSourceTask
  int64_t batch_size_ = 2000;
  int64_t position_ = 0;  ///< byte offset of buffer_[0]: just after the lines emitted before this poll
  std::string buffer_;    ///< bytes read from the file; those from head_ on are not emitted yet
  size_t head_ = 0;
  std::vector<std::pair<size_t, size_t>> lines_;  ///< this poll's lines: start and length in buffer_
  std::FILE* fp_ = nullptr;
};

class FileSourceConnector : public kp::SourceConnector {
 public:
  void start(const kp::Config& config) override {
    kp::require_setting(config, "file", "FileStreamSource");
    kp::require_setting(config, "topic", "FileStreamSource");
    if (config.at("topic").find(',') != std::string::npos) throw kp::Error(kSingleTopic);
    kp::int_setting(config, "batch.size", 2000);
    config_ = config;
  }
  std::vector<kp::Config> task_configs(int) override { return {config_}; }  // always one task
  void stop() override {}
  /// Connect's rule (KIP-618): a real file can be re-read from a committed
  /// position, so exactly once holds; stdin (no `file`) cannot.
  kp::ExactlyOnceSupport exactly_once_support(const kp::Config& config) override {
    auto it = config.find("file");
    return it != config.end() && !it->second.empty() ? kp::ExactlyOnceSupport::Supported
                                                     : kp::ExactlyOnceSupport::Unsupported;
  }
  /// The one check the ConfigDef validators lack: `topic` names one topic,
  /// with the message a per-key validator would give.
  std::map<std::string, std::vector<std::string>> validate(const kp::Config& config) override {
    std::map<std::string, std::vector<std::string>> errors;
    auto it = config.find("topic");
    if (it != config.end() && it->second.find(',') != std::string::npos)
      errors["topic"].push_back("Invalid value " + it->second + " for configuration topic: " + kSingleTopic);
    return errors;
  }

 private:
  kp::Config config_;
};

// ---------------------------------------------------------------- FileStreamSink

class FileSinkTask : public kp::SinkTask {
 public:
  void start(const kp::Config& config) override {
    auto it = config.find("file");
    if (it == config.end() || it->second.empty()) {
      fd_ = STDOUT_FILENO;
    } else {
      fd_ = ::open(it->second.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) throw kp::Error("Couldn't find or create file '" + it->second + "' for FileStreamSinkTask");
      owned_ = true;
    }
  }
  // One append per batch of whole lines: a worker killed mid-batch leaves
  // whole lines behind, never a torn one that the next owner's lines would
  // continue (a buffered stream flushes at buffer boundaries, mid-line).
  void put(const kp::SinkRecords& records) override {
    std::string& batch = batch_;
    batch.clear();
    for (size_t i = 0, n = records.size(); i < n; ++i) {
      // PrintStream.println(value) as Connect's FileStreamSinkTask writes
      // it: String.valueOf, with a byte[] written as its bytes.
      const kp::ValueView v = records[i].value();
      if (auto s = v.string_ref()) batch += *s;
      else if (auto b = v.bytes_ref()) batch += *b;
      else batch += v.to_string();
      batch.push_back('\n');
    }
    for (size_t done = 0; done < batch.size();) {
      const ssize_t n = ::write(fd_, batch.data() + done, batch.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw kp::Error(std::string("FileStreamSink: write failed: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
  }
  void flush(const kp::Offsets&) override {
    if (owned_ && ::fsync(fd_) != 0) throw kp::Error(std::string("FileStreamSink: fsync failed: ") + std::strerror(errno));
  }
  void stop() override {
    if (fd_ >= 0 && owned_) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool owned_ = false;
  std::string batch_;  ///< put()'s buffer, kept for its capacity
};

class FileSinkConnector : public kp::SinkConnector {
 public:
  void start(const kp::Config& config) override {
    auto t = config.find("topics");
    auto r = config.find("topics.regex");
    if ((t == config.end() || t->second.empty()) && (r == config.end() || r->second.empty()))
      throw kp::Error("Must configure one of topics or topics.regex");
    config_ = config;
  }
  std::vector<kp::Config> task_configs(int max_tasks) override {
    return std::vector<kp::Config>(static_cast<size_t>(std::max(1, max_tasks)), config_);
  }
  void stop() override {}
  /// SinkConnectorConfig's rule: exactly one of topics and topics.regex;
  /// the error goes on both keys.
  std::map<std::string, std::vector<std::string>> validate(const kp::Config& config) override {
    std::map<std::string, std::vector<std::string>> errors;
    const bool topics = is_set(config, "topics");
    const bool regex = is_set(config, "topics.regex");
    if (topics == regex) {
      const std::string msg = topics ? "topics and topics.regex are mutually exclusive options, but both are set."
                                     : "Must configure one of topics or topics.regex";
      errors["topics"].push_back(msg);
      errors["topics.regex"].push_back(msg);
    }
    return errors;
  }

 private:
  kp::Config config_;
};

kp::ConfigDef source_defs() {
  return kp::ConfigDef()
      .define("file", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH, "Path of the file to read lines from.")
      .non_empty()
      .display("File")
      .define("topic", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH, "Topic to write the lines to.")
      .non_empty()
      .display("Topic")
      .define("batch.size", KC_CONFIG_INT, "2000", KC_IMPORTANCE_LOW, "Maximum number of lines returned by one poll.")
      .at_least(1)
      .display("Batch size");
}

kp::ConfigDef sink_defs() {
  return kp::ConfigDef()
      .define("file", KC_CONFIG_STRING, "", KC_IMPORTANCE_HIGH,
              "Path of the file to append record values to; empty = standard output.")
      .display("File")
      .define("topics", KC_CONFIG_LIST, "", KC_IMPORTANCE_HIGH, "Comma-separated topics to consume.")
      .display("Topics")
      .define("topics.regex", KC_CONFIG_STRING, "", KC_IMPORTANCE_HIGH, "Regular expression of the topics to consume.")
      .display("Topics regex");
}

}  // namespace

KCONNECTD_BUILTIN_PLUGIN(builtin_file_plugins_register, reg) {
  reg.source<FileSourceConnector, FileSourceTask>(kFileStreamSourceClass, kBuiltinPluginVersion, source_defs());
  reg.sink<FileSinkConnector, FileSinkTask>(kFileStreamSinkClass, kBuiltinPluginVersion, sink_defs());
}

}  // namespace kc::connectors
