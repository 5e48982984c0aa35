#!/usr/bin/env python3
"""Measure how the checker agrees with a live server on the server's own tests.

Reads tests/unit/scripting.tcl and tests/unit/functions.tcl at a tag of the
server's git repository and extracts every script they run (`run_script`,
`run_script_ro`, `run_script_on_connection`, `r eval`, `r eval_ro`,
`r script load`, and the libraries of `r function load`, `get_function_code`
ones built the way the file's own helper proc builds them). Each runs on a
throwaway server after FLUSHALL, SCRIPT FLUSH and FUNCTION FLUSH: EVAL or
EVAL_RO with the call's keys and arguments (SCRIPT LOAD as EVAL with those
of an EVALSHA of its SHA1 in the file, else none), FUNCTION LOAD REPLACE
for a library, then FCALL of each function it registers with no keys or
arguments: a call refused for a reason that needs no data (a write under
no-writes, a read-only table, an undefined global, a call of nil, a loop
FUNCTION KILL ends) counts as the library's refusal. Then
redis-script-check checks it with exactly the call's number of keys and
arguments (EVAL_RO as --read-only; unless --strict, --allow-unused
--dynamic-keys: no server refuses those). Printed: a confusion table
(server refuses/runs x checker error/value finding/none) per file and in
total, and every disagreement. A value finding (`[name] …`) claims a
behaviour, not a refusal: a script the server runs may still have it. EVALSHA, FCALL, calls whose
script or numkeys tcl builds at run time, calls inside `if 0` or a
large-memory test are skipped and counted; an argument tcl builds is sent
as "x" (marked). Identical calls of a file run once. A script still
running after 2 s gets SCRIPT KILL (FUNCTION KILL), else SHUTDOWN NOSAVE
and a restart. The scripts are the server's code: they live in a
temporary directory only.

    python3 corpus/server_tests.py --server redis \\
        --git-dir REDIS_GIT_DIR --tag 7.0.15
    python3 corpus/server_tests.py --server valkey \\
        --git-dir VALKEY_GIT_DIR --tag 8.0.1
    python3 corpus/server_tests.py --release valkey-9.1 \\
        --git-dir VALKEY_GIT_DIR --tag 8.0.1

``--release`` runs the server of that release (installed by
``scripts/ensure-server``, as CI's are) and checks under it as the target;
``--server`` alone runs the family's default, Redis 7.0 or Valkey 8.1.

(or --tcl scripting.tcl functions.tcl). Exit status 0: the verdicts are a
reviewer's. Python 3, standard library only.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import hashlib
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ in the repository
import mutate  # noqa: E402  (corpus/mutate.py: the RESP client and the server)
from mutate import Connection, RedisError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHECKER = ROOT / "target" / "debug" / "redis-script-check"
FILES = ("scripting", "functions")
TIMEOUT = 2.0
TARGETS = {"redis": "redis-7.0", "valkey": "valkey-8.1"}
RELEASES = ("redis-7.0", "redis-8.0", "redis-8.6", "valkey-8.1", "valkey-9.1")


@dataclass
class Script:
    file: str
    line: int
    test: str
    kind: str  # eval, eval_ro, script load, function load
    source: str
    keys: list[str]
    args: list[str]
    placeholders: bool  # an argument was a tcl substitution, sent as "x"
    expects_error: str  # the enclosing catch/assert_error, or ""
    lines: list[int] = field(default_factory=list)
    server: str = ""  # runs / refuses
    server_error: str = ""
    checker: str = ""  # error / finding (a value finding only) / none
    checker_error: str = ""


# --- reading tcl -----------------------------------------------------------

class TclError(Exception):
    pass


@dataclass
class Word:
    kind: str  # brace, quote, bare
    start: int
    end: int
    expand: bool  # {*}
    subs: list[int]  # where each [command substitution] starts


def skip_brace(text: str, i: int, end: int) -> int:
    """The index past the `}` that closes the `{` at `i`."""
    depth = 0
    while i < end:
        if text[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i
    raise TclError("unclosed brace")


def parse(text: str, i: int, end: int, bracket: bool = False) -> tuple[list[list[Word]], int]:
    """The commands of the tcl script in text[i:end] (up to the `]` that
    closes a command substitution when `bracket`), and where it stopped."""
    commands, words = [], []
    while True:
        while i < end and (text[i] in " \t\r" or text.startswith("\\\n", i)):
            i += 2 if text[i] == "\\" else 1
        if i >= end:
            if bracket:
                raise TclError("unclosed bracket")
            break
        char = text[i]
        if bracket and char == "]":
            break
        if char in "\n;":
            if words:
                commands.append(words)
                words = []
            i += 1
        elif char == "#" and not words:
            while i < end and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
        else:
            word, i = parse_word(text, i, end, bracket)
            words.append(word)
    if words:
        commands.append(words)
    return commands, i


def parse_word(text: str, i: int, end: int, bracket: bool) -> tuple[Word, int]:
    expand = text.startswith("{*}", i) and i + 3 < end and not text[i + 3].isspace()
    i += 3 if expand else 0
    if text[i] == "{":
        close = skip_brace(text, i, end)
        return Word("brace", i, close, expand, []), close
    quoted = text[i] == '"'
    j, subs = i + quoted, []
    while j < end:
        char = text[j]
        if char == "\\":
            j += 2
        elif char == "[":
            subs.append(j + 1)
            j = parse(text, j + 1, end, True)[1] + 1
        elif quoted and char == '"':
            return Word("quote", i, j + 1, expand, subs), j + 1
        elif not quoted and (char in " \t\r\n;" or (bracket and char == "]")):
            break
        else:
            j += 1
    if quoted:
        raise TclError("unclosed quote")
    return Word("bare", i, j, expand, subs), j


ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def unescape(match: re.Match) -> str:
    code = match.group()[1:]
    if code[0] == "\n":
        return " "
    if code[0] in "xu" and len(code) > 1:
        return chr(int(code[1:], 16))
    return chr(int(code, 8)) if code[0] in "01234567" else ESCAPES.get(code, code)


def literal(text: str, word: Word) -> str | None:
    """The word's value, or None when tcl substitutes a variable or a
    command in it."""
    if word.kind == "brace":
        return re.sub(r"\\\n[ \t]*", " ", text[word.start + 1: word.end - 1])
    body = text[word.start + (word.kind == "quote"): word.end - (word.kind == "quote")]
    if word.subs or re.search(r"(?<!\\)(?:\\\\)*\$[\w:{(]", body):
        return None
    return re.sub(r"\\(\n[ \t]*|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|[0-7]{1,3}|.)", unescape, body, flags=re.S)


def function_templates(text: str) -> dict[str, tuple[str, list[int]]]:
    """The helper procs that build a library (`get_function_code LUA lib
    name {body}`): each one's format string, and which argument fills
    each `%s`."""
    templates = {}
    for words in parse(text, 0, len(text))[0]:
        if len(words) == 4 and literal(text, words[0]) == "proc":
            body = literal(text, words[3])
            found = re.search(r'return \[format ("(?:[^"\\]|\\.)*")((?: \[lindex \$args \d\])+)\]', body)
            if found:
                quoted = Word("quote", 0, len(found.group(1)), False, [])
                order = [int(n) for n in re.findall(r"\d+", found.group(2))]
                templates[literal(text, words[1])] = (literal(found.group(1), quoted), order)
    return templates


# --- extracting the calls --------------------------------------------------

CALLS = ("eval_ro", "eval", "evalsha_ro", "evalsha", "fcall_ro", "fcall", "script load", "function load")


class Extractor:
    """Walks one tcl file: every script call, with what encloses it."""

    def __init__(self, name: str, text: str):
        self.name, self.text = name, text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.templates = function_templates(text)
        self.scripts: list[Script] = []
        self.skipped: list[tuple[int, str]] = []
        self.assigned = collections.defaultdict(list)  # set NAME value
        self.by_variable: list[tuple[str, Script]] = []
        self.evalsha: dict[str, list] = {}  # sha1 -> the values of its first EVALSHA

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def run(self) -> list[Script]:
        self.walk(0, len(self.text), {"expects": "", "skip": "", "test": ""})
        for script in self.scripts:
            # SCRIPT LOAD takes the keys and arguments of an EVALSHA of its SHA1.
            found = self.evalsha.get(hashlib.sha1(script.source.encode()).hexdigest())
            if script.kind == "script load" and found and re.fullmatch(r"\d+", found[0] or ""):
                sent = ["x" if value is None else value for value in found[1:]]
                script.keys, script.args = sent[: int(found[0])], sent[int(found[0]):]
                script.placeholders = None in found[1:]
        for variable, script in self.by_variable:
            values = self.assigned.get(variable, [])
            if len(values) == 1 and values[0] is not None:
                script.source = values[0]
                self.scripts.append(script)
            else:
                self.skipped.append((script.line, f"script in ${variable}, not set once to a literal"))
        self.scripts.sort(key=lambda script: script.line)
        return self.scripts

    def walk(self, start: int, end: int, context: dict, bracket: bool = False):
        try:
            commands = parse(self.text, start, end, bracket)[0]
        except TclError as error:
            if re.search(r"\beval|run_script|function load|script load", self.text[start:end]):
                self.skipped.append((self.line(start), f"tcl body not parsed ({error})"))
            return
        for words in commands:
            self.command(words, context)

    def command(self, words: list[Word], context: dict):
        values = [literal(self.text, word) for word in words]
        head = values[0] or ""
        if head == "proc" or self.call(words, values, context):
            return
        if head == "set" and len(words) == 3:
            self.assigned[values[1]].append(values[2])
        inner = dict(context)
        if head == "catch" or head.startswith("assert_error"):
            inner["expects"] = head
        if head == "test" and len(words) > 1:
            inner["test"] = values[1] or self.text[words[1].start: words[1].end]
            if len(values) > 4 and "large-memory" in (values[4] or ""):
                inner["skip"] = "large-memory test"
        for index, word in enumerate(words):
            dead = head == "if" and index == 2 and values[1] == "0"
            here = {**inner, "skip": "inside `if 0`"} if dead else inner
            for start in word.subs:
                self.walk(start, len(self.text), here, bracket=True)
            if word.kind == "brace" and index > 0 and not (head == "set" and index == 2):
                self.walk(word.start + 1, word.end - 1, here)

    def call(self, words: list[Word], values: list, context: dict) -> bool:
        """Records the script call `words` is, if it is one."""
        head, first = values[0], 1
        if head in ("run_script", "run_script_ro"):
            kind = "eval_ro" if head.endswith("_ro") else "eval"
        elif head == "run_script_on_connection":
            kind, first = "eval", 2
        elif head == "r" or re.fullmatch(r"\$\w+", self.text[words[0].start: words[0].end]):
            if len(values) > 1 and re.fullmatch(r"-?\d+", values[1] or ""):
                first = 2  # `r -1 eval …`: another server of the test
            verb = " ".join((value or "").lower() for value in values[first: first + 2]) + " "
            kind = next((name for name in CALLS if verb.startswith(name + " ")), None)
            if kind is None:
                return False
            first += len(kind.split())
        else:
            return False
        line = self.line(words[0].start)
        rest, passed = words[first:], values[first:]
        if context["skip"]:
            return self.skip(line, context["skip"])
        if kind.startswith("evalsha") and passed and passed[0]:
            self.evalsha.setdefault(passed[0].lower(), passed[1:])
        if kind.startswith(("evalsha", "fcall")):
            return self.skip(line, f"{kind.split('_')[0]} (runs a script loaded elsewhere)")
        if any(word.expand for word in rest):
            return self.skip(line, "{*} expanded arguments")
        if kind == "function load":
            return self.library(line, rest, passed, context)
        if kind == "script load":
            passed = passed[:1] + ["0"]
        if len(passed) < 2 or not re.fullmatch(r"-?\d+", passed[1] or ""):
            return self.skip(line, "numkeys missing or built at run time")
        numkeys, values = int(passed[1]), passed[2:]
        if not 0 <= numkeys <= len(values):
            return self.skip(line, f"numkeys {numkeys} with {len(values)} values (tests the command)")
        sent = ["x" if value is None else value for value in values]
        script = Script(self.name, line, context["test"], kind, passed[0] or "", sent[:numkeys],
                        sent[numkeys:], None in values, context["expects"])
        body = self.text[rest[0].start: rest[0].end]
        if passed[0] is not None:
            self.scripts.append(script)
        elif re.fullmatch(r"\$\w+", body):
            self.by_variable.append((body[1:], script))
        else:
            return self.skip(line, "script built at run time (tcl substitution)")
        return True

    def library(self, line: int, rest: list[Word], values: list, context: dict) -> bool:
        if not rest or any((value or "").lower() != "replace" for value in values[:-1]):
            return self.skip(line, "FUNCTION LOAD with other options (tests the command)")
        source, code = values[-1], rest[-1]
        if source is None and code.kind == "bare" and code.subs == [code.start + 1]:
            commands = parse(self.text, code.subs[0], len(self.text), True)[0]
            parts = [literal(self.text, word) for word in commands[0]] if len(commands) == 1 else []
            if parts and parts[0] in self.templates and None not in parts:
                template, order = self.templates[parts[0]]
                filling = iter([parts[1 + n] if 1 + n < len(parts) else "" for n in order])
                source = re.sub(r"%[s%]", lambda m: next(filling) if m.group() == "%s" else "%", template)
        if source is None:
            return self.skip(line, "library built at run time (tcl substitution)")
        self.scripts.append(Script(self.name, line, context["test"], "function load", source, [], [],
                                   False, context["expects"]))
        return True

    def skip(self, line: int, reason: str) -> bool:
        self.skipped.append((line, reason))
        return True


def merge(scripts: list[Script]) -> list[Script]:
    """One script per identical call of a file; `lines` lists them all."""
    kept = {}
    for script in scripts:
        key = (script.file, script.kind, script.source, tuple(script.keys), tuple(script.args))
        kept.setdefault(key, script).lines.append(script.line)
    return list(kept.values())


# --- the live server -------------------------------------------------------

class Server(mutate.Server):
    """mutate.py's throwaway server (127.0.0.1, a free port, --save "",
    --appendonly no), with busy-reply-threshold 200 ms."""

    def start(self):
        super().start()
        Connection(self.port).command("CONFIG", "SET", "busy-reply-threshold", "200")

    def connect(self) -> Connection:
        try:
            return Connection(self.port, timeout=TIMEOUT)
        except OSError:
            self.restart()
            return Connection(self.port, timeout=TIMEOUT)

    def run(self, script: Script) -> tuple[str, str]:
        """`runs` or `refuses`, with the error."""
        connection = self.connect()
        try:
            for reset in (["FLUSHALL"], ["SCRIPT", "FLUSH"], ["FUNCTION", "FLUSH"]):
                connection.command(*reset)
            if script.kind == "function load":
                reply = connection.command("FUNCTION", "LOAD", "REPLACE", script.source)
                if not isinstance(reply, RedisError):
                    reply = self.call_functions(connection, reply)
            else:
                command = "EVAL_RO" if script.kind == "eval_ro" else "EVAL"
                reply = connection.command(command, script.source, len(script.keys), *script.keys, *script.args)
        except socket.timeout:
            return "refuses", self.kill(connection, script)
        except RecursionError:
            return "runs", ""  # a reply nested deeper than Python reads
        except OSError as error:
            self.restart()
            return "refuses", f"connection lost ({error}); server restarted"
        finally:
            connection.close()
        if self.process.poll() is not None:
            self.restart()
        if isinstance(reply, RedisError):
            return "refuses", str(reply)
        return "runs", ""

    def call_functions(self, connection: Connection, library):
        """FCALL each function of the loaded `library`; the first refusal
        that needs no data, else None."""
        listing = connection.command("FUNCTION", "LIST", "LIBRARYNAME", library)
        names = []
        for entry in listing if isinstance(listing, list) else []:
            fields = dict(zip(entry[::2], entry[1::2]))
            if fields.get(b"library_name") == library:
                names += [dict(zip(f[::2], f[1::2])).get(b"name") for f in fields.get(b"functions", [])]
        for name in names:
            reply = connection.command("FCALL", name, "0")
            if isinstance(reply, RedisError) and CALL_TIME.search(str(reply)):
                return RedisError(f"FCALL {name.decode()}: {reply}")
        return None

    def kill(self, connection: Connection, script: Script) -> str:
        """Ends a script still running: SCRIPT KILL (FUNCTION KILL), else
        SHUTDOWN NOSAVE and a restart."""
        kill, answer = "FUNCTION" if script.kind == "function load" else "SCRIPT", None
        try:
            other = Connection(self.port, timeout=TIMEOUT)
            answer = other.command(kill, "KILL")
            if not isinstance(answer, RedisError) or "NOTBUSY" in str(answer):
                return f"never ends: {kill} KILL ended it ({connection.reply()})"
            other.command("SHUTDOWN", "NOSAVE")
        except OSError:
            pass
        self.restart()
        return f"never ends: {kill} KILL answered {answer}; server shut down and restarted"


# --- the checker -----------------------------------------------------------

def check(checker: str, target: str, strict: bool, directory: Path, index: int, script: Script):
    """`error` or `none`, with the first error: `line:column message` (a
    value finding's message starts with its `[name]`)."""
    path = directory / f"{script.file}-{script.line}-{index}.lua"
    path.write_bytes(script.source.encode("utf-8", "surrogatepass"))
    command = [checker, "--format", "json", "--target", target]
    if not strict:
        command += ["--allow-unused", "--dynamic-keys"]
    if script.kind != "function load":
        command += ["--keys", str(len(script.keys)), "--args", str(len(script.args))]
    if script.kind == "eval_ro":
        command.append("--read-only")
    run = subprocess.run([*command, str(path)], capture_output=True, text=True, timeout=60, check=False)
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        return "error", f"checker failed: {run.stderr.strip()[:200]}"
    errors = [d for d in report["diagnostics"] if d["severity"] == "error"]
    # A value finding has a name (`finding`); a refusal has none.
    refusals = [d for d in errors if not d.get("finding")]
    if not errors:
        return "none", ""
    first = (refusals or errors)[0]
    named = f"[{first['finding']}] " if first.get("finding") else ""
    return "error" if refusals else "finding", f"{first['line']}:{first['column']} {named}{first['message']}"


# --- the report ------------------------------------------------------------

STATIC = re.compile(
    r"not allowed|wrong number of arg|invalid|readonly table|unknown|nonexistent global|shebang|"
    r"compiling|unexpected|one argument|must be|please specify|not supported|DB index|"
    r"multiple times|attempt to call|never ends", re.IGNORECASE)
DATA = re.compile(r"WRONGTYPE|NOGROUP|NOREPLICAS|READONLY You|^OOM|not an integer|attempt to (index|compare|perform)")
CALL_TIME = re.compile(r"not allowed|readonly table|nonexistent global|attempt to call|can only be called")
ON_PURPOSE = re.compile(r"\berror\s*\(|error_reply|\berr\s*=|\bassert\s*\(")


def decidable(script: Script) -> str:
    """A heuristic: whether the server's error could be known without data."""
    error = script.server_error
    if DATA.search(error) or (ON_PURPOSE.search(script.source) and not STATIC.search(error)):
        return "data/intent"
    return "static" if STATIC.search(error) else "unclassified"


def table(title: str, scripts: list[Script]) -> str:
    count = collections.Counter((s.server, s.checker) for s in scripts)
    rows = [f"{title}: {len(scripts)} scripts",
            f"  {'':16}{'checker error':>14}{'value finding':>15}{'checker none':>14}"]
    for server in ("refuses", "runs"):
        rows.append(f"  server {server:8}{count[(server, 'error')]:14}{count[(server, 'finding')]:15}"
                    f"{count[(server, 'none')]:14}")
    return "\n".join(rows)


def printable(text: str) -> str:
    return re.sub(r"[\x00-\x08\x0b-\x1f]", lambda m: repr(m.group())[1:-1], text)


def describe(script: Script) -> str:
    code = printable(script.source.strip("\n")).split("\n")
    shown = "\n".join(f"      | {line.rstrip()}" for line in code[:3])
    more = f"\n      | … ({len(code) - 3} more lines)" if len(code) > 3 else ""
    where = ",".join(str(line) for line in script.lines)
    keys = f"keys={script.keys} args={script.args}" + (" (x = tcl substitution)" if script.placeholders else "")
    expects = f"; expects error ({script.expects_error})" if script.expects_error else ""
    return (f"  {script.file}.tcl:{where} {script.kind} {keys}{expects}\n"
            f"    test: {script.test}\n{shown}{more}\n"
            f"    server:  {printable(script.server_error) or 'runs'}\n"
            f"    checker: {printable(script.checker_error) or 'none'}")


def sources(options) -> dict[str, str]:
    if options.tcl:
        return {Path(path).stem: Path(path).read_text() for path in options.tcl
                if options.only in (None, Path(path).stem)}
    git_dir = options.git_dir
    tags = subprocess.run(["git", "--git-dir", git_dir, "tag"], capture_output=True, text=True,
                          check=True).stdout.split()
    if options.tag not in tags:
        near = [tag for tag in tags if tag.split(".")[0] == options.tag.split(".")[0]]
        raise SystemExit(f"no tag {options.tag} in {git_dir}; its tags of that major version: {' '.join(near)}")
    return {name: subprocess.run(["git", "--git-dir", git_dir, "show", f"{options.tag}:tests/unit/{name}.tcl"],
                                 capture_output=True, text=True, check=True).stdout
            for name in FILES if options.only in (None, name)}


def server_binary(release: str) -> str:
    """The server executable of `release`, installed by scripts/ensure-server."""
    directory = subprocess.run([str(ROOT / "scripts" / "ensure-server"), release], capture_output=True,
                               text=True, check=True).stdout.strip()
    return str(Path(directory) / f"{release.split('-')[0]}-server")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", choices=("redis", "valkey"), default="redis")
    parser.add_argument("--release", choices=RELEASES,
                        help="the release to run (its family wins over --server; default: redis-7.0 or valkey-8.1)")
    parser.add_argument("--git-dir", help="the server's bare git repository")
    parser.add_argument("--tag", help="the tag to read the tests at (7.0.15 for redis, 8.1.1 for valkey)")
    parser.add_argument("--tcl", nargs="+", help="read these .tcl files instead (named scripting/functions)")
    parser.add_argument("--checker", default=str(CHECKER))
    parser.add_argument("--target", help="the checker's --target (default: the release run)")
    parser.add_argument("--only", choices=FILES)
    parser.add_argument("--strict", action="store_true",
                        help="do not pass --allow-unused --dynamic-keys to the checker")
    parser.add_argument("--verbose", action="store_true", help="list every script and the skipped calls")
    options = parser.parse_args()
    if options.release:
        options.server = options.release.split("-")[0]
    release = options.release or TARGETS[options.server]
    options.tag = options.tag or {"redis": "7.0.15", "valkey": "8.1.1"}[options.server]
    if not options.tcl and not options.git_dir:
        parser.error("give --git-dir (with --tag) or --tcl")
    target = options.target or release

    scripts, skipped = [], collections.Counter()
    for name, text in sources(options).items():
        extractor = Extractor(name, text)
        found = extractor.run()
        merged = merge(found)
        print(f"{name}.tcl: {len(found)} calls, {len(merged)} distinct; {len(extractor.skipped)} skipped")
        for line, reason in extractor.skipped:
            skipped[f"{name}.tcl: {reason}"] += 1
            if options.verbose:
                print(f"  skipped {name}.tcl:{line}: {reason}")
        scripts += merged
    for reason, count in sorted(skipped.items()):
        print(f"  {count:4} skipped: {reason}")

    server = Server(server_binary(release))
    try:
        with tempfile.TemporaryDirectory(prefix="server-tests-") as directory:
            for index, script in enumerate(scripts):
                script.server, script.server_error = server.run(script)
                script.checker, script.checker_error = check(
                    options.checker, target, options.strict, Path(directory), index, script)
                if options.verbose:
                    print(describe(script))
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)

    print(f"\nserver {options.server} ({server.binary}), checker --target {target}"
          f"{' --strict' if options.strict else ''}")
    for name in dict.fromkeys(script.file for script in scripts):
        print(table(f"{name}.tcl", [s for s in scripts if s.file == name]))
    print(table("total", scripts))
    missed = [s for s in scripts if s.server == "refuses" and s.checker == "none"]
    false = [s for s in scripts if s.server == "runs" and s.checker == "error"]
    print(f"\nserver refuses, checker none ({len(missed)}); heuristic class of the server's error:")
    for label in ("static", "data/intent", "unclassified"):
        group = [s for s in missed if decidable(s) == label]
        print(f"\n {label} ({len(group)}):")
        print("\n".join(describe(s) for s in group))
    print(f"\nserver runs, checker error ({len(false)}):")
    print("\n".join(describe(s) for s in false))
    behaviour = [s for s in scripts if s.server == "runs" and s.checker == "finding"]
    print(f"\nserver runs, value finding ({len(behaviour)}); each is a claim about what the script does:")
    print("\n".join(describe(s) for s in behaviour))
    return 0


if __name__ == "__main__":
    sys.exit(main())
