/* Misbehaving connector plugins in C99, for the resource caps and call
 * deadlines (issue 23, item 3):
 *  - test.StallSourceConnector / test.StallSinkConnector: `stall.in`
 *    (validate, start, stop, taskConfigs, poll for the source; put for the
 *    sink) names the call that never returns (it sleeps for ever). The
 *    other calls behave: one task config per tasks.max, polls return
 *    nothing. With `fail.while.file` = PATH, taskConfigs fails (KC_ERROR)
 *    while PATH exists.
 *  - test.UnboundedSourceConnector: taskConfigs ignores max_tasks. With
 *    `extra.tasks` = N it returns max_tasks + N configs; without it, it adds
 *    configs of 4 KiB each until the host refuses one (task_configs_add
 *    returns NULL), which without a cap would take all memory. With
 *    `big.values` = N it returns max_tasks configs of N values of 1 MiB
 *    each (past 64 MiB in all the host keeps nothing more). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kconnectd/plugin.h>

KC_PLUGIN_DECLARE_ABI();

static const kc_host_api* host;

typedef struct stall {
  char where[32];
  char fail_while[256];
  long extra;
  long big_values;
} stall;

/* Never returns. */
static void stall_for_ever(const char* call) {
  struct timespec second = {1, 0};
  char line[96];
  strcpy(line, "hostile plugin: stalling in ");
  strncat(line, call, 32);
  host->log(2, line);
  for (;;) nanosleep(&second, NULL);
}

static void maybe_stall(const stall* s, const char* call) {
  if (strcmp(s->where, call) == 0) stall_for_ever(call);
}

static kc_status s_create(void* class_data, const kc_connector_context* ctx, void** self) {
  (void)class_data;
  (void)ctx;
  *self = calloc(1, sizeof(stall));
  return *self ? KC_OK : KC_ERROR;
}

static void read_config(stall* s, const kc_config* config) {
  const char* where = host->config_get(config, "stall.in");
  const char* extra = host->config_get(config, "extra.tasks");
  const char* fail_while = host->config_get(config, "fail.while.file");
  const char* big = host->config_get(config, "big.values");
  if (where && strlen(where) < sizeof s->where) strcpy(s->where, where);
  if (fail_while && strlen(fail_while) < sizeof s->fail_while) strcpy(s->fail_while, fail_while);
  s->extra = extra ? strtol(extra, NULL, 10) : -1;
  s->big_values = big ? strtol(big, NULL, 10) : 0;
}

static kc_status s_start(void* self, const kc_config* config) {
  read_config((stall*)self, config);
  maybe_stall((stall*)self, "start");
  return KC_OK;
}

/* Connector.validate: stalls with stall.in=validate, else adds nothing. */
static kc_status s_validate(void* self, const kc_config* config, kc_config_errors* errors) {
  const char* where = host->config_get(config, "stall.in");
  (void)self;
  (void)errors;
  if (where && strcmp(where, "validate") == 0) stall_for_ever("validate");
  return KC_OK;
}

static kc_status s_task_configs(void* self, int32_t max_tasks, kc_task_configs* out) {
  stall* s = (stall*)self;
  int32_t i;
  FILE* marker;
  maybe_stall(s, "taskConfigs");
  if (s->fail_while[0] && (marker = fopen(s->fail_while, "r")) != NULL) {
    fclose(marker);
    host->set_error("hostile plugin: taskConfigs fails while fail.while.file exists");
    return KC_ERROR;
  }
  for (i = 0; i < max_tasks; ++i) {
    kc_config* c = host->task_configs_add(out);
    if (!c) return KC_OK;
    host->config_set(c, "stall.in", s->where);
  }
  return KC_OK;
}

static kc_status unbounded_task_configs(void* self, int32_t max_tasks, kc_task_configs* out) {
  stall* s = (stall*)self;
  static char big[4097];
  static char mib[(1 << 20) + 1];
  long i;
  int32_t t;
  if (s->big_values > 0) {
    memset(mib, 'x', sizeof mib - 1);
    for (t = 0; t < max_tasks; ++t) {
      kc_config* c = host->task_configs_add(out);
      if (!c) return KC_OK;
      for (i = 0; i < s->big_values; ++i) {
        char key[32];
        sprintf(key, "big.%ld", i);
        host->config_set(c, key, mib);
      }
    }
    return KC_OK;
  }
  if (s->extra >= 0) {
    for (i = 0; i < max_tasks + s->extra; ++i) host->config_set(host->task_configs_add(out), "n", "x");
    return KC_OK;
  }
  memset(big, 'x', sizeof big - 1);
  for (;;) {
    kc_config* c = host->task_configs_add(out);
    if (!c) return KC_OK; /* the host's cap: the only thing that stops us */
    host->config_set(c, "payload", big);
  }
}

static kc_status s_stop(void* self) {
  maybe_stall((stall*)self, "stop");
  return KC_OK;
}

static void s_destroy(void* self) { free(self); }

static kc_status t_create(void* class_data, void** self) {
  (void)class_data;
  *self = calloc(1, sizeof(stall));
  return *self ? KC_OK : KC_ERROR;
}

static kc_status src_start(void* self, const kc_config* config, const kc_source_task_context* ctx) {
  (void)ctx;
  read_config((stall*)self, config);
  return KC_OK;
}

static kc_status src_poll(void* self, kc_source_records* out) {
  struct timespec tenth = {0, 100000000L};
  (void)out;
  maybe_stall((stall*)self, "poll");
  nanosleep(&tenth, NULL);
  return KC_OK;
}

static kc_status t_stop(void* self) {
  (void)self;
  return KC_OK;
}

static kc_status sink_start(void* self, const kc_config* config) {
  read_config((stall*)self, config);
  return KC_OK;
}

static kc_status sink_put(void* self, const kc_sink_records* records) {
  (void)records;
  maybe_stall((stall*)self, "put");
  return KC_OK;
}

static const kc_source_task_class source_task = {sizeof(kc_source_task_class), t_create, src_start, src_poll,
                                                 NULL, NULL, t_stop, s_destroy};
static const kc_sink_task_class sink_task = {sizeof(kc_sink_task_class), t_create, sink_start, sink_put, NULL, NULL,
                                             NULL, NULL, t_stop, s_destroy, NULL};

static kc_status add(kc_registrar* registrar, const char* name, kc_connector_type type,
                     kc_status (*task_configs)(void*, int32_t, kc_task_configs*)) {
  kc_connector_class c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.class_name = name;
  c.type = type;
  c.version = "0.0.3-hostile";
  c.create = s_create;
  c.start = s_start;
  c.task_configs = task_configs;
  c.stop = s_stop;
  c.destroy = s_destroy;
  c.validate = s_validate;
  if (type == KC_SOURCE)
    c.source_task = &source_task;
  else
    c.sink_task = &sink_task;
  return host->register_connector(registrar, &c);
}

KC_PLUGIN_EXPORT kc_status kc_plugin_register(const kc_host_api* h, kc_registrar* registrar) {
  host = h;
  if (add(registrar, "test.StallSourceConnector", KC_SOURCE, s_task_configs) != KC_OK) return KC_ERROR;
  if (add(registrar, "test.StallSinkConnector", KC_SINK, s_task_configs) != KC_OK) return KC_ERROR;
  return add(registrar, "test.UnboundedSourceConnector", KC_SOURCE, unbounded_task_configs);
}
