#!/usr/bin/env python3
"""Measure redis-script-check on bugs that projects shipped in their Lua
scripts and later fixed (corpus/shipped_bugs.json).

Each bug is a pair of published package versions: the last one whose
script has the bug and the first one with the fix, each pinned by sha256.
For every bug this program

1. downloads both archives with the registry's own client (npm, pip,
   cargo; corpus/fetch.py's `download`) into target/corpus/shipped/cache,
   checks their sha256, and writes each script as its loader sends it
   (bull/bullmq includes expanded by fetch.py's `expand`, bottleneck's
   files joined, a script kept in a string literal cut out of its source)
   to target/corpus/shipped/<bug>/pre.lua and post.lua;
2. runs the reproduction on a throwaway live server (standalone, or a
   one-node cluster for keys that hash to several slots): FLUSHALL, the
   setup commands, EVAL of the script with the bug's keys and arguments,
   then the commands that read what it left. The pre-fix script must show
   the misbehaviour written down (`pre_observed`) and fail the correct
   outcome (`expected`); the post-fix script must give the correct one;
3. runs the checker on both scripts with the keys and arguments the
   project's call passes, and prints per bug whether the pre-fix script is
   caught at one of the bug's lines (and by which code) and whether the
   post-fix script gets an error (a false error); then recall per class
   over the bugs decidable from the script alone, and the count of false
   errors.

    python3 corpus/shipped_bugs.py [--server PATH] [--checker PATH] [--only ID]
                                   [--target T|server] [--manifest FILE]

The server is --server, else $REDIS_SERVER_BIN, else valkey-server in
$VALKEY_BIN_DIR (as scripts/test sets them), else redis-server on PATH.
The checker is --checker, else `cargo run -q --release -p
redis-script-check`. Exit status 1 when a reproduction does not behave as
written, a post-fix script gets an error, or fewer decidable bugs than
--min-caught are caught (CI runs it on every server with the floor it
holds); 0 otherwise. Python 3, standard library only.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import io
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ in the repository
from fetch import ROOT, download, expand  # noqa: E402
from mutate import Connection, RedisError  # noqa: E402

OUT = ROOT / "target" / "corpus" / "shipped"
CLASSES = (
    "nil_false_through_elements_and_functions",
    "values_into_functions_and_includes",
    "decoded_payloads",
    "integer_reply_ranges",
    "numbers",
    "keys_as_non_keys",
    "size_and_loops",
    "logic_only",
)
DEFAULT_CHECKER_OPTIONS = ["--allow-unused", "--dynamic-keys"]
# The checker's codes for what a named target's release lacks or refuses:
# a `#!` line, a command, an option, a sandbox global. On a post-fix script
# checked for an older release than its project ran, such an error is the
# release's gap, said per case, not a false error.
TARGET_LACKS = {"RS002", "RS021", "RS025", "RS031"}


# --- the archives ----------------------------------------------------------

def archive(side: dict) -> Path:
    """The pinned archive of one side of a bug, downloaded once, verified."""
    cache = OUT / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / side["file"]
    if not path.exists():
        download({"project": side["package"], **side}, cache)
    if not path.exists():
        raise SystemExit(f"{side['package']} {side['version']}: the download did not produce {side['file']}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != side["sha256"]:
        raise SystemExit(f"{side['file']}: sha256 {digest}, shipped_bugs.json pins {side['sha256']}")
    return path


def archive_members(path: Path) -> dict[str, str]:
    data = path.read_bytes()
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            return {n: wheel.read(n).decode(errors="replace") for n in wheel.namelist() if not n.endswith("/")}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read().decode(errors="replace") for m in tar.getmembers() if m.isfile()}


def literal(source: str, anchor: str, quote: str) -> str:
    """The string literal of `source` that holds `anchor`, delimited by
    `quote` (a JavaScript template literal, a Python triple-quoted string):
    the script as the host program sends it."""
    if source.count(anchor) != 1:
        raise SystemExit(f"the anchor {anchor!r} is in {source.count(anchor)} places of the source, not one")
    at = source.index(anchor)
    start = source.rindex(quote, 0, at) + len(quote)
    end = source.index(quote, at)
    return source[start:end]


def script(side: dict) -> str:
    """One side's script, as the project's loader sends it."""
    files = archive_members(archive(side))
    if "assemble" in side:
        return "\n".join(files[part] for part in side["assemble"])
    if side.get("includes"):
        lua = {name: text for name, text in files.items() if name.endswith(".lua")}
        return expand(side["path"], lua, set())
    text = files[side["path"]]
    if "literal" in side:
        text = literal(text, side["literal"]["anchor"], side["literal"]["quote"])
    return text


# --- the live server ---------------------------------------------------------

def release_of(binary: str) -> tuple[str, tuple[int, ...]]:
    """The server family and version a binary says it is (`Redis server
    v=6.2.5 …`), read before starting it: Redis 6.x takes other options."""
    try:
        line = subprocess.run([binary, "--version"], capture_output=True, text=True,
                              check=False, timeout=30).stdout
    except OSError as error:
        raise SystemExit(f"{binary}: {error}")
    found = re.match(r"(Redis|Valkey) server v=(\d+)\.(\d+)\.(\d+)", line)
    if not found:
        raise SystemExit(f"{binary} --version: {line.strip()!r} names no release")
    return found.group(1), tuple(int(part) for part in found.groups()[1:])


def before_redis_7(family: str, version: tuple[int, ...]) -> bool:
    """Redis 6.x: no `busy-reply-threshold` (its name there is
    `lua-time-limit`), no `CLUSTER ADDSLOTSRANGE`, and none of what 7.0
    added to scripts (flags, `EVAL_RO`, Functions, newer commands)."""
    return family == "Redis" and version[0] < 7


def free_port(with_partner=None) -> int:
    """A loopback port free now; with `with_partner`, one whose port plus
    that offset is a port and free too.

    >>> 0 < free_port() < 65536
    True
    >>> port = free_port(with_partner=10000)
    >>> port + 10000 < 65536
    True
    """
    for _ in range(1000):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if with_partner is None:
            return port
        partner = port + with_partner
        if partner > 65535:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", partner))
            except OSError:
                continue
        return port
    raise SystemExit(f"no free loopback port whose port + {with_partner} is free too")


class Server:
    """A throwaway server on a free loopback port: standalone, or a cluster
    of one node that owns every slot (a command whose keys hash to several
    slots is refused the way a cluster refuses it)."""

    def __init__(self, binary: str, cluster: bool):
        self.family, self.version = release_of(binary)
        self.directory = tempfile.mkdtemp(prefix="shipped-")
        # A port found free may be taken before the server binds it: try
        # another one.
        for _ in range(10):
            if self.start(binary, cluster):
                break
        else:
            log = self.log_tail()
            shutil.rmtree(self.directory, ignore_errors=True)
            raise SystemExit(f"{binary} did not start; its last log lines:\n{log}")

    def start(self, binary: str, cluster: bool) -> bool:
        # Before Redis 7.0 a cluster node's bus listens on its port plus
        # 10000, which must be a port too, and free.
        implied_bus = cluster and before_redis_7(self.family, self.version)
        self.port = free_port(with_partner=10000 if implied_bus else None)
        # A script may run 5 s before the server answers others with BUSY.
        busy = "--lua-time-limit" if before_redis_7(self.family, self.version) else "--busy-reply-threshold"
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", self.directory, busy, "5000"]
        if cluster:
            command += ["--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{self.port}.conf"]
        with open(os.path.join(self.directory, "server.log"), "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        for _ in range(750):
            if self.process.poll() is not None:
                return self.give_up()
            try:
                Connection(self.port).close()
                break
            except OSError:
                time.sleep(0.02)
        else:
            return self.give_up()
        try:
            connection = Connection(self.port)
            # Another process may have taken the port: the server that
            # answers must be this one.
            info = connection.command("INFO", "server")
            ours = isinstance(info, bytes) and f"process_id:{self.process.pid}\r".encode() in info
            if not ours:
                connection.close()
                return self.give_up()
            if cluster:
                if before_redis_7(self.family, self.version):
                    connection.command("CLUSTER", "ADDSLOTS", *map(str, range(16384)))
                else:
                    connection.command("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
                for _ in range(250):
                    info = connection.command("CLUSTER", "INFO")
                    if isinstance(info, bytes) and b"cluster_state:ok" in info:
                        break
                    time.sleep(0.02)
            connection.close()
        except OSError:
            return self.give_up()
        return True

    def log_tail(self, lines: int = 20) -> str:
        """The last lines the server wrote, over every try."""
        try:
            with open(os.path.join(self.directory, "server.log"), errors="replace") as log:
                return "".join(log.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def give_up(self) -> bool:
        """Stops a server that did not start as this one, for another try."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        return False

    def stop(self):
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def plain(reply):
    """A reply as JSON-like data: an error is {"error": text}, a status
    reply {"status": text}."""
    if isinstance(reply, RedisError):
        return {"error": re.sub(r"[0-9a-f]{40}", "<sha1>", str(reply))}
    if isinstance(reply, tuple):
        return {"status": reply[1].decode()}
    if isinstance(reply, bytes):
        return reply.decode(errors="replace")
    if isinstance(reply, list):
        return [plain(element) for element in reply]
    return reply


