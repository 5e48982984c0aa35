"""The value model: argument grammars, reply types and ACL categories.

Part of ``scripts/gen-server-model.py`` (its ``values`` mode, and its
``render`` and ``--check``), kept in its own module because it reads other
parts of the same sources: for every command and subcommand of every
release, the grammar of its arguments with each argument's type
(``arguments``), the type of its reply (``reply_schema``) and its ACL
categories. The result is ``analysis/value-model.json`` and its rendering
``analysis/src/model/commands/shapes/table.rs``.

Where each part of a release comes from:

* arguments and categories: a live server's ``COMMAND DOCS`` and
  ``COMMAND`` for the releases whose binary runs here (Redis 7.0.15, 8.0.2
  and 8.6.3, Valkey 8.1.8 and 9.1.2), the specification files at the
  release tag for the releases read from a tag (Redis 7.2 and 7.4, Valkey
  7.2 and 8.0). A release read from neither takes the live data of the
  nearest release of its family that runs here, and says so in its
  source: Redis 6.0 and 6.2 their own live ``COMMAND`` (commands,
  categories; they have no ``COMMAND DOCS``) with Redis 7.0.15's arguments
  cut to what it dates that release or older (``legacy_view``), and the
  options 7.0's ``history`` says became accepted together later, each
  probed live (``TOGETHER_PROBES``); Redis 8.2 and 8.4 that of Redis 8.6.3 and Valkey 9.0 that of
  Valkey 9.1.2, each cut to the commands, subcommands and arguments whose
  ``since`` in ``COMMAND DOCS`` is that release or older (``as_of``), as
  the server model derives its commands; Redis 8.8 and 8.10 (newer than
  every binary here) that of Redis 8.6.3, with the Redis documentation
  pages for the commands it lacks, and for the newer arguments of a
  command whose pages list, as of 8.6, exactly the arguments 8.6.3
  reports (``with_documented``);
* replies: the specification files' ``reply_schema`` at the release tag or,
  where the tag's files have none (Redis 7.0) or no tag is read, at the
  nearest tag of the same family that has them (Redis 7.2.6 for 7.0, 7.4.1
  for 8.0 to 8.10, Valkey 8.0.1 for 8.1, 9.0 and 9.1), for the commands
  both have; for Redis 8.2 and later, the documentation pages'
  ``reply_schema`` for the commands the tag's files do not describe.

The specification files describe a reply as RESP3 sends it. Two facts they
leave implicit are added here, each with its source:

* ``TYPE`` answers a simple string, ``none`` for a missing key, never null
  (``typeCommand`` in ``src/db.c``): its schema says null;
* which arrays are RESP3 sets: the set group's unique-item arrays (the
  ``addReplySetLen`` calls of ``src/t_set.c``); the sorted set group's
  unique-item arrays are plain arrays;
* an array of pairs that RESP2 sends flat (``ZRANGE … WITHSCORES``) says so
  in its description ("In RESP2 this is returned as a flat array").

Options a command refuses inside scripts (``script_refusals``): the
servers refuse them with one message, ``"%s command is not allowed with
<OPTION> option from scripts"``, in the command's implementation. For a
release read from a tag, every such message in ``src/*.c`` at the tag,
its option, and the commands whose specification names the C function it
is in (``"function": "xreadCommand"``: XREAD and XREADGROUP). For a live
release, a probe script per option found anywhere (``REFUSAL_PROBES``)
run by ``EVAL``: refused when the reply is that message.

Module commands' documentation files have no reply schemas: their replies
are unknown to the model, and so are the replies of commands no schema
read describes. The value analysis draws no conclusion from an unknown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

# Release name -> (where its arguments, categories and options refused in
# scripts come from, where its replies come from). Arguments:
# * `"live"`: its own live server (COMMAND DOCS, COMMAND, refusal probes);
# * `("live", release)`: the live server of another release, unchanged;
# * `("as_of", release)`: the live server of a newer release, cut to what
#   its COMMAND DOCS dates this release or older (`as_of`);
# * `("documented", release)`: the live server of an older release, and the
#   Redis documentation pages for what it lacks (`with_documented`);
# * `("legacy", release)`: its own live server's COMMAND (the commands and
#   their categories; a 6.x server has no COMMAND DOCS) with the arguments,
#   subcommands and history of a newer live release's COMMAND DOCS, cut to
#   what they date this release or older (`legacy_view`);
# * `(family, tag)`: the specification files and sources at a tag.
# Replies: `(family, tag)`, or `(family, tag, "docs")` where the Redis
# documentation pages' `reply_schema` fills what the tag's files lack.
SOURCES = {
    "redis-6.0": (("legacy", "redis-7.0"), ("redis", "7.2.6")),
    "redis-6.2": (("legacy", "redis-7.0"), ("redis", "7.2.6")),
    "redis-7.0": ("live", ("redis", "7.2.6")),
    "redis-7.2": (("redis", "7.2.6"), ("redis", "7.2.6")),
    "redis-7.4": (("redis", "7.4.1"), ("redis", "7.4.1")),
    "redis-8.0": ("live", ("redis", "7.4.1")),
    "redis-8.2": (("as_of", "redis-8.6"), ("redis", "7.4.1", "docs")),
    "redis-8.4": (("as_of", "redis-8.6"), ("redis", "7.4.1", "docs")),
    "redis-8.6": ("live", ("redis", "7.4.1", "docs")),
    "redis-8.8": (("documented", "redis-8.6"), ("redis", "7.4.1", "docs")),
    "redis-8.10": (("documented", "redis-8.6"), ("redis", "7.4.1", "docs")),
    "valkey-7.2": (("valkey", "7.2.7"), ("valkey", "7.2.7")),
    "valkey-8.0": (("valkey", "8.0.1"), ("valkey", "8.0.1")),
    "valkey-8.1": ("live", ("valkey", "8.0.1")),
    "valkey-9.0": (("as_of", "valkey-9.1"), ("valkey", "8.0.1")),
    "valkey-9.1": ("live", ("valkey", "8.0.1")),
}


def live_releases() -> list[str]:
    """The releases whose live server some release's arguments come from."""
    out = []
    for release, (arguments, _replies) in SOURCES.items():
        if arguments == "live":
            out.append(release)
        elif arguments[0] in ("live", "as_of"):
            out.append(arguments[1])
        elif arguments[0] == "legacy":
            out += [release, arguments[1]]
    return sorted(set(out), key=list(SOURCES).index)

