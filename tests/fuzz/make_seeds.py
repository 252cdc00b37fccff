#!/usr/bin/env python3
"""Writes the hand-made seed corpora under tests/fuzz/corpus/<target>/.

Usage: tests/fuzz/make_seeds.py [SHARED_TESTDATA_DIR]

Seeds are real examples (Connect's REST bodies and internal-topic records,
the JsonConverter and SMT vectors of shared/testdata, deploy/worker.properties)
plus a few edge cases each. Each file is named seed-<what>; files written by
fuzzing runs (scripts/fuzz --merge) sit next to them under libFuzzer's hash
names. Re-running rewrites the seed-* files only. Inputs that still crash
a target (bugs not fixed yet) live under crashes/<target>/, not here.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "testdata")


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    with open(os.path.join(d, "seed-" + safe), "wb") as f:
        f.write(data)


def sel(n):
    return bytes([n])


# ---- fuzz_rest_bodies: byte 0 % 6 picks the parser; "name\n" before the body for 2..4.
create = '{"name":"local-file-source","config":{"connector.class":"FileStreamSource","tasks.max":"1","file":"/tmp/test.txt","topic":"connect-test"}}'
bodies = {
    "json-object": (0, '{"a":"b","n":1,"t":true}'),
    "json-empty": (0, ""),
    "json-deep": (0, "[" * 70 + "]" * 70),
    "create": (1, create),
    "create-initial-state": (1, create[:-1] + ',"initial_state":"PAUSED"}'),
    "create-name-dot": (1, '{"name":"..","config":{"connector.class":"FileStreamSource"}}'),
    "create-name-control": (1, '{"name":"a\\u0001b","config":{}}'),
    "create-config-null": (1, '{"name":"x","config":{"tasks.max":null}}'),
    "create-truncated": (1, '{"name":"x","config":{"connector.cl'),
    "put": (2, 'c1\n{"connector.class":"FileStreamSink","tasks.max":"2","topics":"a,b","file":"/tmp/out"}'),
    "put-name-mismatch": (2, 'c1\n{"name":"c2","connector.class":"FileStreamSink"}'),
    "put-utf8-name": (2, b'c\xff1\n{"connector.class":"FileStreamSink"}'),
    "patch": (3, 'c1\n{"tasks.max":"3","file":null}'),
    "patch-number": (3, 'c1\n{"tasks.max":2,"x":false}'),
    "patch-array": (3, 'c1\n{"tasks.max":[1]}'),
    "validate": (4, 'FileStreamSource\n{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","tasks.max":"1","topic":"t"}'),
    "validate-mismatch": (4, 'FileStreamSink\n{"connector.class":"FileStreamSource"}'),
    "validate-no-class": (4, 'FileStreamSink\n{"tasks.max":"1"}'),
    "offsets-source": (5, '{"offsets":[{"partition":{"filename":"/tmp/a.txt"},"offset":{"position":30}}]}'),
    "offsets-sink": (5, '{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":2},"offset":{"kafka_offset":7}},{"partition":{"kafka_topic":"t","kafka_partition":3},"offset":null}]}'),
    "offsets-empty": (5, '{"offsets":[]}'),
    "offsets-deep": (5, '{"offsets":[{"partition":' + "[" * 80 + "]" * 80 + ',"offset":null}]}'),
}
for name, (s, body) in bodies.items():
    write("fuzz_rest_bodies", name, sel(s) + (body if isinstance(body, bytes) else body.encode()))

# ---- fuzz_rest_url: byte 0 % 5 picks the decoder.
urls = {
    "http-url": (0, "http://worker-1:8083"),
    "http-url-ipv6": (0, "http://[::1]:8083/base"),
    "http-url-bad-port": (0, "https://h:99999"),
    "http-url-empty-host": (0, "http://:8083"),
    "decode-utf8": (1, "connector%20%C3%A9%2Fx+y"),
    "decode-bad": (1, "%FF%2"),
    "split": (2, "/connectors/my%20conn/tasks/0/status"),
    "split-dots": (2, "//connectors/%2E%2E//config/"),
    "query": (3, "expand=status&expand=info&forward=true&a+b=c%26d"),
    "query-bad": (3, "includeTasks=%zz&onlyFailed"),
    "target": (4, "/connectors/c1/restart?includeTasks=true&onlyFailed=false"),
}
for name, (s, text) in urls.items():
    write("fuzz_rest_url", name, sel(s) + text.encode())

# ---- fuzz_worker_properties: properties text, NUL, NUL-separated environment.
with open(os.path.join(ROOT, "deploy", "worker.properties"), "rb") as f:
    deploy = f.read()
minimal = b"bootstrap.servers=localhost:9092\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
write("fuzz_worker_properties", "deploy", deploy)
write("fuzz_worker_properties", "minimal", minimal)
write("fuzz_worker_properties", "env-only", b"\0CONNECT_BOOTSTRAP_SERVERS=b:9092\0CONNECT_GROUP_ID=g\0CONNECT_CONFIG_STORAGE_TOPIC=c\0CONNECT_OFFSET_STORAGE_TOPIC=o\0CONNECT_STATUS_STORAGE_TOPIC=s\0CONNECT_LISTENER_NAME_SASL__SSL_X___Y=1\0CONNECT_LOG4J_ROOT_LOGLEVEL=DEBUG\0PATH=/bin")
write("fuzz_worker_properties", "env-override", minimal + b"\0CONNECT_GROUP_ID=other\0CONNECT_TASKS_MAX_LIMIT=abc\0CONNECT_=x\0connect_group_id=y")
write("fuzz_worker_properties", "secret", minimal + b"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"very-secret-pw\";\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")
write("fuzz_worker_properties", "escapes", b"key\\ with\\ spaces = v\\u00e9\\\n   continued\n! comment\n# comment\na:b\nc d\n\\uD83D\\uDE00=emoji\nbad=\\u12")
write("fuzz_worker_properties", "bad-values", minimal + b"heartbeat.interval.ms=99999999999999999999\nsession.timeout.ms=-1\nlisteners=http://:notaport\ntasks.max.limit=0\n")

# ---- fuzz_storage_records: byte 0 % 3 picks the topic; key NUL value.
def rec(topic, key, value=None):
    return sel(topic) + key.encode() + (b"" if value is None else b"\0" + value.encode())

records = {
    "connector": rec(0, "connector-c1", '{"properties":{"connector.class":"FileStreamSource","tasks.max":"1","name":"c1"}}'),
    "connector-number": rec(0, "connector-c1", '{"properties":{"tasks.max":1,"x":true}}'),
    "connector-tombstone": rec(0, "connector-c1"),
    "task": rec(0, "task-my-conn-0", '{"properties":{"task.class":"x","file":"/tmp/a"}}'),
    "task-leading-zero": rec(0, "task-c-007", '{"properties":{}}'),
    "commit": rec(0, "commit-c1", '{"tasks":2}'),
    "commit-huge": rec(0, "commit-c1", '{"tasks":2147483647}'),
    "commit-negative": rec(0, "commit-c1", '{"tasks":-1}'),
    "target-state": rec(0, "target-state-c1", '{"state":"PAUSED","state.v2":"STOPPED"}'),
    "target-state-v1": rec(0, "target-state-c1", '{"state":"STARTED"}'),
    "restart": rec(0, "restart-connector-c1", '{"include-tasks":true,"only-failed":false}'),
    "session-key": rec(0, "session-key", '{"key":"c2VjcmV0","algorithm":"HmacSHA256","creation-timestamp":1700000000000}'),
    "task-count": rec(0, "tasks-fencing-c1", '{"task-count":3}'),
    "logger": rec(0, "logger-cluster-org.apache.kafka", '{"level":"DEBUG"}'),
    "offset-source": rec(1, '["c1",{"filename":"/tmp/a.txt"}]', '{"position":30}'),
    "offset-null-partition": rec(1, '["c1",null]', 'null'),
    "offset-float": rec(1, '["c1",{"p":1.5e300,"q":-0.0}]', '{"o":[1,2,{"x":"y"}]}'),
    "offset-deep": rec(1, '["c1",{"p":' + "[" * 100 + "]" * 100 + "}]", "[" * 100 + "]" * 100),
    "status-connector": rec(2, "status-connector-c1", '{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3}'),
    "status-task": rec(2, "status-task-c1-0", '{"state":"FAILED","trace":"java.lang.Exception: x\\n\\tat y","worker_id":"w1:8083","generation":3}'),
    "status-topic": rec(2, "status-topic-orders:connector-c1", '{"topic":{"name":"orders","connector":"c1","task":0,"discoverTimestamp":1700000000000}}'),
    "status-bad-state": rec(2, "status-task-c1-x", '{"state":"DANCING","generation":1e10}'),
}
for name, data in records.items():
    write("fuzz_storage_records", name, data)

# ---- fuzz_json_converter: byte 0 bits: 1 schemas.enable, 2 NUMERIC decimals, 4 replace null, 8 key.
try:
    with open(os.path.join(SHARED, "connect-json-vectors.json")) as f:
        vectors = json.load(f)
except OSError:
    vectors = []
seen = set()
for v in vectors:
    text = v.get("bytes_text")
    if text is None or text in seen:
        continue
    seen.add(text)
    cfg = v.get("config", {})
    bits = (1 if cfg.get("schemas.enable", "true") == "true" else 0) | \
           (2 if cfg.get("decimal.format", "BASE64").upper() == "NUMERIC" else 0) | \
           (4 if cfg.get("replace.null.with.default", "true") == "true" else 0)
    write("fuzz_json_converter", v["name"], sel(bits) + text.encode())
write("fuzz_json_converter", "edge-envelope-missing", sel(5) + b'{"a":1}')
write("fuzz_json_converter", "edge-deep", sel(0) + b"[" * 100 + b"]" * 100)
write("fuzz_json_converter", "edge-schema-unknown", sel(1) + b'{"schema":{"type":"int128"},"payload":1}')

# ---- fuzz_transforms: a connector config in properties syntax.
def prop_escape(s, key=False):
    out = []
    for i, c in enumerate(s):
        if c in "\\#!=:" or (key and c == " ") or (c == " " and i == 0):
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20 or ord(c) > 0x7e:
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return "".join(out)

try:
    with open(os.path.join(SHARED, "smt-vectors.json")) as f:
        smts = json.load(f)
except OSError:
    smts = []
per_transform = {}
for v in smts:
    t = v.get("transform")
    if per_transform.get(t, 0) >= 3:
        continue
    per_transform[t] = per_transform.get(t, 0) + 1
    lines = ["transforms=t", "transforms.t.type=" + prop_escape(t)]
    for k, val in v.get("config", {}).items():
        lines.append("transforms.t." + prop_escape(k, True) + "=" + prop_escape(str(val)))
    p = v.get("predicate")
    if p:
        lines += ["predicates=p", "predicates.p.type=" + p["class"], "transforms.t.predicate=p",
                  "transforms.t.negate=" + ("true" if p.get("negate") else "false")]
        for k, val in p.get("config", {}).items():
            lines.append("predicates.p." + prop_escape(k, True) + "=" + prop_escape(str(val)))
    write("fuzz_transforms", v["name"], "\n".join(lines) + "\n")
write("fuzz_transforms", "edge-unknown-type", "transforms=a,b\ntransforms.a.type=NoSuchTransform\n")
write("fuzz_transforms", "edge-missing-predicate", "transforms=a\ntransforms.a.type=Filter\ntransforms.a.predicate=nope\n")
write("fuzz_transforms", "edge-regex", "transforms=r\ntransforms.r.type=RegexRouter\ntransforms.r.regex=(a+)+$\ntransforms.r.replacement=$1x\n")
write("fuzz_transforms", "edge-full-class", "transforms=i\ntransforms.i.type=org.apache.kafka.connect.transforms.InsertField$Value\ntransforms.i.topic.field=t\ntransforms.i.offset.field=o\n")
write("fuzz_transforms", "edge-dup-alias", "transforms=a,a,\npredicates=p,p\npredicates.p.type=HasHeaderKey\npredicates.p.name=h1\n")

# ---- fuzz_connector_config: byte 0 = worker flags (1 EOS source, 2-4 override
# policy, 8 tasks.max.limit 4); then key=value lines, "$key" = provider-resolved.
def cc(flags, *lines):
    return bytes([flags]) + ("\n".join(lines) + "\n").encode()

sink = ("connector.class=FileStreamSink", "tasks.max=2", "topics=orders,payments", "file=/tmp/out.txt")
source = ("connector.class=FileStreamSource", "tasks.max=1", "topic=connect-test", "file=/tmp/in.txt")
connector_configs = {
    "sink-valid": cc(0, *sink, "key.converter=org.apache.kafka.connect.storage.StringConverter",
                     "value.converter=org.apache.kafka.connect.json.JsonConverter",
                     "value.converter.schemas.enable=false", "consumer.override.group.id=my-sink",
                     "admin.override.request.timeout.ms=5000"),
    "sink-topics-regex-dlq": cc(0, "connector.class=FileStreamSink", "topics.regex=orders-.*",
                                "errors.tolerance=all", "errors.deadletterqueue.topic.name=dlq",
                                "errors.deadletterqueue.context.headers.enable=true",
                                "errors.deadletterqueue.topic.replication.factor=1"),
    "source-valid-eos": cc(1, *source, "offsets.storage.topic=my-offsets", "transaction.boundary=interval",
                           "transaction.boundary.interval.ms=1000", "producer.override.linger.ms=5"),
    "source-provider-secret": cc(0, *source, "$database.password=s3cr3t-value", "$file=/tmp/resolved.txt",
                                 "password=plain-secret"),
    "tasks-max-zero": cc(0, *source[:1], "tasks.max=0"),
    "tasks-max-over-limit": cc(8, *source[:1], "tasks.max=5"),
    "tasks-max-not-a-number": cc(0, *source[:1], "tasks.max=two", "tasks.max.enforce=maybe"),
    "bad-converter": cc(0, *sink, "key.converter=no.such.Converter", "value.converter=",
                        "header.converter=org.apache.kafka.connect.json.JsonConverter"),
    "bad-transforms-chain": cc(0, *source, "transforms=a,b,a", "transforms.a.type=NoSuchTransform",
                               "transforms.b.type=org.apache.kafka.connect.transforms.Filter",
                               "transforms.b.predicate=missing", "predicates=p",
                               "predicates.p.type=TopicNameMatches", "predicates.p.pattern=(("),
    "errors-bad-values": cc(0, *sink, "errors.tolerance=some", "errors.retry.timeout=-5",
                            "errors.retry.delay.max.ms=x", "errors.log.enable=yes",
                            "errors.deadletterqueue.topic.name=orders"),
    "override-policy-none": cc(2, *sink, "consumer.override.group.id=g", "producer.override.acks=1"),
    "override-policy-principal": cc(4, *source, "producer.override.sasl.mechanism=PLAIN",
                                    "producer.override.acks=0"),
    "unknown-class-no-name": cc(0, "connector.class=com.example.Nope", "=", "novalue", "transforms= "),
}
for name, data in connector_configs.items():
    write("fuzz_connector_config", name, data)

# ---- fuzz_plugin_host: a program of host-API calls (see fuzz_plugin_host.cpp).
def s(text):
    b = text.encode()
    return bytes([len(b)]) + b

tc = b"\x00" + b"\x01" + s("topic") + s("orders") + b"\x01" + s("file") + s("/tmp/a") + b"\x00" + b"\x01" + s("k") + s("v")
poll = (b"\x00\x00\x07\x00"            # schema slot 0 = STRING
        b"\x05\x00\x08" + s("hello") +  # value 0 = "hello"
        b"\x08" + b"\x09" + s("orders") +  # add record, topic
        b"\x0b\x00\x00\x01" +            # key = (schema 0, value 0)
        b"\x0c\x00" + s("file") + b"\x00" + s("/tmp/a") +  # json 0 {"file":"/tmp/a"}
        b"\x0d\x00" +                    # source partition json 0
        b"\x0e" + s("position") + b"\x00\x00\x00\x00\x00\x00\x00\x2a")
write("fuzz_plugin_host", "string-record", tc + b"\x02" + poll)
struct = (b"\x02\x00\x00\x0b"                      # builder 0 = STRUCT
          b"\x00\x01\x02\x00"                      # schema 1 = INT32
          b"\x03\x00\x05" + s("id") + b"\x01" +    # field id: schema 1
          b"\x03\x00\x01" + s("com.example.V") +   # name
          b"\x04\x00\x02" +                        # build builder 0 -> schema 2
          b"\x06\x00\x00\x00\x00\x02" +            # value 0 = struct of schema 2
          b"\x05\x01\x03\x00\x00\x00\x07" +        # value 1 = int32 7
          b"\x06\x00\x01\x00\x03" + s("id") +      # value0.put("id", value1)
          b"\x08\x0b\x02\x00\x00" +                # record; value = (schema 2, value 0)
          b"\x0f" + s("h") + b"\x01\x01")          # header h with schema 1
write("fuzz_plugin_host", "struct-record", b"\x02" + struct)
decimal = (b"\x02\x00\x03\x00\x0a"        # builder 0 = Decimal scale 2
           b"\x04\x00\x00"               # schema 0
           b"\x05\x00\x0a\x02\x01\x00\x0a" +  # value 0 = decimal 0x0100, scale 2
           b"\x08\x0b\x00\x00\x00")
write("fuzz_plugin_host", "decimal-record", b"\x02" + decimal)
write("fuzz_plugin_host", "error", b"\x03" + s("refused") + b"\xee")
write("fuzz_plugin_host", "too-many-tasks", b"\x00\x00\x00\x00\x00")

# ---- the protocol targets: Connect subprotocol vectors; Kafka samples (byte 0 top bit: a valid sample).
try:
    with open(os.path.join(SHARED, "connect-protocol-vectors.json")) as f:
        protocol = json.load(f)
except OSError:
    protocol = []
for v in protocol:
    if not v.get("hex"):
        continue
    target = "fuzz_connect_metadata" if v["kind"].startswith("metadata") else "fuzz_connect_assignment"
    write(target, v["name"], bytes.fromhex(v["hex"]))
for i in range(14):
    write("fuzz_kafka_decoders", "sample-%02d" % i, bytes([0x80 | i, 0]))


# ---- fuzz_broker_check: byte 0 protocol, 1 mechanism, 2 flags, 3 metadata code;
# then "<kind><code byte><text>" lines; \x02+k a librdkafka phrase, \x03 the
# password, \x04 the sasl.jaas.config value (see fuzz_broker_check.cpp).
def bc(proto, mech, flags, md, *lines):
    return bytes([proto, mech, flags, md]) + b"\n".join(lines)


def ev(code, text):
    return b"e" + bytes([code + 200]) + text


P = lambda k: b"\x02" + bytes([k])
broker_checks = {
    "auth-failed-with-password": bc(4, 3, 0, 0, b"blocalhost:9093", ev(-169, P(0) + P(5) + b" for \x03"),
                                    ev(-169, P(9) + P(0) + b"jaas \x04")),
    "mechanism-not-enabled": bc(3, 1, 0, 0, ev(-169, P(0) + P(4) + b"SCRAM-SHA-512")),
    "tls-to-plaintext": bc(2, 0, 0, 0, ev(-195, P(0) + P(1) + P(2))),
    "plaintext-to-tls": bc(1, 0, 0, 0, ev(-195, P(0) + b"Disconnected while requesting ApiVersion: " + P(3))),
    "tls-alert-as-size": bc(0, 0, 0, 0, ev(-195, P(0) + P(8))),
    "cert-verify-failed": bc(2, 0, 0, 0, b"f\x00/etc/ca.pem", ev(-195, P(0) + P(1) + P(10) + P(19) + b"5ms in state SSL_HANDSHAKE)")),
    "x509-hostname": bc(2, 0, 2, 0, b"x\x3e" + b"hostname mismatch"),
    "x509-untrusted": bc(2, 0, 2 | 0x20, 0, b"x\x13self-signed certificate in chain", b"f\x00/tmp/ca.pem"),
    "client-error-ssl": bc(2, 0, 1, 0, b"c\x00ssl.ca.location\tssl.ca.location failed: \x03 not PEM", b"f\x00/tmp/x"),
    "client-error-other": bc(0, 0, 1, 0, b"c\x00librdkafka\tInvalid value for linger.ms"),
    "sasl-required": bc(2, 0, 0, 0, ev(-195, P(0) + P(7) + P(6)), ev(-195, P(9) + P(0) + P(17) + P(6))),
    "topic-denied": bc(3, 1, 8, 0, b"gconnect-cluster", b"t\x1dconnect-configs"),
    "group-denied": bc(3, 1, 8 | 4, 0, b"gconnect-cluster"),
    "cluster-denied": bc(0, 0, 16, 200 + 31),
    "unreachable": bc(0, 0, 0, 0, ev(-195, P(12)), ev(-187, b"1/1 brokers are down")),
    "unresolved": bc(0, 0, 0, 0, ev(-193, P(13))),
    "client-cert-required": bc(4, 3, 0, 0, b"f\x01/tmp/client.pem", ev(-195, P(9) + P(0) + b"Receive failed: error:0A00045C:" + P(23) + P(23))),
    "empty-texts": bc(4, 4, 0xff, 0, b"e\x00", b"t\x00", b"x\x00", b"c\x00", b"g\x00", b"b\x00", b"f\x00"),
    "ok": bc(0, 0, 8, 0, b"blocalhost:9092"),
}
for name, data in broker_checks.items():
    write("fuzz_broker_check", name, data)