def matches(value, matcher) -> bool:
    """Whether a reply matches what the bug's entry writes down: a value
    (equal), or {"error": part} (an error containing it), {"not_error":
    true}, {"any": true}, {"between": [low, high]}, {"len": n} (a list of
    n elements), {"not": matcher}, {"all": [matchers]}."""
    if isinstance(matcher, dict) and len(matcher) == 1:
        (kind, operand), = matcher.items()
        if kind == "error":
            return isinstance(value, dict) and "error" in value and operand in value["error"]
        if kind == "not_error":
            return not (isinstance(value, dict) and "error" in value)
        if kind == "any":
            return True
        if kind == "between":
            return isinstance(value, int) and operand[0] <= value <= operand[1]
        if kind == "len":
            return isinstance(value, list) and len(value) == operand
        if kind == "not":
            return not matches(value, operand)
        if kind == "all":
            return all(matches(value, each) for each in operand)
    return value == matcher


def msgpack(value) -> bytes:
    """MessagePack, as the projects' clients pack arguments (bullmq packs
    its argument arrays and options with msgpackr): JSON's values only."""
    if value is None:
        return b"\xc0"
    if value is True or value is False:
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        if 0 <= value < 128:
            return bytes([value])
        if -32 <= value < 0:
            return (value & 0xFF).to_bytes(1, "big")
        return b"\xd3" + value.to_bytes(8, "big", signed=True)
    if isinstance(value, float):
        return b"\xcb" + struct.pack(">d", value)
    if isinstance(value, str):
        data = value.encode()
        return (bytes([0xA0 | len(data)]) if len(data) < 32 else b"\xda" + len(data).to_bytes(2, "big")) + data
    if isinstance(value, list):
        return b"\xdc" + len(value).to_bytes(2, "big") + b"".join(msgpack(v) for v in value)
    if isinstance(value, dict):
        return b"\xde" + len(value).to_bytes(2, "big") + b"".join(msgpack(k) + msgpack(v) for k, v in value.items())
    raise SystemExit(f"cannot pack {value!r}")


