#!/usr/bin/env python3
"""Runs the walkthrough of one documentation page, or checks the docs' links.

A walkthrough is every fenced block whose info string is `sh walkthrough`,
in page order, joined into one script and run by `bash -e` in a fresh
temporary directory (so variables and background jobs carry from block to
block, and the first failing command fails the test). The script sees:

  PATH      the built kconnectd's directory first
  KC_PORT   a free TCP port for the worker's REST listener
  KC_PORT2  another free port (a second worker, when a page has one)

A page may name what it needs beyond bash, curl and kconnectd in an HTML
comment, `<!-- walkthrough-requires: kcat /usr/lib/postgresql/15/bin/initdb -->`
(commands on PATH or absolute paths); when one is missing the run exits 77,
which ctest reports as skipped (SKIP_RETURN_CODE). Whatever the script
leaves running is killed with its process group at the end.

Usage:
  run_walkthrough.py walk KCONNECTD PAGE.md [--timeout S]
  run_walkthrough.py links REPO_ROOT
Exit: 0 passed, 1 failed, 77 skipped, 2 usage.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
BLOCK = re.compile(r"^```sh walkthrough[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
REQUIRES = re.compile(r"<!--\s*walkthrough-requires:(.*?)-->", re.S)
# Markdown inline links and images: [text](target) / ![alt](target "title").
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def extract(page_text):
    """The walkthrough blocks of a page, in order (empty list: none)."""
    return [m.group(1) for m in BLOCK.finditer(page_text)]


def missing_requirements(page_text):
    out = []
    for m in REQUIRES.finditer(page_text):
        for req in m.group(1).split():
            found = os.access(req, os.X_OK) if os.path.isabs(req) else shutil.which(req)
            if not found:
                out.append(req)
    return out


def walk(kconnectd, page, timeout):
    text = open(page, encoding="utf-8").read()
    blocks = extract(text)
    if not blocks:
        print(f"FAIL: {page} has no ```sh walkthrough block")
        return 1
    kconnectd = os.path.abspath(kconnectd)
    if not os.access(kconnectd, os.X_OK):
        print(f"FAIL: {kconnectd} is not an executable")
        return 1
    missing = missing_requirements(text)
    if missing:
        print(f"SKIP: {page} needs {', '.join(missing)}")
        return SKIP
    work = tempfile.mkdtemp(prefix="kc-walk-")
    script = os.path.join(work, "walkthrough.sh")
    with open(script, "w") as f:
        for i, b in enumerate(blocks, 1):
            f.write(f"# ---- block {i} of {os.path.basename(page)}\n{b}\n")
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(kconnectd) + os.pathsep + env.get("PATH", "")
    p1 = free_port()
    p2 = free_port()
    while p2 == p1:
        p2 = free_port()
    env["KC_PORT"], env["KC_PORT2"] = str(p1), str(p2)
    print(f"running {len(blocks)} block(s) of {page} in {work} (KC_PORT={p1}, KC_PORT2={p2})", flush=True)
    start = time.monotonic()
    # -x echoes each command, so a failure shows which line it was.
    proc = subprocess.Popen(["bash", "-e", "-x", script], cwd=work, env=env, start_new_session=True)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL: the walkthrough ran longer than {timeout} s")
        rc = -1
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    took = time.monotonic() - start
    if rc != 0:
        print(f"FAIL: {page}: exit {rc} after {took:.1f} s (files kept in {work})")
        return 1
    print(f"PASS: {page} in {took:.1f} s")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def doc_pages(root):
    """README.md and every .md under docs/, as paths relative to root."""
    pages = ["README.md"]
    for d, _, files in os.walk(os.path.join(root, "docs")):
        pages += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".md")]
    return sorted(pages)


def pending(root):
    """Pages another branch writes (tests/docs/pending-pages.txt): links to them may dangle until it lands."""
    path = os.path.join(root, "tests", "docs", "pending-pages.txt")
    if not os.path.exists(path):
        return set()
    lines = (l.split("#", 1)[0].strip() for l in open(path, encoding="utf-8"))
    return {l for l in lines if l}


def anchors(path):
    """GitHub's heading anchors of a Markdown file: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"^```.*?^```", "", open(path, encoding="utf-8").read(), flags=re.S | re.M)
    out = set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        base, n = slug, 1
        while slug in out:
            slug = f"{base}-{n}"
            n += 1
        out.add(slug)
    return out


def links(root):
    """Every relative link of README.md and docs/ resolves (file, and heading anchor in a .md file);
    README.md and docs/README.md link every docs page."""
    errors = []
    allowed = pending(root)
    targets_of = {}
    for page in doc_pages(root):
        text = open(os.path.join(root, page), encoding="utf-8").read()
        # Links inside fenced code are examples, not links.
        text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        targets = set()
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            if target.startswith("#"):
                if target[1:] not in anchors(os.path.join(root, page)):
                    errors.append(f"{page}: link {target}: no such heading on the page")
                continue
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), path))
            targets.add(resolved)
            if resolved.startswith(".."):
                errors.append(f"{page}: link {target} leaves the repository")
            elif not os.path.exists(os.path.join(root, resolved)):
                if resolved not in allowed:
                    errors.append(f"{page}: link {target} -> {resolved} does not exist")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(os.path.join(root, resolved)):
                errors.append(f"{page}: link {target}: {resolved} has no heading #{anchor}")
        targets_of[page] = targets
    every = {p for p in doc_pages(root) if p.startswith("docs/")} | {p for p in allowed if p.startswith("docs/")}
    for index in ["README.md", "docs/README.md"]:
        unlinked = sorted(every - targets_of.get(index, set()) - {index})
        for p in unlinked:
            errors.append(f"{index} does not link {p}")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"PASS: {len(targets_of)} pages, every relative link and anchor resolves, both indexes link every docs page")
    return 1 if errors else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "walk":
        timeout = 60.0
        if len(argv) == 6 and argv[4] == "--timeout":
            timeout = float(argv[5])
        elif len(argv) != 4:
            print(__doc__)
            return 2
        return walk(argv[2], argv[3], timeout)
    if len(argv) == 3 and argv[1] == "links":
        return links(argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
