#!/usr/bin/env python3
"""Generate the server model embedded in redis-script-analysis.

The checker knows several server releases (Redis 6.0 to 8.10, Valkey 7.2 to
9.1) and the command modules Redis 8 bundles (JSON, search, time series,
probabilistic). For each release it knows every command and subcommand
(arity, flags, key specs, since, deprecation) and the globals and library
members a script sees. This generator builds that model in three steps:

1. ``collect``: read every source and write ``analysis/server-model.json``,
   one entry per command with per-release "forms" (identical forms across
   releases are stored once). Sources, per release:

   * a live server's ``COMMAND`` and ``COMMAND DOCS`` (and a sandbox probe
     by ``EVAL``) where a binary of that release runs here (Redis 7.0.15,
     8.0.2 and 8.6.3, Valkey 8.1.8 and 9.1.2; Redis 8.2.3 was read live where a
     binary of it ran);
   * a release before 7.0 (Redis 6.0.9 and 6.2.5) is ``live-command``: its
     own ``COMMAND`` (commands, arity, flags, legacy key positions, ACL
     categories), sandbox probe and refusal probes, completed from the live
     Redis 7.0.15 (``LEGACY_REFERENCE``, see ``read_live_command``) where
     6.x reports nothing: key specs, subcommands, arguments and ``since``,
     each kept where 7.0's ``COMMAND DOCS`` dates it that release or older;
     it has no Functions, so its function sandboxes are empty;
   * otherwise the server's own command specification files
     (``src/commands/*.json``) at the pinned release tag, read from a bare
     git directory, and its sandbox allow-lists (``src/script_lua.c``);
   * a release newer than every binary here (Redis 8.8 and 8.10) is
     ``documented``: the live data of the newest release of its server
     (Redis 8.6.3), with the commands and subcommands it lacks that the
     Redis documentation pages (``REDIS_DOCS``, read by
     ``scripts/redis_docs.py``) date that release or older, and the newest
     release's sandboxes;
   * a release with neither a tag in the repositories read nor a binary
     here (Redis 8.4, Valkey 9.0) is ``derived``: the live data of the
     newer release of the same server (Redis 8.6.3, Valkey 9.1.2), keeping the commands and
     subcommands whose ``COMMAND DOCS`` ``since`` is that release or older,
     with the newer release's sandboxes;
   * the Redis Functions environments, stored like the EVAL sandbox:
     ``function_sandbox``, what a registered function's callback sees while
     ``FCALL`` runs it, and ``load_sandbox``, what a library's top-level code
     sees while ``FUNCTION LOAD`` runs it. A live server is probed: the
     EVAL listing scripts run by a probe library's functions, and, since
     load-time code has no ``pairs`` (nor anything but the API table), each
     candidate name read by a library of its own (``probe_load_sandbox``).
     A release read from source gets its EVAL sandbox changed as the live
     reference of its server family (``FUNCTION_REFERENCE``) changes its own
     at call time, and the load-time names ``luaEngineInitEngine``
     registers in ``src/function_lua.c`` at the tag, typed by the live
     probes (``load_names``);
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
   of the JSON model, then start the servers of ``CHECKED_LIVE`` (Redis
   6.0.9, 6.2.5, 7.0.15, 8.0.2 and 8.6.3, Valkey 8.1.8 and 9.1.2) and verify the model's view of
   those releases equals what the live servers report (``COMMAND``,
   ``COMMAND DOCS``, the ``no-writes`` probe, the sandbox probe, both
   function probes, and the value model's arguments, categories and
   options refused in scripts). This is the CI step: it needs no
   repository checkout; each binary comes from ``scripts/ensure-server``,
   which installs a missing one.

Usage::

    scripts/gen-server-model.py collect --git-dir redis=PATH --git-dir valkey=PATH \\
        --git-dir json=PATH --git-dir search=PATH --git-dir timeseries=PATH \\
        --git-dir bloom=PATH --server redis-8.2=PATH/redis-server
    scripts/gen-server-model.py collect --keep-stored \\
        --git-dir redis=PATH --git-dir valkey=PATH
    scripts/gen-server-model.py collect --modules-only --git-dir json=PATH \\
        --git-dir search=PATH --git-dir timeseries=PATH --git-dir bloom=PATH
    scripts/gen-server-model.py values --git-dir redis=PATH --git-dir valkey=PATH
    scripts/gen-server-model.py render
    scripts/gen-server-model.py --check

``values`` writes ``analysis/value-model.json``: each command's argument
grammar with argument types, its reply type and its ACL categories per
release (see ``scripts/value_model.py`` for the sources of each part);
``render`` and ``--check`` cover its Rust table too.

``--server NAME=PATH`` names a server binary for a live release (default:
the one ``scripts/ensure-server NAME`` provides, for the releases of
``CHECKED_LIVE``; a full ``collect`` needs ``--server`` for the others,
redis-8.2).

``collect --keep-stored`` reads every source this machine has and keeps the
rest as ``server-model.json`` stores it: each live release given with
``--server`` or in ``CHECKED_LIVE`` is started and probed, each release read
from a tag is read when ``--git-dir redis=PATH`` (the sandbox reference) and
its own server's git directory are given, a derived release is derived
again when its live release was read, and each module is read when its
repository is given. Any other release keeps its stored commands (with
their ``since`` for its server) and its three sandboxes, and any other
module its stored commands and ``modules`` entry; each one kept is named on
stderr with the reason. A release is kept only when the model stored it
from the tag and source ``RELEASES`` names now (so its label stays true),
and only when stored at all: a new release must be readable. The result is
what a full ``collect`` writes when the sources not given here report what
they reported when they were read.

``collect --modules-only`` reads only the module repositories and keeps
every release's commands and sandboxes as ``server-model.json`` stores
them, for a machine without the live servers; the result is what a full
``collect`` writes when those servers report what they reported before.
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

import redis_docs
import value_model

REPO = Path(__file__).resolve().parent.parent
ANALYSIS = REPO / "analysis"
MODEL_JSON = ANALYSIS / "server-model.json"
SCRIPT_NAME = "scripts/gen-server-model.py"

# --------------------------------------------------------------------------
# What the model covers


# (name, server, pinned tag or live version, how the release is read).
# `spec`: command JSON and sandbox allow-lists at the tag; `live`: a running
# binary; `derived`: the live data of another release, filtered by `since`;
# `documented`: the live data of an older release, with the commands and
# subcommands it lacks that the documentation pages (`REDIS_DOCS`) date
# this release or older; `live-command`: a running binary older than 7.0,
# whose `COMMAND` lists the commands with arity, flags, legacy key
# positions and ACL categories but has no key specs, no subcommands and no
# `COMMAND DOCS`: those come from `LEGACY_REFERENCE` (`read_live_command`).
RELEASES = [
    ("redis-6.0", "redis", "6.0.9", "live-command"),
    ("redis-6.2", "redis", "6.2.5", "live-command"),
    ("redis-7.0", "redis", "7.0.15", "live"),
    ("redis-7.2", "redis", "7.2.6", "spec"),
    ("redis-7.4", "redis", "7.4.1", "spec"),
    ("redis-8.0", "redis", "8.0.2", "live"),
    ("redis-8.2", "redis", "8.2.3", "live"),
    ("redis-8.4", "redis", "8.6.3", "derived"),
    ("redis-8.6", "redis", "8.6.3", "live"),
    ("redis-8.8", "redis", "8.6.3", "documented"),
    ("redis-8.10", "redis", "8.6.3", "documented"),
    ("valkey-7.2", "valkey", "7.2.7", "spec"),
    ("valkey-8.0", "valkey", "8.0.1", "spec"),
    ("valkey-8.1", "valkey", "8.1.8", "live"),
    ("valkey-9.0", "valkey", "9.1.2", "derived"),
    ("valkey-9.1", "valkey", "9.1.2", "live"),
]

# Releases whose live server the CI check starts (and `collect` starts
# without `--server`), each binary found by `scripts/ensure-server`
# (`default_server`).
CHECKED_LIVE = ["redis-6.0", "redis-6.2", "redis-7.0", "redis-8.0", "redis-8.6", "valkey-8.1", "valkey-9.1"]

# The live release whose `COMMAND` and `COMMAND DOCS` complete what a
# `live-command` release's `COMMAND` lacks: key specs where both report the
# same legacy key positions, subcommands and arguments (each kept when its
# `since` is the older release or older), `since` and deprecation.
LEGACY_REFERENCE = "redis-7.0"

# Flags a 6.x `COMMAND` reports that Redis 7.0 turned into command tips
# (`nondeterministic_output`, `nondeterministic_output_order`): no flag of
# the model.
TIP_FLAGS = {"random", "sort_for_script"}

# Before 7.0, every script EVAL compiles stays a global function named after
# its SHA1 (`f_<sha1>`): the probe's own scripts among them, not the sandbox.
SCRIPT_BODY_GLOBAL = re.compile(r"f_[0-9a-f]{40}\Z")

# The Redis documentation repository (`--git-dir docs=PATH`) at the commit
# read: one page per command, whose front matter repeats the command's
# specification (see scripts/redis_docs.py).
REDIS_DOCS = ("redis/docs", "63f31f69985905d997fa5b0c02e1559b5d04c8b2")

# The release whose live probe and tag are the reference for the sandboxes
# read from source: their allow-lists are compared with this tag's.
SANDBOX_REFERENCE = "redis-7.0"

# Per server family, the live release whose EVAL and function call-time
# probes give the differences applied to that family's releases read from
# source (`function_changes`). Every live release of a family must show the
# same differences, or the releases between them would be guesses.
FUNCTION_REFERENCE = {"redis": SANDBOX_REFERENCE, "valkey": "valkey-8.1"}

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

    def reply(self, *args: str) -> tuple[object, str | None]:
        """(value, None), or (None, message) when the server answers with an
        error: the function probes expect some commands to be refused."""
        out = self.raw(*args, json_output=True).strip()
        if out.startswith("error:"):
            message = out[len("error:"):]
            try:
                message = json.loads(message)
            except json.JSONDecodeError:
                pass
            return None, str(message)
        try:
            return json.loads(out), None
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


def lua_list(client: Client, *command: str) -> list[list[str]]:
    """The `name type` lines a listing script returns, run by `command`
    (`EVAL script 0 ...` or `FCALL function 0 ...`)."""
    reply = client.call(*command)
    if not isinstance(reply, list):
        raise GenError(f"{command[0]}: expected an array, got {reply!r:.200}")
    pairs = []
    for item in reply:
        name, _, lua_type = str(item).rpartition(" ")
        if lua_type not in LUA_TYPES:
            raise GenError(f"sandbox: unexpected Lua type {lua_type!r} for {name!r}")
        pairs.append([name, lua_type])
    return sorted(pairs)


# Tables whose members are not listed: the script arguments change per call
# and `_G` is the table of globals itself.
UNLISTED_TABLES = ("KEYS", "ARGV", "_G")


def probe_sandbox(
    client: Client,
    list_globals: tuple[str, ...] = ("EVAL", LIST_GLOBALS, "0"),
    list_members: tuple[str, ...] = ("EVAL", LIST_MEMBERS, "0"),
) -> dict:
    """Globals a script sees: name -> {type, members (tables)}. By default
    those of an EVAL script; the function probe passes FCALL commands."""
    sandbox = {}
    for name, lua_type in lua_list(client, *list_globals):
        entry = {"type": lua_type}
        if lua_type == "table" and name not in UNLISTED_TABLES:
            entry["members"] = dict(lua_list(client, *list_members, name))
        sandbox[name] = entry
    return sandbox


# --------------------------------------------------------------------------
# Redis Functions (`FUNCTION LOAD` a `#!lua name=lib` library, `FCALL` its
# functions). Their Lua state is not the EVAL one: a function's callback
# runs with the library state's globals, and the library's top-level code
# runs, during FUNCTION LOAD, against a separate table of a few names
# (`luaEngineInitEngine` in src/function_lua.c) whose unknown names raise
# "Script attempted to access nonexistent global variable".

PROBE_LIBRARY = "gen_model_probe"
NONEXISTENT_GLOBAL = "Script attempted to access nonexistent global variable"
LUA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# The tables of the server API, which share their members at load time.
API_TABLES = ("redis", "server")


def listing_library() -> str:
    """A library whose two functions run LIST_GLOBALS and LIST_MEMBERS
    unchanged: the callbacks name their second parameter (the FCALL
    arguments) ARGV, so the listing scripts read it as they do under EVAL."""
    return (
        f"#!lua name={PROBE_LIBRARY}\n"
        f"redis.register_function('{PROBE_LIBRARY}_globals', function(_keys, ARGV)\n"
        f"{LIST_GLOBALS}end)\n"
        f"redis.register_function('{PROBE_LIBRARY}_members', function(_keys, ARGV)\n"
        f"{LIST_MEMBERS}end)\n"
    )


def probe_function_sandbox(client: Client) -> dict:
    """Globals a registered function's callback sees while FCALL runs it."""
    _, error = client.reply("FUNCTION", "LOAD", listing_library())
    if error is not None:
        raise GenError(f"function probe: FUNCTION LOAD refused the listing library: {error}")
    try:
        return probe_sandbox(
            client,
            ("FCALL", f"{PROBE_LIBRARY}_globals", "0"),
            ("FCALL", f"{PROBE_LIBRARY}_members", "0"),
        )
    finally:
        client.call("FUNCTION", "DELETE", PROBE_LIBRARY)