def argument(value):
    """A key, argument or command word as the entry writes it: a string, or
    {"msgpack": value} for a packed one, {"json": value} for JSON text."""
    if isinstance(value, dict) and "msgpack" in value:
        return msgpack(value["msgpack"])
    if isinstance(value, dict) and "json" in value:
        return json.dumps(value["json"], separators=(",", ":"))
    return str(value)


class SetupRefused(Exception):
    """A setup command the server refused: the case cannot run there."""


def outcome(server: Server, text: str, repro: dict, side: str) -> dict:
    """FLUSHALL, the setup, the script's earlier calls (`before`), the call
    (repeated `calls` times: the reply of the last one), then the commands
    that read what it left."""
    connection = Connection(server.port, timeout=30)
    try:
        connection.command("FLUSHALL")
        connection.command("SCRIPT", "FLUSH")
        for command in repro.get("setup", []):
            reply = connection.command(*map(argument, command))
            if isinstance(reply, RedisError):
                raise SetupRefused(f"the setup's {command[0]} is refused: {reply}")
        # Earlier calls of the script itself (a limiter's first hits), then
        # the call under test, `calls` times.
        runs = [(run["keys"], run["args"]) for run in repro.get("before", [])]
        # A fix that changed the call itself (a key that becomes an argument)
        # gives each side the keys and arguments its own client passes.
        call = repro.get("sides", {}).get(side, repro)
        runs += [(call.get("keys", []), call.get("args", []))] * repro.get("calls", 1)
        for keys, args in runs:
            keys = [argument(key) for key in keys]
            reply = connection.command("EVAL", text, len(keys), *keys, *map(argument, args))
        after = [plain(connection.command(*map(argument, command))) for command in repro.get("after", [])]
        return {"reply": plain(reply), "after": after}
    finally:
        connection.close()


