#!/usr/bin/env python3
"""deploy/k8s: workers as a StatefulSet/Deployment, Service, ConfigMap, PDB.

usage: check_k8s.py REPO_ROOT
Checks the manifests' structure with PyYAML; when kubectl is installed it also
renders the kustomization offline (`kubectl kustomize`).
"""

import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_common import (Checker, env_name_to_property, graceful_stop_budget_s,  # noqa: E402
                           is_known_key, load_yaml_module, parse_properties, read)


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def port_ok(probe_port, container):
    ports = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
    return probe_port == 8083 or ports.get(probe_port) == 8083


def main():
    root = sys.argv[1]
    yaml = load_yaml_module()
    c = Checker("k8s")
    k8s_dir = os.path.join(root, "deploy", "k8s")
    files = sorted(glob.glob(os.path.join(k8s_dir, "*.yaml")) + glob.glob(os.path.join(k8s_dir, "*.yml")))
    docs = []
    for f in files:
        for d in yaml.safe_load_all(open(f, encoding="utf-8")):
            if d:
                docs.append((os.path.basename(f), d))
    by_kind = {}
    for f, d in docs:
        by_kind.setdefault(d.get("kind"), []).append(d)

    workloads = by_kind.get("StatefulSet", []) + by_kind.get("Deployment", [])
    for kind in ("Service", "ConfigMap", "PodDisruptionBudget"):
        c.check(kind in by_kind, f"a {kind} is present")
    if not c.check(len(workloads) == 1, "exactly one StatefulSet or Deployment of workers"):
        c.finish()
    wl = workloads[0]
    spec = wl["spec"]
    pod = spec["template"]["spec"]
    pod_labels = spec["template"]["metadata"].get("labels") or {}
    c.check(spec.get("replicas") == 3, "3 worker replicas")
    c.check(matches(spec["selector"].get("matchLabels"), pod_labels), "workload selector matches the pod labels")

    containers = pod.get("containers") or []
    main_c = next((x for x in containers if x.get("name") == "kconnectd"), containers[0] if containers else {})
    c.check(any(p.get("containerPort") == 8083 for p in main_c.get("ports") or []), "container exposes 8083")
    for kind in ("readinessProbe", "livenessProbe"):
        probe = main_c.get(kind) or {}
        get = probe.get("httpGet") or {}
        c.check(get.get("path") == "/health", f"{kind} is an httpGet on /health")
        c.check(port_ok(get.get("port"), main_c), f"{kind} targets the REST port 8083")
    startup = main_c.get("startupProbe")
    if startup:
        c.check((startup.get("httpGet") or {}).get("path") == "/health", "startupProbe is on /health")

    # Grace period: the graceful stop (task stop + offset flush) must fit.
    cm_props = {}
    for cm in by_kind.get("ConfigMap", []):
        if "worker.properties" in (cm.get("data") or {}):
            cm_props = parse_properties(cm["data"]["worker.properties"])
    c.check(bool(cm_props), "a ConfigMap carries worker.properties")
    grace = pod.get("terminationGracePeriodSeconds", 30)
    budget = graceful_stop_budget_s(cm_props)
    c.check(grace > budget, f"terminationGracePeriodSeconds {grace} exceeds the graceful stop budget {budget}s")

    # worker.properties: known keys, same keys as deploy/worker.properties.
    for k in cm_props:
        c.check(is_known_key(k), f"ConfigMap worker.properties: unknown key {k!r}")
    file_props = parse_properties(read(root, "deploy/worker.properties"))
    c.check(set(cm_props) == set(file_props),
            f"ConfigMap and deploy/worker.properties set the same keys "
            f"(only in ConfigMap: {sorted(set(cm_props) - set(file_props))}, "
            f"only in file: {sorted(set(file_props) - set(cm_props))})")
    for var in (e.get("name") for e in main_c.get("env") or []):
        prop = env_name_to_property(var)
        if prop is not None:
            c.check(is_known_key(prop), f"env {var} maps to unknown worker property {prop!r}")

    # Static membership (deploy/README.md "Static membership"): the pod name
    # is group.instance.id, the kept assignment lives on a per-pod volume that
    # outlives the pod, and the advertised host is the stable pod DNS name.
    if wl["kind"] == "StatefulSet":
        env = {e.get("name"): e for e in main_c.get("env") or []}
        pod_name_vars = {n for n, e in env.items()
                         if ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "metadata.name"}
        inst = env.get("CONNECT_GROUP_INSTANCE_ID", {})
        inst_from_name = (((inst.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "metadata.name"
                          or inst.get("value") in {f"$({n})" for n in pod_name_vars})
        c.check(inst_from_name, "CONNECT_GROUP_INSTANCE_ID is the pod name (static membership)")
        host = str(env.get("CONNECT_REST_ADVERTISED_HOST_NAME", {}).get("value", ""))
        c.check(any(host == f"$({n}).{spec.get('serviceName')}" for n in pod_name_vars),
                "the advertised host is the pod's stable DNS name under the governing service")
        state_file = cm_props.get("static.membership.assignment.file", "")
        claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates") or []}
        on_claim = any(m["name"] in claims and state_file.startswith(m["mountPath"].rstrip("/") + "/")
                       for m in main_c.get("volumeMounts") or [])
        c.check(on_claim, f"static.membership.assignment.file {state_file!r} is on a volumeClaimTemplate mount")
        c.check(int(cm_props.get("session.timeout.ms", "10000")) >= 30000,
                "session.timeout.ms leaves a static pod time to restart (>= 30 s)")

    # The ConfigMap is mounted where the command reads it.
    cmd = " ".join(main_c.get("command") or []) + " " + " ".join(main_c.get("args") or [])
    c.check("run /etc/kconnectd/worker.properties" in cmd or not cmd.strip(),
            "the container runs `kconnectd run /etc/kconnectd/worker.properties` (or the image's CMD)")
    vols = {v["name"]: v for v in pod.get("volumes") or []}
    mounted = False
    for m in main_c.get("volumeMounts") or []:
        v = vols.get(m["name"], {})
        if "configMap" in v and m.get("mountPath") in ("/etc/kconnectd", "/etc/kconnectd/"):
            mounted = True
    c.check(mounted, "the worker.properties ConfigMap is mounted at /etc/kconnectd")

    # Service for the REST port, PDB over the same pods.
    rest_services = [s for s in by_kind.get("Service", [])
                     if matches(s["spec"].get("selector"), pod_labels)
                     and any(p.get("port") == 8083 for p in s["spec"].get("ports") or [])]
    c.check(bool(rest_services), "a Service selects the worker pods on port 8083")
    if wl["kind"] == "StatefulSet":
        names = {s["metadata"]["name"] for s in by_kind.get("Service", [])}
        c.check(spec.get("serviceName") in names, "the StatefulSet's serviceName is a Service here")
    for pdb in by_kind.get("PodDisruptionBudget", []):
        c.check(matches(pdb["spec"]["selector"].get("matchLabels"), pod_labels), "PDB selects the worker pods")
        c.check(("maxUnavailable" in pdb["spec"]) != ("minAvailable" in pdb["spec"]),
                "PDB sets exactly one of maxUnavailable / minAvailable")
        if "maxUnavailable" in pdb["spec"]:
            c.check(pdb["spec"]["maxUnavailable"] == 1, "PDB allows one worker down at a time")

    # kustomization.yaml lists every manifest.
    kust = [d for f, d in docs if d.get("kind") == "Kustomization"]
    if kust:
        listed = set(kust[0].get("resources") or [])
        manifests = {f for f, d in docs if d.get("kind") != "Kustomization"}
        c.check(listed == manifests, f"kustomization lists every manifest ({sorted(listed)} vs {sorted(manifests)})")
        kubectl = shutil.which("kubectl")
        if kubectl:
            r = subprocess.run([kubectl, "kustomize", k8s_dir], capture_output=True, text=True)
            c.check(r.returncode == 0, f"kubectl kustomize renders deploy/k8s: {r.stderr.strip()}")
        else:
            print("note: kubectl not installed; kustomization not rendered")
    c.finish()


if __name__ == "__main__":
    main()