def load_time_type(client: Client, expression: str) -> str | None:
    """The type of `expression` (a global or `table.member`) as a library's
    top-level code reads it; None when it is absent there. No standard
    library exists at load time, so the value is kept in a local and its
    type taken when FCALL runs the function, where `type` exists."""
    library = f"{PROBE_LIBRARY}_load"
    code = (
        f"#!lua name={library}\n"
        f"local v = {expression}\n"
        f"redis.register_function('{library}', function() return type(v) end)\n"
    )
    _, error = client.reply("FUNCTION", "LOAD", code)
    if error is not None:
        if NONEXISTENT_GLOBAL in error:
            return None
        raise GenError(f"load-time probe of {expression}: FUNCTION LOAD failed: {error}")
    try:
        lua_type = client.call("FCALL", library, "0")
    finally:
        client.call("FUNCTION", "DELETE", library)
    if lua_type not in LUA_TYPES:
        raise GenError(f"load-time probe of {expression}: unexpected type {lua_type!r}")
    return None if lua_type == "nil" else lua_type


def probe_load_sandbox(client: Client, eval_sandbox: dict, function_sandbox: dict) -> dict:
    """Globals a library's top-level code sees while FUNCTION LOAD runs it.

    Nothing there can list a table (no `pairs`), so every candidate name is
    read in a library of its own: each global of the EVAL and call-time
    sandboxes (and the API tables), then, for each table found, each member
    of the table of that name in those sandboxes. The API tables are tried
    with the members of both, plus `register_function`, which exists only
    at load time.
    """
    known = [eval_sandbox, function_sandbox]
    candidates = {name for sandbox in known for name in sandbox} | set(API_TABLES)
    api_members = {"register_function"} | {
        member
        for sandbox in known
        for table in API_TABLES
        for member in sandbox.get(table, {}).get("members", {})
    }
    found = {}
    for name in sorted(candidates):
        if not LUA_NAME.match(name):
            raise GenError(f"load-time probe: {name!r} is not a Lua name")
        lua_type = load_time_type(client, name)
        if lua_type is None:
            continue
        entry = {"type": lua_type}
        if lua_type == "table" and name not in UNLISTED_TABLES:
            if name in API_TABLES:
                members = api_members
            else:
                members = {m for sandbox in known for m in sandbox.get(name, {}).get("members", {})}
            entry["members"] = {}
            for member in sorted(members):
                if not LUA_NAME.match(member):
                    raise GenError(f"load-time probe: {name}.{member!r} is not a Lua name")
                member_type = load_time_type(client, f"{name}.{member}")
                if member_type is not None:
                    entry["members"][member] = member_type
        found[name] = entry
    return found


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
        function_sandbox = probe_function_sandbox(client)
        load_sandbox = probe_load_sandbox(client, sandbox, function_sandbox)
        script_refusals = value_model.probe_refusals(
            lambda script: client.reply("EVAL", script, "1", "{probe}stream")[1]
        )
    return {
        "version": version,
        "commands": commands,
        "sandbox": sandbox,
        "function_sandbox": function_sandbox,
        "load_sandbox": load_sandbox,
        "script_refusals": script_refusals,
        "docs": docs,
        "command_info": raw,
    }