# The categories in the order of their bits in `AclCategories`.
CATEGORIES = [
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
    "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast",
    "slow", "blocking", "dangerous", "connection", "transaction", "scripting",
    "array",
]

ARGUMENT_KINDS = {
    "key": "Key",
    "string": "String",
    "integer": "Integer",
    "double": "Double",
    "unix-time": "UnixTime",
    "pattern": "Pattern",
    "pure-token": "PureToken",
    "oneof": "OneOf",
    "block": "Block",
}

FLAT_IN_RESP2 = "in resp2 this is returned as a flat array"

STATUS_REPLIES = {"type": "typeCommand in src/db.c answers a simple string, `none` for a missing key"}


# The server's message for an option refused inside scripts.
REFUSAL_MESSAGE = re.compile(r'"%s command is not allowed with (\w+) option from scripts"')
REFUSAL_REPLY = "{command} command is not allowed with {option} option from scripts"

# (command, option) -> a script that passes the option (KEYS[1] is a key of
# no type): the live probe of that refusal. The refusal is checked while the
# options are read, before the group or the key is looked up.
REFUSAL_PROBES = {
    ("xread", "BLOCK"): "return redis.pcall('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')",
    ("xreadgroup", "BLOCK"): "return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', KEYS[1], '>')",
}


# Two options a release refuses together although it accepts each alone:
# a newer release's COMMAND DOCS `history` says when they were allowed
# together ("Allowed the `NX` and `GET` options to be used together").
TOGETHER_HISTORY = re.compile(r"Allowed the `(\w+)` and `(\w+)` options to be used together")

# (command, option, with) -> the live probes of such a refusal: the two
# options together, then each alone (KEYS[1] is a key of no type). A server
# refuses the pair when the first is refused and neither of the others.
TOGETHER_PROBES = {
    ("set", "GET", "NX"): (
        "return redis.pcall('SET', KEYS[1], 'v', 'NX', 'GET')",
        "return redis.pcall('SET', KEYS[1], 'v', 'NX')",
        "return redis.pcall('SET', KEYS[1], 'v', 'GET')",
    ),
}

# What a server answers a call whose options it does not take together.
TOGETHER_REPLY = "ERR syntax error"


class ValueModelError(Exception):
    pass


# --------------------------------------------------------------------------
# Arguments


def argument(raw: dict, where: str) -> dict:
    """One argument, from a specification file or from COMMAND DOCS (which
    puts optional/multiple/multiple_token under `flags`)."""
    kind = raw.get("type")
    if kind not in ARGUMENT_KINDS:
        raise ValueModelError(f"{where}: argument {raw.get('name')!r} has the unknown type {kind!r}")
    flags = set(raw.get("flags", []))
    entry = {
        "name": raw["name"],
        "kind": kind,
        "token": raw.get("token"),
        "optional": bool(raw.get("optional")) or "optional" in flags,
        "multiple": bool(raw.get("multiple")) or "multiple" in flags,
        "multiple_token": bool(raw.get("multiple_token")) or "multiple_token" in flags,
    }
    if kind in ("oneof", "block"):
        entry["arguments"] = [argument(inner, where) for inner in raw.get("arguments", [])]
    return entry


