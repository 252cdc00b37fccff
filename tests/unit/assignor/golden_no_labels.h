#pragma once
// Golden outputs of the assignor without placement labels (issue 29): every
// scenario under tests/scenarios and a fixed block of the property tests'
// random sequences are run through the simulator, every round is printed
// (assignments, revocations, delay, leader) and the text is hashed (FNV-1a,
// 64 bits). tests/unit/assignor/golden_no_labels.txt holds the hashes taken
// from main before labels existed (commit 6da1b34, built by
// scripts/golden-no-labels); test_golden.cpp checks the current assignor
// gives byte-identical rounds. The generator is test_property.cpp's
// generate() for the four base flavours (copied: that file's may evolve).
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "assignor/simulator.h"

namespace kc_golden {

using kc::assignor::sim::Command;
using K = Command::Kind;

/// FNV-1a 64 of `s`, as 16 lower-case hex digits.
inline std::string fnv1a_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* d = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = d[h & 15];
  return out;
}

/// The printed run of scenario file `path` (what `kconnectd assign-sim` prints).
inline std::string scenario_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  auto parsed = kc::assignor::sim::parse_scenario(buf.str());
  std::ostringstream out;
  if (!parsed.errors.empty()) return "parse error";
  (void)kc::assignor::sim::run_scenario(parsed.commands, out);
  return out.str();
}

/// One flavour of random sequences: workers, connectors, tasks, length.
struct GoldenFlavour {
  const char* name;
  int max_workers, max_connectors, max_tasks, length;
  uint64_t base_seed;
};

/// The four base flavours of test_property.cpp (no options switched on).
inline const std::vector<GoldenFlavour>& golden_flavours() {
  static const std::vector<GoldenFlavour> f = {{"small", 4, 3, 4, 12, 1000000},
                                               {"sparse", 6, 2, 3, 14, 2000000},
                                               {"dense", 5, 4, 9, 14, 3000000},
                                               {"long", 6, 5, 6, 24, 4000000}};
  return f;
}

inline Command gcmd(K kind, std::string name = {}, int64_t a = 0) {
  Command c;
  c.kind = kind;
  c.name = std::move(name);
  c.a = a;
  return c;
}

/// test_property.cpp's generate() without the returns / static-expiry branches.
inline std::vector<Command> generate(uint64_t seed, const GoldenFlavour& f) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  std::vector<Command> out;
  static const int64_t delays[] = {0, 1, 100, 10000, 300000};
  const int64_t delay = delays[pick(5)];
  out.push_back(gcmd(K::SetDelay, {}, delay));
  if (pick(2) == 0) {
    Command p = gcmd(K::SetProtocol);
    p.protocol = kc::connect::ConnectProtocol::Compatible;
    out.push_back(p);
  }
  out.push_back(gcmd(K::Join, "w1"));
  out.push_back(gcmd(K::Connector, "c1", 1 + pick(f.max_tasks)));
  out.push_back(gcmd(K::Rebalance));
  std::vector<std::string> present = {"w1"}, absent;
  for (int i = 2; i <= f.max_workers; ++i) absent.push_back(std::string("w").append(std::to_string(i)));
  for (int i = 0; i < f.length; ++i) {
    switch (pick(10)) {
      case 0:
      case 1:
        if (!absent.empty()) {
          const int j = pick(static_cast<int>(absent.size()));
          out.push_back(gcmd(K::Join, absent[static_cast<size_t>(j)]));
          present.push_back(absent[static_cast<size_t>(j)]);
          absent.erase(absent.begin() + j);
        }
        break;
      case 2:
        if (!present.empty()) {
          const int j = pick(static_cast<int>(present.size()));
          out.push_back(gcmd(K::Leave, present[static_cast<size_t>(j)]));
          absent.push_back(present[static_cast<size_t>(j)]);
          present.erase(present.begin() + j);
        }
        break;
      case 3:
        if (!present.empty()) {
          const auto& w = present[static_cast<size_t>(pick(static_cast<int>(present.size())))];
          out.push_back(gcmd(K::Leave, w));
          if (pick(2) == 0) out.push_back(gcmd(K::Rebalance));
          out.push_back(gcmd(K::Join, w));
        }
        break;
      case 4:
        out.push_back(gcmd(K::Connector, "c" + std::to_string(1 + pick(f.max_connectors)), pick(f.max_tasks + 1)));
        break;
      case 5: out.push_back(gcmd(K::Delete, "c" + std::to_string(1 + pick(f.max_connectors)))); break;
      case 6: {
        static const int64_t steps[] = {0, 1, 40, 1600};
        const int r = pick(6);
        out.push_back(gcmd(K::Advance, {}, r < 4 ? steps[r] : (r == 4 ? delay / 2 : delay)));
        break;
      }
      case 7:
        out.push_back(gcmd(K::LoseSync));
        out.push_back(gcmd(K::Rebalance));
        break;
      case 8: out.push_back(gcmd(pick(4) == 0 ? K::Stabilize : K::Rebalance)); break;
      default: out.push_back(gcmd(K::Rebalance)); break;
    }
  }
  out.push_back(gcmd(K::Stabilize));
  return out;
}

/// Every round of `runs` sequences from `f.base_seed`, printed.
inline std::string random_text(const GoldenFlavour& f, uint64_t runs) {
  std::ostringstream out;
  for (uint64_t i = 0; i < runs; ++i) {
    out << "seed " << f.base_seed + i << '\n';
    (void)kc::assignor::sim::run_scenario(generate(f.base_seed + i, f), out);
  }
  return out.str();
}

}  // namespace kc_golden
