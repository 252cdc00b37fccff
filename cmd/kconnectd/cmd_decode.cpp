// `kconnectd decode metadata|assignment HEX`: decodes a Connect subprotocol
// blob (JoinGroup metadata or SyncGroup assignment) with the same lenient V1
// readers the worker uses, and prints it as pretty JSON. Exit 1 on bad hex or
// bytes the reader rejects (the reader's error goes to stderr).
#include <iostream>
#include <string>

#include "cmd/kconnectd/commands.h"
#include "protocol/connect/codec.h"

namespace kc::cmd {

namespace {

nlohmann::json groups_json(const std::vector<connect::WireGroup>& groups) {
  auto arr = nlohmann::json::array();
  for (const auto& g : groups) arr.push_back({{"connector", g.connector}, {"tasks", g.tasks}});
  return arr;
}

}  // namespace

void register_decode(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("decode", "Decode Connect worker metadata or an assignment from hex to JSON");
  static std::string kind;
  static std::string hex;
  static bool wire = false;
  sub->add_option("kind", kind, "What the bytes are: metadata (JoinGroup) or assignment (SyncGroup)")
      ->required()
      ->check(CLI::IsMember({"metadata", "assignment"}));
  sub->add_option("hex", hex, "The blob as hex (whitespace and a 0x prefix are allowed)")->required();
  sub->add_flag("--wire", wire, "For assignments, also print the per-connector groups as on the wire");
  sub->callback([&exit_code] {
    auto bytes = connect::parse_hex(hex);
    if (!bytes) {
      std::cerr << "kconnectd decode: " << bytes.error().to_string() << "\n";
      exit_code = 1;
      return;
    }
    nlohmann::json out;
    if (kind == "metadata") {
      auto md = connect::decode_metadata(*bytes);
      if (!md) {
        std::cerr << "kconnectd decode: " << md.error().to_string() << "\n";
        exit_code = 1;
        return;
      }
      out = connect::to_json(*md);
    } else {
      auto a = connect::decode_assignment(*bytes);
      if (!a) {
        std::cerr << "kconnectd decode: " << a.error().to_string() << "\n";
        exit_code = 1;
        return;
      }
      out = connect::to_json(*a);
      if (wire) {
        auto w = connect::decode_assignment_wire(*bytes);
        out["wire"] = {{"assignment", groups_json(w->assignment)}, {"revoked", groups_json(w->revoked)}};
      }
    }
    std::cout << out.dump(2) << "\n";
    exit_code = 0;
  });
}

}  // namespace kc::cmd
