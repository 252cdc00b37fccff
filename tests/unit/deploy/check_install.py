#!/usr/bin/env python3
"""`cmake --install` places a stripped kconnectd and its separate debug file
(issue 27 item 3).

usage: check_install.py CMAKE BUILD_DIR BUILT_KCONNECTD

Installs the build into a temporary prefix and checks:
  - bin/kconnectd has no .debug_info and no .symtab, and runs (`--version`
    prints what the build tree's binary prints);
  - lib/debug/bin/kconnectd.debug exists and holds the debug info (when the
    build has any) and the symbol table;
  - the binary's .gnu_debuglink names kconnectd.debug with that file's CRC-32,
    and the binary, the debug file and the build tree's binary carry one GNU
    build-id, whose lib/debug/.build-id/NN/REST.debug link leads to the
    debug file;
  - share/bash-completion/completions/kconnectd is what the installed binary
    prints for `completion bash`;
  - the plugin ABI headers are in include/kconnectd.
Prints the sizes of the build tree's binary, the stripped one and the debug
file. Exit 77 (skipped) when readelf is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deploy_common import Checker  # noqa: E402


def readelf(*args):
    return subprocess.run(["readelf", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout


def sections(path):
    """Section names of the ELF file at `path`."""
    return set(re.findall(r"\]\s+(\.\S+)", readelf("-S", "--wide", path)))


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", readelf("-n", path))
    return m.group(1) if m else None


def debuglink(path):
    """(file name, CRC-32) stored in `path`'s .gnu_debuglink, or None."""
    dump = readelf("-x", ".gnu_debuglink", path)
    data = b""
    for line in dump.splitlines():
        m = re.match(r"\s+0x[0-9a-f]+ ((?:[0-9a-f]{2,8} ){1,4})", line + " ")
        if m:
            data += bytes.fromhex(m.group(1).replace(" ", ""))
    if b"\0" not in data or len(data) < 8:
        return None
    name = data[:data.index(b"\0")].decode()
    return name, int.from_bytes(data[-4:], "little")


def crc32(path):
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    return p.returncode, p.stdout


def main():
    cmake, build, built = sys.argv[1], sys.argv[2], sys.argv[3]
    if not shutil.which("readelf"):
        print("SKIP: readelf not found (binutils)")
        sys.exit(77)
    c = Checker("install")
    prefix = tempfile.mkdtemp(prefix="kc-install-")
    try:
        rc, out = run([cmake, "--install", build, "--prefix", prefix])
        print(out)
        if not c.check(rc == 0, f"cmake --install exited {rc}"):
            c.finish()
        binary = os.path.join(prefix, "bin", "kconnectd")
        dbg = os.path.join(prefix, "lib", "debug", "bin", "kconnectd.debug")
        if not c.check(os.path.isfile(binary), "bin/kconnectd installed"):
            c.finish()
        secs = sections(binary)
        c.check(".debug_info" not in secs, f"installed binary has no .debug_info (sections: {sorted(secs)})")
        c.check(".symtab" not in secs, "installed binary has no .symtab (stripped)")
        built_secs = sections(built)
        if c.check(os.path.isfile(dbg), "lib/debug/bin/kconnectd.debug installed"):
            dsecs = sections(dbg)
            if ".debug_info" in built_secs:
                c.check(".debug_info" in dsecs, "the debug file holds .debug_info")
            c.check(".symtab" in dsecs, "the debug file holds the symbol table")
            link = debuglink(binary)
            c.check(link is not None and link[0] == "kconnectd.debug",
                    f".gnu_debuglink names kconnectd.debug (got {link})")
            if link:
                c.check(link[1] == crc32(dbg), f".gnu_debuglink CRC {link[1]:#x} is the debug file's {crc32(dbg):#x}")
            ids = {p: build_id(p) for p in (built, binary, dbg)}
            if ids[built]:
                c.check(len(set(ids.values())) == 1, f"one build-id in the build's binary, the stripped one and "
                                                      f"the debug file: {ids}")
                link_path = os.path.join(prefix, "lib", "debug", ".build-id", ids[built][:2], ids[built][2:] + ".debug")
                c.check(os.path.islink(link_path) and os.path.samefile(link_path, dbg),
                        f"{os.path.relpath(link_path, prefix)} leads to the debug file")
            print(f"sizes: build tree binary {os.path.getsize(built)} B, installed stripped binary "
                  f"{os.path.getsize(binary)} B, debug file {os.path.getsize(dbg)} B")
        rc, installed_version = run([binary, "--version"])
        _, built_version = run([built, "--version"])
        c.check(rc == 0 and installed_version == built_version,
                f"the stripped binary runs: --version exit {rc}, {installed_version!r} vs {built_version!r}")
        comp = os.path.join(prefix, "share", "bash-completion", "completions", "kconnectd")
        if c.check(os.path.isfile(comp), "share/bash-completion/completions/kconnectd installed"):
            rc, script = run([binary, "completion", "bash"])
            with open(comp) as f:
                c.check(rc == 0 and f.read() == script, "the installed completion is `kconnectd completion bash`")
        for h in ("plugin.h", "plugin.hpp"):
            c.check(os.path.isfile(os.path.join(prefix, "include", "kconnectd", h)), f"include/kconnectd/{h} installed")
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
    c.finish()


if __name__ == "__main__":
    main()