# --------------------------------------------------------------------------
# Replies


def reply(schema: object, command: str, group: str) -> object:
    """The reply described by a `reply_schema` (a JSON schema), in the
    model's notation: "bulk", "double", "boolean", "unknown", {"integer":
    [values] | None}, {"status": text | None}, {"null": description},
    {"array": r}, {"flat_pairs": [r, r]}, {"set": r}, {"tuple": [r…]},
    {"map": [r, r]}, {"one_of": [r…]}."""
    if not isinstance(schema, dict):
        return "unknown"
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return one_of([reply(inner, command, group) for inner in schema[key]])
    if "const" in schema:
        value = schema["const"]
        if isinstance(value, bool):
            return "boolean"
        if isinstance(value, int):
            return {"integer": [value]}
        if isinstance(value, str):
            return {"status": value}
        return "unknown"
    kind = schema.get("type")
    description = str(schema.get("description", "")).strip()
    if isinstance(kind, list):
        return one_of([reply({**schema, "type": k}, command, group) for k in kind])
    if kind == "integer":
        values = schema.get("enum")
        return {"integer": sorted(values) if values else None}
    if kind == "string":
        return "bulk"
    if kind == "number":
        return "double"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return {"null": description}
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, list):
            positions = [reply(item, command, group) for item in items]
            return {"tuple": positions}
        element = reply(items, command, group) if isinstance(items, dict) else "unknown"
        pair = pair_of(items)
        if pair is not None and FLAT_IN_RESP2 in description.lower():
            return {"flat_pairs": pair_replies(pair, command, group)}
        if schema.get("uniqueItems") and group == "set":
            return {"set": element}
        return {"array": element}
    if kind == "object":
        values = []
        if isinstance(schema.get("additionalProperties"), dict):
            values.append(reply(schema["additionalProperties"], command, group))
        for inner in (schema.get("properties") or {}).values():
            values.append(reply(inner, command, group))
        for inner in (schema.get("patternProperties") or {}).values():
            values.append(reply(inner, command, group))
        value = one_of(values) if values else "unknown"
        return {"map": ["bulk", value]}
    return "unknown"


def pair_of(items: object) -> list | None:
    if isinstance(items, dict) and items.get("type") == "array":
        inner = items.get("items")
        if isinstance(inner, list) and len(inner) == 2:
            return inner
    return None


def pair_replies(pair: list, command: str, group: str) -> list:
    return [reply(item, command, group) for item in pair]


def one_of(replies: list) -> object:
    """Alternatives, flattened and deduplicated; integer constants merge
    into one integer reply with their values."""
    flat: list = []
    for item in replies:
        for inner in item["one_of"] if isinstance(item, dict) and "one_of" in item else [item]:
            integer = next((i for i, v in enumerate(flat) if isinstance(v, dict) and "integer" in v), None)
            if isinstance(inner, dict) and "integer" in inner and integer is not None:
                values = flat[integer]["integer"]
                merged = None if values is None or inner["integer"] is None else sorted(set(values) | set(inner["integer"]))
                flat[integer] = {"integer": merged}
            elif inner not in flat:
                flat.append(inner)
    if any(item == "unknown" for item in flat):
        return "unknown"
    if len(flat) == 1:
        return flat[0]
    return {"one_of": flat}


def overridden(name: str, parsed: object) -> object:
    if name in STATUS_REPLIES:
        return {"status": None}
    return parsed


# --------------------------------------------------------------------------
# Categories


def implied_categories(flags: list[str]) -> set[str]:
    """The categories the server adds from a command's flags
    (`setImplicitACLCategories` in `src/server.c`)."""
    flags = {flag.lower() for flag in flags}
    implied = set()
    if "write" in flags:
        implied.add("write")
    if "readonly" in flags:
        implied.add("read")
    if "admin" in flags:
        implied |= {"admin", "dangerous"}
    if "pubsub" in flags:
        implied.add("pubsub")
    if "fast" in flags:
        implied.add("fast")
    if "blocking" in flags:
        implied.add("blocking")
    if "fast" not in flags:
        implied.add("slow")
    return implied


def categories(names: set[str], where: str) -> list[str]:
    unknown = sorted(name for name in names if name not in CATEGORIES)
    if unknown:
        raise ValueModelError(f"{where}: unknown ACL categories {unknown}")
    return [name for name in CATEGORIES if name in names]


