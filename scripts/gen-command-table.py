#!/usr/bin/env python3
"""Generate the Redis data embedded in the Lua checker of redis-script-macros.

Writes two Rust files from what a real `redis-server` reports:

* ``analysis/src/commands/table.rs``: every command and subcommand of
  ``COMMAND`` (name, arity, flags, key specs), sorted by name;
* ``analysis/src/sandbox/table.rs``: the globals an ``EVAL`` script can
  see and the members of every library table, sorted by name.

The hand-written APIs over this data are ``commands.rs`` and ``sandbox.rs``
next to them; the types the generated code uses are defined there.

Usage::

    scripts/gen-command-table.py                 # throwaway server, write files
    scripts/gen-command-table.py --check         # fail if the files are stale
    scripts/gen-command-table.py --port 6391     # use a running server

By default the script starts its own ``redis-server`` on a free 127.0.0.1
port with persistence disabled, and shuts it down when done. With ``--port``
it talks to a server that is already running there; that server must be a
disposable one: to learn which commands a ``#!lua flags=no-writes`` script
is refused although they lack the ``write`` flag (Redis's internal
``may_replicate`` flag, which ``COMMAND`` does not report in Redis 7.0), the
generator calls every script-callable non-write command from such a script
with dummy arguments, and the commands that are allowed really run.

Output is deterministic and already formatted with ``rustfmt`` (edition
2024), so ``cargo fmt --check`` passes on it. Python 3.11, stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LUA_DIR = REPO / "analysis" / "src"
SCRIPT_NAME = "scripts/gen-command-table.py"

# Bit order of `CommandFlags` in commands.rs: (name in COMMAND, Rust const).
# A flag the server reports that is missing here is an error: add it to both.
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
]

# Bit order of `KeySpecFlags` in commands.rs.
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

# Lua `type()` names and the `LuaType` variants of sandbox.rs.
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

# Marker the no-writes probe script returns when Redis refuses the call.
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
# Talking to the server


class Redis:
    def __init__(self, cli: str, port: int):
        self.cli = cli
        self.port = port

    def raw(self, *args: str, json_output: bool = False) -> str:
        """Runs one command through redis-cli and returns its output."""
        mode = ["-3", "--json"] if json_output else []
        proc = subprocess.run(
            [self.cli, "-h", "127.0.0.1", "-p", str(self.port), *mode, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise GenError(f"redis-cli {args[0]} failed: {proc.stderr.strip()}")
        return proc.stdout

    def call(self, *args: str) -> object:
        """Runs one command through redis-cli (RESP3, JSON output)."""
        out = self.raw(*args, json_output=True).strip()
        try:
            return json.loads(out)
        except json.JSONDecodeError as exc:
            raise GenError(f"redis-cli {args[0]}: unexpected output {out[:200]!r}") from exc

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
    """A redis-server on 127.0.0.1 without persistence, in a temp dir."""

    def __init__(self, server: str, cli: str):
        self.server = server
        self.cli = cli
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmp = tempfile.TemporaryDirectory(prefix="gen-command-table-")
        self.port = 0

    def __enter__(self) -> Redis:
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
                    "--logfile", os.path.join(self.tmp.name, "redis.log"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            redis = Redis(self.cli, self.port)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break  # lost the race for the port: try another one
                if redis.ping():
                    return redis
                time.sleep(0.05)
            self._stop()
        raise GenError("could not start redis-server")

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


# --------------------------------------------------------------------------
# Reading the data


def redis_version(redis: Redis) -> str:
    info = redis.raw("INFO", "server")
    for line in info.splitlines():
        if line.startswith("redis_version:"):
            return line.split(":", 1)[1].strip()
    raise GenError("INFO server: no redis_version")


def parse_command(raw: list) -> dict:
    # Redis 7 COMMAND reply: name, arity, flags, first key, last key, step,
    # ACL categories, tips, key specs, subcommands.
    if not isinstance(raw, list) or len(raw) < 10:
        raise GenError(f"COMMAND: unexpected entry {raw!r:.200}")
    name, arity, flags = raw[0], raw[1], raw[2]
    specs = [parse_key_spec(name, spec) for spec in raw[8]]
    subs = sorted((parse_command(sub) for sub in raw[9]), key=lambda c: c["name"])
    return {
        "name": name.lower(),
        "arity": int(arity),
        "flags": set(flags),
        "key_specs": specs,
        "subcommands": subs,
    }


def parse_key_spec(command: str, spec: dict) -> dict:
    begin = spec["begin_search"]
    find = spec["find_keys"]
    if begin["type"] == "index":
        begin_rs = f"BeginSearch::Index({int(begin['spec']['index'])})"
    elif begin["type"] == "keyword":
        keyword = begin["spec"]["keyword"]
        begin_rs = (
            f"BeginSearch::Keyword {{ keyword: {rust_str(keyword)}, "
            f"start_from: {int(begin['spec']['startfrom'])} }}"
        )
    elif begin["type"] == "unknown":
        begin_rs = "BeginSearch::Unknown"
    else:
        raise GenError(f"{command}: unknown begin_search type {begin['type']!r}")
    if find["type"] == "range":
        s = find["spec"]
        find_rs = (
            f"FindKeys::Range {{ last_key: {int(s['lastkey'])}, "
            f"key_step: {int(s['keystep'])}, limit: {int(s['limit'])} }}"
        )
    elif find["type"] == "keynum":
        s = find["spec"]
        find_rs = (
            f"FindKeys::KeyNum {{ key_num_index: {int(s['keynumidx'])}, "
            f"first_key: {int(s['firstkey'])}, key_step: {int(s['keystep'])} }}"
        )
    elif find["type"] == "unknown":
        find_rs = "FindKeys::Unknown"
    else:
        raise GenError(f"{command}: unknown find_keys type {find['type']!r}")
    known = {name for name, _ in KEY_SPEC_FLAGS}
    unknown = set(spec["flags"]) - known
    if unknown:
        raise GenError(
            f"{command}: key spec flags {sorted(unknown)} unknown: add them to "
            "KeySpecFlags in commands.rs and KEY_SPEC_FLAGS in this script"
        )
    return {
        "flags": set(spec["flags"]),
        "begin": begin_rs,
        "find": find_rs,
        "notes": spec.get("notes"),
    }


def read_commands(redis: Redis) -> list[dict]:
    raw = redis.call("COMMAND")
    if not isinstance(raw, list) or not raw:
        raise GenError("COMMAND: expected a non-empty array")
    commands = sorted((parse_command(entry) for entry in raw), key=lambda c: c["name"])
    known = {name for name, _ in COMMAND_FLAGS}
    for command in walk(commands):
        unknown = command["flags"] - known
        if unknown:
            raise GenError(
                f"{command['name']}: command flags {sorted(unknown)} unknown: add them "
                "to CommandFlags in commands.rs and COMMAND_FLAGS in this script"
            )
    return commands


def walk(commands: list[dict]):
    for command in commands:
        yield command
        yield from walk(command["subcommands"])


def probe_no_writes(redis: Redis, commands: list[dict]) -> list[str]:
    """Marks `may_replicate` on the non-write commands no-writes scripts refuse.

    Redis 7.0 refuses, in a script declared `#!lua flags=no-writes`, every
    command with the internal flag CMD_WRITE or CMD_MAY_REPLICATE, but
    `COMMAND` reports only the first. Each script-callable leaf command
    without `write` is called from such a script with a valid argument count
    of dummy arguments; the refused ones get `may_replicate`.
    """
    marked = []
    for command in walk(commands):
        flags = command["flags"]
        if command["subcommands"] or "write" in flags or "noscript" in flags:
            continue
        words = command["name"].split("|")
        total = command["arity"] if command["arity"] > 0 else -command["arity"]
        argv = words + ["x"] * max(0, total - len(words))
        reply = redis.call("EVAL", NO_WRITES_PROBE, "0", *argv)
        if not isinstance(reply, str):
            raise GenError(f"no-writes probe of {command['name']}: unexpected {reply!r}")
        if NO_WRITES_ERROR in reply:
            if "may_replicate" not in flags:
                marked.append(command["name"])
            flags.add("may_replicate")
        elif "may_replicate" in flags:
            raise GenError(
                f"{command['name']} reports may_replicate but a no-writes script may call it"
            )
    return marked


def lua_list(redis: Redis, script: str, *argv: str) -> list[tuple[str, str]]:
    reply = redis.call("EVAL", script, "0", *argv)
    if not isinstance(reply, list):
        raise GenError(f"EVAL: expected an array, got {reply!r:.200}")
    pairs = []
    for item in reply:
        name, _, lua_type = str(item).rpartition(" ")
        if lua_type not in LUA_TYPES:
            raise GenError(f"sandbox: unexpected Lua type {lua_type!r} for {name!r}")
        pairs.append((name, lua_type))
    return sorted(pairs)


def read_sandbox(redis: Redis) -> list[dict]:
    globals_ = []
    for name, lua_type in lua_list(redis, LIST_GLOBALS):
        entry = {"name": name, "type": lua_type, "members": None}
        if lua_type == "table" and name not in ("KEYS", "ARGV", "_G"):
            entry["members"] = lua_list(redis, LIST_MEMBERS, name)
        globals_.append(entry)
    return globals_


# --------------------------------------------------------------------------
# Emitting Rust


def rust_str(text: str) -> str:
    """A Rust string literal for `text`."""
    out = []
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.append(f"\\u{{{ord(char):x}}}")
    return '"' + "".join(out) + '"'


def flag_expr(type_name: str, table: list[tuple[str, str]], present: set[str]) -> str:
    consts = [f"{type_name}::{const}" for name, const in table if name in present]
    if not consts:
        return f"{type_name}::NONE"
    return consts[0] + "".join(f".union({c})" for c in consts[1:])


def emit_command(command: dict, out: list[str]) -> None:
    out.append("Command {")
    out.append(f"name: {rust_str(command['name'])},")
    out.append(f"arity: {command['arity']},")
    out.append(f"flags: {flag_expr('CommandFlags', COMMAND_FLAGS, command['flags'])},")
    if command["key_specs"]:
        out.append("key_specs: &[")
        for spec in command["key_specs"]:
            out.append("KeySpec {")
            out.append(f"flags: {flag_expr('KeySpecFlags', KEY_SPEC_FLAGS, spec['flags'])},")
            out.append(f"begin_search: {spec['begin']},")
            out.append(f"find_keys: {spec['find']},")
            out.append("},")
        out.append("],")
    else:
        out.append("key_specs: &[],")
    if command["subcommands"]:
        out.append("subcommands: &[")
        for sub in command["subcommands"]:
            emit_command(sub, out)
        out.append("],")
    else:
        out.append("subcommands: &[],")
    out.append("},")


def header(version: str, what: str) -> list[str]:
    return [
        f"// @generated by {SCRIPT_NAME} from redis-server {version} ({what}).",
        "// Do not edit by hand: change the generator and run it again.",
        "",
    ]


def command_table_rs(version: str, commands: list[dict], marked: list[str]) -> str:
    count = sum(1 for _ in walk(commands))
    subs = count - len(commands)
    out = header(version, "COMMAND")
    out += [
        f"//! The Redis command table: {len(commands)} commands and {subs} subcommands",
        f"//! of Redis {version}, sorted by name, with their subcommands sorted",
        "//! within each parent.",
        "//!",
        "//! `may_replicate` is not reported by `COMMAND` in Redis 7.0; the generator",
        "//! sets it on the commands that a `#!lua flags=no-writes` script is refused",
        "//! although they lack `write`: "
        + (", ".join(f"`{name}`" for name in marked) if marked else "none")
        + ".",
        "",
        "use super::{BeginSearch, Command, CommandFlags, FindKeys, KeySpec, KeySpecFlags};",
        "",
        "/// Version of the `redis-server` this table was read from.",
        f"pub const REDIS_VERSION: &str = {rust_str(version)};",
        "",
        "/// Every command, sorted by name (lowercase).",
        "pub static COMMANDS: &[Command] = &[",
    ]
    for command in commands:
        emit_command(command, out)
    out.append("];")
    return "\n".join(out) + "\n"


def sandbox_table_rs(version: str, globals_: list[dict]) -> str:
    out = header(version, "EVAL of pairs(_G)")
    out += [
        f"//! The globals of a Redis {version} `EVAL` script and the members of",
        "//! each library table, sorted by name (byte order, case-sensitive).",
        "",
        "use super::{Global, GlobalKind, LuaType, Member};",
        "",
        "/// Version of the `redis-server` this table was read from.",
        f"pub const REDIS_VERSION: &str = {rust_str(version)};",
        "",
        "/// Every global an `EVAL` script can read, sorted by name.",
        "pub static GLOBALS: &[Global] = &[",
    ]
    for entry in globals_:
        name = entry["name"]
        if name in ("KEYS", "ARGV"):
            kind = "GlobalKind::ScriptArguments"
        elif name == "_G":
            kind = "GlobalKind::GlobalTable"
        elif entry["members"] is not None:
            members = "".join(
                f"Member {{ name: {rust_str(m)}, ty: LuaType::{LUA_TYPES[t]} }},"
                for m, t in entry["members"]
            )
            kind = f"GlobalKind::Library(&[{members}])"
        elif entry["type"] == "function":
            kind = "GlobalKind::Function"
        else:
            kind = f"GlobalKind::Value(LuaType::{LUA_TYPES[entry['type']]})"
        out.append(f"Global {{ name: {rust_str(name)}, kind: {kind} }},")
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
        raise GenError(f"rustfmt failed:\n{proc.stderr}")
    return proc.stdout


# --------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--port",
        type=int,
        help="use the disposable redis-server already listening on 127.0.0.1:PORT",
    )
    parser.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    parser.add_argument("--redis-cli", default=shutil.which("redis-cli") or "redis-cli")
    parser.add_argument("--rustfmt", default=shutil.which("rustfmt") or "rustfmt")
    parser.add_argument("--out-dir", type=Path, default=LUA_DIR)
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 when the committed files differ from the output",
    )
    args = parser.parse_args()

    def collect(redis: Redis) -> tuple[str, list[dict], list[str], list[dict]]:
        version = redis_version(redis)
        commands = read_commands(redis)
        marked = probe_no_writes(redis, commands)
        sandbox = read_sandbox(redis)
        return version, commands, marked, sandbox

    try:
        if args.port:
            redis = Redis(args.redis_cli, args.port)
            if not redis.ping():
                raise GenError(f"no redis-server answers on 127.0.0.1:{args.port}")
            version, commands, marked, sandbox = collect(redis)
        else:
            with ThrowawayServer(args.redis_server, args.redis_cli) as redis:
                version, commands, marked, sandbox = collect(redis)

        files = {
            args.out_dir / "commands" / "table.rs": rustfmt(
                command_table_rs(version, commands, marked), args.rustfmt
            ),
            args.out_dir / "sandbox" / "table.rs": rustfmt(
                sandbox_table_rs(version, sandbox), args.rustfmt
            ),
        }
    except GenError as exc:
        print(f"{SCRIPT_NAME}: error: {exc}", file=sys.stderr)
        return 2

    stale = False
    for path, text in files.items():
        if args.check:
            current = path.read_text() if path.exists() else None
            if current != text:
                print(f"{path} is out of date (redis-server {version})", file=sys.stderr)
                stale = True
        else:
            path.write_text(text)
            print(f"wrote {path}")
    count = sum(1 for _ in walk(commands))
    print(
        f"redis {version}: {len(commands)} commands, {count - len(commands)} subcommands, "
        f"{len(sandbox)} globals; may_replicate by probe: {', '.join(marked) or 'none'}"
    )
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