def release_lacks(result: dict, wanted: dict) -> str | None:
    """Why a script that does not behave as `wanted` on a release before
    Redis 7.0 needs what that release lacks: the error the release answered
    it with (an unknown command, an option or a script flag it does not
    take), where `wanted` asks for no error there. `None` when the result
    holds no such error: then the case misbehaves on its own.

    >>> release_lacks({"reply": {"error": "ERR unknown command `LMPOP`"}, "after": []},
    ...               {"reply": 1})
    'ERR unknown command `LMPOP`'
    >>> release_lacks({"reply": 1, "after": [{"error": "ERR syntax error"}]},
    ...               {"reply": 1, "after": [["a"]]})
    'ERR syntax error'
    >>> release_lacks({"reply": {"error": "ERR boom"}, "after": []},
    ...               {"reply": {"error": "boom"}}) is None
    True
    >>> release_lacks({"reply": 2, "after": []}, {"reply": 1}) is None
    True
    """
    replies = [("reply", result["reply"], wanted.get("reply"))]
    replies += [("after", got, want) for got, want in zip(result["after"], wanted.get("after", []))]
    replies += [("after", got, None) for got in result["after"][len(wanted.get("after", [])):]]
    for _, got, want in replies:
        if isinstance(got, dict) and "error" in got and not (want is not None and matches(got, want)):
            return got["error"]
    return None


def satisfies(result: dict, wanted: dict) -> bool:
    if "reply" in wanted and not matches(result["reply"], wanted["reply"]):
        return False
    return all(matches(got, want) for got, want in zip(result["after"], wanted.get("after", [])))


# --- the checker -------------------------------------------------------------

def checker_command(option: str | None) -> list[str]:
    if option:
        return [option]
    return ["cargo", "run", "-q", "--release", "-p", "redis-script-check", "--"]