# --------------------------------------------------------------------------
# Reading the sources


def spec_files(list_dir: Callable[[str, str], list[str]], show: Callable[[str, str, str], str], family: str, tag: str) -> dict[str, dict]:
    """name ('get', 'client|kill') -> the command's specification body."""
    return by_name(
        {path: json.loads(show(family, tag, path)) for path in list_dir(family, tag) if path.endswith(".json")}
    )


def by_name(files: dict[str, dict]) -> dict[str, dict]:
    """Specification files ({file: {COMMAND: body}}) as name ('get',
    'client|kill') -> body."""
    bodies = {}
    for data in files.values():
        for upper, body in data.items():
            container = body.get("container")
            name = f"{container}|{upper}".lower() if container else upper.lower()
            bodies[name] = body
    return bodies


def refusals_in_sources(
    grep: Callable[[str, str, str], list[tuple[str, int]]],
    show_file: Callable[[str, str, str], str],
    bodies: dict[str, dict],
    family: str,
    tag: str,
) -> list[tuple[str, str]]:
    """(command, option) of every refusal message in `src/*.c` at `tag`."""
    found = set()
    for path, line in grep(family, tag, "option from scripts"):
        lines = show_file(family, tag, path).split("\n")
        match = REFUSAL_MESSAGE.search(lines[line - 1])
        if match is None:
            raise ValueModelError(f"{family} {tag} {path}:{line}: a refusal message in another form")
        function = next(
            (m.group(1) for text in reversed(lines[: line - 1])
             if (m := re.match(r"^\w[\w\s*]*?\b(\w+)\(client \*c\)", text))),
            None,
        )
        commands = [name for name, body in bodies.items() if body.get("function") == function]
        if not commands:
            raise ValueModelError(f"{family} {tag} {path}:{line}: no command implemented by {function}")
        found |= {(command, match.group(1)) for command in commands}
    unknown = found - set(REFUSAL_PROBES)
    if unknown:
        raise ValueModelError(f"{family} {tag}: refused options with no live probe: {sorted(unknown)}")
    return sorted(found)


def spec_view(bodies: dict[str, dict], family: str, tag: str) -> dict[str, dict]:
    view = {}
    for name, body in bodies.items():
        where = f"{family} {tag} {name}"
        names = {c.lower() for c in body.get("acl_categories", [])}
        names |= implied_categories(body.get("command_flags", []))
        view[name] = {
            "arguments": [argument(raw, where) for raw in body.get("arguments", [])],
            "categories": categories(names, where),
        }
    return view


def live_view(docs: dict, command_info: list) -> dict[str, dict]:
    """From a live server: COMMAND DOCS (RESP3 JSON: name -> doc) and COMMAND
    (its entries: name, arity, flags, first, last, step, categories, tips,
    key specs, subcommands)."""
    view: dict[str, dict] = {}

    def add_docs(name: str, doc: dict) -> None:
        where = f"live {name}"
        view.setdefault(name, {})["arguments"] = [
            argument(raw, where) for raw in doc.get("arguments", [])
        ]
        for sub_name, sub in (doc.get("subcommands") or {}).items():
            add_docs(sub_name.lower(), sub)

    for name, doc in docs.items():
        add_docs(name.lower(), doc)

    def add_info(entry: list) -> None:
        name = str(entry[0]).lower()
        names = {str(c).lstrip("@").lower() for c in entry[6]}
        view.setdefault(name, {"arguments": []})["categories"] = categories(names, f"live {name}")
        for sub in entry[9] if len(entry) > 9 else []:
            add_info(sub)

    for entry in command_info:
        add_info(entry)
    return view


def replies_of(bodies: dict[str, dict]) -> dict[str, object]:
    return {
        name: overridden(name, reply(body["reply_schema"], name, body.get("group", "")))
        for name, body in bodies.items()
        if "reply_schema" in body
    }


