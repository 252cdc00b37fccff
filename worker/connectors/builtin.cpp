#include "worker/connectors/builtin.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <thread>

namespace kc::connectors {
namespace {

using Clock = std::chrono::steady_clock;

std::string require(const ConfigMap& c, const std::string& key, const std::string& who) {
  auto it = c.find(key);
  if (it == c.end() || it->second.empty()) throw ConnectError(who + " requires the '" + key + "' setting");
  return it->second;
}

int64_t int_setting(const ConfigMap& c, const std::string& key, int64_t def) {
  auto it = c.find(key);
  if (it == c.end() || it->second.empty()) return def;
  try {
    size_t used = 0;
    int64_t v = std::stoll(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument(key);
    return v;
  } catch (const std::exception&) {
    throw ConnectError("Invalid value " + it->second + " for configuration " + key + ": Not a number of type INT");
  }
}

// ---------------------------------------------------------------- FileStreamSource

class FileSourceTask : public SourceTask {
 public:
  void start(const ConfigMap& config, SourceTaskContext& ctx) override {
    file_ = require(config, "file", "FileStreamSource");
    topic_ = require(config, "topic", "FileStreamSource");
    batch_size_ = int_setting(config, "batch.size", 2000);
    if (batch_size_ < 1) throw ConnectError("batch.size must be at least 1");
    partition_ = OrderedJson{{"filename", file_}};
    offset_ = OrderedJson{{"position", 0}};
    auto off = ctx.offset(partition_);
    if (off && off->contains("position") && (*off)["position"].is_number_integer())
      position_ = (*off)["position"].get<int64_t>();
  }

  // Up to batch.size lines per poll, reading on until the batch is full or
  // the file has no more whole lines.
  std::vector<SourceRecord> poll() override {
    std::vector<SourceRecord> out;
    if (!fp_) {
      fp_ = std::fopen(file_.c_str(), "rb");
      if (!fp_ || std::fseek(fp_, static_cast<long>(position_), SEEK_SET) != 0) {
        if (fp_) std::fclose(fp_);
        fp_ = nullptr;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return out;
      }
    }
    out.reserve(static_cast<size_t>(std::min<int64_t>(batch_size_, 4096)));
    take_lines(out);
    while (static_cast<int64_t>(out.size()) < batch_size_) {
      // Keep the unread tail, then read behind it.
      buffer_.erase(0, head_);
      head_ = 0;
      const size_t old = buffer_.size();
      buffer_.resize(old + kChunk);
      const size_t n = std::fread(buffer_.data() + old, 1, kChunk, fp_);
      buffer_.resize(old + n);
      if (n == 0) {
        std::clearerr(fp_);
        break;
      }
      take_lines(out);
    }
    if (out.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return out;
  }

  void stop() override {
    if (fp_) std::fclose(fp_);
    fp_ = nullptr;
  }

 private:
  static constexpr size_t kChunk = 65536;

  void take_lines(std::vector<SourceRecord>& out) {
    const char* data = buffer_.data();
    while (static_cast<int64_t>(out.size()) < batch_size_ && head_ < buffer_.size()) {
      const void* found = std::memchr(data + head_, '\n', buffer_.size() - head_);
      if (!found) break;
      const size_t nl = static_cast<size_t>(static_cast<const char*>(found) - data);
      size_t len = nl - head_;
      if (len > 0 && data[nl - 1] == '\r') --len;
      position_ += static_cast<int64_t>(nl + 1 - head_);
      // Built in place from the task's partition and offset templates: no
      // default-constructed JSON objects to throw away.
      auto& r = out.emplace_back(SourceRecord{.source_partition = partition_,
                                              .source_offset = offset_,
                                              .topic = topic_,
                                              .key = Data::null(),
                                              .value = Data::string(std::string(data + head_, len))});
      r.source_offset.front() = position_;
      head_ = nl + 1;
    }
  }

  std::string file_;
  std::string topic_;
  SharedJson partition_;   ///< {"filename": file}, shared by the records
  OrderedJson offset_;     ///< {"position": 0}: the template of each record's offset
  int64_t batch_size_ = 2000;
  int64_t position_ = 0;  ///< byte offset just after the last emitted line
  std::string buffer_;    ///< bytes read from the file; those from head_ on are not emitted yet
  size_t head_ = 0;
  std::FILE* fp_ = nullptr;
};

class FileSourceConnector : public Connector {
 public:
  ConnectorType type() const override { return ConnectorType::Source; }
  void start(const ConfigMap& config) override {
    require(config, "file", "FileStreamSource");
    require(config, "topic", "FileStreamSource");
    if (config.at("topic").find(',') != std::string::npos)
      throw ConnectError("FileStreamSource 'topic' must be a single topic");
    int_setting(config, "batch.size", 2000);
    config_ = config;
  }
  std::vector<ConfigMap> task_configs(int) override { return {config_}; }  // always one task
  void stop() override {}
  std::unique_ptr<SourceTask> create_source_task() override { return std::make_unique<FileSourceTask>(); }

 private:
  ConfigMap config_;
};

// ---------------------------------------------------------------- FileStreamSink

class FileSinkTask : public SinkTask {
 public:
  void start(const ConfigMap& config) override {
    auto it = config.find("file");
    if (it == config.end() || it->second.empty()) {
      fd_ = STDOUT_FILENO;
    } else {
      fd_ = ::open(it->second.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) throw ConnectError("Couldn't find or create file '" + it->second + "' for FileStreamSinkTask");
      owned_ = true;
    }
  }
  // One append per batch of whole lines: a worker killed mid-batch leaves
  // whole lines behind, never a torn one that the next owner's lines would
  // continue (a buffered stream flushes at buffer boundaries, mid-line).
  void put(const std::vector<SinkRecord>& records) override {
    std::string& batch = batch_;
    batch.clear();
    for (const auto& r : records) {
      // PrintStream.println(value) as Connect's FileStreamSinkTask writes
      // it: String.valueOf, with a byte[] written as its bytes.
      if (const auto* s = r.value.value.get_if<std::string>()) batch += *s;
      else if (const auto* b = r.value.value.get_if<data::Bytes>()) batch += b->data;
      else batch += data::java_to_string(r.value.value);
      batch.push_back('\n');
    }
    for (size_t done = 0; done < batch.size();) {
      const ssize_t n = ::write(fd_, batch.data() + done, batch.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw ConnectError(std::string("FileStreamSink: write failed: ") + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
  }
  void flush(const TopicPartitionOffsets&) override {
    if (owned_ && ::fsync(fd_) != 0) throw ConnectError(std::string("FileStreamSink: fsync failed: ") + std::strerror(errno));
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

class FileSinkConnector : public Connector {
 public:
  ConnectorType type() const override { return ConnectorType::Sink; }
  void start(const ConfigMap& config) override {
    auto t = config.find("topics");
    auto r = config.find("topics.regex");
    if ((t == config.end() || t->second.empty()) && (r == config.end() || r->second.empty()))
      throw ConnectError("Must configure one of topics or topics.regex");
    config_ = config;
  }
  std::vector<ConfigMap> task_configs(int max_tasks) override {
    return std::vector<ConfigMap>(static_cast<size_t>(std::max(1, max_tasks)), config_);
  }
  void stop() override {}
  std::unique_ptr<SinkTask> create_sink_task() override { return std::make_unique<FileSinkTask>(); }

 private:
  ConfigMap config_;
};

}  // namespace

namespace {

std::optional<std::string> single_topic(const std::string& v) {
  if (auto e = non_empty_string(v)) return e;
  if (v.find(',') != std::string::npos) return std::string("FileStreamSource 'topic' must be a single topic");
  return std::nullopt;
}

bool is_set(const ConfigMap& c, const char* key) {
  auto it = c.find(key);
  return it != c.end() && it->second.find_first_not_of(" \t") != std::string::npos;
}

}  // namespace

ConfigDefs file_stream_source_config_defs() {
  auto file = config_key("file", ConfigType::String, true, std::nullopt, ConfigImportance::High,
                  "Path of the file to read lines from.", "File");
  file.check = &non_empty_string;
  auto topic = config_key("topic", ConfigType::String, true, std::nullopt, ConfigImportance::High,
                   "Topic to write the lines to.", "Topic");
  topic.check = &single_topic;
  auto batch = config_key("batch.size", ConfigType::Int, false, "2000", ConfigImportance::Low,
                   "Maximum number of lines returned by one poll.", "Batch size");
  batch.at_least = 1;
  return {file, topic, batch};
}

ConfigDefs file_stream_sink_config_defs() {
  return {config_key("file", ConfigType::String, false, "", ConfigImportance::High,
              "Path of the file to append record values to; empty = standard output.", "File"),
          config_key("topics", ConfigType::List, false, "", ConfigImportance::High,
              "Comma-separated topics to consume.", "Topics"),
          config_key("topics.regex", ConfigType::String, false, "", ConfigImportance::High,
              "Regular expression of the topics to consume.", "Topics regex")};
}

void file_stream_sink_config_rule(const ConfigMap& config, ConfigErrors& errors) {
  const bool topics = is_set(config, "topics");
  const bool regex = is_set(config, "topics.regex");
  if (topics == regex) {
    const std::string msg = topics ? "topics and topics.regex are mutually exclusive options, but both are set."
                                   : "Must configure one of topics or topics.regex";
    errors["topics"].push_back(msg);
    errors["topics.regex"].push_back(msg);
  }
}

std::unique_ptr<Connector> make_file_stream_source() { return std::make_unique<FileSourceConnector>(); }
std::unique_ptr<Connector> make_file_stream_sink() { return std::make_unique<FileSinkConnector>(); }

}  // namespace kc::connectors
