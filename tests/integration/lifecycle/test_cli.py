#!/usr/bin/env python3
"""`kconnectd --help`, `kconnectd version`, `kconnectd --version` and
`kconnectd -V` (issue 6 item 7, issue 24, issue 27 item 3).

usage: test_cli.py KCONNECTD

Checks that `--help` exits 0 and lists every subcommand with a one-line
description (not the "(not built yet)" placeholder) and nothing else (every
line of that section is one subcommand), that each subcommand's
own `--help` works, and that `version` prints the version, the git commit,
the build type and the librdkafka and boost versions, and that `--version`
(which the container image's label and packaging scripts call) and `-V` exit
0 with exactly the same output.
"""
import re
import subprocess
import sys

SUBCOMMANDS = ["run", "standalone", "mock-broker", "validate", "decode", "assign-sim", "transform", "convert", "version", "completion"]


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30, text=True)
    return p.returncode, p.stdout


def main():
    kc = sys.argv[1]
    failures = []

    rc, out = run([kc, "--help"])
    print(out)
    if rc != 0:
        failures.append(f"--help exited {rc}")
    # CLI11 prints "Subcommands:" then one "  name   description" line each.
    section = out.split("Subcommands:", 1)[1] if "Subcommands:" in out else ""
    # One line per subcommand: each non-empty line starts with a known name
    # (a wrapped description or an unlisted subcommand would not).
    for line in section.splitlines():
        if line.strip() and line.split()[0] not in SUBCOMMANDS:
            failures.append(f"--help subcommand line is not one of {SUBCOMMANDS}: {line!r}")
    for name in SUBCOMMANDS:
        m = re.search(rf"^\s+{re.escape(name)}\s+(\S.*)$", section, re.M)
        if not m:
            failures.append(f"--help does not list subcommand {name!r} with a description")
            continue
        desc = m.group(1).strip()
        if "not built" in desc or len(desc) < 10:
            failures.append(f"subcommand {name!r} has no real description: {desc!r}")
        src, sub_out = run([kc, name, "--help"])
        if src != 0:
            failures.append(f"`{name} --help` exited {src}: {sub_out.strip()[:200]}")

    rc, out = run([kc, "version"])
    print(out)
    if rc != 0:
        failures.append(f"version exited {rc}")
    checks = {
        "version": r"^kconnectd \d+\.\d+\.\d+\S*$",
        "commit": r"^commit \S+$",
        "build type": r"^build \S+$",
        "librdkafka": r"^librdkafka \d+\.\d+\.\d+\S*$",
        "boost": r"^boost \d+\.\d+\.\d+$",
    }
    for what, rx in checks.items():
        if not re.search(rx, out, re.M):
            failures.append(f"version output lacks the {what} line ({rx})")

    # Issue 24: `--version` was refused (CLI11's "requires a subcommand", exit 106).
    # Issue 27: `-V` too, as most daemons have it.
    for flag in ("--version", "-V"):
        vrc, vout = run([kc, flag])
        print(vout)
        if vrc != 0:
            failures.append(f"{flag} exited {vrc}: {vout.strip()[:200]}")
        elif vout != out:
            failures.append(f"{flag} printed {vout!r}, version printed {out!r}")

    if failures:
        for f in failures:
            print("FAIL:", f)
        return 1
    print("OK: --help lists", ", ".join(SUBCOMMANDS), "and version / --version / -V print all five lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