def collect(
    releases: list[str],
    list_dir: Callable[[str, str], list[str]],
    show: Callable[[str, str, str], str],
    grep: Callable[[str, str, str], list[tuple[str, int]]],
    show_file: Callable[[str, str, str], str],
    live: dict[str, tuple[dict, list, str, list]],
    pages: dict[str, dict] | None = None,
) -> dict:
    """The model: {"releases": [...], "sources": [...], "commands": [{name,
    forms: [{releases, arguments, reply, categories, source}]}],
    "script_refusals": [{command, option, reply, releases}]}.

    `live` maps a live release to (COMMAND DOCS, COMMAND, version, the
    (command, option) pairs its probes found refused); `grep` finds a fixed
    string in `src/*.c` at a tag ((path, line) pairs), `show_file` reads a
    file at a tag; `pages` are the Redis documentation pages as
    specification bodies by name (`spec_files`' form), for the releases
    whose SOURCES name them."""
    bodies_cache: dict[tuple[str, str], dict] = {}

    def bodies(family: str, tag: str) -> dict:
        if (family, tag) not in bodies_cache:
            bodies_cache[(family, tag)] = spec_files(list_dir, show, family, tag)
        return bodies_cache[(family, tag)]

    sources: list[str] = []
    per_command: dict[str, list[dict]] = {}
    refused: dict[tuple[str, str], list[str]] = {}
    for release in releases:
        argument_source, reply_source = SOURCES[release]
        needs_pages = argument_source[0] == "documented" or reply_source[2:] == ("docs",)
        if needs_pages and pages is None:
            raise ValueModelError(f"{release}: its sources include the Redis documentation pages: give them")
        if argument_source[0] == "documented":
            server = argument_source[1]
            if server not in live:
                raise ValueModelError(f"{release}: its arguments come from a live {server} server: give one")
            docs, info, version, probed = live[server]
            binary = f"live {server.split('-')[0]}-server {version}"
            view, taken = with_documented(
                live_view(docs, info), pages, version_key(version)[:2], version_key(release.split("-")[1])[:2]
            )
            where = f"{binary}: COMMAND DOCS, COMMAND; {taken} (no {release} binary here)"
            refusals = probed
            refusals_where = f"probe scripts on {binary} (no {release} binary here)"
        elif argument_source[0] == "legacy":
            reference = argument_source[1]
            for needed in (release, reference):
                if needed not in live:
                    raise ValueModelError(f"{release}: its arguments come from a live {needed} server: give one")
            docs, info, reference_version, _ = live[reference]
            _, legacy_info, version, probed = live[release]
            minor = release.split("-")[1]
            cut_docs, cut_info = legacy_view(docs, info, legacy_info, minor)
            view = live_view(cut_docs, cut_info)
            binary = f"live redis-server {version}"
            where = (
                f"{binary}: COMMAND (commands, categories), and live redis-server {reference_version}'s "
                f"COMMAND DOCS for their arguments and subcommands, keeping those whose `since` is {minor} or "
                f"older (no COMMAND DOCS before 7.0)"
            )
            together = together_from_history(cut_docs, minor)
            missing = [item for item in together if item not in probed]
            if missing:
                raise ValueModelError(
                    f"{release}: the COMMAND DOCS history of {reference_version} has options refused together "
                    f"that the live probes of {version} did not find refused: {missing}"
                )
            refusals = probed
            refusals_where = (
                f"probe scripts on {binary} (options refused together: those the COMMAND DOCS history of "
                f"{reference_version} allows together since after {minor}, each probed)"
            )
        elif argument_source == "live" or argument_source[0] in ("live", "as_of"):
            server = release if argument_source == "live" else argument_source[1]
            if server not in live:
                raise ValueModelError(f"{release}: its arguments come from a live {server} server: give one")
            docs, info, version, probed = live[server]
            binary = f"live {server.split('-')[0]}-server {version}"
            where = f"{binary}: COMMAND DOCS, COMMAND"
            refusals = probed
            refusals_where = f"probe scripts on {binary}"
            if argument_source != "live":
                minor = release.split("-")[1]
                if argument_source[0] == "as_of":
                    docs, info = as_of(docs, info, minor)
                    where += (
                        f", keeping the commands and arguments whose `since` is {minor} or older"
                        f" (no {release} binary here)"
                    )
                else:
                    where += f" (no {release} tag read nor binary here: the newest {server.split('-')[0]} release read)"
                refusals_where += " (the same server)"
            view = live_view(docs, info)
        else:
            family, tag = argument_source
            view = spec_view(bodies(family, tag), family, tag)
            where = f"{family} tag {tag}: src/commands/*.json"
            refusals = refusals_in_sources(grep, show_file, bodies(family, tag), family, tag)
            refusals_where = f"{family} tag {tag}: src/*.c"
            if not release.endswith(tag.rsplit(".", 1)[0]):
                where += f" (no {release} tag read: the newest {family} tag read)"
                refusals_where += " (the same tag)"
        for refusal in refusals:
            refused.setdefault(tuple(refusal), []).append(release)
        family, tag = reply_source[:2]
        replies = replies_of(bodies(family, tag))
        reply_where = f"reply_schema at {family} tag {tag}"
        if reply_source[2:] == ("docs",):
            documented_replies = replies_of(pages)
            replies = {**documented_replies, **replies}
            reply_where += ", and the documentation pages' for the commands the tag does not describe"
        sources.append(
            f"{release}: arguments and categories from {where}; replies from {reply_where}; "
            f"options refused in scripts from {refusals_where}"
        )
        for name, entry in view.items():
            form = {
                "arguments": entry.get("arguments", []),
                "categories": entry.get("categories", []),
                "reply": replies.get(name, "unknown"),
            }
            forms = per_command.setdefault(name, [])
            for existing in forms:
                if {k: v for k, v in existing.items() if k != "releases"} == form:
                    existing["releases"].append(release)
                    break
            else:
                forms.append({**form, "releases": [release]})
    return {
        "releases": releases,
        "sources": sources,
        "commands": [{"name": name, "forms": per_command[name]} for name in sorted(per_command)],
        "script_refusals": [
            {
                "command": key[0],
                "option": key[1],
                "with": key[2] if len(key) > 2 else None,
                "reply": TOGETHER_REPLY if len(key) > 2 else REFUSAL_REPLY.format(command=key[0].upper(), option=key[1]),
                "releases": refused[key],
            }
            for key in sorted(refused)
        ],
    }


