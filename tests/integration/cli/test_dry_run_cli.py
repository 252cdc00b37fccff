#!/usr/bin/env python3
"""`kconnectd transform` and `kconnectd convert` as real processes (issue 11 item 7).

usage: test_dry_run_cli.py KCONNECTD

Feeds JSON lines on stdin and checks stdout line by line: one output line per
non-blank input line (a record, `null`, or {"error": {...}}), a bad
connector config exiting non-zero with `KEY: MESSAGE` on stderr, output
flushed per line (a pipe gets its answer before stdin closes), and the
JsonConverter in both directions with and without schemas.enable.
"""
import json
import os
import select
import subprocess
import sys
import tempfile

FAILURES = []

INSERT = "org.apache.kafka.connect.transforms.InsertField$Value"
FILTER = "org.apache.kafka.connect.transforms.Filter"
TOPIC_MATCHES = "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"

STRUCT_SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"name": "id", "schema": {"type": "int32", "optional": False}},
    {"name": "name", "schema": {"type": "string", "optional": True}}]}


def check(cond, what):
    if cond:
        print("ok:", what)
    else:
        print("FAIL:", what)
        FAILURES.append(what)


def run(args, lines):
    stdin = "".join(line + "\n" for line in lines)
    p = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, text=True)
    return p.returncode, p.stdout.splitlines(), p.stderr


def record(topic, value_schema, value):
    return json.dumps({"kind": "source", "topic": topic, "partition": 0, "timestamp": 1700000000123,
                       "keySchema": {"type": "string", "optional": False}, "key": "k1",
                       "valueSchema": value_schema, "value": value, "headers": []})