def read_live_command(server: str, cli: str, family: str, release: str, reference: dict) -> dict:
    """A `live-command` release (Redis 6.x): its own `COMMAND` (the commands,
    their arity, flags and legacy key positions, their ACL categories), the
    EVAL sandbox and the options refused in scripts, probed live; what its
    `COMMAND` lacks from `reference`, the live data of `LEGACY_REFERENCE`
    (see `legacy_commands`). No Redis Functions (they came with 7.0) and no
    `no-writes` probe (no shebang flags before 7.0)."""
    with ThrowawayServer(server, cli) as client:
        version = server_version(client)
        raw = client.call("COMMAND")
        if not isinstance(raw, list) or not raw:
            raise GenError("COMMAND: expected a non-empty array")
        sandbox = {
            name: entry for name, entry in probe_sandbox(client).items() if not SCRIPT_BODY_GLOBAL.match(name)
        }
        script_refusals = value_model.probe_refusals(
            lambda script: client.reply("EVAL", script, "1", "{probe}stream")[1]
        )
    commands, derived = legacy_commands(raw, reference, family, release_minor(release))
    return {
        "version": version,
        "commands": commands,
        "sandbox": sandbox,
        "function_sandbox": {},
        "load_sandbox": {},
        "script_refusals": script_refusals,
        "docs": None,
        "command_info": raw,
        "key_positions_only": derived,
    }


def read_live_legacy_checked(binary: str, cli: str, release: str, reference: dict) -> dict:
    """`read_live_command` of `release` from `binary` (its version checked),
    reporting on stderr what the reference could not complete: commands
    whose key specs come from their legacy positions, and the commands
    whose `since` disagrees with the release's `COMMAND`."""
    name, server, tag, _ = next(r for r in RELEASES if r[0] == release)
    data = read_live_command(binary, cli, server, release, reference)
    if data["version"] != tag:
        raise GenError(f"{release}: {binary} is {data['version']}, expected {tag}")
    for line in legacy_report(data, reference, server, release):
        print(f"  {line}", file=sys.stderr)
    return data


def legacy_report(data: dict, reference: dict, family: str, release: str) -> list[str]:
    minor = release_minor(release)
    have = {c["name"] for c in data["commands"]}
    out = []
    if data["key_positions_only"]:
        out.append(
            f"key specs from the legacy key positions (the reference reports others): "
            f"{', '.join(data['key_positions_only'])}"
        )
    newer = [c["name"] for c in data["commands"] if version_key(c.get("since", {}).get(family, "0"))[:2] > minor]
    if newer:
        out.append(f"listed by {release} but dated newer by {LEGACY_REFERENCE}: {', '.join(newer)}")
    missing = [
        c["name"] for c in reference["commands"]
        if c["name"] not in have and version_key(c.get("since", {}).get(family, "99"))[:2] <= minor
    ]
    if missing:
        out.append(f"dated {release} or older by {LEGACY_REFERENCE} but not listed by {release}: {', '.join(missing)}")
    unknown = [c["name"] for c in data["commands"] if c["name"] not in {r["name"] for r in reference["commands"]}]
    if unknown:
        out.append(f"not in {LEGACY_REFERENCE} (removed since): {', '.join(unknown)}")
    return out


def legacy_commands(raw: list, reference: dict, family: str, minor: tuple) -> tuple[list[dict], list[str]]:
    """The commands of a 6.x `COMMAND` reply (entries of 7 fields: name,
    arity, flags, first key, last key, step, ACL categories), completed from
    the live `reference` release: a command takes the reference's key specs
    where the reference reports the same legacy key positions and the same
    `movablekeys`, else specs made from its own positions (the names are
    returned: the caller reports them); the reference's subcommands whose
    `since` is `minor` or older; and `since` and deprecation from the
    reference's `COMMAND DOCS`."""
    ref_commands = {c["name"]: c for c in reference["commands"]}
    ref_positions = {str(e[0]).lower(): [int(x) for x in e[3:6]] for e in reference["command_info"]}
    out, derived = [], []
    for entry in raw:
        if not isinstance(entry, list) or len(entry) < 7:
            raise GenError(f"COMMAND: unexpected entry {entry!r:.200}")
        name = str(entry[0]).lower()
        flags = command_flags(name, [f for f in entry[2] if f not in TIP_FLAGS])
        positions = [int(x) for x in entry[3:6]]
        movable = "movablekeys" in flags
        ref = ref_commands.get(name)
        if ref is not None and ref_positions.get(name) == positions and movable == ("movablekeys" in ref["flags"]):
            key_specs = ref["key_specs"]
        else:
            key_specs = position_key_specs(positions, movable)
            derived.append(name)
        subcommands = [
            sub for sub in (ref or {}).get("subcommands", [])
            if version_key(sub.get("since", {}).get(family, "0"))[:2] <= minor
        ]
        out.append({
            "name": name,
            "arity": int(entry[1]),
            "flags": flags,
            "key_specs": key_specs,
            "subcommands": subcommands,
        })
    # Copies: the reference's entries stay as read.
    out = json.loads(json.dumps(sorted(out, key=lambda c: c["name"])))
    if reference["docs"] is not None:
        apply_docs(out, reference["docs"], family)
    return out, sorted(derived)


