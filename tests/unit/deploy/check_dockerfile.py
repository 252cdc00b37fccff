#!/usr/bin/env python3
"""Dockerfile + .dockerignore: stages, runtime settings, Debian 12 packages.

usage: check_dockerfile.py REPO_ROOT [KCONNECTD_BINARY]

1. Structure: a debian:bookworm build stage with scripts/setup's build deps,
   Release with -DKC_BENCH=OFF, the binary installed stripped; a
   debian:bookworm-slim runtime stage, non-root USER, EXPOSE 8083, a
   HEALTHCHECK on GET /health at 127.0.0.1:$HEALTH_PORT (ENV, 8083) with no
   curl in the image, ENTRYPOINT kconnectd, CMD run
   /etc/kconnectd/worker.properties, and the `kconnectd --version` labels
   (filled in by scripts/container-test, which also runs the image).
2. Every package either stage installs exists in Debian 12 (`apt-cache show`).
   Skipped (exit 77) with a message when this host is not Debian 12 or apt has
   no package lists (run `apt-get update`; scripts/setup does).
3. If KCONNECTD_BINARY exists: every shared library it needs (ldd) comes
   from a runtime-stage package, one of their dependencies, or the base image.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_common import SKIP, Checker, read  # noqa: E402


def instructions(text):
    """[(INSTRUCTION, args)] with line continuations joined and comments dropped."""
    out, buf = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and not buf:
            continue
        if stripped.startswith("#"):
            continue
        buf += " " + stripped
        if buf.endswith("\\"):
            buf = buf[:-1]
            continue
        if buf.strip():
            word, _, rest = buf.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
        buf = ""
    return out


def stages(instrs):
    result = []
    for ins, args in instrs:
        if ins == "FROM":
            m = re.match(r"(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", args, re.I)
            result.append({"image": m.group(1), "name": m.group(2), "instrs": []})
        elif result:
            result[-1]["instrs"].append((ins, args))
    return result


def apt_packages(stage):
    pkgs = []
    for ins, args in stage["instrs"]:
        if ins != "RUN":
            continue
        for cmd in re.split(r"&&|;", args):
            words = shlex.split(cmd)
            if "apt-get" in words and "install" in words:
                pkgs += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return pkgs


def setup_packages(root):
    text = read(root, "scripts/setup")
    m = re.search(r"PACKAGES=\((.*?)\n\)", text, re.S)
    words = []
    for line in m.group(1).splitlines():
        words += line.split("#")[0].split()
    return set(words)


def apt_lists_present():
    lists = "/var/lib/apt/lists"
    return os.path.isdir(lists) and any("_Packages" in f for f in os.listdir(lists))


def is_debian12():
    try:
        text = open("/etc/os-release", encoding="utf-8").read()
    except OSError:
        return False
    return 'ID=debian' in text and 'VERSION_ID="12"' in text


def depends_closure(pkgs):
    """Every package in the Depends/PreDepends closure of `pkgs` (apt-cache)."""
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *pkgs],
                       capture_output=True, text=True)
    names = set()
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        if ":" in line and line.split(":")[0].strip() in ("Depends", "PreDepends"):
            line = line.split(":", 1)[1].strip()
        names.add(line.strip("<>|").split(":")[0])
    return names


def lib_packages(paths):
    """{library path: Debian package} with one `dpkg -S` call. Paths compare
    with /usr/lib folded onto /lib (merged /usr), for the path ldd printed and
    for its resolved target, so SONAME symlinks do not matter."""
    def norm(p):
        return p[len("/usr"):] if p.startswith("/usr/lib/") else p

    wanted = {p: {norm(p), norm(os.path.realpath(p))} for p in paths}
    patterns = sorted({"*/" + os.path.basename(n) for ns in wanted.values() for n in ns})
    r = subprocess.run(["dpkg", "-S", *patterns], capture_output=True, text=True)
    owner = {}
    for line in r.stdout.splitlines():
        pkgs, _, path = line.rpartition(": ")
        owner.setdefault(norm(path.strip()), pkgs.split(", ")[0].split(":")[0])
    return {p: next((owner[n] for n in sorted(ns) if n in owner), None) for p, ns in wanted.items()}


def main():
    root = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else ""
    c = Checker("Dockerfile")
    st = stages(instructions(read(root, "Dockerfile")))
    if not c.check(len(st) >= 2, "a multi-stage Dockerfile (build + runtime)"):
        c.finish()
    build, runtime = st[0], st[-1]
    c.check(build["image"] == "debian:bookworm", "build stage FROM debian:bookworm")
    c.check(runtime["image"] == "debian:bookworm-slim", "runtime stage FROM debian:bookworm-slim")

    build_pkgs, runtime_pkgs = apt_packages(build), apt_packages(runtime)
    wanted_build = {"cmake", "ninja-build", "g++", "pkg-config", "librdkafka-dev", "libboost-dev",
                    "libboost-system-dev", "libspdlog-dev", "nlohmann-json3-dev", "libcli11-dev",
                    "catch2", "libbenchmark-dev"}
    c.check(wanted_build <= set(build_pkgs), f"build stage installs {sorted(wanted_build - set(build_pkgs))}")
    setup = setup_packages(root)
    c.check(set(build_pkgs) - {"g++"} <= setup,
            f"build-stage packages are build deps of scripts/setup: extra {sorted(set(build_pkgs) - setup - {'g++'})}")
    c.check(not any(p.endswith("-dev") for p in runtime_pkgs), "no -dev packages in the runtime stage")
    for p in ("librdkafka1", "libspdlog1.10", "libfmt9", "ca-certificates"):
        c.check(p in runtime_pkgs, f"runtime stage installs {p}")
    c.check("curl" not in runtime_pkgs, "no curl in the runtime stage (the HEALTHCHECK uses bash's /dev/tcp)")

    build_runs = " ".join(a for i, a in build["instrs"] if i == "RUN")
    c.check("-DCMAKE_BUILD_TYPE=Release" in build_runs, "build stage configures Release")
    c.check("-DKC_BENCH=OFF" in build_runs, "build stage configures -DKC_BENCH=OFF")
    c.check(re.search(r"install\s[^&]*-s\s[^&]*kconnectd", build_runs) is not None,
            "build stage installs the binary stripped (install -s)")

    last = {}
    for ins, args in runtime["instrs"]:
        last[ins] = args
    user = last.get("USER", "root").split(":")[0]
    c.check(user not in ("", "root", "0"), f"runtime runs as a non-root USER (got {user!r})")
    c.check("8083" in last.get("EXPOSE", "").split(), "EXPOSE 8083")
    hc = last.get("HEALTHCHECK", "")
    c.check("/dev/tcp/127.0.0.1/${HEALTH_PORT}" in hc and "GET /health" in hc and "200" in hc,
            "HEALTHCHECK wants 200 from GET /health on 127.0.0.1:$HEALTH_PORT")
    envs = " ".join(a for i, a in runtime["instrs"] if i == "ENV")
    c.check(re.search(r"\bHEALTH_PORT=8083\b", envs) is not None, "ENV HEALTH_PORT=8083 (the default listener)")
    labels = " ".join(a for i, a in runtime["instrs"] if i == "LABEL")
    for key, arg in (("org.opencontainers.image.version", "KC_VERSION"), ("io.kconnectd.version", "KC_VERSION_TEXT")):
        c.check(f'{key}="${{{arg}}}"' in labels, f"LABEL {key} from build arg {arg} (`kconnectd --version`)")
    ep = last.get("ENTRYPOINT", "")
    c.check(re.search(r'"(/usr/bin/)?kconnectd"', ep) is not None, f"ENTRYPOINT kconnectd (got {ep})")
    c.check(re.fullmatch(r'\[\s*"run"\s*,\s*"/etc/kconnectd/worker.properties"\s*\]', last.get("CMD", "")) is not None,
            "CMD [\"run\", \"/etc/kconnectd/worker.properties\"]")
    copies = " ".join(a for i, a in runtime["instrs"] if i == "COPY")
    c.check("/etc/kconnectd/worker.properties" in copies, "a default /etc/kconnectd/worker.properties is copied in")

    ignore = [ln.strip() for ln in read(root, ".dockerignore").splitlines()]
    for pat in (".git", "build*/"):
        c.check(pat in ignore, f".dockerignore excludes {pat}")
    c.check("!deploy/worker.properties" in ignore or not any(p.startswith("deploy") for p in ignore),
            ".dockerignore keeps deploy/worker.properties (the image copies it)")

    # Packages exist in Debian 12.
    why_not = None
    if not shutil.which("apt-cache"):
        why_not = "apt-cache not found"
    elif not is_debian12():
        why_not = "this host is not Debian 12, so its apt lists say nothing about bookworm"
    elif not apt_lists_present():
        why_not = "apt has no package lists here (run `apt-get update`; scripts/setup does)"
    if why_not:
        for f in c.failures:
            print(f"FAIL: {f}")
        if c.failures:
            sys.exit(1)
        print(f"SKIP: {why_not}; {c.passed} structure checks passed, package existence not checked")
        sys.exit(SKIP)
    all_pkgs = sorted(set(build_pkgs) | set(runtime_pkgs))
    r = subprocess.run(["apt-cache", "show", "--no-all-versions", *all_pkgs], capture_output=True, text=True)
    found = set(re.findall(r"^Package: (\S+)$", r.stdout, re.M))
    for p in all_pkgs:
        c.check(p in found, f"Debian 12 has package {p}")

    # The built binary's libraries are all provided in the runtime stage.
    if binary and os.path.isfile(binary) and shutil.which("ldd") and shutil.which("dpkg"):
        # The runtime packages, their dependencies, and what bookworm-slim has.
        provided = depends_closure([*runtime_pkgs, "apt", "base-files", "libc6", "bash"])
        r = subprocess.run(["ldd", binary], capture_output=True, text=True)
        libs = dict(re.findall(r"^\s*(\S+) => (/\S+) \(", r.stdout, re.M))
        c.check(bool(libs) and "not found" not in r.stdout, f"ldd {binary} resolves its libraries")
        # Sanitizer runtimes come from a KC_SANITIZE build; the image has none.
        libs = {k: v for k, v in libs.items() if not re.match(r"lib(a|ub|t|l|hwa)san\.so", k)}
        owners = lib_packages(list(libs.values()))
        for soname, path in sorted(libs.items()):
            pkg = owners[path]
            c.check(pkg is not None and pkg in provided,
                    f"{soname} (from {pkg}) is installed by the runtime stage or the base image")
    else:
        print(f"note: built binary {binary or '(none given)'} not found; shared-library coverage not checked")
    c.finish()


if __name__ == "__main__":
    main()