def version_key(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.-]", text))


def dated_by(doc: dict, cut: tuple) -> bool:
    """Whether a command or argument whose documented `since` is in `doc`
    exists in the release `cut` ((major, minor))."""
    since = doc.get("since")
    return not since or version_key(str(since))[:2] <= cut


def arguments_as_of(raw: list, cut: tuple) -> list:
    """Arguments (as COMMAND DOCS or a specification file lists them)
    without those newer than the release `cut`."""
    out = []
    for arg in raw:
        if not dated_by(arg, cut):
            continue
        if arg.get("arguments"):
            arg = {**arg, "arguments": arguments_as_of(arg["arguments"], cut)}
        out.append(arg)
    return out


def with_documented(view: dict[str, dict], pages: dict[str, dict], base: tuple, cut: tuple) -> tuple[dict, str]:
    """A live release's view (`base` its (major, minor)) for the newer
    release `cut`, from the documentation pages (name -> specification
    body): the commands it lacks that the pages date newer than `base` and
    `cut` or older; and, for a command it has, the pages' arguments as of
    `cut`, but only where the pages' arguments as of `base` are exactly
    what the live server reports. Also what was taken, in words."""
    out = dict(view)
    added, updated, kept = 0, 0, 0
    for name, body in sorted(pages.items()):
        where = f"documentation page of {name}"
        arguments = body.get("arguments", [])
        if name not in view:
            since = body.get("since")
            if since and base < version_key(str(since))[:2] and dated_by(body, cut):
                names = {c.lower() for c in body.get("acl_categories", [])}
                names |= implied_categories(body.get("command_flags", []))
                out[name] = {
                    "arguments": [argument(raw, where) for raw in arguments_as_of(arguments, cut)],
                    "categories": categories(names, where),
                }
                added += 1
            continue
        as_of_base = [argument(raw, where) for raw in arguments_as_of(arguments, base)]
        if as_of_base != view[name].get("arguments", []):
            kept += 1
            continue
        newer = [argument(raw, where) for raw in arguments_as_of(arguments, cut)]
        if newer != as_of_base:
            out[name] = {**view[name], "arguments": newer}
            updated += 1
    summary = (
        f"{added} commands it lacks, and the newer arguments of {updated} commands, from the pages "
        f"(whose arguments of {kept} other commands differ from the live server's, and are not used)"
    )
    return out, summary


def as_of(docs: dict, info: list, minor: str) -> tuple[dict, list]:
    """A newer live server's COMMAND DOCS and COMMAND cut to the release
    `minor` ("9.0"): without the commands, subcommands and arguments whose
    documented `since` is newer (the server model drops the same commands
    and subcommands). What COMMAND DOCS does not date (an argument whose
    type or flags changed) stays as the newer server reports it."""
    cut = version_key(minor)[:2]

    dropped: set[str] = set()

    def cut_doc(name: str, doc: dict) -> dict | None:
        if not dated_by(doc, cut):
            dropped.add(name.lower())
            return None
        out = dict(doc)
        if doc.get("arguments"):
            out["arguments"] = arguments_as_of(doc["arguments"], cut)
        if doc.get("subcommands"):
            subs = {sub: cut_doc(sub, body) for sub, body in doc["subcommands"].items()}
            out["subcommands"] = {sub: body for sub, body in subs.items() if body is not None}
        return out

    cut_docs = {name: cut_doc(name, doc) for name, doc in docs.items()}
    cut_docs = {name: doc for name, doc in cut_docs.items() if doc is not None}

    def cut_info(entries: list) -> list:
        out = []
        for entry in entries:
            if str(entry[0]).lower() in dropped:
                continue
            if len(entry) > 9:
                entry = [*entry[:9], cut_info(entry[9]), *entry[10:]]
            out.append(entry)
        return out

    return cut_docs, cut_info(info)