def position_key_specs(positions: list[int], movable: bool) -> list[dict]:
    """Key specs for legacy key positions (first, last, step; last counts
    from the end when negative), as Redis 7.0 builds them for a command
    without specs (`populateCommandLegacyRangeSpec`); a command whose keys
    move gets an unknown spec beside them."""
    first, last, step = positions
    specs = []
    if first > 0:
        specs.append(index_spec(first, last - first if last >= 0 else last, step))
    if movable:
        specs.append(unknown_spec())
    return specs


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
    spec_files = {
        file: json.loads(git(git_dir, "show", f"{tag}:src/commands/{file}"))
        for file in files
        if file.endswith(".json")
    }
    return spec_view(spec_files, server)


def read_docs(git_dir: Path) -> tuple[dict[str, dict], list[dict]]:
    """The Redis documentation pages at `REDIS_DOCS`: as specification files
    ({file: {COMMAND: body}}) and as COMMAND would list them. A page that
    cannot be read as a specification is named on stderr."""
    commit = REDIS_DOCS[1]
    pages = f"{commit}:content/commands"
    try:
        bodies, unread = redis_docs.spec_bodies(
            lambda: git(git_dir, "ls-tree", "--name-only", pages).split(),
            lambda page: git(git_dir, "show", f"{pages}/{page}"),
        )
    except redis_docs.DocsError as error:
        raise GenError(f"{REDIS_DOCS[0]} at {commit}: {error}") from error
    for page, why in sorted(unread.items()):
        print(f"{REDIS_DOCS[0]}: {page} not read: {why}", file=sys.stderr)
    return bodies, spec_view(bodies, "redis")


def spec_view(spec_files: dict[str, dict], server: str) -> list[dict]:
    """Specification files ({file: {COMMAND: body}}) as COMMAND lists the
    commands they describe."""
    parents: dict[str, dict] = {}
    subs: list[tuple[str, dict]] = []
    for file in sorted(spec_files):
        data = spec_files[file]
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


def function_changes(eval_sandbox: dict, call_sandbox: dict, release: str) -> dict:
    """What turns a release's EVAL probe into its function call-time probe:
    globals removed and added, and per table the members removed and added.
    A global or member whose type changes would not be a difference these
    can carry, so it is an error."""
    for name in set(eval_sandbox) & set(call_sandbox):
        if eval_sandbox[name]["type"] != call_sandbox[name]["type"]:
            raise GenError(f"{release}: global {name} changes type between EVAL and FCALL")
    members = {}
    for name in sorted(set(eval_sandbox) & set(call_sandbox)):
        before = eval_sandbox[name].get("members", {})
        after = call_sandbox[name].get("members", {})
        for member in set(before) & set(after):
            if before[member] != after[member]:
                raise GenError(f"{release}: {name}.{member} changes type between EVAL and FCALL")
        if before != after:
            members[name] = {
                "removed": sorted(set(before) - set(after)),
                "added": {m: after[m] for m in sorted(set(after) - set(before))},
            }
    return {
        "removed": sorted(set(eval_sandbox) - set(call_sandbox)),
        "added": {n: call_sandbox[n] for n in sorted(set(call_sandbox) - set(eval_sandbox))},
        "members": members,
    }


def apply_function_changes(eval_sandbox: dict, changes: dict) -> dict:
    """A release's call-time sandbox: its EVAL sandbox with `changes`."""
    sandbox = json.loads(json.dumps(eval_sandbox))
    for name in changes["removed"]:
        sandbox.pop(name, None)
    for name, entry in changes["added"].items():
        sandbox[name] = json.loads(json.dumps(entry))
    for name, change in changes["members"].items():
        if name not in sandbox:
            continue
        members = sandbox[name].setdefault("members", {})
        for member in change["removed"]:
            members.pop(member, None)
        members.update(change["added"])
    return sandbox


# The library-loading part of `luaEngineInitEngine` (src/function_lua.c):
# from its first `lua_newtable` (the table of load-time globals, then the API
# table) to the store of that table in the registry.
C_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
LOAD_SECTION_END = re.compile(r"lua_setfield\([^;]*LUA_REGISTRYINDEX\s*,\s*LIBRARY_API_NAME\s*\)")
# A member set on the table on top of the stack: key, value, settable.
TABLE_MEMBER = re.compile(
    r'lua_pushstring\(\s*[^,()]+,\s*"(\w+)"\s*\)\s*;\s*lua_push\w+\([^;]*\)\s*;\s*'
    r"lua_settable\(\s*[^,()]+,\s*-3\s*\)"
)
# The API table stored in the table of load-time globals below it.
LOAD_GLOBAL = re.compile(r'lua_setfield\(\s*[^,()]+,\s*-2\s*,\s*(?:"(\w+)"|(\w+))\s*\)')
# Helpers called in that section that put no name on the API table: one
# gives it the metatable that raises on unknown names, the other makes the
# tables read-only.
NON_REGISTERING_HELPERS = {"luaSetErrorMetatable", "luaSetTableProtectionRecursively"}


def c_function_body(source: str, name: str) -> str | None:
    """The body of the C function `name` defined in `source` (comments
    removed), or None when `source` does not define it."""
    code = without_comments(source)
    # Braces inside string literals (the error handler's Lua code) do not
    # count: match on a copy with the literals blanked.
    blanked = re.sub(r'"(?:\\.|[^"\\\n])*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', code)
    head = re.search(rf"^[\w \t*]*\b{name}\s*\([^;{{)]*\)\s*\{{", blanked, re.M)
    if head is None:
        return None
    depth = 0
    for index in range(head.end() - 1, len(blanked)):
        if blanked[index] == "{":
            depth += 1
        elif blanked[index] == "}":
            depth -= 1
            if depth == 0:
                return code[head.end():index]
    raise GenError(f"{name}: unbalanced braces")


def load_names(git_dir: Path, tag: str) -> tuple[set[str], set[str]]:
    """The globals a library's top-level code sees at `tag` and the members
    of their (shared) API table: the names `luaEngineInitEngine` registers
    between creating the table of load-time globals and storing it, including
    those its helpers register (their bodies in src/script_lua.c)."""
    sources = [git(git_dir, "show", f"{tag}:src/{file}") for file in ("function_lua.c", "script_lua.c")]
    init = c_function_body(sources[0], "luaEngineInitEngine")
    if init is None:
        raise GenError(f"{tag}: no luaEngineInitEngine in src/function_lua.c")
    start, end = init.find("lua_newtable("), LOAD_SECTION_END.search(init)
    if start < 0 or end is None or end.start() < start:
        raise GenError(f"{tag}: luaEngineInitEngine builds no table of load-time globals")
    section = init[start:end.start()]

    globals_ = set()
    for literal, macro in LOAD_GLOBAL.findall(section):
        if macro and macro not in API_NAME_MACROS:
            raise GenError(f"{tag}: load-time global named by the unknown macro {macro}")
        globals_.add(literal or API_NAME_MACROS[macro])
    members = set(TABLE_MEMBER.findall(section))
    pending = [section]
    followed: set[str] = set()
    while pending:
        code = pending.pop()
        for helper in C_CALL.findall(code):
            if helper.startswith(("lua_", "luaL_")) or helper in NON_REGISTERING_HELPERS:
                continue
            if helper in followed:
                continue
            followed.add(helper)
            bodies = (c_function_body(source, helper) for source in sources)
            body = next((b for b in bodies if b is not None), None)
            if body is None:
                raise GenError(
                    f"{tag}: the load-time table is built with {helper}(), found in neither "
                    "src/function_lua.c nor src/script_lua.c"
                )
            members |= set(TABLE_MEMBER.findall(body))
            pending.append(body)
    if not globals_ or not members:
        raise GenError(f"{tag}: no load-time global or member found in src/function_lua.c")
    return globals_, members


