// test.ThrowingSourceConnector, written with plugin.hpp: its task's poll()
// throws "boom: the plugin threw", which must fail the task (FAILED with
// that message as trace), never the worker.
#include <stdexcept>

#include <kconnectd/plugin.hpp>

namespace {

class ThrowingTask : public kconnectd::SourceTask {
 public:
  void start(const kconnectd::Config&, const kconnectd::SourceTaskContext&) override {}
  void poll(kconnectd::SourceRecords&) override { throw std::runtime_error("boom: the plugin threw"); }
  void stop() override {}
};

class ThrowingConnector : public kconnectd::SourceConnector {
 public:
  void start(const kconnectd::Config& c) override { config_ = c; }
  std::vector<kconnectd::Config> task_configs(int) override { return {config_}; }
  void stop() override {}

 private:
  kconnectd::Config config_;
};

}  // namespace

KCONNECTD_PLUGIN(reg) {
  reg.source<ThrowingConnector, ThrowingTask>("test.ThrowingSourceConnector", "0.0.2");
}