def legacy_view(docs: dict, info: list, legacy_info: list, minor: str) -> tuple[dict, list]:
    """COMMAND DOCS and COMMAND for a release before 7.0 (`minor`, "6.2"),
    whose server reports only COMMAND entries of 7 fields (`legacy_info`):
    the newer live server's `docs` and `info` cut to that release (`as_of`),
    kept for the commands the older server lists, each with the older
    server's categories and the newer one's subcommands (what the server
    model keeps of them)."""
    cut_docs, cut_info = as_of(docs, info, minor)
    newer = {str(entry[0]).lower(): entry for entry in cut_info}
    names = {str(entry[0]).lower() for entry in legacy_info}
    out_info = []
    for entry in legacy_info:
        name = str(entry[0]).lower()
        subs = newer[name][9] if name in newer and len(newer[name]) > 9 else []
        out_info.append([*entry[:7], [], [], subs])
    out_docs = {name: doc for name, doc in cut_docs.items() if name.lower() in names}
    return out_docs, out_info


def together_from_history(docs: dict, minor: str) -> list[list[str]]:
    """(command, option, with) of the options the `history` of a newer
    server's COMMAND DOCS says were allowed together after the release
    `minor`, where `docs` (cut to that release) has both options: that
    release takes each alone, and refuses them together."""
    cut = version_key(minor)[:2]

    def tokens(arguments: list) -> set[str]:
        out = set()
        for arg in arguments or []:
            if arg.get("token"):
                out.add(str(arg["token"]).upper())
            out |= tokens(arg.get("arguments"))
        return out

    found = []
    for name, doc in sorted(docs.items()):
        have = tokens(doc.get("arguments"))
        for version, text in doc.get("history") or []:
            match = TOGETHER_HISTORY.search(str(text))
            if match and version_key(str(version))[:2] > cut and {match[1], match[2]} <= have:
                found.append([name.lower(), match[2], match[1]])
    unknown = [item for item in found if tuple(item) not in TOGETHER_PROBES]
    if unknown:
        raise ValueModelError(f"{minor}: options refused together with no live probe: {unknown}")
    return found


def probe_refusals(run_script: Callable[[str], str | None]) -> list[list[str]]:
    """The (command, option) pairs a live server refuses in scripts, and the
    (command, option, with) triples of options it refuses together:
    `run_script` runs a script with one key and returns its error message,
    or None."""
    found = []
    for (command, option), script in sorted(REFUSAL_PROBES.items()):
        error = run_script(script)
        if error is not None and f"not allowed with {option} option from scripts" in error:
            found.append([command, option])
    for (command, option, with_option), (both, *alone) in sorted(TOGETHER_PROBES.items()):
        error = run_script(both)
        if error is not None and "syntax error" in error and all(run_script(one) is None for one in alone):
            found.append([command, option, with_option])
    return found


def refusal_key(refusal: dict) -> list[str]:
    return [refusal["command"], refusal["option"]] + ([refusal["with"]] if refusal.get("with") else [])


def compare_refusals(model: dict, release: str, probed: list[list[str]]) -> list[str]:
    stored = sorted(refusal_key(r) for r in model["script_refusals"] if release in r["releases"])
    if stored != sorted(probed):
        return [f"{release}: options refused in scripts: model {stored}, live probes {sorted(probed)}"]
    return []


def compare_live(model: dict, release: str, docs: dict, info: list) -> list[str]:
    """Differences between the model's arguments and categories of a live
    release and what its live server reports."""
    live = live_view(docs, info)
    problems = []
    stored = {}
    for command in model["commands"]:
        for form in command["forms"]:
            if release in form["releases"]:
                stored[command["name"]] = {"arguments": form["arguments"], "categories": form["categories"]}
    for name in sorted(set(stored) | set(live)):
        ours, theirs = stored.get(name), live.get(name)
        if ours is None or theirs is None:
            problems.append(f"{release}: {name}: only in the {'live server' if ours is None else 'model'}")
        elif ours != {"arguments": theirs.get("arguments", []), "categories": theirs.get("categories", [])}:
            problems.append(f"{release}: {name}: arguments or categories differ from the live server")
    return problems


# --------------------------------------------------------------------------
# Rust