def derive_load_sandbox(names: tuple[set[str], set[str]], probes: list[dict], tag: str) -> dict:
    """The load-time sandbox of a release read from source: the names its
    `luaEngineInitEngine` registers, typed by the live probes (which list
    the same family first). A name no live probe saw has no known type."""
    globals_, members = names
    sandbox = {}
    for name in sorted(globals_):
        entry = next((probe[name] for probe in probes if name in probe), None)
        if entry is None or entry["type"] != "table":
            raise GenError(f"{tag}: load-time global {name!r} is no table a live probe saw")
        typed = {}
        for member in sorted(members):
            typed[member] = next(
                (
                    probe[api]["members"][member]
                    for probe in probes
                    for api in API_TABLES
                    if member in probe.get(api, {}).get("members", {})
                ),
                None,
            )
            if typed[member] is None:
                raise GenError(f"{tag}: load-time member {name}.{member} is unknown to every live probe")
        sandbox[name] = {"type": "table", "members": typed}
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
    the model's `modules` entries saying where the flags come from, for the
    modules whose repository `git_dirs` names."""
    modules: dict[str, list[dict]] = {}
    entries = []
    for module, repository, tag in MODULES:
        if module not in git_dirs:
            continue
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


def merge_sandbox(sandboxes: dict[str, dict], what: str = "sandbox") -> list[dict]:
    """One entry per global of the per-release `sandboxes`, with the
    releases that have it and, for a table, its members likewise."""
    order = [name for name, *_ in RELEASES]
    names = sorted({name for sandbox in sandboxes.values() for name in sandbox})
    out = []
    for name in names:
        present = [r for r in order if name in sandboxes[r]]
        types = {sandboxes[r][name]["type"] for r in present}
        if len(types) != 1:
            raise GenError(f"{what}: global {name} has types {types} across releases")
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
    """The model, every release read from its source (see the module
    docstring). With `--keep-stored`, a release whose source is neither
    given nor found here keeps what server-model.json stores for it (see
    `stored_release`), and so does a module whose repository is not
    given."""
    git_dirs = dict(item.split("=", 1) for item in args.git_dir)
    servers = dict(item.split("=", 1) for item in args.server)
    known = {name for name, *_ in RELEASES}
    for release in servers:
        if release not in known:
            raise GenError(f"--server {release}=...: no release {release} in RELEASES")
    sources = {"redis", "valkey", "docs"} | {m for m, *_ in MODULES}
    for source in git_dirs:
        if source not in sources:
            raise GenError(f"--git-dir {source}=...: unknown source (known: {', '.join(sorted(sources))})")
    stored = stored_model() if args.keep_stored else None
    if stored is None:
        for needed in ["redis", "valkey"] + [m for m, *_ in MODULES]:
            if needed not in git_dirs:
                raise GenError(f"collect needs --git-dir {needed}=PATH (or --keep-stored)")
    views: dict[str, list[dict]] = {}
    sandboxes: dict[str, dict] = {}
    function_sandboxes: dict[str, dict] = {}
    load_sandboxes: dict[str, dict] = {}
    # Every live release's data: read from its binary, or kept as stored
    # (what its binary reported when it was read).
    live: dict[str, dict] = {}
    kept: dict[str, str] = {}
    clis: dict[str, str] = {}
    def binary_of(name: str) -> str | None:
        """The binary `--server` gives, else `scripts/ensure-server`'s for
        a release CI checks (or for every release without --keep-stored)."""
        binary = servers.get(name)
        if binary is None and (stored is None or name in CHECKED_LIVE):
            binary = default_server(name)
        return binary

    for name, server, tag, how in RELEASES:
        if how != "live":
            continue
        binary = binary_of(name)
        if binary is None:
            kept[name] = f"no --server {name}=PATH given"
            live[name] = stored_release(stored, name, kept[name])
            continue
        print(f"{name}: live {binary}", file=sys.stderr)
        clis[name] = cli_for(binary, server)
        data = read_live(binary, clis[name], server)
        if data["version"] != tag:
            raise GenError(f"{name}: {binary} is {data['version']}, expected {tag}")
        live[name] = data
    # The releases before 7.0, completed from the live reference (kept apart
    # from `live`: they have no Functions to compare).
    legacy: dict[str, dict] = {}
    for name, server, tag, how in RELEASES:
        if how != "live-command":
            continue
        binary = binary_of(name)
        if binary is None or LEGACY_REFERENCE not in clis:
            kept[name] = f"no --server {name}=PATH given" if binary is None else f"{LEGACY_REFERENCE} is kept"
            legacy[name] = stored_release(stored, name, kept[name])
            continue
        print(f"{name}: live {binary}, completed from {LEGACY_REFERENCE}", file=sys.stderr)
        data = read_live_legacy_checked(binary, clis[LEGACY_REFERENCE], name, live[LEGACY_REFERENCE])
        legacy[name] = data
    reference_tag = dict((n, t) for n, _, t, _ in RELEASES)[SANDBOX_REFERENCE]
    # Releases read from a tag need the reference tag's allow-lists too.
    read_tags = "redis" in git_dirs
    if read_tags:
        ref_names = sandbox_names(Path(git_dirs["redis"]), reference_tag)
        # The load-time names read from the reference tag must be what its
        # live server showed: this validates the source reading used for
        # the others.
        ref_load = load_names(Path(git_dirs["redis"]), reference_tag)
        live_load = live[SANDBOX_REFERENCE]["load_sandbox"]
        seen = (set(live_load), {m for entry in live_load.values() for m in entry.get("members", {})})
        if ref_load != seen:
            raise GenError(
                f"load-time names of src/function_lua.c at {reference_tag} {sorted(map(sorted, ref_load))} "
                f"differ from the live probe {sorted(map(sorted, seen))}"
            )
    probes = [data["sandbox"] for data in live.values()]
    changes = reference_function_changes(live)
    documented: list[dict] | None = None
    for name, server, tag, how in RELEASES:
        if how in ("live", "live-command"):
            data = live[name] if how == "live" else legacy[name]
            views[name] = data["commands"]
            sandboxes[name] = data["sandbox"]
            function_sandboxes[name] = data["function_sandbox"]
            load_sandboxes[name] = data["load_sandbox"]
            continue
        if how == "spec" and not (read_tags and server in git_dirs):
            needs = sorted({"redis", server} - set(git_dirs))
            kept[name] = "no " + " nor ".join(f"--git-dir {n}=PATH" for n in needs) + " given"
            data = stored_release(stored, name, kept[name])
        elif how == "spec":
            git_dir = Path(git_dirs[server])
            data = {"commands": read_spec(git_dir, tag, server)}
            data["sandbox"] = derive_sandbox(
                live[SANDBOX_REFERENCE]["sandbox"], ref_names, sandbox_names(git_dir, tag), probes
            )
            data["function_sandbox"] = apply_function_changes(data["sandbox"], changes[server])
            # Types come from the live probes, those of the same family first.
            load_probes = [
                probe["load_sandbox"]
                for release, probe in sorted(live.items(), key=lambda i: not i[0].startswith(server + "-"))
            ]
            data["load_sandbox"] = derive_load_sandbox(load_names(git_dir, tag), load_probes, tag)
        elif how == "documented":
            source = derived_from(name)
            if source in kept or "docs" not in git_dirs:
                why = f"{source} is kept" if source in kept else "no --git-dir docs=PATH given"
                kept[name] = f"documented beside {source}: {why}"
                data = stored_release(stored, name, kept[name])
            else:
                if documented is None:
                    documented = read_docs(Path(git_dirs["docs"]))[1]
                    report_docs_differences(documented, live[source]["commands"], source)
                data = {
                    **live[source],
                    "commands": with_documented(
                        live[source]["commands"], documented, release_minor(source), release_minor(name)
                    ),
                }
        else:
            source = derived_from(name)
            if source in kept:
                kept[name] = f"derived from {source}, which is kept"
                data = stored_release(stored, name, kept[name])
            else:
                major_minor = version_key(name.split("-")[1])[:2]
                data = {
                    "commands": filter_since(live[source]["commands"], server, major_minor),
                    "sandbox": live[source]["sandbox"],
                    "function_sandbox": live[source]["function_sandbox"],
                    "load_sandbox": live[source]["load_sandbox"],
                }
        views[name] = data["commands"]
        sandboxes[name] = data["sandbox"]
        function_sandboxes[name] = data["function_sandbox"]
        load_sandboxes[name] = data["load_sandbox"]
    if read_tags:
        # The spec files of the live 7.0 release must read as its COMMAND
        # does: this validates the spec reading used for the other releases.
        spec_70 = read_spec(Path(git_dirs["redis"]), "7.0.15", "redis")
        differences = compare_views(
            strip_docs(spec_70), strip_docs(views["redis-7.0"]), "spec 7.0.15", "live 7.0.15"
        )
        if differences:
            raise GenError("spec files and COMMAND disagree on 7.0.15:\n" + "\n".join(differences[:40]))
    module_names = [m for m, *_ in MODULES]
    modules, module_entries = read_modules({m: d for m, d in git_dirs.items() if m in module_names})
    for module in module_names:
        if module not in modules:
            kept[module] = f"no --git-dir {module}=PATH given"
            modules[module], entry = stored_module(stored, module)
            module_entries.append(entry)
    for name, why in kept.items():
        print(f"{name}: kept as {MODEL_JSON.name} stores it ({why})", file=sys.stderr)
    return {
        "releases": [
            {"name": n, "server": s, "tag": t, "source": source_text(n, s, t, h)}
            for n, s, t, h in RELEASES
        ],
        "modules": sorted(module_entries, key=lambda e: module_names.index(e["name"])),
        "commands": merge(views, {m: modules[m] for m in module_names}),
        "sandbox": merge_sandbox(sandboxes),
        "function_sandbox": merge_sandbox(function_sandboxes, "function_sandbox"),
        "load_sandbox": merge_sandbox(load_sandboxes, "load_sandbox"),
    }


def release_minor(release: str) -> tuple:
    """(major, minor) of a release's name: (8, 10) for redis-8.10."""
    return version_key(release.split("-")[1])[:2]


