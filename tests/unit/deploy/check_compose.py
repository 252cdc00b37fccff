#!/usr/bin/env python3
"""deploy/docker-compose.yml (Kafka (KRaft) + three kconnectd workers) and
deploy/docker-compose.mock-broker.yml (three workers against `kconnectd
mock-broker`, in the broker's network namespace).

usage: check_compose.py REPO_ROOT
This checks the structure, and runs `config -q` on both files with every
compose CLI present: Compose v1 (`docker-compose`, Debian's 1.29, which
scripts/setup installs) and v2 (`docker compose`). scripts/container-test
brings the mock-broker file up with a real engine.
"""

import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_common import (Checker, duration_seconds, env_name_to_property,  # noqa: E402
                           graceful_stop_budget_s, is_known_key, load_yaml_module,
                           parse_properties, read)


def env_dict(env):
    if env is None:
        return {}
    if isinstance(env, list):
        return dict(e.split("=", 1) if "=" in e else (e, "") for e in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def depends(svc):
    d = svc.get("depends_on") or {}
    if isinstance(d, list):
        return {name: "service_started" for name in d}
    return {name: (cfg or {}).get("condition", "service_started") for name, cfg in d.items()}


def replicas(svc):
    if "scale" in svc:
        return int(svc["scale"])
    return int(((svc.get("deploy") or {}).get("replicas")) or 1)


def published(svc):
    """[(host_spec, container_port)] from short or long port syntax."""
    out = []
    for p in svc.get("ports") or []:
        if isinstance(p, dict):
            out.append((str(p.get("published", "")), str(p.get("target"))))
            continue
        parts = str(p).split("/")[0].split(":")
        if len(parts) == 1:
            out.append(("", parts[0]))
        else:
            out.append((parts[-2], parts[-1]))
    return out


def host_port_count(spec):
    m = re.fullmatch(r"(\d+)-(\d+)", spec)
    if m:
        return int(m.group(2)) - int(m.group(1)) + 1
    return 1 if spec else 0


def main():
    root = sys.argv[1]
    yaml = load_yaml_module()
    c = Checker("docker-compose")
    compose_dir = os.path.join(root, "deploy")
    doc = yaml.safe_load(read(root, "deploy/docker-compose.yml"))
    c.check("name" not in doc, "no top-level `name:` (Compose v1, Debian's docker-compose 1.29, rejects it)")
    services = doc.get("services") or {}
    props = parse_properties(read(root, "deploy/worker.properties"))

    # Kafka: official image, KRaft, one combined broker+controller node.
    kafka = services.get("kafka")
    if c.check(kafka is not None, "a service named 'kafka'"):
        c.check(kafka.get("image") == "apache/kafka:3.8.0", "kafka uses image apache/kafka:3.8.0")
        env = env_dict(kafka.get("environment"))
        for key in ("KAFKA_NODE_ID", "KAFKA_PROCESS_ROLES", "KAFKA_LISTENERS",
                    "KAFKA_ADVERTISED_LISTENERS", "KAFKA_CONTROLLER_LISTENER_NAMES",
                    "KAFKA_CONTROLLER_QUORUM_VOTERS", "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"):
            c.check(key in env, f"kafka sets {key}")
        roles = {r.strip() for r in env.get("KAFKA_PROCESS_ROLES", "").split(",")}
        c.check(roles == {"broker", "controller"}, "kafka is a combined broker,controller (KRaft)")
        c.check("9092" in env.get("KAFKA_ADVERTISED_LISTENERS", ""), "kafka advertises 9092 inside the network")
        c.check(any(h and cp for h, cp in published(kafka)), "kafka publishes a port for host clients")
        c.check(replicas(kafka) == 1, "one kafka node")

    # Workers: services built from the repository's Dockerfile.
    workers = {n: s for n, s in services.items() if isinstance(s.get("build"), (dict, str))}
    total = sum(replicas(s) for s in workers.values())
    c.check(total == 3, f"three kconnectd workers in total (found {total} in {sorted(workers)})")
    for name, svc in workers.items():
        build = svc["build"] if isinstance(svc["build"], dict) else {"context": svc["build"]}
        ctx = os.path.normpath(os.path.join(compose_dir, build.get("context", ".")))
        dockerfile = os.path.join(ctx, build.get("dockerfile", "Dockerfile"))
        c.check(os.path.samefile(ctx, root) and os.path.isfile(dockerfile),
                f"{name} builds the repository's Dockerfile (context {ctx})")
        c.check(depends(svc).get("kafka") == "service_healthy",
                f"{name} depends_on kafka with condition: service_healthy")
        ports = published(svc)
        rest = [h for h, cp in ports if cp == "8083"]
        c.check(bool(rest), f"{name} publishes the REST port 8083")
        if replicas(svc) > 1 or name == "worker":
            # One host port per replica, and room for `--scale worker=5`.
            c.check(rest and host_port_count(rest[0]) >= 5,
                    f"{name} publishes a host port range of at least 5 ports for 8083 (got {rest})")
        env = env_dict(svc.get("environment"))
        for var in ("CONNECT_BOOTSTRAP_SERVERS", "CONNECT_GROUP_ID"):
            c.check(var in env, f"{name} sets {var}")
        for var in env:
            prop = env_name_to_property(var)
            if prop is not None:
                c.check(is_known_key(prop), f"{name}: {var} maps to unknown worker property {prop!r}")
        mounts = [str(v) for v in svc.get("volumes") or []]
        mounted = [m for m in mounts if m.split(":")[1:2] == ["/etc/kconnectd/worker.properties"]]
        c.check(bool(mounted), f"{name} mounts a worker.properties at /etc/kconnectd/worker.properties")
        for m in mounted:
            c.check(os.path.isfile(os.path.join(compose_dir, m.split(":")[0])),
                    f"{name}: mounted file {m.split(':')[0]} exists")
        grace = duration_seconds(svc.get("stop_grace_period", "10s"))
        c.check(grace > graceful_stop_budget_s(props),
                f"{name}: stop_grace_period {grace}s exceeds the graceful stop budget "
                f"{graceful_stop_budget_s(props)}s")
        cmd = svc.get("command")
        cmd_text = " ".join(cmd) if isinstance(cmd, list) else str(cmd or "")
        c.check(cmd is None or "run /etc/kconnectd/worker.properties" in cmd_text,
                f"{name} runs `kconnectd run /etc/kconnectd/worker.properties`")

    # Healthchecks everywhere: every long-running service has a real one;
    # one-shot jobs (restart: "no") declare `disable: true` explicitly.
    for name, svc in services.items():
        hc = svc.get("healthcheck")
        if not c.check(isinstance(hc, dict), f"{name} declares a healthcheck"):
            continue
        one_shot = str(svc.get("restart", "")) == "no"
        if hc.get("disable"):
            c.check(one_shot, f"{name}: only one-shot jobs (restart: \"no\") may disable the healthcheck")
        elif name not in workers:
            c.check(bool(hc.get("test")), f"{name}: healthcheck has a test")
    for name in workers:
        check_inherits_image_healthcheck(c, root, name, services[name])

    # One-shot connector creation once a worker is healthy.
    creators = [(n, s) for n, s in services.items()
                if "/connectors" in str(s.get("command", "")) + str(s.get("entrypoint", ""))]
    if c.check(len(creators) == 1, "one one-shot service POSTs an example connector"):
        n, s = creators[0]
        text = str(s.get("command"))
        c.check("POST" in text and any(f"http://{w}:8083/connectors" in text for w in workers),
                f"{n} POSTs to a worker's /connectors")
        c.check(any(depends(s).get(w) == "service_healthy" for w in workers),
                f"{n} waits for a worker with condition: service_healthy")
        c.check(str(s.get("restart", "")) == "no", f"{n} is one-shot (restart: \"no\")")

    check_mock_broker(c, root, yaml)

    # The real parsers: Compose v1 and v2, whichever are installed.
    clis = compose_clis()
    for cli in clis:
        for f in ("docker-compose.yml", "docker-compose.mock-broker.yml"):
            r = subprocess.run([*cli, "-f", os.path.join(compose_dir, f), "config", "-q"],
                               capture_output=True, text=True)
            c.check(r.returncode == 0, f"`{' '.join(cli)} config -q` accepts {f}: {r.stderr.strip()}")
    if not clis:
        print("note: no compose CLI here (docker-compose or docker compose); structure checked with PyYAML only")
    c.finish()


def compose_clis():
    """The compose commands present: ["docker-compose"] (v1) and/or ["docker", "compose"] (v2)."""
    out = []
    if shutil.which("docker-compose"):
        out.append(["docker-compose"])
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        out.append([docker, "compose"])
    return out


def check_inherits_image_healthcheck(c, root, name, svc):
    """Worker services keep the image's HEALTHCHECK (GET /health through bash's
    /dev/tcp; the image has no curl) and only tune its timing."""
    hc = svc.get("healthcheck") or {}
    c.check(not hc.get("test") and not hc.get("disable"),
            f"{name}: healthcheck has no test of its own, so the image's HEALTHCHECK on /health runs")
    dockerfile = read(root, "Dockerfile")
    c.check(re.search(r"^HEALTHCHECK .*\\\n.*GET /health", dockerfile, re.M) is not None,
            "the Dockerfile's HEALTHCHECK probes GET /health")


def check_mock_broker(c, root, yaml):
    """docker-compose.mock-broker.yml: a `kconnectd mock-broker` service and three
    workers in its network namespace, each on its own REST port published by
    the broker service, each health-checked on that port."""
    doc = yaml.safe_load(read(root, "deploy/docker-compose.mock-broker.yml"))
    c.check("name" not in doc, "mock-broker file: no top-level `name:` (Compose v1)")
    services = doc.get("services") or {}
    broker = services.get("broker") or {}
    cmd = broker.get("command") or []
    c.check(isinstance(cmd, list) and cmd[:1] == ["mock-broker"] and "--bootstrap-file" in cmd,
            "mock-broker file: service `broker` runs `kconnectd mock-broker --bootstrap-file ...`")
    bootstrap_file = cmd[cmd.index("--bootstrap-file") + 1] if "--bootstrap-file" in cmd[:-1] else None
    c.check(bool((broker.get("healthcheck") or {}).get("test")), "mock-broker file: the broker has a healthcheck")
    published_ports = {cp: h for h, cp in published(broker)}
    workers = {n: s for n, s in services.items() if n != "broker"}
    c.check(len(workers) == 3, f"mock-broker file: three workers (found {sorted(workers)})")
    ports = set()
    for name, svc in workers.items():
        c.check(svc.get("network_mode") == "service:broker",
                f"mock-broker file: {name} shares the broker's network namespace (network_mode: service:broker)")
        c.check(depends(svc).get("broker") == "service_healthy",
                f"mock-broker file: {name} depends_on broker with condition: service_healthy")
        c.check(not svc.get("ports"), f"mock-broker file: {name} publishes nothing itself (the broker's namespace does)")
        env = env_dict(svc.get("environment"))
        m = re.fullmatch(r"http://0\.0\.0\.0:(\d+)", env.get("CONNECT_LISTENERS", ""))
        if c.check(m is not None, f"mock-broker file: {name} listens on 0.0.0.0 on its own port"):
            port = m.group(1)
            ports.add(port)
            c.check(env.get("CONNECT_REST_ADVERTISED_PORT") == port and env.get("HEALTH_PORT") == port,
                    f"mock-broker file: {name} advertises and health-checks its port {port}")
            c.check(port in published_ports, f"mock-broker file: the broker service publishes {name}'s port {port}")
        for var in env:
            prop = env_name_to_property(var)
            if prop is not None:
                c.check(is_known_key(prop), f"mock-broker file: {name}: {var} maps to unknown property {prop!r}")
        text = " ".join(svc.get("command") or [])
        c.check(bool(bootstrap_file) and bootstrap_file in text and "CONNECT_BOOTSTRAP_SERVERS" in text,
                f"mock-broker file: {name} reads the broker's address from {bootstrap_file}")
        check_inherits_image_healthcheck(c, root, name, svc)
    c.check(len(ports) == 3, f"mock-broker file: three distinct REST ports (got {sorted(ports)})")


if __name__ == "__main__":
    main()
