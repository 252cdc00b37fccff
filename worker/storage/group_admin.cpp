#include "worker/storage/group_admin.h"

#include <algorithm>
#include <mutex>
#include <cstring>
#include <functional>
#include <memory>

namespace kc::storage {

namespace {

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct OptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using ListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDeleter>;

AdminStatus local_error(rd_kafka_resp_err_t code, std::string message) { return {code, std::move(message)}; }

// One admin request: a fresh client, `issue` sends it to a private queue
// with a request timeout of `timeout_ms`, and the result event comes back
// in `event` (or an error when the client or the wait failed).
AdminStatus run_admin(const ClientProps& props, rd_kafka_admin_op_t op, int timeout_ms,
                      const std::function<void(rd_kafka_t*, const rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& issue,
                      EventPtr& event) {
  auto client = make_client(RD_KAFKA_PRODUCER, props);
  if (!client) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, client.error().to_string());
  rd_kafka_t* rk = client.value().get();
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk));
  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> options(rd_kafka_AdminOptions_new(rk, op));
  char err[256] = {0};
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), std::max(timeout_ms, 1), err, sizeof err))
    return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, err);
  issue(rk, options.get(), queue.get());
  // librdkafka answers by the request timeout; the margin covers its own
  // scheduling, so the event is always collected before the client goes.
  event.reset(rd_kafka_queue_poll(queue.get(), timeout_ms + 5000));
  if (!event) return local_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "no answer from the admin client in time");
  if (auto code = rd_kafka_event_error(event.get()))
    return local_error(code, rd_kafka_event_error_string(event.get()) ? rd_kafka_event_error_string(event.get())
                                                                        : rd_kafka_err2str(code));
  return {};
}

// The first error of a group result: the group's own, else the first
// failed partition's, named "topic-partition: reason".
AdminStatus group_result_status(const rd_kafka_group_result_t* g) {
  if (!g) return local_error(RD_KAFKA_RESP_ERR__BAD_MSG, "the admin result names no group");
  if (const rd_kafka_error_t* e = rd_kafka_group_result_error(g))
    return local_error(rd_kafka_error_code(e), rd_kafka_error_string(e));
  if (const auto* parts = rd_kafka_group_result_partitions(g)) {
    for (int i = 0; i < parts->cnt; ++i) {
      const auto& p = parts->elems[i];
      if (p.err)
        return local_error(p.err, std::string(p.topic) + "-" + std::to_string(p.partition) + ": " + rd_kafka_err2str(p.err));
    }
  }
  return {};
}

ListPtr to_list(const std::vector<TopicPartition>& partitions) {
  ListPtr l(rd_kafka_topic_partition_list_new(static_cast<int>(std::max<size_t>(partitions.size(), 1))));
  for (const auto& [t, p] : partitions) rd_kafka_topic_partition_list_add(l.get(), t.c_str(), p);
  return l;
}

}  // namespace

AdminStatus list_group_offsets(const ClientProps& props, const std::string& group,
                               const std::vector<TopicPartition>& partitions, int timeout_ms,
                               std::vector<GroupOffset>& out) {
  out.clear();
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        ListPtr l = partitions.empty() ? nullptr : to_list(partitions);
                        auto* req = rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), l.get());
                        rd_kafka_ListConsumerGroupOffsets(rk, &req, 1, o, q);
                        rd_kafka_ListConsumerGroupOffsets_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups =
      rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev.get()), &n);
  if (n != 1) return local_error(RD_KAFKA_RESP_ERR__BAD_MSG, "the admin result names no group");
  if (const rd_kafka_error_t* e = rd_kafka_group_result_error(groups[0]))
    return local_error(rd_kafka_error_code(e), rd_kafka_error_string(e));
  if (const auto* parts = rd_kafka_group_result_partitions(groups[0])) {
    for (int i = 0; i < parts->cnt; ++i) {
      const auto& p = parts->elems[i];
      if (p.err)
        return local_error(p.err, std::string(p.topic) + "-" + std::to_string(p.partition) + ": " + rd_kafka_err2str(p.err));
      if (p.offset >= 0) out.push_back({p.topic, p.partition, p.offset});  // -1001: nothing committed
    }
  }
  std::sort(out.begin(), out.end(), [](const GroupOffset& a, const GroupOffset& b) {
    return a.topic != b.topic ? a.topic < b.topic : a.partition < b.partition;
  });
  return {};
}