def render(model: dict, rust_str: Callable[[str], str], release_bits: Callable[[list[str]], str]) -> str:
    out = [
        "// @generated by scripts/gen-server-model.py (values) from analysis/value-model.json.",
        "// Do not edit: change the generator or its sources and run it again.",
        "",
        "use super::{AclCategories, Argument, ArgumentKind, CommandShape, Reply, ScriptRefusal, ShapeForm};",
        "use crate::model::target::ReleaseSet;",
        "",
        "/// Where each release's forms were read, in the order of `RELEASES`.",
        "pub static SOURCES: &[&str] = &[",
    ]
    out += [f"    {rust_str(source)}," for source in model["sources"]]
    out += ["];", "", "/// Every command and subcommand, sorted by name.", "pub static SHAPES: &[CommandShape] = &["]
    for command in model["commands"]:
        out.append(f"CommandShape {{ name: {rust_str(command['name'])}, forms: &[")
        for form in command["forms"]:
            bits = sum(1 << CATEGORIES.index(name) for name in form["categories"])
            out.append(
                "ShapeForm { "
                f"releases: {release_bits(form['releases'])}, "
                f"arguments: &[{', '.join(argument_rs(a, rust_str) for a in form['arguments'])}], "
                f"reply: &{reply_rs(form['reply'], rust_str)}, "
                f"categories: AclCategories::from_bits({bits:#x}) }},"
            )
        out.append("] },")
    out.append("];")
    out += ["", "/// Options a command refuses inside scripts, or together with another option, and the releases that refuse them.", "pub static SCRIPT_REFUSALS: &[ScriptRefusal] = &["]
    for refusal in model["script_refusals"]:
        out.append(
            f"ScriptRefusal {{ command: {rust_str(refusal['command'])}, option: {rust_str(refusal['option'])}, "
            f"with: {'None' if refusal.get('with') is None else 'Some(' + rust_str(refusal['with']) + ')'}, "
            f"reply: {rust_str(refusal['reply'])}, releases: {release_bits(refusal['releases'])} }},"
        )
    out.append("];")
    return "\n".join(out) + "\n"


def argument_rs(arg: dict, rust_str: Callable[[str], str]) -> str:
    kind = ARGUMENT_KINDS[arg["kind"]]
    if kind in ("OneOf", "Block"):
        inner = ", ".join(argument_rs(a, rust_str) for a in arg["arguments"])
        kind = f"{kind}(&[{inner}])"
    kind = f"ArgumentKind::{kind}"
    token = f"Some({rust_str(arg['token'])})" if arg["token"] is not None else "None"
    return (
        f"Argument {{ name: {rust_str(arg['name'])}, kind: {kind}, token: {token}, "
        f"optional: {str(arg['optional']).lower()}, multiple: {str(arg['multiple']).lower()}, "
        f"multiple_token: {str(arg['multiple_token']).lower()} }}"
    )


def reply_rs(value: object, rust_str: Callable[[str], str]) -> str:
    simple = {"bulk": "Reply::BulkString", "double": "Reply::Double", "boolean": "Reply::Boolean", "unknown": "Reply::Unknown"}
    if isinstance(value, str):
        return simple[value]
    (key, inner), = value.items()
    if key == "integer":
        return "Reply::Integer(None)" if inner is None else f"Reply::Integer(Some(&[{', '.join(str(v) for v in inner)}]))"
    if key == "status":
        return "Reply::Status(None)" if inner is None else f"Reply::Status(Some({rust_str(inner)}))"
    if key == "null":
        return f"Reply::Null({rust_str(inner)})"
    if key == "array":
        return f"Reply::Array(&{reply_rs(inner, rust_str)})"
    if key == "set":
        return f"Reply::Set(&{reply_rs(inner, rust_str)})"
    if key == "flat_pairs":
        return f"Reply::FlatPairs(&[{', '.join(reply_rs(v, rust_str) for v in inner)}])"
    if key == "tuple":
        return f"Reply::Tuple(&[{', '.join(reply_rs(v, rust_str) for v in inner)}])"
    if key == "map":
        return f"Reply::Map {{ key: &{reply_rs(inner[0], rust_str)}, value: &{reply_rs(inner[1], rust_str)} }}"
    if key == "one_of":
        return f"Reply::OneOf(&[{', '.join(reply_rs(v, rust_str) for v in inner)}])"
    raise ValueModelError(f"unknown reply notation {key!r}")


def model_json(model: dict) -> str:
    return json.dumps(model, indent=1, sort_keys=True) + "\n"


VALUE_MODEL_JSON = Path("analysis") / "value-model.json"
SHAPES_TABLE = Path("analysis") / "src" / "model" / "commands" / "shapes" / "table.rs"
