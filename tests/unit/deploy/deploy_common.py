"""Helpers shared by the deploy checks (tests/unit/deploy/check_*.py).

Each check is a script run by ctest: `python3 check_x.py REPO_ROOT [...]`.
Exit 0 = pass, 1 = fail (every problem is printed), 77 = skipped (ctest
SKIP_RETURN_CODE), with a message saying why.
"""

import os
import re
import sys

SKIP = 77

# Worker property names kconnectd understands (DistributedConfig names,
# shared/reference/connect-reference.md section 7, plus the legacy REST ones).
KNOWN_KEYS = {
    "group.id", "session.timeout.ms", "heartbeat.interval.ms", "rebalance.timeout.ms",
    "worker.sync.timeout.ms", "worker.unsync.backoff.ms", "scheduled.rebalance.max.delay.ms",
    "connect.protocol", "config.storage.topic", "config.storage.replication.factor",
    "offset.storage.topic", "offset.storage.partitions", "offset.storage.replication.factor",
    "status.storage.topic", "status.storage.partitions", "status.storage.replication.factor",
    "offset.flush.interval.ms", "offset.flush.timeout.ms", "task.shutdown.graceful.timeout.ms",
    "listeners", "rest.advertised.host.name", "rest.advertised.port", "rest.advertised.listener",
    "admin.listeners", "rest.extension.classes", "access.control.allow.origin",
    "access.control.allow.methods", "response.http.headers.config",
    "inter.worker.key.generation.algorithm", "inter.worker.key.size", "inter.worker.key.ttl.ms",
    "inter.worker.signature.algorithm", "inter.worker.verification.algorithms",
    "exactly.once.source.support", "topic.tracking.enable", "topic.tracking.allow.reset",
    "topic.creation.enable", "bootstrap.servers", "client.id", "request.timeout.ms",
    "metadata.max.age.ms", "retry.backoff.ms", "retry.backoff.max.ms", "reconnect.backoff.ms",
    "reconnect.backoff.max.ms", "connections.max.idle.ms", "send.buffer.bytes",
    "receive.buffer.bytes", "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "metadata.recovery.strategy",
    "metrics.sample.window.ms", "metrics.num.samples", "metrics.recording.level",
    "security.protocol",
    # Static membership (KIP-345 for workers, ours).
    "group.instance.id", "static.membership.leave.on.shutdown", "static.membership.assignment.file",
}
# Kafka client settings that pass through to librdkafka (DESIGN.md).
PASS_THROUGH_PREFIXES = ("sasl.", "ssl.", "producer.", "consumer.", "admin.")


def is_known_key(key):
    return key in KNOWN_KEYS or key.startswith(PASS_THROUGH_PREFIXES)


def env_name_to_property(name):
    """Python twin of kc::config::env_name_to_property (config/env_overrides.h):
    the cp-kafka-connect rule. None if `name` is not a worker override."""
    prefix = "CONNECT_"
    if not name.startswith(prefix) or name == prefix or name.startswith("CONNECT_LOG4J_"):
        return None
    dotted = ".".join(name[len(prefix):].lower().split("_"))
    return "_".join("-".join(dotted.split("...")).split(".."))


def parse_properties(text):
    """A small parser for the `key=value` files in deploy/ (comments with # or !,
    `=` or `:` separators; no line continuations are used there)."""
    props = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:]\s*(.*)$", line)
        if not m:
            raise ValueError(f"not a property line: {raw!r}")
        props[m.group(1)] = m.group(2)
    return props


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def load_yaml_module():
    try:
        import yaml  # noqa: F401  (python3-yaml, installed by scripts/setup)
        return yaml
    except ImportError:
        print("FAIL: python3 has no 'yaml' module; install python3-yaml (scripts/setup does)")
        sys.exit(1)


class Checker:
    """Collects failures so one run reports all of them."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.passed = 0

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
        return cond

    def finish(self):
        for f in self.failures:
            print(f"FAIL: {f}")
        print(f"{self.name}: {self.passed} checks passed, {len(self.failures)} failed")
        sys.exit(1 if self.failures else 0)


def skip(message):
    print(f"SKIP: {message}")
    sys.exit(SKIP)


def duration_seconds(value):
    """'30s', '1m30s', '90', 30, '500ms', '1min' -> seconds (float)."""
    if isinstance(value, (int, float)):
        return float(value)
    s = str(value).strip()
    if re.fullmatch(r"\d+(\.\d+)?", s):
        return float(s)
    units = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
    total = 0.0
    pos = 0
    for m in re.finditer(r"\s*(\d+(?:\.\d+)?)\s*(ms|sec|s|min|m|h)", s):
        if m.start() != pos:
            raise ValueError(f"bad duration {value!r}")
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise ValueError(f"bad duration {value!r}")
    return total


def graceful_stop_budget_s(props):
    """Seconds a worker may need after SIGTERM: the drain (on by default,
    bounded by shutdown.drain.timeout.ms), one task stop timeout (tasks stop
    in parallel) plus one offset flush, from the given properties (or the
    defaults: DistributedConfig's, and ours for the drain)."""
    stop_ms = int(props.get("task.shutdown.graceful.timeout.ms", "5000"))
    flush_ms = int(props.get("offset.flush.timeout.ms", "5000"))
    drain_on = props.get("shutdown.drain.enable", "true").strip().lower() == "true"
    drain_ms = int(props.get("shutdown.drain.timeout.ms", "15000")) if drain_on else 0
    return (drain_ms + stop_ms + flush_ms) / 1000.0
