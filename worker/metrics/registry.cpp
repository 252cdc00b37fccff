#include "worker/metrics/registry.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kc::metrics {

const char* to_string(MetricType t) {
  switch (t) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
  }
  return "untyped";
}

void Counter::inc(double v) {
  if (!(v >= 0.0)) return;  // also drops NaN
  v_.fetch_add(v, std::memory_order_relaxed);
}

void Gauge::add(double d) { v_.fetch_add(d, std::memory_order_relaxed); }

namespace {

bool is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string label_key(const Labels& labels) {
  std::string k;
  for (const auto& [n, v] : labels) {
    k += n;
    k += '\x1f';
    k += v;
    k += '\x1e';
  }
  return k;
}

void check_labels(const Labels& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!valid_label_name(labels[i].first))
      throw std::invalid_argument("invalid metric label name '" + labels[i].first + "'");
    for (size_t j = 0; j < i; ++j)
      if (labels[j].first == labels[i].first)
        throw std::invalid_argument("duplicate metric label '" + labels[i].first + "'");
  }
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  if (!is_alpha_(name[0]) && name[0] != ':') return false;
  for (char c : name)
    if (!is_alpha_(c) && !is_digit(c) && c != ':') return false;
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || !is_alpha_(name[0])) return false;
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_') return false;  // reserved
  for (char c : name)
    if (!is_alpha_(c) && !is_digit(c)) return false;
  return true;
}

namespace {
// Backslash and newline are escaped in HELP text and label values; a double
// quote only in label values (Prometheus text format 0.0.4).
std::string escape_text(std::string_view v, bool quote) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out += c;
  }
  return out;
}
}  // namespace

std::string escape_label_value(std::string_view v) { return escape_text(v, true); }

std::string escape_help(std::string_view v) { return escape_text(v, false); }

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    if (ec == std::errc()) return std::string(buf, p);
  }
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  if (ec == std::errc()) return std::string(buf, p);
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

Registry::Registry(std::string prefix) : prefix_(std::move(prefix)) {}

Registry::Family& Registry::family_locked(const std::string& name, const std::string& help, MetricType type) {
  const std::string full = prefix_ + name;
  if (!valid_metric_name(full)) throw std::invalid_argument("invalid metric name '" + full + "'");
  if (type == MetricType::Counter && (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0))
    throw std::invalid_argument("counter name '" + full + "' must end in _total");
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  } else if (it->second.type != type) {
    throw std::logic_error("metric '" + full + "' is already registered as a " + to_string(it->second.type));
  }
  return it->second;
}

std::shared_ptr<Counter> Registry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  check_labels(labels);
  std::lock_guard lk(mu_);
  Family& f = family_locked(name, help, MetricType::Counter);
  Series& s = f.series[label_key(labels)];
  if (!s.counter) {
    s.labels = labels;
    s.counter = std::make_shared<Counter>();
  }
  return s.counter;
}

std::shared_ptr<Gauge> Registry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  check_labels(labels);
  std::lock_guard lk(mu_);
  Family& f = family_locked(name, help, MetricType::Gauge);
  Series& s = f.series[label_key(labels)];
  if (!s.gauge) {
    s.labels = labels;
    s.gauge = std::make_shared<Gauge>();
    s.fn = nullptr;
  }
  return s.gauge;
}

void Registry::gauge_fn(const std::string& name, const std::string& help, const Labels& labels,
                        std::function<double()> fn) {
  check_labels(labels);
  std::lock_guard lk(mu_);
  Family& f = family_locked(name, help, MetricType::Gauge);
  Series& s = f.series[label_key(labels)];
  s.labels = labels;
  s.gauge.reset();
  s.fn = std::move(fn);
}

void Registry::remove(const std::string& name, const Labels& labels) {
  std::lock_guard lk(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) it->second.series.erase(label_key(labels));
}

size_t Registry::remove_matching(const Labels& match) {
  std::lock_guard lk(mu_);
  size_t removed = 0;
  for (auto& [_, f] : families_) {
    for (auto it = f.series.begin(); it != f.series.end();) {
      bool all = true;
      for (const auto& m : match) {
        bool found = false;
        for (const auto& l : it->second.labels) found = found || l == m;
        all = all && found;
      }
      if (all && !match.empty()) {
        it = f.series.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
  }
  return removed;
}

size_t Registry::series_count(const std::string& name) const {
  std::lock_guard lk(mu_);
  auto it = families_.find(name);
  return it == families_.end() ? 0 : it->second.series.size();
}

std::string Registry::render() const {
  std::string out;
  std::lock_guard lk(mu_);
  for (const auto& [name, f] : families_) {
    const std::string full = prefix_ + name;
    out += "# HELP " + full + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + full + " " + to_string(f.type) + "\n";
    for (const auto& [_, s] : f.series) {
      out += full;
      if (!s.labels.empty()) {
        out += '{';
        bool first = true;
        for (const auto& [ln, lv] : s.labels) {
          if (!first) out += ',';
          first = false;
          out += ln + "=\"" + escape_label_value(lv) + "\"";
        }
        out += '}';
      }
      double v = 0;
      if (s.counter)
        v = s.counter->value();
      else if (s.gauge)
        v = s.gauge->value();
      else if (s.fn)
        v = s.fn();
      out += ' ';
      out += format_value(v);
      out += '\n';
    }
  }
  return out;
}

}  // namespace kc::metrics