def with_documented(commands: list[dict], documented: list[dict], base: tuple, minor: tuple) -> list[dict]:
    """`commands` (a live release's, `base` its (major, minor)) with the
    commands and subcommands of the documentation pages it lacks whose
    `since` is newer than `base` and `minor` or older."""

    def added(entry: dict) -> bool:
        since = entry.get("since", {}).get("redis")
        return since is not None and base < version_key(since)[:2] <= minor

    by_name = {command["name"]: command for command in commands}
    out = []
    for command in commands:
        page = next((c for c in documented if c["name"] == command["name"]), None)
        have = {sub["name"] for sub in command["subcommands"]}
        new_subs = [sub for sub in (page or {}).get("subcommands", []) if sub["name"] not in have and added(sub)]
        if new_subs:
            command = {**command, "subcommands": sorted(command["subcommands"] + new_subs, key=lambda c: c["name"])}
        out.append(command)
    for page in documented:
        if page["name"] not in by_name and added(page):
            subs = [sub for sub in page["subcommands"] if added(sub)]
            out.append({**page, "subcommands": subs})
    return sorted(out, key=lambda c: c["name"])


def report_docs_differences(documented: list[dict], live_commands: list[dict], live_name: str) -> None:
    """The documentation pages read as the live release they are added to
    reads, on stderr: how far the pages and COMMAND agree on the commands
    both have (the pages are only used for commands the live release
    lacks)."""
    base = release_minor(live_name)
    pages = strip_docs(filter_since(documented, "redis", base))
    listed = strip_docs(live_commands)
    differences = compare_views(pages, listed, REDIS_DOCS[0], live_name)
    both = {c["name"] for c in walk(pages)} & {c["name"] for c in walk(listed)}
    print(
        f"{REDIS_DOCS[0]} at {REDIS_DOCS[1][:12]}: {len(both)} commands and subcommands also in {live_name}, "
        f"{len(differences)} differences:",
        file=sys.stderr,
    )
    for difference in differences:
        print(f"  {difference}", file=sys.stderr)


def derived_from(release: str) -> str:
    """The live release a derived or documented one is cut from or added
    to: the same server and binary (tag)."""
    server, tag = next((s, t) for n, s, t, _ in RELEASES if n == release)
    for name, other_server, other_tag, how in RELEASES:
        if how == "live" and other_server == server and other_tag == tag:
            return name
    raise GenError(f"{release}: no live release of {server} {tag} to derive it from")


def stored_model() -> dict:
    """server-model.json as stored, for `collect --keep-stored`."""
    if not MODEL_JSON.exists():
        raise GenError(f"--keep-stored: there is no {MODEL_JSON.relative_to(REPO)} to keep from")
    model = json.loads(MODEL_JSON.read_text())
    for stored in ("sandbox", "function_sandbox", "load_sandbox"):
        if stored not in model:
            raise GenError(f"{MODEL_JSON.name} stores no {stored}: run a full collect")
    return model


def stored_release(model: dict | None, release: str, why: str) -> dict:
    """A release as `model` stores it, in the format of a live read (commands
    with their `since`, the three sandboxes), for a release whose source is
    not given (`why`). It is kept only when the model read it from the
    source RELEASES names, so the release's label stays true."""
    name, server, tag, how = next(r for r in RELEASES if r[0] == release)
    if model is None:
        raise GenError(f"{release}: {why}")
    entry = next((r for r in model["releases"] if r["name"] == release), None)
    if entry is None:
        raise GenError(f"{release}: {why}, and {MODEL_JSON.name} stores no {release} to keep")
    expected = source_text(name, server, tag, how)
    if (entry["server"], entry["tag"], entry["source"]) != (server, tag, expected):
        raise GenError(
            f"{release}: {why}, and {MODEL_JSON.name} stores it from {entry['source']!r} where "
            f"RELEASES now says {expected!r}: read it from that source"
        )
    return {
        "version": tag,
        "commands": stored_view(model["commands"], release, server),
        "sandbox": sandbox_of(model, release),
        "function_sandbox": sandbox_of(model, release, "function_sandbox"),
        "load_sandbox": sandbox_of(model, release, "load_sandbox"),
    }


def stored_view(entries: list[dict], release: str, server: str) -> list[dict]:
    """The server commands of one release as `entries` (the model's
    `commands`) store them, as a live read lists them: the entry's `since`
    for this server only (`merge` takes the oldest of all releases'). The
    view `--check` compares with the live server's, and counts report."""
    out = []
    for entry in entries:
        if entry["module"]:
            continue
        form = next((f for f in entry["forms"] if release in f["releases"]), None)
        if form is None:
            continue
        command = {
            "name": entry["name"],
            **{key: form[key] for key in ("arity", "flags", "key_specs")},
            "subcommands": stored_view(entry["subcommands"], release, server),
            "since": {server: entry["since"][server]} if entry["since"].get(server) else {},
        }
        if entry.get("deprecated_since"):
            command["deprecated_since"] = entry["deprecated_since"]
            command["replaced_by"] = entry["replaced_by"]
        out.append(command)
    return out


