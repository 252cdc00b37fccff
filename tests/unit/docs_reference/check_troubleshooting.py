#!/usr/bin/env python3
"""docs/troubleshooting.md must explain every message the code can end a
worker or a task with. The messages are found in the sources by their
markers (the call every such message goes through):

- fatal startup lines: the `"kconnectd run: ...` literals of cmd/kconnectd;
- why the worker could not start: `Error{"<what>", ...}` in
  worker/herder/startup.cpp (after "cannot start the worker: ");
- the broker check's causes (`cannot use the Kafka cluster (<cause>)`), the
  names broker_check_cause_name() returns in
  common/broker_classify/broker_classify.cpp (or worker/storage/broker_check.cpp);
- fatal group errors: the error codes whose action is Fatal in
  protocol/kafka/errors.cpp (after "group membership failed: ");
- configuration errors, by kind: `bad_value(...)` and `errors.push_back(...)`
  in config/worker_config.cpp;
- FAILED connector and task reasons: `ConnectError(...)`,
  `ToleranceExceeded(...)`, `early_fail(Error{...})`, `trace_of(...)`, the
  `failure = ...` assignments and the message builders (`*_text()`,
  `*_message()`) in worker/runtime, and the `Error{...}` and message
  builders of worker/connectors/connector.cpp (tasks.max).

For each message the longest literal fragment of the expression (at least
8 characters) must occur in the page, whitespace-normalised. A message that
is all variables (a lower layer's text passed on) has no fragment and is
covered by the page's section on its source.

Usage: check_troubleshooting.py SOURCE_DIR [--list]
"""
import pathlib
import re
import sys

MIN_FRAGMENT = 8
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def literal_runs(expr):
    """The string literals of a C++ expression, adjacent literals joined."""
    runs, last_end = [], None
    for m in LITERAL.finditer(expr):
        text = m.group(1).replace('\\"', '"').replace("\\n", " ").replace("\\t", " ")
        between = expr[last_end:m.start()] if last_end is not None else None
        if between is not None and between.strip() == "":
            runs[-1] += text
        else:
            runs.append(text)
        last_end = m.end()
    return runs


def fragment(expr):
    """The longest literal run, trimmed of quoting punctuation; None if short."""
    runs = [re.sub(r" \((expected|got)\b.*$", "", r).strip(" '(:,.)\"") for r in literal_runs(expr)]
    runs = [r for r in runs if len(r) >= MIN_FRAGMENT]
    return max(runs, key=len) if runs else None


def statements(text, start_pattern):
    """Each expression from a match of start_pattern to its balanced ')' or '}'."""
    out = []
    for m in re.finditer(start_pattern, text):
        i, depth = m.end(), 1
        in_str = False
        while i < len(text) and depth > 0:
            c = text[i]
            if in_str:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c in "({":
                depth += 1
            elif c in ")}":
                depth -= 1
            i += 1
        out.append(text[m.end():i - 1])
    return out


def message_functions(text):
    """What functions named *_text / *_message (message builders) return."""
    out = []
    for body in statements(text, r"std::string \w+_(?:text|message)\([^)]*\)\s*\{"):
        out += [m.group(1) for m in re.finditer(r"\breturn ([^;]+);", body)]
    return out


def collect(src):
    found = []  # (source, fragment)

    def add(path, exprs):
        for e in exprs:
            f = fragment(e)
            if f:
                found.append((str(path.relative_to(src)), f))

    for p in sorted((src / "cmd/kconnectd").glob("*.cpp")):
        for m in re.finditer(r'"kconnectd run: ((?:[^"\\\n]|\\.)*)"', p.read_text()):
            f = m.group(1).strip(" '(:,.")
            if f:
                found.append((str(p.relative_to(src)), f))
    startup = src / "worker/herder/startup.cpp"
    for m in re.finditer(r'Error\{"([^"]+)"', startup.read_text()):
        found.append((str(startup.relative_to(src)), m.group(1)))
    # The broker check's cause names: the classifier's file (common/ since
    # the mirror connector shares it), or broker_check.cpp before that.
    for check in (src / "common/broker_classify/broker_classify.cpp", src / "worker/storage/broker_check.cpp"):
        if check.exists():
            for m in re.finditer(r'case BrokerCheckCause::(\w+): return "([a-z-]+)";', check.read_text()):
                if m.group(1) != "Ok":
                    found.append((str(check.relative_to(src)), m.group(2)))
    errors = src / "protocol/kafka/errors.cpp"
    for m in re.finditer(r'\{C::(\w+), "\w+", (?:true|false), A::Fatal\}', errors.read_text()):
        found.append((str(errors.relative_to(src)), m.group(1)))
    wc = src / "config/worker_config.cpp"
    text = wc.read_text()
    add(wc, statements(text, r"\bbad_value\(def, raw, "))
    add(wc, statements(text, r"\berrors\.(?:push_back|emplace_back)\("))
    for p in sorted((src / "worker/runtime").glob("*.cpp")) + [src / "worker/runtime/worker_internal.h"]:
        text = p.read_text()
        add(p, statements(text, r"\bConnectError\("))
        add(p, statements(text, r"\bToleranceExceeded\("))
        add(p, statements(text, r"\bearly_fail\(Error\{"))
        for m in re.finditer(r"\bfailure_? = ([^;]+);", text):
            add(p, [m.group(1)])
        add(p, statements(text, r"\btrace_of\("))
        add(p, message_functions(text))
    connector = src / "worker/connectors/connector.cpp"
    text = connector.read_text()
    add(connector, statements(text, r"\bError\{"))
    add(connector, message_functions(text))
    return found


def normalise(s):
    return re.sub(r"\s+", " ", s)


def main():
    src = pathlib.Path(sys.argv[1]).resolve()
    found = collect(src)
    if "--list" in sys.argv:
        for where, f in found:
            print(f"{where}: {f}")
        return 0
    page_path = src / "docs/troubleshooting.md"
    if not page_path.exists():
        print("docs/troubleshooting.md is missing")
        return 1
    page = normalise(page_path.read_text().replace("`", ""))
    missing = [(w, f) for w, f in found if normalise(f) not in page]
    if len(found) < 40:
        print(f"only {len(found)} messages found in the sources: the markers moved, fix this script")
        return 1
    for where, f in missing:
        print(f"docs/troubleshooting.md lacks a message {where} can produce: {f!r}")
    if missing:
        print(f"{len(missing)} of {len(found)} messages are not explained: add each (cause and fix) to "
              "docs/troubleshooting.md")
        return 1
    print(f"docs/troubleshooting.md explains all {len(found)} messages found in the sources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
