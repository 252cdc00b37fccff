// mirror_tool: the producer and reader of the mirror acceptance test
// (test_mirror.py), since kcat can neither set record timestamps nor print
// binary keys and headers unambiguously.
//
//   mirror_tool produce BOOTSTRAP TOPIC PARTITIONS FROM COUNT RATE
//     record i in [FROM, FROM+COUNT): partition i % PARTITIONS, key "k<i>",
//     value "v<i>" + bytes 00 ff, headers idx=<i> and nil=null, timestamp
//     1700000000000 + i ms; RATE records/s (<= 0 = unthrottled). Exits 0
//     once all are acknowledged.
//   mirror_tool dump BOOTSTRAP TOPIC
//     every record of every partition up to the high watermark, one JSON
//     object a line: {"p","o","k","v","ts","h"} with bytes as hex (null =
//     JSON null) and h = [[key, hex|null], ...].
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include <librdkafka/rdkafka.h>
#include <nlohmann/json.hpp>

#include "worker/storage/kafka_client.h"

namespace {

nlohmann::json hex(const void* p, size_t n) {
  if (!p) return nullptr;
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    auto b = static_cast<const unsigned char*>(p)[i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

int produce(const std::string& bootstrap, const std::string& topic, int partitions, long from, long count, double rate) {
  auto producer = kc::storage::Producer::create({{"bootstrap.servers", bootstrap}, {"linger.ms", "5"}});
  if (!producer) {
    std::cerr << producer.error().to_string() << "\n";
    return 1;
  }
  std::atomic<long> acked{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  for (long i = from; i < from + count; ++i) {
    if (rate > 0) std::this_thread::sleep_until(start + std::chrono::microseconds(static_cast<long>((i - from) * 1e6 / rate)));
    kc::storage::RecordHeaders headers{{"idx", std::to_string(i)}, {"nil", std::nullopt}};
    std::string value = std::string("v").append(std::to_string(i)).append("\x00\xff", 2);
    auto st = (*producer)->send(
        topic, std::string("k").append(std::to_string(i)), value,
        [&](std::optional<kc::Error> e) {
          if (e) {
            if (failed++ == 0) std::cerr << "delivery failed: " << e->to_string() << "\n";
          }
          ++acked;
        },
        static_cast<int32_t>(i % partitions), &headers, 1700000000000LL + i);
    if (!st) {
      std::cerr << "send failed: " << st.error().to_string() << "\n";
      return 1;
    }
  }
  auto st = (*producer)->flush(60000);
  while (acked.load() < count) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!st || failed.load() > 0) return 1;
  std::cout << "produced " << count << "\n";
  return 0;
}

int dump(const std::string& bootstrap, const std::string& topic) {
  auto rk = kc::storage::make_client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap}, {"group.id", "mirror-tool"}, {"enable.auto.commit", "false"}});
  if (!rk) {
    std::cerr << rk.error().to_string() << "\n";
    return 1;
  }
  auto count = kc::storage::topic_partition_count(rk->get(), topic, 10000);
  if (!count || !*count) {
    std::cerr << "topic " << topic << " not found\n";
    return 1;
  }
  const int n = **count;
  std::vector<int64_t> high(n, 0);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(n);
  long remaining = 0;
  for (int p = 0; p < n; ++p) {
    int64_t lo = 0, hi = 0;
    if (rd_kafka_query_watermark_offsets(rk->get(), topic.c_str(), p, &lo, &hi, 10000)) return 1;
    high[p] = hi;
    remaining += hi - lo;
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = lo;
  }
  rd_kafka_poll_set_consumer(rk->get());
  rd_kafka_assign(rk->get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk->get(), 200);
    if (!m) continue;
    if (!m->err && m->offset < high[m->partition]) {
      --remaining;
      nlohmann::json h = nlohmann::json::array();
      for (auto& [k, v] : kc::storage::headers_of(m))
        h.push_back({k, v ? hex(v->data(), v->size()) : nlohmann::json(nullptr)});
      rd_kafka_timestamp_type_t tt;
      std::cout << nlohmann::json{{"p", m->partition}, {"o", m->offset}, {"k", hex(m->key, m->key_len)},
                                  {"v", hex(m->payload, m->len)}, {"ts", rd_kafka_message_timestamp(m, &tt)},
                                  {"h", h}}
                       .dump()
                << "\n";
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk->get());
  return remaining == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "produce" && argc == 8)
      return produce(argv[2], argv[3], std::stoi(argv[4]), std::stol(argv[5]), std::stol(argv[6]), std::stod(argv[7]));
    if (cmd == "dump" && argc == 4) return dump(argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::cerr << "mirror_tool: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "usage: mirror_tool produce BOOTSTRAP TOPIC PARTITIONS FROM COUNT RATE | dump BOOTSTRAP TOPIC\n";
  return 2;
}