def stored_module(model: dict | None, module: str) -> tuple[list[dict], dict]:
    """A module's commands as `model` stores them, as `read_module` lists
    them (one form each: a module's commands are the same on every
    release), and its `modules` entry."""
    if model is None:
        raise GenError(f"collect needs --git-dir {module}=PATH")
    entry = next((m for m in model["modules"] if m["name"] == module), None)
    tag = next(t for m, _, t in MODULES if m == module)
    if entry is None or entry["tag"] != tag:
        raise GenError(
            f"{module}: no --git-dir {module}=PATH given, and {MODEL_JSON.name} stores no {module} "
            f"read at {tag} to keep"
        )

    def commands(entries: list[dict]) -> list[dict]:
        out = []
        for command in entries:
            if command["module"] != module:
                continue
            if len(command["forms"]) != 1:
                raise GenError(f"{command['name']}: a module command with several forms")
            form = command["forms"][0]
            item = {
                "name": command["name"],
                **{key: form[key] for key in ("arity", "flags", "key_specs")},
                "subcommands": commands(command["subcommands"]),
                "since": dict(command["since"]),
            }
            if command.get("deprecated_since"):
                item["deprecated_since"] = command["deprecated_since"]
                item["replaced_by"] = command["replaced_by"]
            out.append(item)
        return out

    return commands(model["commands"]), entry


def reference_function_changes(live: dict[str, dict]) -> dict[str, dict]:
    """Per server family, the EVAL-to-FCALL differences of its reference
    live release (FUNCTION_REFERENCE); every other live release of the
    family must show the same ones."""
    out = {}
    for server, reference in FUNCTION_REFERENCE.items():
        data = live[reference]
        out[server] = function_changes(data["sandbox"], data["function_sandbox"], reference)
        for release, other in live.items():
            if not release.startswith(server + "-"):
                continue
            theirs = function_changes(other["sandbox"], other["function_sandbox"], release)
            if theirs != out[server]:
                raise GenError(
                    f"{release} and {reference} differ in what FCALL changes from EVAL: "
                    f"{theirs} vs {out[server]}"
                )
    return out


def collect_modules(args: argparse.Namespace) -> dict:
    """`collect --modules-only`: the stored model with its module commands
    read again; the releases' commands and sandboxes stay as stored (their
    live servers need not run here)."""
    git_dirs = dict(item.split("=", 1) for item in args.git_dir)
    for needed in [m for m, *_ in MODULES]:
        if needed not in git_dirs:
            raise GenError(f"collect --modules-only needs --git-dir {needed}=PATH")
    model = json.loads(MODEL_JSON.read_text())
    for stored in ("sandbox", "function_sandbox", "load_sandbox"):
        if stored not in model:
            raise GenError(f"{MODEL_JSON.name} stores no {stored}: run a full collect")
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
    if how == "live-command":
        reference = dict((n, t) for n, _, t, _ in RELEASES)[LEGACY_REFERENCE]
        return (
            f"live {binary}: COMMAND, sandbox probe; key specs (where the legacy key positions agree), "
            f"subcommands, since and deprecation from live {server}-server {reference}, keeping what its "
            f"COMMAND DOCS dates {name.split('-')[1]} or older (no COMMAND DOCS nor key specs before 7.0)"
        )
    if how == "spec":
        return f"{server} tag {tag}: src/commands/*.json, sandbox allow-lists of src/script_lua.c"
    minor = name.split("-")[1]
    if how == "documented":
        return (
            f"live {binary}, and the commands and subcommands it lacks that the {REDIS_DOCS[0]} pages "
            f"at {REDIS_DOCS[1][:12]} date {minor} or older (no binary of {minor} here)"
        )
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


def sandbox_of(model: dict, release: str, key: str = "sandbox") -> dict:
    """One release's globals in the model's `key` sandbox, in the format of
    the live probes."""
    out = {}
    for entry in model[key]:
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
        view = stored_view(model["commands"], release["name"], release["server"])
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
        "use crate::model::target::{Module, ReleaseSet};",
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


def globals_rs(model: dict, key: str) -> list[str]:
    """The `Global` elements of the model's `key` sandbox, sorted by name."""
    out = []
    for entry in model[key]:
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
    return out


def sandbox_rs(model: dict) -> str:
    out = list(HEADER)
    out += [
        "//! The globals a script sees and the members of each library table,",
        "//! sorted by name (byte order, case-sensitive), with the releases that",
        "//! have each, in three environments:",
        "//!",
        "//! * [`GLOBALS`]: an `EVAL` script (probed with `pairs(_G)` in `EVAL`);",
        "//! * [`FUNCTION_GLOBALS`]: the callback of a Redis Function while `FCALL`",
        "//!   runs it (the same listing, run by a probe library's function); on",
        "//!   releases read from source, their `EVAL` globals changed as the",
        "//!   `FCALL` probe of a live release of the same server changes its own;",
        "//! * [`LOAD_GLOBALS`]: a library's top-level code while `FUNCTION LOAD`",
        "//!   runs it, where reading any other name raises (probed name by name,",
        "//!   one library each; on releases read from source, the names",
        "//!   `luaEngineInitEngine` in `src/function_lua.c` registers).",
        "",
        "use super::{Global, GlobalKind, LuaType, Member};",
        "use crate::model::target::ReleaseSet;",
        "",
        "/// Every global an `EVAL` script can read on some release, sorted by name.",
        "pub static GLOBALS: &[Global] = &[",
    ]
    out += globals_rs(model, "sandbox")
    out += [
        "];",
        "",
        "/// Every global the callback of a function registered with",
        "/// `redis.register_function` can read while `FCALL` runs it, on some",
        "/// release, sorted by name. There are no `KEYS` and `ARGV`: the callback",
        "/// gets the keys and arguments as its parameters.",
        "pub static FUNCTION_GLOBALS: &[Global] = &[",
    ]
    out += globals_rs(model, "function_sandbox")
    out += [
        "];",
        "",
        "/// Every global the top-level code of a `#!lua name=...` library can read",
        "/// while `FUNCTION LOAD` runs it, on some release, sorted by name: only",
        "/// the server API table, with `register_function`, `log` and constants.",
        "pub static LOAD_GLOBALS: &[Global] = &[",
    ]
    out += globals_rs(model, "load_sandbox")
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
    src = ANALYSIS / "src" / "model"
    values = json.loads((REPO / value_model.VALUE_MODEL_JSON).read_text())
    shapes = value_model.render(values, rust_str, lambda releases: release_set(model, releases))
    return {
        src / "target" / "table.rs": rustfmt(releases_rs(model), rustfmt_bin),
        src / "commands" / "table.rs": rustfmt(commands_rs(model), rustfmt_bin),
        src / "sandbox" / "table.rs": rustfmt(sandbox_rs(model), rustfmt_bin),
        REPO / value_model.SHAPES_TABLE: rustfmt(shapes, rustfmt_bin),
    }