def test_transform(kc, tmp):
    connector = {"name": "dry", "config": {
        "connector.class": "FileStreamSource",
        "transforms": "dropTests,insert",
        "transforms.dropTests.type": FILTER,
        "transforms.dropTests.predicate": "isTest",
        "transforms.insert.type": INSERT,
        "transforms.insert.static.field": "source",
        "transforms.insert.static.value": "kconnectd",
        "predicates": "isTest",
        "predicates.isTest.type": TOPIC_MATCHES,
        "predicates.isTest.pattern": "test-.*"}}
    path = os.path.join(tmp, "connector.json")
    with open(path, "w") as f:
        json.dump(connector, f)
    lines = [
        record("orders", STRUCT_SCHEMA, {"id": 1, "name": "a"}),      # kept, field added
        record("test-orders", STRUCT_SCHEMA, {"id": 2, "name": "b"}),  # dropped by the filter
        "",                                                            # blank: no output
        record("orders", None, "just a string"),                      # InsertField cannot handle it
        record("orders", None, {"map": [["id", {"int32": 3}]]}),       # schemaless map: kept
        "{not json",                                                   # bad input line
        "[1, 2]",                                                      # not a record object
    ]
    rc, out, err = run([kc, "transform", path], lines)
    print("\n".join(out))
    check(rc == 0, f"transform exits 0 (got {rc}, stderr {err.strip()[:300]!r})")
    check(len(out) == 6, f"transform prints one line per non-blank input line (got {len(out)})")
    if len(out) != 6:
        return
    out = [json.loads(line) for line in out]
    kept = out[0]
    names = [f["name"] for f in (kept.get("valueSchema") or {}).get("fields", [])]
    check(names == ["id", "name", "source"], f"kept record has the inserted field in its schema ({names})")
    check(kept.get("value") == {"id": 1, "name": "a", "source": "kconnectd"},
          f"kept record value has source=kconnectd ({kept.get('value')})")
    check(kept.get("topic") == "orders" and kept.get("key") == "k1", "kept record keeps topic and key")
    check(out[1] is None, f"record on test-orders is dropped: null ({out[1]})")
    e = out[2].get("error") if isinstance(out[2], dict) else None
    check(e is not None and e.get("stage") == "apply" and e.get("transform") == "insert"
          and "only map objects supported" in e.get("message", "").lower(),
          f"a string value InsertField cannot handle gives an apply error naming the transform ({out[2]})")
    check(out[3].get("value") == {"map": [["id", {"int32": 3}], ["source", "kconnectd"]]},
          f"schemaless map gets the field ({out[3].get('value')})")
    for i in (4, 5):
        e = out[i].get("error") if isinstance(out[i], dict) else None
        check(e is not None and e.get("stage") == "input", f"bad input line {i} gives an input error ({out[i]})")

    # A plain object of config keys works too, and an empty chain is the identity.
    plain = os.path.join(tmp, "plain.json")
    with open(plain, "w") as f:
        json.dump({"name": "x"}, f)
    rc, out, _ = run([kc, "transform", plain], [record("orders", STRUCT_SCHEMA, {"id": 9, "name": None})])
    check(rc == 0 and len(out) == 1 and json.loads(out[0]).get("value") == {"id": 9, "name": None},
          f"no transforms: the record comes out unchanged ({out})")

    # Output is flushed per line: the answer arrives while stdin is still open.
    p = subprocess.Popen([kc, "transform", path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        p.stdin.write(record("orders", STRUCT_SCHEMA, {"id": 5, "name": "e"}) + "\n")
        p.stdin.flush()
        ready, _, _ = select.select([p.stdout], [], [], 10)
        line = p.stdout.readline() if ready else ""
        check(ready and json.loads(line).get("value", {}).get("id") == 5,
              "transform answers a line before stdin is closed (flushed per line)")
    finally:
        p.stdin.close()
        p.wait(timeout=10)

    # Bad configs: non-zero exit, every error as KEY: MESSAGE on stderr.
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        json.dump({"transforms": "bogus,insert", "transforms.bogus.type": "com.example.NoSuchTransform",
                   "transforms.insert.type": INSERT}, f)
    rc, out, err = run([kc, "transform", bad], [record("orders", STRUCT_SCHEMA, {"id": 1, "name": "a"})])
    print(err)
    check(rc != 0, f"unknown transform class exits non-zero (got {rc})")
    check(any(line.startswith("transforms.bogus.type: ") for line in err.splitlines()),
          "stderr names the key transforms.bogus.type")
    check(len([line for line in err.splitlines() if line.startswith("transforms.")]) >= 2,
          "stderr lists every validation error (the bogus class and InsertField's missing field)")
    check(out == [], "no output lines for a bad config")
    rc, _, err = run([kc, "transform", os.path.join(tmp, "missing.json")], [])
    check(rc != 0 and "cannot read" in err, f"missing connector file exits non-zero ({rc}, {err.strip()!r})")
    broken = os.path.join(tmp, "broken.json")
    with open(broken, "w") as f:
        f.write("{\"transforms\": ")
    rc, _, err = run([kc, "transform", broken], [])
    check(rc != 0 and "not valid JSON" in err, f"malformed connector JSON exits non-zero ({rc}, {err.strip()!r})")


def test_convert(kc):
    struct_line = json.dumps({"topic": "orders", "schema": STRUCT_SCHEMA, "value": {"id": 1, "name": "a"}})
    string_line = json.dumps({"topic": "orders", "schema": {"type": "string", "optional": False}, "value": "hi"})
    bad_line = json.dumps({"topic": "orders", "schema": {"type": "int32", "optional": False}, "value": None})
    rc, out, err = run([kc, "convert", JSON_CONVERTER, "from-connect"], [struct_line, string_line, bad_line])
    print("\n".join(out))
    check(rc == 0 and len(out) == 3, f"convert from-connect: exit 0 and 3 lines ({rc}, {len(out)}, {err!r})")
    if len(out) != 3:
        return
    out = [json.loads(line) for line in out]
    envelope = ('{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},'
                '{"type":"string","optional":true,"field":"name"}],"optional":false},"payload":{"id":1,"name":"a"}}')
    check(bytes.fromhex(out[0]["bytes_hex"]).decode() == envelope, f"struct envelope bytes ({out[0]})")
    check(bytes.fromhex(out[1]["bytes_hex"]).decode() == '{"schema":{"type":"string","optional":false},"payload":"hi"}',
          f"string envelope bytes ({out[1]})")
    e = out[2].get("error", {})
    check(e.get("stage") == "fromConnectData" and "null value for field that is required" in e.get("message", ""),
          f"required null gives a fromConnectData error ({out[2]})")

    rc, out, _ = run([kc, "convert", "JsonConverter", "from-connect", "--config", "schemas.enable=false"],
                     [struct_line])
    check(rc == 0 and len(out) == 1 and bytes.fromhex(json.loads(out[0])["bytes_hex"]).decode() == '{"id":1,"name":"a"}',
          f"--config schemas.enable=false writes the bare payload ({out})")

    hex_env = envelope.encode().hex()
    lines = [json.dumps({"topic": "orders", "bytes_hex": hex_env}),
             json.dumps({"topic": "orders", "bytes_hex": b"{not json".hex()}),
             json.dumps({"topic": "orders", "bytes_hex": "zz"})]
    rc, out, err = run([kc, "convert", JSON_CONVERTER, "to-connect"], lines)
    print("\n".join(out))
    check(rc == 0 and len(out) == 3, f"convert to-connect: exit 0 and 3 lines ({rc}, {len(out)}, {err!r})")
    if len(out) == 3:
        out = [json.loads(line) for line in out]
        check(out[0].get("value") == {"id": 1, "name": "a"} and out[0].get("schema", {}).get("type") == "struct",
              f"to-connect reads the envelope back ({out[0]})")
        check(out[1].get("error", {}).get("stage") == "toConnectData", f"bad JSON bytes give an error ({out[1]})")
        check(out[2].get("error", {}).get("stage") == "input", f"bad hex gives an input error ({out[2]})")

    rc, out, _ = run([kc, "convert", JSON_CONVERTER, "to-connect", "--config", "schemas.enable=false", "--key"],
                     [json.dumps({"topic": "t", "bytes_hex": b'{"a":[1,true]}'.hex()})])
    check(rc == 0 and len(out) == 1 and json.loads(out[0]) ==
          {"topic": "t", "schema": None, "value": {"map": [["a", {"array": [{"int64": 1}, True]}]]}},
          f"schemaless to-connect with --key gives tagged values ({out})")

    rc, out, err = run([kc, "convert", "com.example.NoSuchConverter", "from-connect"], [struct_line])
    check(rc != 0 and out == [] and "com.example.NoSuchConverter" in err,
          f"unknown converter class exits non-zero with a message ({rc}, {err.strip()!r})")
    rc, out, err = run([kc, "convert", JSON_CONVERTER, "sideways"], [struct_line])
    check(rc != 0 and out == [], f"bad direction exits non-zero ({rc}, {err.strip()!r})")
    rc, out, err = run([kc, "convert", JSON_CONVERTER, "from-connect", "--config", "decimal.format=STRING"],
                       [struct_line])
    check(rc != 0 and "decimal.format" in err, f"bad converter config exits non-zero naming the key ({rc}, {err.strip()!r})")
    rc, out, err = run([kc, "convert", JSON_CONVERTER, "from-connect", "--config", "novalue"], [struct_line])
    check(rc != 0 and "KEY=VALUE" in err, f"--config without '=' exits non-zero ({rc}, {err.strip()!r})")


def main():
    kc = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        test_transform(kc, tmp)
    test_convert(kc)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("OK: kconnectd transform and convert")
    return 0


if __name__ == "__main__":
    sys.exit(main())
