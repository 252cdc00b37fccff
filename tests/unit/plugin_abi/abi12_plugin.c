/* A plugin as built against ABI 1.2 (plain C99), for the "a .so built for
 * ABI 1.2 loads" test of test_plugin_abi: it exports version 1.2, and its
 * sink task table ends before ABI 1.3's `initialize` (struct_size), so a
 * 1.3 worker must neither call nor read that member. test.Abi12SinkConnector:
 * put() counts the records it was handed; flush() fails with "abi12 sink
 * flushed N records" so the test can read the count. */
#include <stdio.h>
#include <stdlib.h>

#include <kconnectd/plugin.h>

KC_PLUGIN_EXPORT const uint32_t kc_plugin_abi_version = ((uint32_t)1 << 16) | (uint32_t)2;

static const kc_host_api* host;

static kc_status conn_create(void* class_data, const kc_connector_context* ctx, void** self) {
  (void)class_data;
  (void)ctx;
  *self = NULL;
  return KC_OK;
}
static kc_status conn_start(void* self, const kc_config* config) {
  (void)self;
  (void)config;
  return KC_OK;
}
static kc_status conn_task_configs(void* self, int32_t max_tasks, kc_task_configs* out) {
  (void)self;
  (void)max_tasks;
  return host->task_configs_add(out) ? KC_OK : KC_ERROR;
}
static kc_status conn_stop(void* self) {
  (void)self;
  return KC_OK;
}

static kc_status task_create(void* class_data, void** self) {
  (void)class_data;
  *self = calloc(1, sizeof(size_t));
  return *self ? KC_OK : KC_ERROR;
}
static kc_status task_start(void* self, const kc_config* config) {
  (void)self;
  (void)config;
  return KC_OK;
}
static kc_status task_put(void* self, const kc_sink_records* records) {
  *(size_t*)self += host->sink_records_size(records);
  return KC_OK;
}
static kc_status task_flush(void* self, const kc_offsets* offsets) {
  char msg[64];
  (void)offsets;
  snprintf(msg, sizeof msg, "abi12 sink flushed %lu records", (unsigned long)*(size_t*)self);
  host->set_error(msg);
  return KC_ERROR;
}
static kc_status task_stop(void* self) {
  (void)self;
  return KC_OK;
}
static void task_destroy(void* self) { free(self); }

KC_PLUGIN_EXPORT kc_status kc_plugin_register(const kc_host_api* h, kc_registrar* registrar) {
  static kc_sink_task_class task;
  static kc_connector_class cls;
  host = h;
  /* The 1.2 layout: everything up to destroy. */
  task.struct_size = offsetof(kc_sink_task_class, destroy) + sizeof task.destroy;
  task.create = task_create;
  task.start = task_start;
  task.put = task_put;
  task.flush = task_flush;
  task.stop = task_stop;
  task.destroy = task_destroy;
  cls.struct_size = sizeof cls; /* kc_connector_class did not change in 1.3 */
  cls.class_name = "test.Abi12SinkConnector";
  cls.type = KC_SINK;
  cls.version = "1.2";
  cls.create = conn_create;
  cls.start = conn_start;
  cls.task_configs = conn_task_configs;
  cls.stop = conn_stop;
  cls.sink_task = &task;
  return h->register_connector(registrar, &cls);
}
