#!/usr/bin/env python3
"""`kconnectd validate` and `kconnectd run` load a worker config the same way (issue 23 item 5).

usage: test_validate_cli.py KCONNECTD

Runs the real binary on worker properties files in a temporary directory:
every mistake of a file is named at once (five different ones), CONNECT_*
overrides are honoured by validate exactly as by run, an unknown converter
class and a directory path are errors, a misspelling is a warning with a
suggestion (an error under --strict), `--resolve` names each config provider
placeholder that fails, and the documented exit statuses (0, 1, 2) hold.
`run` on an invalid file exits 1 with the same errors, before it starts
anything (no broker is needed).
"""
import os
import subprocess
import sys
import tempfile

FAILURES = []

GOOD = ("group.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
        "bootstrap.servers=127.0.0.1:1\nlisteners=http://127.0.0.1:0\n")


def check(cond, what, detail=""):
    if cond:
        print("ok:", what)
    else:
        print("FAIL:", what, detail)
        FAILURES.append(what)


def run(args, env_extra=None, timeout=30):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONNECT_")}
    env.update(env_extra or {})
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    kc = sys.argv[1]
    d = tempfile.mkdtemp(prefix="kc-validate-")

    # 0: a good file.
    good = write(d, "good.properties", GOOD)
    rc, out, err = run([kc, "validate", good])
    check(rc == 0 and out.strip() == "OK", "a good file: OK, exit 0", (rc, out, err))

    # 1: five different mistakes, all named in one run.
    five = write(d, "five.properties",
                 "config.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"  # group.id missing
                 "session.timeout.ms=ten\n"                  # wrong type
                 "rest.advertised.port=70000\n"              # out of range
                 "key.converter=NoSuchClass\n"               # unknown converter class
                 "offset.flush.interval.msec=1000\n"         # misspelled key
                 "producer.acks=all\n")                      # pass-through: never flagged
    rc, out, err = run([kc, "validate", five])
    check(rc == 1 and "OK" not in out, "five mistakes: exit 1, no OK", (rc, out, err))
    for what, needle in [("missing required", "error: group.id: missing required option"),
                         ("wrong type", "error: session.timeout.ms: 'ten' is not an integer"),
                         ("out of range", "error: rest.advertised.port: '70000' is out of range"),
                         ("unknown converter", "error: key.converter: 'NoSuchClass' is not a converter: "
                                               "Class NoSuchClass could not be found."),
                         ("misspelling with suggestion", "warning: unknown option 'offset.flush.interval.msec' is "
                                                         "ignored (did you mean 'offset.flush.interval.ms'?)"),
                         ("summary", "4 error(s), 1 warning(s) in " + five)]:
        check(needle in err, "five mistakes: " + what, err)
    check("producer.acks" not in err, "five mistakes: a producer. pass-through key is not flagged", err)

    # A conflict (heartbeat >= session timeout) is reported next to the others.
    conflict = write(d, "conflict.properties", GOOD + "heartbeat.interval.ms=10000\nsession.timeout.ms=10000\n"
                     "value.converter=Nope\n")
    rc, out, err = run([kc, "validate", conflict])
    check(rc == 1 and "error: heartbeat.interval.ms: '10000' must be lower than session.timeout.ms (10000)" in err
          and "error: value.converter: 'Nope' is not a converter" in err, "conflict and converter together", err)

    # --strict: a warning alone fails.
    typo = write(d, "typo.properties", GOOD + "sesion.timeout.ms=1\n")
    rc, out, err = run([kc, "validate", typo])
    check(rc == 0 and out.strip() == "OK" and "did you mean 'session.timeout.ms'?" in err,
          "a misspelling alone: a warning naming the key, exit 0", (rc, out, err))
    rc, out, err = run([kc, "validate", "--strict", typo])
    check(rc == 1 and "OK" not in out and "--strict" in err, "--strict: the misspelling fails, exit 1", (rc, err))

    # CONNECT_* overrides: validate honours them as run does.
    rc, out, err = run([kc, "validate", good], {"CONNECT_SESSION_TIMEOUT_MS": "abc"})
    check(rc == 1 and "session.timeout.ms: 'abc' is not an integer" in err and
          "note: session.timeout.ms set from the environment" in err, "an override breaks validate", (rc, err))
    missing_group = write(d, "nogroup.properties", GOOD.replace("group.id=g\n", ""))
    rc, out, err = run([kc, "validate", missing_group], {"CONNECT_GROUP_ID": "from-env"})
    check(rc == 0 and out.strip() == "OK", "an override completes the file for validate", (rc, err))
    rc, out, err = run([kc, "run", good], {"CONNECT_SESSION_TIMEOUT_MS": "abc"})
    check(rc == 1 and "kconnectd run: invalid configuration: session.timeout.ms: 'abc' is not an integer" in err,
          "the same override stops run with the same message", (rc, err))

    # run reports every error too, and refuses an unknown converter class
    # instead of starting.
    rc, out, err = run([kc, "run", five])
    check(rc == 1 and err.count("kconnectd run: invalid configuration: ") == 4 and "NoSuchClass" in err,
          "run: every error, exit 1 before starting", (rc, err))
    check("kconnectd run: warning: " in err and "did you mean" in err,
          "run: the misspelled key's warning too, so all five mistakes show", (rc, err))

    # A directory, a missing file.
    rc, out, err = run([kc, "validate", d])
    check(rc == 1 and f"error: {d}: is a directory, not a properties file" in err and "group.id" not in err,
          "a directory is named as such, not 'missing required option'", (rc, err))
    rc, out, err = run([kc, "validate", os.path.join(d, "absent.properties")])
    check(rc == 1 and "cannot open the properties file" in err, "a missing file", (rc, err))

    # --resolve: every placeholder that does not resolve, naming key and provider.
    secrets = write(d, "secrets.properties", "user=alice\n")
    outside = write(d, "outside.properties", "pw=x\n")
    allowed = os.path.join(d, "allowed")
    os.mkdir(allowed)
    os.symlink(outside, os.path.join(allowed, "link.properties"))
    resolve = write(d, "resolve.properties", GOOD +
                    "config.providers=file\n"
                    f"config.providers.file.class=FileConfigProvider\n"
                    f"config.providers.file.param.allowed.paths={d}/allowed,{secrets}\n"
                    f"sasl.username=${{file:{secrets}:user}}\n"
                    f"consumer.sasl.password=${{file:{allowed}/link.properties:pw}}\n"
                    f"producer.sasl.password=${{vault:secret/db:pw}}\n"
                    f"admin.sasl.password=${{file:{secrets}:nokey}}\n")
    rc, out, err = run([kc, "validate", resolve])
    check(rc == 0, "without --resolve placeholders are not looked up", (rc, err))
    rc, out, err = run([kc, "validate", "--resolve", resolve])
    check(rc == 1, "--resolve: exit 1", (rc, err))
    check(f"error: consumer.sasl.password: Failed to resolve config provider file path {allowed}/link.properties "
          f"in 'consumer.sasl.password': The path {allowed}/link.properties (resolved to {outside}) is not allowed "
          "to be accessed" in err,
          "--resolve: a symlink out of allowed.paths names the key, provider and path", err)
    check("error: producer.sasl.password: ${vault:secret/db:pw}: config provider vault is not configured "
          "(config.providers: file)" in err, "--resolve: an unconfigured provider", err)
    check(f"error: admin.sasl.password: ${{file:{secrets}:nokey}}: config provider file has no key nokey" in err,
          "--resolve: a missing key", err)
    check("sasl.username" not in err and "alice" not in err and "pw=x" not in err,
          "--resolve: a placeholder that resolves is not reported and no value is printed", err)

    # Exit status 2: usage errors.
    rc, out, err = run([kc, "validate"])
    check(rc == 2, "validate without FILE: exit 2", (rc, err))
    rc, out, err = run([kc, "no-such-subcommand"])
    check(rc == 2, "an unknown subcommand: exit 2", (rc, err))
    rc, out, err = run([kc, "validate", "--no-such-flag", good])
    check(rc == 2, "an unknown option: exit 2", (rc, err))
    rc, out, err = run([kc, "validate", "--help"])
    check(rc == 0 and "--resolve" in out and "--strict" in out, "validate --help: exit 0, lists the flags", (rc,))

    if FAILURES:
        print(len(FAILURES), "failure(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