def collect_values(model: dict, args: argparse.Namespace) -> dict:
    """The value model (`value_model`): specification files at the tags it
    names and the live servers its SOURCES read (`value_model.live_releases`)."""
    git_dirs = {k: Path(v) for k, v in (item.split("=", 1) for item in args.git_dir)}
    for family in ("redis", "valkey"):
        if family not in git_dirs:
            raise GenError(f"values: give --git-dir {family}=PATH")

    def list_dir(family: str, tag: str) -> list[str]:
        return git(git_dirs[family], "ls-tree", "--name-only", f"{tag}:src/commands").split()

    def show(family: str, tag: str, name: str) -> str:
        return git(git_dirs[family], "show", f"{tag}:src/commands/{name}")

    def grep(family: str, tag: str, text: str) -> list[tuple[str, int]]:
        proc = subprocess.run(
            ["git", f"--git-dir={git_dirs[family]}", "grep", "-n", "-F", text, tag, "--", "src/*.c"],
            capture_output=True, text=True, check=False,
        )
        if proc.returncode not in (0, 1):
            raise GenError(f"git grep at {family} {tag}: {proc.stderr.strip()}")
        found = []
        for hit in proc.stdout.splitlines():
            _, path, line, _ = hit.split(":", 3)
            found.append((path, int(line)))
        return found

    def show_file(family: str, tag: str, path: str) -> str:
        return git(git_dirs[family], "show", f"{tag}:{path}")

    servers = dict(item.split("=", 1) for item in args.server)
    by_name = {r["name"]: r for r in model["releases"]}
    live = {}
    how_of = {n: h for n, _, _, h in RELEASES}
    reads: dict[str, dict] = {}
    clis: dict[str, str] = {}
    # The reference first: the releases before 7.0 are completed from it.
    for release in sorted(value_model.live_releases(), key=lambda r: r != LEGACY_REFERENCE):
        family = by_name[release]["server"]
        binary = servers.get(release) or default_server(release)
        if how_of[release] == "live-command":
            data = read_live_command(binary, clis[LEGACY_REFERENCE], family, release, reads[LEGACY_REFERENCE])
        else:
            clis[release] = cli_for(binary, family)
            data = read_live(binary, clis[release], family)
            reads[release] = data
        if data["version"] != by_name[release]["tag"]:
            raise GenError(f"{release}: {binary} is {data['version']}, the model has {by_name[release]['tag']}")
        live[release] = (data["docs"], data["command_info"], data["version"], data["script_refusals"])
    pages = value_model.by_name(read_docs(git_dirs["docs"])[0]) if "docs" in git_dirs else None
    try:
        return value_model.collect(
            [r["name"] for r in model["releases"]], list_dir, show, grep, show_file, live, pages
        )
    except value_model.ValueModelError as exc:
        raise GenError(str(exc)) from exc


def model_json(model: dict) -> str:
    return json.dumps(model, indent=1, sort_keys=True) + "\n"


# --------------------------------------------------------------------------
# The CI check


def default_server(release: str) -> str:
    """The server binary of a live release, from `scripts/ensure-server`
    (which installs it when missing and knows the releases of
    CHECKED_LIVE); a release it does not provide needs `--server`."""
    server = next((s for n, s, _, _ in RELEASES if n == release), None)
    if server is None:
        raise GenError(f"{release}: no such release in RELEASES")
    script = REPO / "scripts" / "ensure-server"
    proc = subprocess.run([str(script), release], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GenError(
            f"{release}: scripts/ensure-server {release} failed ({proc.stderr.strip()}); "
            f"give its binary with --server {release}=PATH"
        )
    binary = Path(proc.stdout.strip()) / f"{server}-server"
    if not os.access(binary, os.X_OK):
        raise GenError(f"{release}: scripts/ensure-server printed {binary.parent}, which has no {binary.name}")
    return str(binary)


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
    how_of = {n: h for n, _, _, h in RELEASES}
    read: dict[str, dict] = {}
    clis: dict[str, str] = {}
    # The reference first: the releases before 7.0 are completed from it.
    for release in sorted(CHECKED_LIVE, key=lambda r: r != LEGACY_REFERENCE):
        family = by_name[release]["server"]
        binary = servers.get(release) or default_server(release)
        if how_of[release] == "live-command":
            data = read_live_command(binary, clis[LEGACY_REFERENCE], family, release, read[LEGACY_REFERENCE])
        else:
            clis[release] = cli_for(binary, family)
            data = read_live(binary, clis[release], family)
            read[release] = data
        if data["version"] != by_name[release]["tag"]:
            problems.append(f"{release}: {binary} is {data['version']}, the model has {by_name[release]['tag']}")
            continue
        stored = stored_view(model["commands"], release, family)
        problems += [
            f"{release}: {d}"
            for d in compare_views(stored, data["commands"], "model", f"live {data['version']}")
        ]
        values = json.loads((REPO / value_model.VALUE_MODEL_JSON).read_text())
        if how_of[release] == "live-command":
            # Neither a no-writes probe nor Functions before 7.0.
            for key in ("sandbox", "function_sandbox", "load_sandbox"):
                if sandbox_of(model, release, key) != data[key]:
                    problems.append(f"{release}: the {key} probe differs from the model")
            reference = read[LEGACY_REFERENCE]
            docs, info = value_model.legacy_view(
                reference["docs"], reference["command_info"], data["command_info"], release.split("-")[1]
            )
            problems += value_model.compare_live(values, release, docs, info)
            problems += value_model.compare_refusals(values, release, data["script_refusals"])
            print(f"{release}: checked against live {family}-server {data['version']}", file=sys.stderr)
            continue
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
        for key, probe in (
            ("sandbox", "the sandbox probe"),
            ("function_sandbox", "the function call-time probe"),
            ("load_sandbox", "the library load-time probe"),
        ):
            if sandbox_of(model, release, key) != data[key]:
                problems.append(f"{release}: {probe} differs from the model")
        problems += value_model.compare_live(values, release, data["docs"], data["command_info"])
        problems += value_model.compare_refusals(values, release, data["script_refusals"])
        print(f"{release}: checked against live {family}-server {data['version']}", file=sys.stderr)
    return problems


# --------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", choices=["collect", "values", "render"], help="collect, values or render")
    parser.add_argument("--check", action="store_true", help="verify tables and live servers; write nothing")
    parser.add_argument("--git-dir", action="append", default=[], metavar="SOURCE=PATH")
    parser.add_argument("--server", action="append", default=[], metavar="RELEASE=PATH")
    parser.add_argument(
        "--modules-only",
        action="store_true",
        help="with collect: read only the module sources, keep the stored release data",
    )
    parser.add_argument(
        "--keep-stored",
        action="store_true",
        help="with collect: read the releases and modules whose sources are given or found, "
        "keep the stored data of the others",
    )
    parser.add_argument("--rustfmt", default=shutil.which("rustfmt") or "rustfmt")
    args = parser.parse_args()
    if not args.check and args.mode is None:
        parser.error("give `collect`, `render` or `--check`")
    if (args.modules_only or args.keep_stored) and args.mode != "collect":
        parser.error("--modules-only and --keep-stored go with `collect`")
    if args.modules_only and args.keep_stored:
        parser.error("--modules-only already keeps every release as stored: give one of the two")
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
        elif args.mode == "values":
            model = json.loads(MODEL_JSON.read_text())
            values = collect_values(model, args)
            (REPO / value_model.VALUE_MODEL_JSON).write_text(value_model.model_json(values))
            print(f"wrote {value_model.VALUE_MODEL_JSON}")
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