def check(command: list[str], path: Path, bug: dict, side: str, target: str | None) -> list[dict]:
    """The checker's diagnostics for one side, with the keys and arguments
    that side's client passes (`call`, or `call.pre` / `call.post` where
    the fix changed the call), for `target` (the checker's default when
    `None`)."""
    call = bug["call"].get(side, bug["call"])
    options = bug.get("checker_options", DEFAULT_CHECKER_OPTIONS)
    if target:
        options = [*options, "--target", target]
    run = subprocess.run(
        [*command, "--keys", str(call["keys"]), "--args", str(call["args"]), *options,
         "--format", "json", str(path)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    try:
        return json.loads(run.stdout)["diagnostics"]
    except (json.JSONDecodeError, KeyError):
        raise SystemExit(f"the checker gave no report for {path}:\n{run.stderr}")


def bug_lines(text: str, anchors: list[str]) -> set[int]:
    """The lines of the pre-fix script where the bug is: those holding one
    of the entry's anchors (the bug's line, and where its value is used);
    an anchor starting with ^ is a regular expression for the whole line."""
    lines = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if any(re.fullmatch(anchor, line) if anchor.startswith("^") else anchor in line for anchor in anchors):
            lines.add(number)
    if not lines:
        raise SystemExit(f"no line of the pre-fix script holds {anchors}")
    return lines


# --- the run -------------------------------------------------------------------

def default_server() -> str:
    if os.environ.get("REDIS_SERVER_BIN"):
        return os.environ["REDIS_SERVER_BIN"]
    if os.environ.get("VALKEY_BIN_DIR"):
        return str(Path(os.environ["VALKEY_BIN_DIR"]) / "valkey-server")
    return shutil.which("redis-server") or "redis-server"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default=default_server())
    parser.add_argument("--checker", help="a built redis-script-check (default: cargo run --release)")
    parser.add_argument("--only", action="append", help="run only this bug (repeatable)")
    parser.add_argument("--no-checker", action="store_true", help="only the live reproductions")
    parser.add_argument("--min-caught", type=int, default=0,
                        help="exit 1 unless at least this many decidable bugs are caught (CI's floor)")
    parser.add_argument("--target",
                        help="the checker's target (default: its own, any); `server` for the server's release")
    parser.add_argument("--manifest", type=Path, default=ROOT / "corpus" / "shipped_bugs.json",
                        help="the bugs (default: corpus/shipped_bugs.json)")
    options = parser.parse_args()
    family, version = release_of(options.server)
    target = options.target
    if target == "server":
        target = f"{family.lower()}-{version[0]}.{version[1]}"

    manifest = json.loads(options.manifest.read_text())
    bugs = [bug for bug in manifest["bugs"] if not options.only or bug["id"] in options.only]
    for bug in bugs:
        if bug["class"] not in CLASSES:
            raise SystemExit(f"{bug['id']}: unknown class {bug['class']!r}")

    # 1. The scripts, as sent: the archives fetched a few at a time first
    # (each registry client spends most of its time starting up).
    sides = {bug[side]["file"]: bug[side] for bug in bugs for side in ("pre", "post")}
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(archive, sides.values()))
    texts = {}
    for bug in bugs:
        directory = OUT / bug["id"]
        directory.mkdir(parents=True, exist_ok=True)
        for side in ("pre", "post"):
            text = script(bug[side])
            (directory / f"{side}.lua").write_text(text)
            texts[bug["id"], side] = text

    # 2. The reproductions, on live servers. On a release before Redis 7.0,
    # a case whose script (or setup) needs what the release lacks is said
    # to, with the release's answer, rather than failed: the scripts were
    # written for the releases their projects ran.
    older = before_redis_7(family, version)
    live = {}
    lacking = {}
    servers = {}
    try:
        for bug in bugs:
            mode = bug["repro"].get("mode", "standalone")
            if mode not in servers:
                servers[mode] = Server(options.server, cluster=mode == "cluster")
            repro = bug["repro"]
            try:
                pre = outcome(servers[mode], texts[bug["id"], "pre"], repro, "pre")
                post = outcome(servers[mode], texts[bug["id"], "post"], repro, "post")
            except SetupRefused as refused:
                if not older:
                    raise SystemExit(f"{bug['id']}: {refused}")
                live[bug["id"]] = []
                lacking[bug["id"]] = str(refused)
                continue
            problems = []
            if not satisfies(pre, repro["pre_observed"]):
                problems.append(f"pre-fix does not misbehave as written: {json.dumps(pre)[:300]}")
            if satisfies(pre, repro["expected"]):
                problems.append("pre-fix gives the correct outcome")
            if not satisfies(post, repro["expected"]):
                problems.append(f"post-fix is not correct: {json.dumps(post)[:300]}")
            why = None
            if problems and older:
                why = (release_lacks(post, repro["expected"])
                       or release_lacks(pre, repro["pre_observed"]))
            if why:
                lacking[bug["id"]] = f"the server answers {why!r}"
                problems = []
            live[bug["id"]] = problems
    finally:
        for server in servers.values():
            server.stop()

    failed = {key: value for key, value in live.items() if value}
    release = f"{family} {'.'.join(map(str, version))}"
    print(f"live reproductions on {release} ({options.server}): "
          f"{len(bugs) - len(failed) - len(lacking)} of {len(bugs)} behave as written"
          + (f", {len(lacking)} need what {release} lacks" if lacking else ""))
    for key, why in lacking.items():
        print(f"  NOT ON {release}: {key}: {why}")
    for key, problems in failed.items():
        for problem in problems:
            print(f"  FAILED {key}: {problem}")
    if options.no_checker:
        return 1 if failed else 0

    # 3. The checker.
    command = checker_command(options.checker)
    print(f"checker target: {target or 'any (the default)'}")
    ids = {bug["id"] for bug in manifest["bugs"]}
    rows = []
    recall = collections.defaultdict(collections.Counter)
    false_errors = []
    target_gaps = []
    for bug in bugs:
        directory = OUT / bug["id"]
        lines = bug_lines(texts[bug["id"], "pre"], bug["at"])
        pre = check(command, directory / "pre.lua", bug, "pre", target)
        post = check(command, directory / "post.lua", bug, "post", target)
        on_line = [d for d in pre if d["line"] in lines and d["severity"] in ("error", "warning")]
        # A finding about another condition of the same line (an empty
        # table where the bug is a too large one) does not catch this bug.
        other = set(bug.get("other_conditions", []))
        hits = [d for d in on_line if d.get("finding") not in other]
        hits.sort(key=lambda d: d["severity"] != "error")
        if hits:
            first = hits[0]
            name = f" {first['finding']}" if first.get("finding") else ""
            verdict = f"caught: {first['severity']} {first['code']}{name} line {first['line']}"
        else:
            elsewhere = [d for d in pre if d["severity"] == "error" and d["line"] not in lines]
            verdict = "missed"
            if on_line:
                verdict += f" (line has {on_line[0]['code']} {on_line[0].get('finding')}: another condition)"
            elif elsewhere:
                verdict += f" ({len(elsewhere)} errors elsewhere)"
        # A post-fix version may still hold another shipped bug, fixed in a
        # later release and kept as its own entry: an error on its line is
        # that bug found, not a false error.
        known = {}
        for other in bug.get("post_known_bugs", []):
            if other["bug"] not in ids:
                raise SystemExit(f"{bug['id']}: post_known_bugs names {other['bug']}, which is not an entry")
            for line in bug_lines(texts[bug["id"], "post"], [other["at"]]):
                known[line] = other["bug"]
        errors = [d for d in post if d["severity"] == "error" and d["line"] not in known]
        gaps = [d for d in errors if target and d["code"] in TARGET_LACKS]
        errors = [d for d in errors if d not in gaps]
        for d in gaps:
            target_gaps.append(f"  {bug['id']} post.lua:{d['line']} {d['code']}: {d['message']}")
        found_known = sorted({known[d["line"]] for d in post if d["severity"] == "error" and d["line"] in known})
        for d in errors:
            false_errors.append(f"  {bug['id']} post.lua:{d['line']} {d['code']} {d.get('finding') or ''}: {d['message']}")
        if bug["decidable"]:
            recall[bug["class"]]["bugs"] += 1
            recall[bug["class"]]["caught"] += bool(hits)
        post_verdict = f"{len(errors)} false error{'s' if len(errors) != 1 else ''}" if errors else "clean"
        if gaps:
            post_verdict += f" ({len(gaps)} for what {target} lacks)"
        if found_known:
            post_verdict += f" (finds the later-fixed {', '.join(found_known)})"
        if bug["id"] in lacking:
            state = f"not on {release}"
        else:
            state = "live ok" if not live[bug["id"]] else "LIVE FAILED"
        rows.append((bug["id"], bug["class"], "yes" if bug["decidable"] else "no", verdict, post_verdict,
                     state))

    widths = [max(len(row[i]) for row in rows + [("bug", "class", "decidable", "pre-fix", "post-fix", "live")]) for i in range(6)]
    header = ("bug", "class", "decidable", "pre-fix", "post-fix", "live")
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    print()
    print("recall over the bugs decidable from the script alone:")
    total = collections.Counter()
    for name in CLASSES:
        if name == "logic_only":
            continue
        row = recall[name]
        total.update(row)
        share = f"{100 * row['caught'] / row['bugs']:.0f}%" if row["bugs"] else "-"
        print(f"  {name:42} {row['caught']:3} of {row['bugs']:3}  {share:>5}")
    share = f"{100 * total['caught'] / total['bugs']:.0f}%" if total["bugs"] else "-"
    print(f"  {'all':42} {total['caught']:3} of {total['bugs']:3}  {share:>5}")
    logic = sum(1 for bug in bugs if not bug["decidable"])
    print(f"  ({logic} logic_only bugs, not decidable from the script, are listed but not counted)")
    print(f"false errors on post-fix scripts: {len(false_errors)}")
    if false_errors:
        print("\n".join(false_errors))
    if target:
        print(f"errors on post-fix scripts for what {target} lacks: {len(target_gaps)}")
        if target_gaps:
            print("\n".join(target_gaps))
    print(f"mined, not reproducible from registries: {len(manifest.get('mined_not_reproducible', []))}; "
          f"mined and rejected: {len(manifest.get('rejected', []))} (both listed in shipped_bugs.json)")
    # What CI holds: every reproduction behaves as written on this server,
    # no fixed script gets an error, and recall stays at its floor.
    verdicts = []
    if failed:
        verdicts.append(f"{len(failed)} reproductions do not behave as written")
    if false_errors:
        verdicts.append(f"{len(false_errors)} false errors on post-fix scripts")
    if total["caught"] < options.min_caught:
        verdicts.append(f"{total['caught']} decidable bugs caught, fewer than the floor of {options.min_caught}")
    for verdict in verdicts:
        print(f"FAILED: {verdict}")
    return 1 if verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
