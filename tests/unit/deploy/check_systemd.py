#!/usr/bin/env python3
"""deploy/systemd/kconnectd.service: settings, then `systemd-analyze verify`.

usage: check_systemd.py REPO_ROOT [KCONNECTD_BINARY]

`systemd-analyze verify` fails when ExecStart's binary does not exist, and
/usr/bin/kconnectd is not installed on build machines. So the unit is copied
to a temporary directory with ExecStart's binary replaced by KCONNECTD_BINARY
(the built one) when that file exists, else by /bin/true; every other line is
verified as written. Exit 77 (skipped) when systemd-analyze is missing.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_common import Checker, duration_seconds, graceful_stop_budget_s, parse_properties, read, skip  # noqa: E402

UNIT = "deploy/systemd/kconnectd.service"
EXEC = "/usr/bin/kconnectd run /etc/kconnectd/worker.properties"


def service_settings(text):
    settings, section = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        k, _, v = line.partition("=")
        settings[(section, k.strip())] = v.strip()
    return settings


def main():
    root = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else ""
    c = Checker("systemd")
    text = read(root, UNIT)
    s = service_settings(text)
    svc = lambda k: s.get(("Service", k))  # noqa: E731

    c.check(svc("Type") == "simple", "Type=simple")
    c.check(svc("ExecStart") == EXEC, f"ExecStart={EXEC}")
    c.check(svc("Restart") == "on-failure", "Restart=on-failure")
    c.check(svc("KillSignal") == "SIGTERM", "KillSignal=SIGTERM")
    props = parse_properties(read(root, "deploy/worker.properties"))
    budget = graceful_stop_budget_s(props)
    stop = duration_seconds(svc("TimeoutStopSec") or "90s")
    c.check(stop > budget, f"TimeoutStopSec ({stop}s) above the stop budget: drain, task stop and offset flush "
            f"({budget}s)")
    for key, want in (("ProtectSystem", "strict"), ("NoNewPrivileges", "yes"), ("DynamicUser", "yes"),
                      ("PrivateTmp", "yes"), ("ProtectHome", "yes")):
        c.check(svc(key) == want, f"{key}={want}")
    c.check(svc("StateDirectory") is not None, "StateDirectory= gives the dynamic user a writable directory")
    c.check(s.get(("Install", "WantedBy")) == "multi-user.target", "WantedBy=multi-user.target")

    analyze = shutil.which("systemd-analyze")
    if not analyze:
        for f in c.failures:
            print(f"FAIL: {f}")
        if c.failures:
            sys.exit(1)
        skip(f"systemd-analyze not found (Debian package 'systemd'); {c.passed} static checks passed, "
             "`systemd-analyze verify` not run")

    binary = os.path.abspath(binary) if binary else ""
    usable = binary and os.path.isfile(binary) and os.access(binary, os.X_OK) and not re.search(r"\s", binary)
    exe = binary if usable else "/bin/true"
    print(f"verifying with ExecStart binary {exe}"
          + ("" if exe == binary else f" (built binary {binary or '(none given)'} not found)"))
    with tempfile.TemporaryDirectory() as tmp:
        unit = os.path.join(tmp, "kconnectd.service")
        rewritten = re.sub(r"^ExecStart=/usr/bin/kconnectd ", f"ExecStart={exe} ", text, flags=re.M)
        c.check(rewritten != text, "ExecStart rewritten for verification")
        with open(unit, "w", encoding="utf-8") as f:
            f.write(rewritten)
        r = subprocess.run([analyze, "verify", unit], capture_output=True, text=True,
                           env=dict(os.environ, SYSTEMD_LOG_COLOR="0", SYSTEMD_PAGER=""))
        out = (r.stdout + r.stderr).strip()
        if out:
            print(out)
        c.check(r.returncode == 0, f"systemd-analyze verify exits 0 (got {r.returncode})")
        # Unknown or invalid keys are only warnings for systemd; count them as failures.
        ours = [ln for ln in out.splitlines() if "kconnectd.service" in ln]
        c.check(not ours, "systemd-analyze reports nothing about kconnectd.service: " + "; ".join(ours))
    c.finish()


if __name__ == "__main__":
    main()
