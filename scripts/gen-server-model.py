#!/usr/bin/env python3
"""Generate the server model embedded in redis-script-analysis.

The checker knows several server releases (Redis 7.0 to 8.2, Valkey 7.2 to
8.1) and the command modules Redis 8 bundles (JSON, search, time series,
probabilistic). For each release it knows every command and subcommand
(arity, flags, key specs, since, deprecation) and the globals and library
members a script sees. This generator builds that model in three steps:

1. ``collect``: read every source and write ``analysis/server-model.json``,
   one entry per command with per-release "forms" (identical forms across
   releases are stored once). Sources, per release:

   * a live server's ``COMMAND`` and ``COMMAND DOCS`` (and a sandbox probe
     by ``EVAL``) where a binary of that release runs here;
   * otherwise the server's own command specification files
     (``src/commands/*.json``) at the pinned release tag, read from a bare
     git directory, and its sandbox allow-lists (``src/script_lua.c``);
   * module commands from each module repository's ``commands.json`` (the
     documentation format: arity and key positions are derived from the
     arguments, see ``module_command``), and their flags from the module's
     own command registrations at the same tag (``MODULE_REGISTRATION``:
     RedisJSON's ``redis_module!`` table in ``redis_json/src/lib.rs``, the
     registration calls of RediSearch's ``src/module.c`` with the name
     macros of ``src/commands.h`` and ``src/version.h``, RedisTimeSeries' ``src/module.c`` and
     RedisBloom's ``src/rebloom.c``, ``rm_cms.c``, ``rm_tdigest.c``,
     ``rm_topk.c``; see ``registered_flags``). A documented subcommand takes
     the flags of its parent, which these modules register as one command. A
     documented command registered nowhere keeps ``flags_unknown``; the
     model's ``modules`` entries record the files read, the number of
     commands with registered flags and the names left unknown.

2. ``render``: write the Rust tables from the JSON model (deterministic,
   rustfmt-formatted). ``collect`` runs it too.

3. ``--check``: without writing, verify the Rust tables are the rendering
   of the JSON model, then start ``redis-server`` 7.0.15 and
   ``valkey-server`` 8.1.8 and verify the model's view of those releases
   equals what the live servers report (``COMMAND``, ``COMMAND DOCS``, the
   ``no-writes`` probe and the sandbox probe). This is the CI step: it
   needs no repository checkout and installs nothing.

Usage::

    scripts/gen-server-model.py collect --git-dir redis=PATH --git-dir valkey=PATH \\
        --git-dir json=PATH --git-dir search=PATH --git-dir timeseries=PATH \\
        --git-dir bloom=PATH --server redis-8.2=PATH/redis-server
    scripts/gen-server-model.py collect --modules-only --git-dir json=PATH \\
        --git-dir search=PATH --git-dir timeseries=PATH --git-dir bloom=PATH
    scripts/gen-server-model.py render
    scripts/gen-server-model.py --check

``--server NAME=PATH`` names a server binary for a live release (default:
``redis-server`` on PATH for redis-7.0, ``scripts/ensure-valkey`` for
valkey-8.1). ``collect --modules-only`` reads only the module repositories
and keeps every release's commands and sandbox as ``server-model.json``
stores them, for a machine without the live servers; the result is what a
full ``collect`` writes when those servers report what they reported before.
Python 3.11, stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ANALYSIS = REPO / "analysis"
MODEL_JSON = ANALYSIS / "server-model.json"
SCRIPT_NAME = "scripts/gen-server-model.py"

# --------------------------------------------------------------------------
# What the model covers


# (name, server, pinned tag or live version, how the release is read).
# `spec`: command JSON and sandbox allow-lists at the tag; `live`: a running
# binary; `derived`: the live data of another release, filtered by `since`.
RELEASES = [
    ("redis-7.0", "redis", "7.0.15", "live"),
    ("redis-7.2", "redis", "7.2.6", "spec"),
    ("redis-7.4", "redis", "7.4.1", "spec"),
    ("redis-8.0", "redis", "8.2.3", "derived"),
    ("redis-8.2", "redis", "8.2.3", "live"),
    ("valkey-7.2", "valkey", "7.2.7", "spec"),
    ("valkey-8.0", "valkey", "8.0.1", "spec"),
    ("valkey-8.1", "valkey", "8.1.8", "live"),
]

# Releases whose live server the CI check starts, and how to find the binary.
CHECKED_LIVE = ["redis-7.0", "valkey-8.1"]

# The release whose live probe and tag are the reference for the sandboxes
# read from source: their allow-lists are compared with this tag's.
SANDBOX_REFERENCE = "redis-7.0"

# Module name in targets, repository, pinned tag (the one Redis 8.2 bundles).
MODULES = [
    ("json", "RedisJSON", "v8.2.11"),
    ("search", "RediSearch", "v8.2.13"),
    ("timeseries", "RedisTimeSeries", "v8.2.10"),
    ("bloom", "RedisBloom", "v8.2.12"),
]

# Where each module registers its commands at the pinned tag, and how the
# registrations read (see `registered_flags`):
#
# * `rows`: RedisJSON's `redis_module!` table, one command per line:
#   `["json.set", json_command!(json_set), "write deny-oom", 1,1,1, ...]`.
# * `calls`: C calls `helper(ctx, NAME, handler, FLAGS, ...)`; `calls` names
#   the helpers (every module wraps RedisModule_CreateCommand in its own),
#   `headers` the files whose `#define`s give command names (RediSearch
#   builds them from prefix macros), and `conditions` the value of each
#   runtime condition a flag string is chosen by (`IsEnterprise() ? A : B`:
#   Redis bundles the module outside Redis Enterprise).
MODULE_REGISTRATION = {
    "json": {"style": "rows", "files": ["redis_json/src/lib.rs"]},
    "search": {
        "style": "calls",
        "files": ["src/module.c"],
        "headers": ["src/commands.h", "src/version.h"],
        "calls": ["RMCreateSearchCommand", "RMCreateArbitraryWriteSearchCommand"],
        "conditions": {"IsEnterprise()": False},
    },
    "timeseries": {
        "style": "calls",
        "files": ["src/module.c"],
        "calls": ["RegisterCommandWithModesAndAcls", "RedisModule_CreateCommand"],
    },
    "bloom": {
        "style": "calls",
        "files": ["src/rebloom.c", "src/rm_cms.c", "src/rm_tdigest.c", "src/rm_topk.c"],
        "calls": ["RegisterCommand"],
    },
}

# Bit order of `CommandFlags` in commands.rs: (name in COMMAND, Rust const).
COMMAND_FLAGS = [
    ("write", "WRITE"),
    ("readonly", "READONLY"),
    ("denyoom", "DENYOOM"),
    ("module", "MODULE"),
    ("admin", "ADMIN"),
    ("pubsub", "PUBSUB"),
    ("noscript", "NOSCRIPT"),
    ("blocking", "BLOCKING"),
    ("loading", "LOADING"),
    ("stale", "STALE"),
    ("skip_monitor", "SKIP_MONITOR"),
    ("skip_slowlog", "SKIP_SLOWLOG"),
    ("asking", "ASKING"),
    ("fast", "FAST"),
    ("no_auth", "NO_AUTH"),
    ("may_replicate", "MAY_REPLICATE"),
    ("no_mandatory_keys", "NO_MANDATORY_KEYS"),
    ("no_async_loading", "NO_ASYNC_LOADING"),
    ("no_multi", "NO_MULTI"),
    ("movablekeys", "MOVABLEKEYS"),
    ("allow_busy", "ALLOW_BUSY"),
    ("skip_commandlog", "SKIP_COMMANDLOG"),
    ("flags_unknown", "FLAGS_UNKNOWN"),
]

# Flag words of a module's RedisModule_CreateCommand string (redis-module-rs
# passes its string through unchanged) -> the model's flag, as COMMAND
# reports it; None for a word COMMAND does not report.
MODULE_FLAG_WORDS = {
    "write": "write",
    "readonly": "readonly",
    "admin": "admin",
    "deny-oom": "denyoom",
    "deny-script": "noscript",
    "allow-loading": "loading",
    "pubsub": "pubsub",
    "allow-stale": "stale",
    "no-monitor": "skip_monitor",
    "no-slowlog": "skip_slowlog",
    "fast": "fast",
    "no-auth": "no_auth",
    "may-replicate": "may_replicate",
    "no-mandatory-keys": "no_mandatory_keys",
    "blocking": "blocking",
    "allow-busy": "allow_busy",
    "getkeys-api": "movablekeys",
    # Accepted and dropped since Redis 7.0.
    "random": None,
    # Kept internal by the server (CMD_MODULE_NO_CLUSTER, CMD_INTERNAL, ...).
    "no-cluster": None,
    "internal": None,
    "touches-arbitrary-keys": None,
    "getchannels-api": None,
}

# Spec-file flags that `COMMAND` never reports (sentinel, internal).
SPEC_ONLY_FLAGS = {
    "sentinel",
    "only_sentinel",
    "protected",
    "touches_arbitrary_keys",
    "no_propagate",
    "module_no_cluster",
}

KEY_SPEC_FLAGS = [
    ("RO", "RO"),
    ("RW", "RW"),
    ("OW", "OW"),
    ("RM", "RM"),
    ("access", "ACCESS"),
    ("update", "UPDATE"),
    ("insert", "INSERT"),
    ("delete", "DELETE"),
    ("not_key", "NOT_KEY"),
    ("incomplete", "INCOMPLETE"),
    ("variable_flags", "VARIABLE_FLAGS"),
]
KEY_SPEC_CANON = {name.lower(): name for name, _ in KEY_SPEC_FLAGS}

LUA_TYPES = {
    "nil": "Nil",
    "boolean": "Boolean",
    "number": "Number",
    "string": "String",
    "table": "Table",
    "function": "Function",
    "userdata": "Userdata",
    "thread": "Thread",
}

NO_WRITES_ERROR = "Write commands are not allowed from read-only scripts"

NO_WRITES_PROBE = """#!lua flags=no-writes
local reply = redis.pcall(unpack(ARGV))
if type(reply) == 'table' and reply.err then
  return 'error: ' .. reply.err