AdminStatus alter_group_offsets(const ClientProps& props, const std::string& group,
                                const std::vector<GroupOffset>& offsets, int timeout_ms) {
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        ListPtr l(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
                        for (const auto& g : offsets)
                          rd_kafka_topic_partition_list_add(l.get(), g.topic.c_str(), g.partition)->offset = g.offset;
                        auto* req = rd_kafka_AlterConsumerGroupOffsets_new(group.c_str(), l.get());
                        rd_kafka_AlterConsumerGroupOffsets(rk, &req, 1, o, q);
                        rd_kafka_AlterConsumerGroupOffsets_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups =
      rd_kafka_AlterConsumerGroupOffsets_result_groups(rd_kafka_event_AlterConsumerGroupOffsets_result(ev.get()), &n);
  return group_result_status(n == 1 ? groups[0] : nullptr);
}

AdminStatus delete_group_offsets(const ClientProps& props, const std::string& group,
                                 const std::vector<TopicPartition>& partitions, int timeout_ms) {
  std::set<std::string> apis;
  if (auto st = broker_apis(props, timeout_ms, apis); !st.ok()) return st;
  if (!apis.count("OffsetDelete"))
    return local_error(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE,
                       "OffsetDelete API (KIP-496) not supported by the broker, requires broker version >= 2.4.0");
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        ListPtr l = to_list(partitions);
                        auto* req = rd_kafka_DeleteConsumerGroupOffsets_new(group.c_str(), l.get());
                        rd_kafka_DeleteConsumerGroupOffsets(rk, &req, 1, o, q);
                        rd_kafka_DeleteConsumerGroupOffsets_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups = rd_kafka_DeleteConsumerGroupOffsets_result_groups(
      rd_kafka_event_DeleteConsumerGroupOffsets_result(ev.get()), &n);
  return group_result_status(n == 1 ? groups[0] : nullptr);
}

AdminStatus delete_group(const ClientProps& props, const std::string& group, int timeout_ms) {
  std::set<std::string> apis;
  if (auto st = broker_apis(props, timeout_ms, apis); !st.ok()) return st;
  if (!apis.count("DeleteGroups"))
    return local_error(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE,
                       "DeleteGroups API (KIP-229) not supported by the broker, requires broker version >= 1.1.0");
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_DELETEGROUPS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        auto* req = rd_kafka_DeleteGroup_new(group.c_str());
                        rd_kafka_DeleteGroups(rk, &req, 1, o, q);
                        rd_kafka_DeleteGroup_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups = rd_kafka_DeleteGroups_result_groups(rd_kafka_event_DeleteGroups_result(ev.get()), &n);
  return group_result_status(n == 1 ? groups[0] : nullptr);
}

AdminStatus topic_partitions(const ClientProps& props, const std::vector<std::string>& topics, int timeout_ms,
                             std::vector<TopicPartition>& out) {
  out.clear();
  auto client = make_client(RD_KAFKA_PRODUCER, props);
  if (!client) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, client.error().to_string());
  const rd_kafka_metadata_t* md = nullptr;
  // all_topics=1 lists without creating topics (no auto-create by lookup).
  auto err = rd_kafka_metadata(client.value().get(), 1, nullptr, &md, std::max(timeout_ms, 1));
  if (err) return local_error(err, std::string("metadata request failed: ") + rd_kafka_err2str(err));
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (t.err || std::find(topics.begin(), topics.end(), t.topic) == topics.end()) continue;
    for (int p = 0; p < t.partition_cnt; ++p) out.emplace_back(t.topic, t.partitions[p].id);
  }
  rd_kafka_metadata_destroy(md);
  std::sort(out.begin(), out.end());
  return {};
}

namespace {
// The API names one probe client's "feature" debug log listed, from lines
// "<broker>:   ApiKey <Name> (<key>) Versions <min>..<max>". Written by
// librdkafka's threads, read after the client is gone.
struct ApiVersionLog {
  std::mutex mu;
  std::set<std::string> apis;
};
void api_version_log_cb(const rd_kafka_t* rk, int /*level*/, const char* fac, const char* buf) {
  auto* seen = static_cast<ApiVersionLog*>(rd_kafka_opaque(rk));
  if (!seen || !fac || !buf || std::strcmp(fac, "APIVERSION") != 0) return;
  const char* start = std::strstr(buf, "ApiKey ");
  if (!start) return;
  start += std::strlen("ApiKey ");
  const char* end = std::strstr(start, " (");
  if (!end) return;
  std::lock_guard lk(seen->mu);
  seen->apis.emplace(start, end);
}
}  // namespace

AdminStatus broker_apis(const ClientProps& props, int timeout_ms, std::set<std::string>& apis) {
  apis.clear();
  ApiVersionLog seen;
  {
    ClientProps debug{{"debug", "feature"}};
    auto client = make_client(RD_KAFKA_PRODUCER, props, debug, [&](rd_kafka_conf_t* conf) {
      rd_kafka_conf_set_opaque(conf, &seen);
      rd_kafka_conf_set_log_cb(conf, &api_version_log_cb);
    });
    if (!client) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, client.error().to_string());
    // Any request makes the client connect, and librdkafka logs the
    // broker's ApiVersions table before it sends anything else there.
    const rd_kafka_metadata_t* md = nullptr;
    auto err = rd_kafka_metadata(client.value().get(), 0, nullptr, &md, std::max(timeout_ms, 1));
    if (md) rd_kafka_metadata_destroy(md);
    if (err) return local_error(err, std::string("no broker answered: ") + rd_kafka_err2str(err));
  }  // the client is destroyed here: no log callback runs after this
  std::lock_guard lk(seen.mu);
  apis = seen.apis;
  if (apis.empty()) return local_error(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE, "the broker listed no API versions");
  return {};
}

}  // namespace kc::storage