end
return 'ran'
"""

LIST_GLOBALS = """
local names = {}
for name, value in pairs(_G) do
  names[#names + 1] = name .. ' ' .. type(value)
end
table.sort(names)
return names
"""

LIST_MEMBERS = """
local names = {}
for name, value in pairs(_G[ARGV[1]]) do
  names[#names + 1] = tostring(name) .. ' ' .. type(value)
end
table.sort(names)
return names
"""


class GenError(Exception):
    pass


# --------------------------------------------------------------------------
# Live servers


class Client:
    def __init__(self, cli: str, port: int):
        self.cli = cli
        self.port = port

    def raw(self, *args: str, json_output: bool = False) -> str:
        mode = ["-3", "--json"] if json_output else []
        proc = subprocess.run(
            [self.cli, "-h", "127.0.0.1", "-p", str(self.port), *mode, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise GenError(f"{self.cli} {args[0]} failed: {proc.stderr.strip()}")
        return proc.stdout

    def call(self, *args: str) -> object:
        out = self.raw(*args, json_output=True).strip()
        try:
            return json.loads(out)
        except json.JSONDecodeError as exc:
            raise GenError(f"{args[0]}: unexpected output {out[:200]!r}") from exc

    def ping(self) -> bool:
        proc = subprocess.run(
            [self.cli, "-h", "127.0.0.1", "-p", str(self.port), "PING"],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.returncode == 0 and proc.stdout.strip() == "PONG"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ThrowawayServer:
    """A server on 127.0.0.1 without persistence, in a temp dir."""

    def __init__(self, server: str, cli: str):
        self.server = server
        self.cli = cli
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmp = tempfile.TemporaryDirectory(prefix="gen-server-model-")
        self.port = 0

    def __enter__(self) -> Client:
        for _attempt in range(5):
            self.port = free_port()
            self.proc = subprocess.Popen(
                [
                    self.server,
                    "--bind", "127.0.0.1",
                    "--port", str(self.port),
                    "--save", "",
                    "--appendonly", "no",
                    "--daemonize", "no",
                    "--dir", self.tmp.name,
                    "--logfile", os.path.join(self.tmp.name, "server.log"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            client = Client(self.cli, self.port)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break  # lost the race for the port: try another one
                if client.ping():
                    return client
                time.sleep(0.05)
            self._stop()
        raise GenError(f"could not start {self.server}")

    def _stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            subprocess.run(
                [self.cli, "-h", "127.0.0.1", "-p", str(self.port), "SHUTDOWN", "NOSAVE"],
                capture_output=True,
                check=False,
            )
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __exit__(self, *exc: object) -> None:
        self._stop()
        self.tmp.cleanup()


def server_version(client: Client) -> str:
    info = client.raw("INFO", "server")
    fields = dict(
        line.split(":", 1) for line in info.splitlines() if ":" in line
    )
    for field in ("valkey_version", "redis_version"):
        if field in fields:
            return fields[field].strip()
    raise GenError("INFO server: no version")


def live_key_spec(command: str, spec: dict) -> dict:
    begin, find = spec["begin_search"], spec["find_keys"]
    if begin["type"] == "index":
        begin_n = ["index", int(begin["spec"]["index"])]
    elif begin["type"] == "keyword":
        begin_n = ["keyword", begin["spec"]["keyword"], int(begin["spec"]["startfrom"])]
    elif begin["type"] == "unknown":
        begin_n = ["unknown"]
    else:
        raise GenError(f"{command}: unknown begin_search {begin['type']!r}")
    if find["type"] == "range":
        s = find["spec"]
        find_n = ["range", int(s["lastkey"]), int(s["keystep"]), int(s["limit"])]
    elif find["type"] == "keynum":
        s = find["spec"]
        find_n = ["keynum", int(s["keynumidx"]), int(s["firstkey"]), int(s["keystep"])]
    elif find["type"] == "unknown":
        find_n = ["unknown"]
    else:
        raise GenError(f"{command}: unknown find_keys {find['type']!r}")
    return {"flags": key_flags(command, spec["flags"]), "begin": begin_n, "find": find_n}


def key_flags(command: str, flags: list[str]) -> list[str]:
    out = []
    for flag in flags:
        canon = KEY_SPEC_CANON.get(flag.lower())
        if canon is None:
            raise GenError(
                f"{command}: key spec flag {flag!r} unknown: add it to KeySpecFlags "
                "in commands.rs and KEY_SPEC_FLAGS here"
            )
        out.append(canon)
    return sorted(set(out), key=lambda f: [n for n, _ in KEY_SPEC_FLAGS].index(f))


def command_flags(command: str, flags: list[str]) -> list[str]:
    known = [name for name, _ in COMMAND_FLAGS]
    out = set()
    for flag in flags:
        flag = flag.lower()
        if flag in SPEC_ONLY_FLAGS:
            continue
        if flag not in known:
            raise GenError(
                f"{command}: command flag {flag!r} unknown: add it to CommandFlags "
                "in commands.rs and COMMAND_FLAGS here"
            )
        out.add(flag)
    return sorted(out, key=known.index)


def live_command(raw: list) -> dict:
    # COMMAND reply: name, arity, flags, first key, last key, step, ACL
    # categories, tips, key specs, subcommands.
    if not isinstance(raw, list) or len(raw) < 10:
        raise GenError(f"COMMAND: unexpected entry {raw!r:.200}")
    name = raw[0].lower()
    return {
        "name": name,
        "arity": int(raw[1]),
        "flags": command_flags(name, raw[2]),
        "key_specs": [live_key_spec(name, spec) for spec in raw[8]],
        "subcommands": sorted((live_command(sub) for sub in raw[9]), key=lambda c: c["name"]),
    }


def apply_docs(commands: list[dict], docs: dict, server: str) -> None:
    """Adds since / deprecated_since / replaced_by from COMMAND DOCS."""
    by_name = {name.lower(): doc for name, doc in docs.items()}
    for command in commands:
        doc = by_name.get(command["name"], {})
        set_doc_fields(command, doc, server)
        subdocs = {name.lower(): d for name, d in (doc.get("subcommands") or {}).items()}
        for sub in command["subcommands"]:
            set_doc_fields(sub, subdocs.get(sub["name"], {}), server)


def set_doc_fields(command: dict, doc: dict, server: str) -> None:
    command["since"] = {server: doc["since"]} if doc.get("since") else {}
    if doc.get("deprecated_since"):
        command["deprecated_since"] = doc["deprecated_since"]
        command["replaced_by"] = clean_replacement(doc.get("replaced_by", ""))


def clean_replacement(text: str) -> str:
    # Spec text marks argument tokens as `!GET`; users read `GET`.
    return text.replace("`!", "`")


def probe_no_writes(client: Client, commands: list[dict]) -> None:
    """Marks `may_replicate` on the non-write commands no-writes scripts refuse.

    A script declared `#!lua flags=no-writes` is refused every command with
    Redis's internal CMD_WRITE or CMD_MAY_REPLICATE flag, but `COMMAND`
    (Redis 7.0) reports only the first. Each script-callable leaf command
    without `write` is called from such a script with dummy arguments; the
    refused ones get `may_replicate`. The server must be a throwaway one:
    the allowed calls really run.
    """
    for command in walk(commands):
        flags = command["flags"]
        if command["subcommands"] or "write" in flags or "noscript" in flags:
            continue
        words = command["name"].split("|")
        total = abs(command["arity"])
        argv = words + ["x"] * max(0, total - len(words))
        reply = client.call("EVAL", NO_WRITES_PROBE, "0", *argv)
        if not isinstance(reply, str):
            raise GenError(f"no-writes probe of {command['name']}: unexpected {reply!r}")
        refused = NO_WRITES_ERROR in reply
        if refused and "may_replicate" not in flags:
            flags.append("may_replicate")
            flags.sort(key=[n for n, _ in COMMAND_FLAGS].index)
        elif not refused and "may_replicate" in flags:
            raise GenError(
                f"{command['name']} reports may_replicate but a no-writes script may call it"
            )


def walk(commands: list[dict]):
    for command in commands:
        yield command
        yield from walk(command["subcommands"])


def lua_list(client: Client, script: str, *argv: str) -> list[list[str]]:
    reply = client.call("EVAL", script, "0", *argv)
    if not isinstance(reply, list):
        raise GenError(f"EVAL: expected an array, got {reply!r:.200}")
    pairs = []
    for item in reply:
        name, _, lua_type = str(item).rpartition(" ")
        if lua_type not in LUA_TYPES:
            raise GenError(f"sandbox: unexpected Lua type {lua_type!r} for {name!r}")
        pairs.append([name, lua_type])
    return sorted(pairs)


def probe_sandbox(client: Client) -> dict:
    """Globals of an EVAL script: name -> {type, members (tables)}."""
    sandbox = {}
    for name, lua_type in lua_list(client, LIST_GLOBALS):
        entry = {"type": lua_type}
        if lua_type == "table" and name not in ("KEYS", "ARGV", "_G"):
            entry["members"] = dict(lua_list(client, LIST_MEMBERS, name))
        sandbox[name] = entry
    return sandbox


def read_live(server: str, cli: str, family: str) -> dict:
    with ThrowawayServer(server, cli) as client:
        version = server_version(client)
        raw = client.call("COMMAND")
        if not isinstance(raw, list) or not raw:
            raise GenError("COMMAND: expected a non-empty array")
        commands = sorted((live_command(entry) for entry in raw), key=lambda c: c["name"])
        docs = client.call("COMMAND", "DOCS")
        if not isinstance(docs, dict):
            raise GenError("COMMAND DOCS: expected a map")
        apply_docs(commands, docs, family)
        probe_no_writes(client, commands)
        sandbox = probe_sandbox(client)
    return {"version": version, "commands": commands, "sandbox": sandbox}


# --------------------------------------------------------------------------
# Specification files at a tag


def git(git_dir: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise GenError(f"git {' '.join(args)} in {git_dir}: {proc.stderr.strip()}")
    return proc.stdout


def spec_key_spec(command: str, spec: dict) -> dict:
    begin, find = spec["begin_search"], spec["find_keys"]
    if "index" in begin:
        begin_n = ["index", int(begin["index"]["pos"])]
    elif "keyword" in begin:
        begin_n = ["keyword", begin["keyword"]["keyword"], int(begin["keyword"]["startfrom"])]
    else:
        begin_n = ["unknown"]
    if "range" in find:
        r = find["range"]
        find_n = ["range", int(r["lastkey"]), int(r["step"]), int(r["limit"])]
    elif "keynum" in find:
        k = find["keynum"]
        find_n = ["keynum", int(k["keynumidx"]), int(k["firstkey"]), int(k["step"])]
    else:
        find_n = ["unknown"]
    return {"flags": key_flags(command, spec.get("flags", [])), "begin": begin_n, "find": find_n}


def movable_keys(specs: list[dict]) -> bool:
    """The `movablekeys` flag COMMAND reports, computed from the key specs as
    the server does when it derives the legacy first/last/step triple: set
    unless the specs are consecutive complete index + range specs of step 1."""
    if len(specs) == 1 and specs[0]["begin"][0] == "index" and specs[0]["find"][0] == "range":
        return "incomplete" in specs[0]["flags"]
    movable = False
    first_found = False
    previous_last = 0
    last = 0
    for spec in specs:
        if spec["begin"][0] != "index" or spec["find"][0] != "range":
            movable = True
            continue
        position, (_, last_key, step, _limit) = spec["begin"][1], spec["find"]
        if step != 1 or (previous_last and previous_last != position - 1):
            movable = True
            continue
        if "incomplete" in spec["flags"]:
            movable = True
        first_found = True
        absolute = last_key + position if last_key >= 0 else last_key
        # The server compares as unsigned: a negative last key wins.
        last = max(last % (1 << 32), absolute % (1 << 32))
        last = last - (1 << 32) if last >= (1 << 31) else last
        previous_last = last
    return movable or (bool(specs) and not first_found)


def spec_command(name: str, body: dict, server: str) -> dict:
    key_specs = [spec_key_spec(name, spec) for spec in body.get("key_specs", [])]
    flags = command_flags(name, body.get("command_flags", []))
    if movable_keys(key_specs):
        flags = command_flags(name, flags + ["movablekeys"])
    return command_entry(name, int(body["arity"]), flags, key_specs, server, body)


def command_entry(
    name: str, arity: int, flags: list[str], key_specs: list[dict], source: str, body: dict
) -> dict:
    """One command of the model; `since` and deprecation as `body` (a spec
    or documentation JSON file) states them, attributed to `source`."""
    command = {
        "name": name,
        "arity": arity,
        "flags": flags,
        "key_specs": key_specs,
        "subcommands": [],
        "since": {source: body["since"]} if body.get("since") else {},
    }
    if body.get("deprecated_since"):
        command["deprecated_since"] = body["deprecated_since"]
        command["replaced_by"] = clean_replacement(body.get("replaced_by", ""))
    return command


def read_spec(git_dir: Path, tag: str, server: str) -> list[dict]:
    """Commands of `src/commands/*.json` at `tag`, as COMMAND would list them."""
    files = git(git_dir, "ls-tree", "--name-only", f"{tag}:src/commands").split()
    parents: dict[str, dict] = {}
    subs: list[tuple[str, dict]] = []
    for file in sorted(files):
        if not file.endswith(".json"):
            continue
        data = json.loads(git(git_dir, "show", f"{tag}:src/commands/{file}"))
        for raw_name, body in data.items():
            flags = {flag.lower() for flag in body.get("command_flags", [])}
            if "only_sentinel" in flags:
                continue
            if "container" in body:
                name = f"{body['container'].lower()}|{raw_name.lower()}"
                subs.append((body["container"].lower(), spec_command(name, body, server)))
            else:
                parents[raw_name.lower()] = spec_command(raw_name.lower(), body, server)
    for parent, sub in subs:
        if parent in parents:
            parents[parent]["subcommands"].append(sub)
    for command in parents.values():
        command["subcommands"].sort(key=lambda c: c["name"])
    return sorted(parents.values(), key=lambda c: c["name"])


# Names a tag's `script_lua.c` / `eval.c` give the sandbox: the allow-listed
# globals and the members registered on the `redis` table.
ALLOW_LIST = re.compile(r"static char \*(\w+_allow_list)\[\] = \{(.*?)\};", re.S)
PUSHED_NAME = re.compile(r'lua_pushstring\(lua,\s*"([A-Za-z_]+)"')
API_NAME_MACROS = {"SERVER_API_NAME": "server", "REDIS_API_NAME": "redis"}


def sandbox_names(git_dir: Path, tag: str) -> tuple[set[str], set[str]]:
    source = git(git_dir, "show", f"{tag}:src/script_lua.c")
    globals_ = set()
    for list_name, body in ALLOW_LIST.findall(source):
        if "removed_after_initialization" in list_name:
            continue
        for token in re.findall(r'"(\w+)"|\b([A-Z_]+_API_NAME)\b', body):
            literal, macro = token
            globals_.add(literal or API_NAME_MACROS[macro])
    members = set(PUSHED_NAME.findall(source))
    if not globals_:
        raise GenError(f"{tag}: no sandbox allow-list found in src/script_lua.c")
    return globals_, members


def derive_sandbox(
    reference: dict, ref_names: tuple[set, set], names: tuple[set, set], probes: list[dict]
) -> dict:
    """The reference probe, changed by the allow-list differences of a tag."""
    ref_globals, ref_members = ref_names
    tag_globals, tag_members = names

    def probed(name: str) -> dict | None:
        for probe in probes:
            if name in probe:
                return probe[name]
        return None

    sandbox = {name: dict(entry) for name, entry in reference.items()}
    for name in ref_globals - tag_globals:
        sandbox.pop(name, None)
    for name in tag_globals - ref_globals:
        entry = probed(name)
        if entry is None and name == "server":
            entry = sandbox["redis"]
        if entry is None:
            raise GenError(f"sandbox: no live probe knows the new global {name!r}")
        sandbox[name] = json.loads(json.dumps(entry))
    for api in ("redis", "server"):
        if api not in sandbox:
            continue
        members = dict(sandbox[api]["members"])
        for name in ref_members - tag_members:
            members.pop(name, None)
        for name in tag_members - ref_members:
            for probe in probes:
                found = probe.get("redis", {}).get("members", {}).get(name)
                if found:
                    members[name] = found
                    break
            else:
                raise GenError(f"sandbox: no live probe knows the new member redis.{name}")
        sandbox[api]["members"] = members
    return sandbox


# --------------------------------------------------------------------------
# Module commands (documentation format)


def min_tokens(arg: dict) -> int:
    """Fewest words an argument takes on the command line."""
    if arg.get("optional"):
        return 0
    own = 1 if arg.get("token") else 0
    kind = arg.get("type")
    if kind == "pure-token":
        return 1
    inner = arg.get("arguments") or []
    if kind == "block":
        return own + sum(min_tokens(a) for a in inner)
    if kind == "oneof":
        return own + min((min_tokens(a) for a in inner), default=0)
    return own + 1


def fixed_width(arg: dict) -> int | None:
    """Words an argument always takes, or None when it varies."""
    if arg.get("optional") or arg.get("multiple"):
        return None
    own = 1 if arg.get("token") else 0
    kind = arg.get("type")
    if kind == "pure-token":
        return 1
    inner = arg.get("arguments") or []
    if kind == "block":
        widths = [fixed_width(a) for a in inner]
        return None if None in widths else own + sum(widths)
    if kind == "oneof":
        widths = {fixed_width(a) for a in inner}
        return own + widths.pop() if len(widths) == 1 and None not in widths else None
    return own + 1


def module_key_specs(args: list[dict]) -> tuple[list[dict], bool]:
    """Key specs from the documented arguments; True when all keys are found.

    Keys at fixed positions before any variable-length argument are index
    specs; a `multiple` key (or block starting with a key) followed only by
    fixed-width arguments is a range ending that many words before the end.
    A key elsewhere (inside optional or alternative arguments, after a
    variable-length one) is recorded as an unknown spec.
    """
    specs = []
    position = 1
    complete = True
    for i, arg in enumerate(args):
        width = fixed_width(arg)
        is_key = arg.get("type") == "key"
        block_key = arg.get("type") == "block" and any(
            a.get("type") == "key" for a in arg.get("arguments") or []
        )
        nested_key = not is_key and not block_key and has_key(arg)
        if position is not None and is_key and width is not None:
            specs.append(index_spec(position, 0, 1))
        elif position is not None and arg.get("multiple") and not arg.get("optional") and (
            is_key or block_key
        ):
            inner = arg.get("arguments") or [arg]
            step = sum(fixed_width({**a, "multiple": False}) or 0 for a in inner) if block_key else 1
            first = [a.get("type") for a in inner].index("key") if block_key else 0
            trailing = [fixed_width(a) for a in args[i + 1:]]
            if None in trailing or step == 0 or (block_key and first != 0):
                specs.append(unknown_spec())
                complete = False
            else:
                specs.append(index_spec(position, -1 - sum(trailing), step))
            position = None
            continue
        elif is_key or block_key or nested_key:
            specs.append(unknown_spec())
            complete = False
        if width is None:
            position = None
        elif position is not None:
            position += width
    return specs, complete


def has_key(arg: dict) -> bool:
    return arg.get("type") == "key" or any(has_key(a) for a in arg.get("arguments") or [])


def index_spec(position: int, last: int, step: int) -> dict:
    return {"flags": [], "begin": ["index", position], "find": ["range", last, step, 0]}


def unknown_spec() -> dict:
    return {"flags": ["incomplete"], "begin": ["unknown"], "find": ["unknown"]}


def module_command(name: str, body: dict, module: str) -> dict:
    args = body.get("arguments") or []
    words = len(name.split())
    minimum = words + sum(min_tokens(a) for a in args)
    variable = any(fixed_width(a) is None for a in args)
    specs, _complete = module_key_specs(args)
    if words == 2:
        # Positions count the subcommand name too.
        for spec in specs:
            if spec["begin"][0] == "index":
                spec["begin"][1] += 1
    return command_entry(
        name.lower().replace(" ", "|"),
        -minimum if variable else minimum,
        # The documentation format has no command flags: the registration
        # source gives them (`apply_registered_flags`).
        ["module", "flags_unknown"],
        specs,
        module,
        body,
    )


# --------------------------------------------------------------------------
# Module command flags (registration source)


C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\w+|\S')
C_COMMENT_OR_STRING = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S
)
# One row of RedisJSON's `commands: [...]` table: name, handler, flags.
RUST_COMMAND_ROW = re.compile(
    r'^\s*\[\s*"([^"]+)"\s*,\s*[\w:]+!?\([^()]*\)\s*,\s*"([^"]*)"', re.M
)
DIRECTIVE = re.compile(r"#\s*(\w+)\s*(.*)", re.S)


def without_comments(source: str) -> str:
    """C source with comments blanked (line breaks kept), strings intact."""

    def blank(match: re.Match) -> str:
        text = match.group(0)
        if text[0] in "\"'":
            return text
        return "\n" * text.count("\n") or " "

    return C_COMMENT_OR_STRING.sub(blank, source)


def preprocess(source: str, defined: dict[str, str], where: str) -> list[tuple[str, bool | None]]:
    """The lines of C `source` (directives and continued lines blanked, so
    indices stay line numbers), each with whether the build compiles it:
    True, False, or None when a `#if` expression decides (not evaluated
    here). `#ifdef`/`#ifndef` are decided by `defined` (nothing comes from
    the command line: no `-D` of the build Redis bundles decides a
    registration), which the compiled `#define`s and `#undef`s update."""
    physical = without_comments(source).split("\n")
    stack: list[tuple[bool | None, bool | None]] = []  # (branch taken, enclosing state)
    state: bool | None = True
    out: list[tuple[str, bool | None]] = []
    i = 0
    while i < len(physical):
        first = i
        line = physical[i]
        while line.endswith("\\") and i + 1 < len(physical):
            i += 1
            line = line[:-1] + " " + physical[i]
        i += 1
        continued = [("", False)] * (i - first - 1)
        directive = DIRECTIVE.fullmatch(line.strip())
        if not directive:
            out += [(line, state), *continued]
            continue
        out += [("", False), *continued]
        word, rest = directive.group(1), directive.group(2).strip()
        if word in ("ifdef", "ifndef", "if"):
            if word == "if":
                taken = {"0": False, "1": True}.get(rest)
            else:
                taken = (rest.split()[0] in defined) == (word == "ifdef")
            stack.append((taken, state))
            state = and_state(state, taken)
        elif word in ("else", "elif"):
            if not stack:
                raise GenError(f"{where}:{first + 1}: #{word} without #if")
            taken, outer = stack[-1]
            taken = None if word == "elif" or taken is None else not taken
            state = and_state(outer, taken)
        elif word == "endif":
            if not stack:
                raise GenError(f"{where}:{first + 1}: #endif without #if")
            state = stack.pop()[1]
        elif word == "define" and state:
            macro = re.match(r"(\w+)(\()?\s*(.*)", rest, re.S)
            if macro and not macro.group(2):
                defined[macro.group(1)] = macro.group(3).strip()
        elif word == "undef" and state:
            defined.pop(rest.split()[0], None)
    return out


def and_state(outer: bool | None, taken: bool | None) -> bool | None:
    if outer is False or taken is False:
        return False
    if outer is None or taken is None:
        return None
    return True


def call_arguments(code: str, start: int, where: str) -> tuple[list[str], int]:
    """The comma-separated arguments of the call whose `(` is at `start`."""
    depth = 0
    args, current = [], []
    for token in C_TOKEN.finditer(code, start):
        text = token.group(0)
        if text in "([{":
            depth += 1
            if depth == 1:
                continue
        elif text in ")]}":
            depth -= 1
            if depth == 0:
                args.append(" ".join(current))
                return args, token.end()
        elif text == "," and depth == 1:
            args.append(" ".join(current))
            current = []
            continue
        current.append(text)
    raise GenError(f"{where}: unbalanced call at offset {start}")


def c_string(expr: str, macros: dict[str, str], conditions: dict[str, bool], where: str) -> str:
    """The value of a C string expression: adjacent literals and macros
    naming literals, or `COND ? A : B` with COND in `conditions`."""
    tokens = C_TOKEN.findall(expr)
    if "?" in tokens:
        question = tokens.index("?")
        colon = tokens.index(":", question)
        condition = "".join(tokens[:question])
        negated = condition.startswith("!")
        value = conditions.get(condition.lstrip("!"))
        if value is None:
            raise GenError(f"{where}: no value for the condition {condition!r} in {expr!r}")
        chosen = tokens[question + 1:colon] if value != negated else tokens[colon + 1:]
        return c_string(" ".join(chosen), macros, conditions, where)
    out = []
    for token in tokens:
        if token.startswith('"'):
            out.append(token[1:-1].encode().decode("unicode_escape"))
        elif token in macros:
            out.append(c_string(macros[token], macros, conditions, where))
        else:
            raise GenError(f"{where}: cannot read {token!r} in the string {expr!r}")
    return "".join(out)


def registered_flags(git_dir: Path, tag: str, module: str) -> dict[str, str]:
    """Command name (lowercase) -> the flag string the module registers it
    with at `tag`, read from the files of MODULE_REGISTRATION.

    These registrations create whole commands only: a module that registers
    subcommands (RedisModule_CreateSubcommand) in those files is refused, so
    that a documented subcommand can take its parent's flags (the server runs
    a parent registered as one command with its own flags, whatever the
    argument that names the subcommand)."""
    how = MODULE_REGISTRATION[module]
    found: dict[str, str] = {}

    def record(name: str, flags: str, where: str) -> None:
        name = name.lower()
        if found.get(name, flags) != flags:
            raise GenError(f"{where}: {name} registered with {found[name]!r} and {flags!r}")
        found[name] = flags

    if how["style"] == "rows":
        for path in how["files"]:
            for name, flags in RUST_COMMAND_ROW.findall(git(git_dir, "show", f"{tag}:{path}")):
                record(name, flags, f"{module} {tag}:{path}")
        return found
    macros: dict[str, str] = {}
    for path in how.get("headers", []):
        preprocess(git(git_dir, "show", f"{tag}:{path}"), macros, f"{module} {tag}:{path}")
    call = re.compile(r"\b(" + "|".join(map(re.escape, how["calls"])) + r")\s*\(")
    for path in how["files"]:
        where = f"{module} {tag}:{path}"
        source = git(git_dir, "show", f"{tag}:{path}")
        if "CreateSubcommand" in source:
            raise GenError(f"{where}: subcommands are registered here; teach registered_flags them")
        file_macros = dict(macros)
        lines = preprocess(source, file_macros, where)
        code = "\n".join(line if state is not False else "" for line, state in lines)
        for match in call.finditer(code):
            args, _end = call_arguments(code, match.end() - 1, where)
            line = code.count("\n", 0, match.start())
            at = f"{where}:{line + 1}"
            # A helper's definition declares its parameters; inside a helper,
            # a call forwards the helper's `name` parameter.
            if len(args) < 4 or args[0] != "ctx":
                continue
            if re.fullmatch(r"[a-z_]\w*", args[1]) and args[1] not in file_macros:
                continue
            if lines[line][1] is None:
                raise GenError(f"{at}: a registration under an #if this parser does not decide")
            conditions = how.get("conditions", {})
            record(
                c_string(args[1], file_macros, conditions, at),
                c_string(args[3], file_macros, conditions, at),
                at,
            )
    return found


def module_flags(command: str, text: str) -> list[str]:
    """The model's flags for a module command registered with `text`."""
    flags = ["module"]
    for word in text.split():
        if word.lower() not in MODULE_FLAG_WORDS:
            raise GenError(
                f"{command}: module flag {word!r} unknown: add it to MODULE_FLAG_WORDS "
                "(and to CommandFlags if COMMAND reports it)"
            )
        mapped = MODULE_FLAG_WORDS[word.lower()]
        if mapped:
            flags.append(mapped)
    return command_flags(command, flags)


def apply_registered_flags(commands: list[dict], registered: dict[str, str]) -> list[str]:
    """Sets the registered flags on documented commands and subcommands (a
    subcommand without its own registration takes its parent's, see
    `registered_flags`); returns the names left `flags_unknown`."""
    unknown = []
    for command in commands:
        for entry in [command, *command["subcommands"]]:
            text = registered.get(entry["name"])
            if text is None and entry is not command:
                text = registered.get(command["name"])
            if text is None:
                unknown.append(entry["name"])
            else:
                entry["flags"] = module_flags(entry["name"], text)
    return unknown


def read_module(git_dir: Path, tag: str, module: str) -> list[dict]:
    data = json.loads(git(git_dir, "show", f"{tag}:commands.json"))
    parents: dict[str, dict] = {}
    subs = []
    for name, body in data.items():
        command = module_command(name, body, module)
        if "|" in command["name"]:
            subs.append(command)
        else:
            parents[command["name"]] = command
    for sub in subs:
        parent = sub["name"].split("|")[0]
        if parent not in parents:
            # A container documented only through its subcommands.
            parents[parent] = {
                "name": parent,
                "arity": -2,
                "flags": ["module", "flags_unknown"],
                "key_specs": [],
                "subcommands": [],
                "since": dict(sub["since"]),
            }
        parents[parent]["subcommands"].append(sub)
    for command in parents.values():
        command["subcommands"].sort(key=lambda c: c["name"])
    return sorted(parents.values(), key=lambda c: c["name"])


def read_modules(git_dirs: dict[str, str]) -> tuple[dict[str, list[dict]], list[dict]]:
    """Each module's documented commands with their registered flags, and
    the model's `modules` entries saying where the flags come from."""
    modules: dict[str, list[dict]] = {}
    entries = []
    for module, repository, tag in MODULES:
        git_dir = Path(git_dirs[module])
        commands = read_module(git_dir, tag, module)
        unknown = apply_registered_flags(commands, registered_flags(git_dir, tag, module))
        total = sum(1 for _ in walk(commands))
        listed = f" ({', '.join(unknown)})" if unknown else ""
        print(
            f"{module}: {total - len(unknown)} of {total} commands with registered flags, "
            f"{len(unknown)} flags_unknown{listed}",
            file=sys.stderr,
        )
        how = MODULE_REGISTRATION[module]
        modules[module] = commands
        entries.append(
            {
                "name": module,
                "repository": repository,
                "tag": tag,
                "commands": total,
                "flags_from": how["files"] + how.get("headers", []),
                "commands_with_flags": total - len(unknown),
                "unregistered": unknown,
            }
        )
    return modules, entries


# --------------------------------------------------------------------------
# The model


def form_of(command: dict) -> dict:
    return {
        "arity": command["arity"],
        "flags": command["flags"],
        "key_specs": command["key_specs"],
    }


def version_key(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.-]", text))


def merge(views: dict[str, list[dict]], modules: dict[str, list[dict]]) -> list[dict]:
    """One entry per command name, with its forms per release set."""
    order = [name for name, *_ in RELEASES]
    entries: dict[str, dict] = {}

    def add(command: dict, release: str | None, module: str | None, into: dict) -> None:
        entry = into.setdefault(
            command["name"],
            {"name": command["name"], "module": module, "since": {}, "forms": [], "subcommands": {}},
        )
        for server, since in command.get("since", {}).items():
            entry["since"].setdefault(server, since)
            if version_key(since) < version_key(entry["since"][server]):
                entry["since"][server] = since
        if command.get("deprecated_since"):
            entry["deprecated_since"] = command["deprecated_since"]
            entry["replaced_by"] = command["replaced_by"]
        form = form_of(command)
        releases = order if release is None else [release]
        for existing in entry["forms"]:
            if existing["form"] == form:
                existing["releases"] = sorted(
                    set(existing["releases"]) | set(releases), key=order.index
                )
                break
        else:
            entry["forms"].append({"form": form, "releases": list(releases)})
        for sub in command["subcommands"]:
            add(sub, release, module, entry["subcommands"])

    for release in order:
        for command in views[release]:
            add(command, release, None, entries)
    for module, commands in modules.items():
        for command in commands:
            add(command, None, module, entries)

    def finish(entry: dict) -> dict:
        entry["forms"].sort(key=lambda f: order.index(f["releases"][0]))
        entry["forms"] = [{"releases": f["releases"], **f["form"]} for f in entry["forms"]]
        entry["subcommands"] = [finish(s) for _, s in sorted(entry["subcommands"].items())]
        return entry

    return [finish(entry) for _, entry in sorted(entries.items())]


def merge_sandbox(sandboxes: dict[str, dict]) -> list[dict]:
    order = [name for name, *_ in RELEASES]
    names = sorted({name for sandbox in sandboxes.values() for name in sandbox})
    out = []
    for name in names:
        present = [r for r in order if name in sandboxes[r]]
        types = {sandboxes[r][name]["type"] for r in present}
        if len(types) != 1:
            raise GenError(f"sandbox: global {name} has types {types} across releases")
        entry = {"name": name, "type": types.pop(), "releases": present}
        if any("members" in sandboxes[r][name] for r in present):
            member_names = sorted(
                {m for r in present for m in sandboxes[r][name].get("members", {})}
            )
            members = []
            for member in member_names:
                where = [r for r in present if member in sandboxes[r][name].get("members", {})]
                member_type = sandboxes[where[0]][name]["members"][member]
                members.append({"name": member, "type": member_type, "releases": where})
            entry["members"] = members
        out.append(entry)
    return out


def collect(args: argparse.Namespace) -> dict:
    git_dirs = dict(item.split("=", 1) for item in args.git_dir)
    servers = dict(item.split("=", 1) for item in args.server)
    for needed in ["redis", "valkey"] + [m for m, *_ in MODULES]:
        if needed not in git_dirs:
            raise GenError(f"collect needs --git-dir {needed}=PATH")
    views: dict[str, list[dict]] = {}
    sandboxes: dict[str, dict] = {}
    live: dict[str, dict] = {}
    for name, server, tag, how in RELEASES:
        if how == "live":
            binary = servers.get(name) or default_server(name)
            print(f"{name}: live {binary}", file=sys.stderr)
            data = read_live(binary, cli_for(binary, server), server)
            if data["version"] != tag:
                raise GenError(f"{name}: {binary} is {data['version']}, expected {tag}")
            live[name] = data
    reference_tag = dict((n, t) for n, _, t, _ in RELEASES)[SANDBOX_REFERENCE]
    ref_names = sandbox_names(Path(git_dirs["redis"]), reference_tag)
    probes = [data["sandbox"] for data in live.values()]
    for name, server, tag, how in RELEASES:
        if how == "live":
            views[name] = live[name]["commands"]
            sandboxes[name] = live[name]["sandbox"]
        elif how == "spec":
            git_dir = Path(git_dirs[server])
            views[name] = read_spec(git_dir, tag, server)
            sandboxes[name] = derive_sandbox(
                live[SANDBOX_REFERENCE]["sandbox"], ref_names, sandbox_names(git_dir, tag), probes
            )
        else:
            source = next(r for r, s, t, h in RELEASES if h == "live" and s == server and t == tag)
            major_minor = version_key(name.split("-")[1])[:2]
            views[name] = filter_since(live[source]["commands"], server, major_minor)
            sandboxes[name] = live[source]["sandbox"]
    # The spec files of the live 7.0 release must read as its COMMAND does:
    # this validates the spec reading used for the other releases.
    spec_70 = read_spec(Path(git_dirs["redis"]), "7.0.15", "redis")
    differences = compare_views(strip_docs(spec_70), strip_docs(views["redis-7.0"]), "spec 7.0.15", "live 7.0.15")
    if differences:
        raise GenError("spec files and COMMAND disagree on 7.0.15:\n" + "\n".join(differences[:40]))
    modules, module_entries = read_modules(git_dirs)
    return {
        "releases": [
            {"name": n, "server": s, "tag": t, "source": source_text(n, s, t, h)}
            for n, s, t, h in RELEASES
        ],
        "modules": module_entries,
        "commands": merge(views, modules),
        "sandbox": merge_sandbox(sandboxes),
    }


def collect_modules(args: argparse.Namespace) -> dict:
    """`collect --modules-only`: the stored model with its module commands
    read again; the releases' commands and sandboxes stay as stored (their
    live servers need not run here)."""
    git_dirs = dict(item.split("=", 1) for item in args.git_dir)
    for needed in [m for m, *_ in MODULES]:
        if needed not in git_dirs:
            raise GenError(f"collect --modules-only needs --git-dir {needed}=PATH")
    model = json.loads(MODEL_JSON.read_text())
    modules, module_entries = read_modules(git_dirs)
    releases = [entry for entry in model["commands"] if not entry["module"]]
    module_commands = merge({name: [] for name, *_ in RELEASES}, modules)
    shared = {e["name"] for e in releases} & {e["name"] for e in module_commands}
    if shared:
        raise GenError(f"module commands named like server commands: {sorted(shared)}")
    model["commands"] = sorted(releases + module_commands, key=lambda e: e["name"])
    model["modules"] = module_entries
    return model


def source_text(name: str, server: str, tag: str, how: str) -> str:
    binary = f"{server}-server {tag}"
    if how == "live":
        return f"live {binary}: COMMAND, COMMAND DOCS, no-writes probe, sandbox probe"
    if how == "spec":
        return f"{server} tag {tag}: src/commands/*.json, sandbox allow-lists of src/script_lua.c"
    minor = name.split("-")[1]
    return (
        f"live {binary}, keeping the commands whose COMMAND DOCS `since` is {minor} or older "
        "(no release tag in the sources read)"
    )


def filter_since(commands: list[dict], server: str, major_minor: tuple) -> list[dict]:
    def keep(command: dict) -> bool:
        since = command.get("since", {}).get(server)
        return since is None or version_key(since)[:2] <= major_minor

    out = []
    for command in commands:
        if not keep(command):
            continue
        copy = dict(command)
        copy["subcommands"] = [sub for sub in command["subcommands"] if keep(sub)]
        out.append(copy)
    return out


def strip_docs(commands: list[dict]) -> list[dict]:
    return [
        {
            "name": c["name"],
            **form_of(c),
            "subcommands": strip_docs(c["subcommands"]),
        }
        for c in commands
    ]


def without_may_replicate(flags: list[str]) -> list[str]:
    return [flag for flag in flags if flag != "may_replicate"]


def compare_views(a: list[dict], b: list[dict], a_name: str, b_name: str) -> list[str]:
    """Differences between two views of one release (ignoring may_replicate,
    which Redis 7.0's COMMAND hides and the probe recovers for live views
    only in part: noscript commands are never probed)."""
    out = []
    a_by = {c["name"]: c for c in walk(a)}
    b_by = {c["name"]: c for c in walk(b)}
    for name in sorted(set(a_by) | set(b_by)):
        if name not in a_by:
            out.append(f"{name}: only in {b_name}")
            continue
        if name not in b_by:
            out.append(f"{name}: only in {a_name}")
            continue
        x, y = a_by[name], b_by[name]
        for field in ("arity", "key_specs"):
            if x[field] != y[field]:
                out.append(f"{name}: {field} {x[field]} ({a_name}) vs {y[field]} ({b_name})")
        fx, fy = without_may_replicate(x["flags"]), without_may_replicate(y["flags"])
        if fx != fy:
            out.append(f"{name}: flags {fx} ({a_name}) vs {fy} ({b_name})")
    return out


def view_of(model: dict, release: str) -> list[dict]:
    """The commands of one release, as the model stores them."""

    def project(entries: list[dict]) -> list[dict]:
        out = []
        for entry in entries:
            if entry["module"]:
                continue
            for form in entry["forms"]:
                if release in form["releases"]:
                    out.append(
                        {
                            "name": entry["name"],
                            "arity": form["arity"],
                            "flags": form["flags"],
                            "key_specs": form["key_specs"],
                            "subcommands": project(entry["subcommands"]),
                            "since": entry["since"],
                            "deprecated_since": entry.get("deprecated_since"),
                        }
                    )
        return out

    return project(model["commands"])


def sandbox_of(model: dict, release: str) -> dict:
    out = {}
    for entry in model["sandbox"]:
        if release not in entry["releases"]:
            continue
        item = {"type": entry["type"]}
        if "members" in entry:
            item["members"] = {
                m["name"]: m["type"] for m in entry["members"] if release in m["releases"]
            }
        out[entry["name"]] = item
    return out


# --------------------------------------------------------------------------
# Rust


def rust_str(text: str) -> str:
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.append(f"\\u{{{ord(char):x}}}")
    return '"' + "".join(out) + '"'


def flag_expr(type_name: str, table: list[tuple[str, str]], present: list[str]) -> str:
    consts = [f"{type_name}::{const}" for name, const in table if name in present]
    if not consts:
        return f"{type_name}::NONE"
    return consts[0] + "".join(f".union({c})" for c in consts[1:])


def release_set(model: dict, releases: list[str]) -> str:
    order = [r["name"] for r in model["releases"]]
    bits = sum(1 << order.index(r) for r in releases)
    if bits == (1 << len(order)) - 1:
        return "ReleaseSet::ALL"
    return f"ReleaseSet::from_bits({bits:#b})"


def key_spec_rs(spec: dict) -> str:
    begin, find = spec["begin"], spec["find"]
    if begin[0] == "index":
        begin_rs = f"BeginSearch::Index({begin[1]})"
    elif begin[0] == "keyword":
        begin_rs = f"BeginSearch::Keyword {{ keyword: {rust_str(begin[1])}, start_from: {begin[2]} }}"
    else:
        begin_rs = "BeginSearch::Unknown"
    if find[0] == "range":
        find_rs = f"FindKeys::Range {{ last_key: {find[1]}, key_step: {find[2]}, limit: {find[3]} }}"
    elif find[0] == "keynum":
        find_rs = (
            f"FindKeys::KeyNum {{ key_num_index: {find[1]}, first_key: {find[2]}, key_step: {find[3]} }}"
        )
    else:
        find_rs = "FindKeys::Unknown"
    flags = flag_expr("KeySpecFlags", KEY_SPEC_FLAGS, spec["flags"])
    return f"KeySpec {{ flags: {flags}, begin_search: {begin_rs}, find_keys: {find_rs} }}"


def opt_str(text: str | None) -> str:
    return "None" if text is None else f"Some({rust_str(text)})"


def emit_entry(model: dict, entry: dict, out: list[str], shared: dict[str, str]) -> None:
    out.append("CommandEntry {")
    out.append(f"name: {rust_str(entry['name'])},")
    module = entry["module"]
    out.append(f"module: {'None' if module is None else 'Some(Module::' + module.capitalize() + ')'},")
    since = entry["since"]
    out.append(
        f"since: Since {{ redis: {opt_str(since.get('redis'))}, valkey: {opt_str(since.get('valkey'))}, "
        f"module: {opt_str(since.get(module) if module else None)} }},"
    )
    if entry.get("deprecated_since"):
        out.append(
            f"deprecation: Some(Deprecation {{ since: {rust_str(entry['deprecated_since'])}, "
            f"replaced_by: {rust_str(entry['replaced_by'])} }}),"
        )
    else:
        out.append("deprecation: None,")
    out.append("forms: &[")
    for form in entry["forms"]:
        specs = form["key_specs"]
        if specs:
            text = "&[" + ", ".join(key_spec_rs(s) for s in specs) + "]"
            const = shared.setdefault(text, f"KEYS_{len(shared)}")
            specs_rs = const
        else:
            specs_rs = "&[]"
        out.append(
            f"Form {{ releases: {release_set(model, form['releases'])}, arity: {form['arity']}, "
            f"flags: {flag_expr('CommandFlags', COMMAND_FLAGS, form['flags'])}, key_specs: {specs_rs} }},"
        )
    out.append("],")
    if entry["subcommands"]:
        out.append("subcommands: &[")
        for sub in entry["subcommands"]:
            emit_entry(model, sub, out, shared)
        out.append("],")
    else:
        out.append("subcommands: &[],")
    out.append("},")


HEADER = [
    f"// @generated by {SCRIPT_NAME} from analysis/server-model.json.",
    "// Do not edit by hand: change the generator and run it again.",
    "",
]


def releases_rs(model: dict) -> str:
    out = list(HEADER)
    out += [
        "//! The server releases the model knows, oldest first per server, and",
        "//! where each one's data was read.",
        "",
        "use super::{Release, Server};",
        "",
        "/// Every release of the model; a [`super::ReleaseSet`] bit is an index here.",
        "pub static RELEASES: &[Release] = &[",
    ]
    for release in model["releases"]:
        server = release["server"].capitalize()
        major, minor = release["name"].split("-")[1].split(".")
        out.append(
            f"Release {{ name: {rust_str(release['name'])}, server: Server::{server}, "
            f"major: {major}, minor: {minor}, tag: {rust_str(release['tag'])}, "
            f"source: {rust_str(release['source'])} }},"
        )
    out.append("];")
    out.append("")
    out.append("/// The module tables: (module, repository, pinned tag).")
    out.append("pub static MODULE_SOURCES: &[(&str, &str, &str)] = &[")
    for module in model["modules"]:
        out.append(
            f"({rust_str(module['name'])}, {rust_str(module['repository'])}, {rust_str(module['tag'])}),"
        )
    out.append("];")
    return "\n".join(out) + "\n"


def counts(model: dict) -> list[str]:
    lines = []
    for release in model["releases"]:
        view = view_of(model, release["name"])
        subs = sum(len(c["subcommands"]) for c in view)
        globals_ = sum(1 for g in model["sandbox"] if release["name"] in g["releases"])
        lines.append(
            f"{release['name']} ({release['tag']}): {len(view)} commands, {subs} subcommands, "
            f"{globals_} globals"
        )
    for module in model["modules"]:
        lines.append(
            f"{module['name']} ({module['repository']} {module['tag']}): {module['commands']} commands, "
            f"{module['commands_with_flags']} with registered flags"
        )
    return lines


def commands_rs(model: dict) -> str:
    out = list(HEADER)
    out += ["//! Every command the model knows, sorted by name, one entry per name with"]
    out += ["//! its forms (arity, flags, key specs) per set of releases. Sizes:", "//!"]
    out += [f"//! * {line}" for line in counts(model)]
    out += [
        "//!",
        "//! Module commands come from each module's `commands.json` (documentation",
        "//! format): the arity and key positions are derived from the documented",
        "//! arguments (a key inside optional or alternative arguments, or after a",
        "//! variable-length one, is an `unknown` spec). That format has no command",
        "//! flags: they are read from the module's command registrations at the",
        "//! same tag (a documented subcommand takes its parent's), and a command",
        "//! registered nowhere there is flagged `flags_unknown`.",
        "",
        "use super::{",
        "    BeginSearch, CommandEntry, CommandFlags, Deprecation, FindKeys, Form, KeySpec, KeySpecFlags,",
        "    Since,",
        "};",
        "use crate::target::{Module, ReleaseSet};",
        "",
    ]
    body: list[str] = ["/// Every command, sorted by name (lowercase).", "pub static COMMANDS: &[CommandEntry] = &["]
    shared: dict[str, str] = {}
    for entry in model["commands"]:
        emit_entry(model, entry, body, shared)
    body.append("];")
    for text, const in sorted(shared.items(), key=lambda item: int(item[1].split("_")[1])):
        out.append(f"const {const}: &[KeySpec] = {text};")
    out.append("")
    out += body
    return "\n".join(out) + "\n"


def sandbox_rs(model: dict) -> str:
    out = list(HEADER)
    out += [
        "//! The globals of an `EVAL` script and the members of each library table,",
        "//! sorted by name (byte order, case-sensitive), with the releases that",
        "//! have each.",
        "",
        "use super::{Global, GlobalKind, LuaType, Member};",
        "use crate::target::ReleaseSet;",
        "",
        "/// Every global an `EVAL` script can read on some release, sorted by name.",
        "pub static GLOBALS: &[Global] = &[",
    ]
    for entry in model["sandbox"]:
        name = entry["name"]
        if name in ("KEYS", "ARGV"):
            kind = "GlobalKind::ScriptArguments"
        elif name == "_G":
            kind = "GlobalKind::GlobalTable"
        elif "members" in entry:
            members = "".join(
                f"Member {{ name: {rust_str(m['name'])}, ty: LuaType::{LUA_TYPES[m['type']]}, "
                f"releases: {release_set(model, m['releases'])} }},"
                for m in entry["members"]
            )
            kind = f"GlobalKind::Library(&[{members}])"
        elif entry["type"] == "function":
            kind = "GlobalKind::Function"
        else:
            kind = f"GlobalKind::Value(LuaType::{LUA_TYPES[entry['type']]})"
        out.append(
            f"Global {{ name: {rust_str(name)}, kind: {kind}, "
            f"releases: {release_set(model, entry['releases'])} }},"
        )
    out.append("];")
    return "\n".join(out) + "\n"


def rustfmt(source: str, rustfmt_bin: str) -> str:
    proc = subprocess.run(
        [rustfmt_bin, "--edition", "2024", "--emit", "stdout", "--quiet"],
        input=source,
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    if proc.returncode != 0:
        raise GenError(f"rustfmt failed:\n{proc.stderr[:2000]}")
    return proc.stdout


def rendered(model: dict, rustfmt_bin: str) -> dict[Path, str]:
    src = ANALYSIS / "src"
    return {
        src / "target" / "table.rs": rustfmt(releases_rs(model), rustfmt_bin),
        src / "commands" / "table.rs": rustfmt(commands_rs(model), rustfmt_bin),
        src / "sandbox" / "table.rs": rustfmt(sandbox_rs(model), rustfmt_bin),
    }


def model_json(model: dict) -> str:
    return json.dumps(model, indent=1, sort_keys=True) + "\n"


# --------------------------------------------------------------------------
# The CI check


def default_server(release: str) -> str:
    if release.startswith("valkey"):
        proc = subprocess.run(
            [str(REPO / "scripts" / "ensure-valkey")], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise GenError(f"scripts/ensure-valkey failed: {proc.stderr.strip()}")
        return str(Path(proc.stdout.strip()) / "valkey-server")
    if release == "redis-7.0":
        return shutil.which("redis-server") or "redis-server"
    raise GenError(f"{release}: give its binary with --server {release}=PATH")


def cli_for(server: str, family: str) -> str:
    sibling = Path(server).with_name(f"{family}-cli")
    if sibling.exists():
        return str(sibling)
    return shutil.which(f"{family}-cli") or shutil.which("redis-cli") or "redis-cli"


def check(model: dict, args: argparse.Namespace) -> list[str]:
    problems = []
    for path, text in rendered(model, args.rustfmt).items():
        current = path.read_text() if path.exists() else None
        if current != text:
            problems.append(f"{path.relative_to(REPO)} is not the rendering of {MODEL_JSON.name}: run `{SCRIPT_NAME} render`")
    servers = dict(item.split("=", 1) for item in args.server)
    by_name = {r["name"]: r for r in model["releases"]}
    for release in CHECKED_LIVE:
        family = by_name[release]["server"]
        binary = servers.get(release) or default_server(release)
        data = read_live(binary, cli_for(binary, family), family)
        if data["version"] != by_name[release]["tag"]:
            problems.append(f"{release}: {binary} is {data['version']}, the model has {by_name[release]['tag']}")
            continue
        stored = view_of(model, release)
        problems += [
            f"{release}: {d}"
            for d in compare_views(stored, data["commands"], "model", f"live {data['version']}")
        ]
        # may_replicate of script-callable commands is what the probe sees.
        live_flags = {c["name"]: c["flags"] for c in walk(data["commands"])}
        for command in walk(stored):
            if command["subcommands"] or "noscript" in command["flags"]:
                continue
            ours = "may_replicate" in command["flags"] or "write" in command["flags"]
            theirs = any(f in live_flags.get(command["name"], []) for f in ("may_replicate", "write"))
            if ours != theirs:
                problems.append(f"{release}: {command['name']}: no-writes probe disagrees with the model")
        live_docs = {c["name"]: c for c in walk(data["commands"])}
        for command in walk(stored):
            live = live_docs.get(command["name"])
            if live and live.get("since", {}).get(family) and command["since"].get(family) is None:
                problems.append(f"{release}: {command['name']}: the model has no since")
        if sandbox_of(model, release) != data["sandbox"]:
            problems.append(f"{release}: the sandbox probe differs from the model")
        print(f"{release}: checked against live {family}-server {data['version']}", file=sys.stderr)
    return problems


# --------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", choices=["collect", "render"], help="collect or render")
    parser.add_argument("--check", action="store_true", help="verify tables and live servers; write nothing")
    parser.add_argument("--git-dir", action="append", default=[], metavar="SOURCE=PATH")
    parser.add_argument("--server", action="append", default=[], metavar="RELEASE=PATH")
    parser.add_argument(
        "--modules-only",
        action="store_true",
        help="with collect: read only the module sources, keep the stored release data",
    )
    parser.add_argument("--rustfmt", default=shutil.which("rustfmt") or "rustfmt")
    args = parser.parse_args()
    if not args.check and args.mode is None:
        parser.error("give `collect`, `render` or `--check`")
    if args.modules_only and args.mode != "collect":
        parser.error("--modules-only goes with `collect`")
    try:
        if args.check:
            model = json.loads(MODEL_JSON.read_text())
            problems = check(model, args)
            for problem in problems:
                print(f"{SCRIPT_NAME}: {problem}", file=sys.stderr)
            if problems:
                return 1
            print("server model: tables current; live releases match: " + ", ".join(CHECKED_LIVE))
            return 0
        if args.mode == "collect":
            model = collect_modules(args) if args.modules_only else collect(args)
            MODEL_JSON.write_text(model_json(model))
            print(f"wrote {MODEL_JSON.relative_to(REPO)}")
        else:
            model = json.loads(MODEL_JSON.read_text())
        for path, text in rendered(model, args.rustfmt).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(REPO)}")
        for line in counts(model):
            print(line)
    except GenError as exc:
        print(f"{SCRIPT_NAME}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
