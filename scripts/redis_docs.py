"""Commands as the Redis documentation repository describes them.

Part of ``scripts/gen-server-model.py``: the source of the Redis releases
newer than any binary that runs here. The repository ``redis/docs`` keeps a
page per command (``content/commands/<name>.md``) whose YAML front matter
repeats the server's command specification file (``arity``,
``command_flags``, ``key_specs``, ``arguments`` with their ``since``,
``acl_categories``, ``since``, ``container`` for a subcommand, and for the
newest commands ``reply_schema``). ``spec_bodies`` turns those pages into
the shape of the server's ``src/commands/*.json`` files, so the generator
reads them as it reads the specification files at a tag.

Only the part of YAML those front matters use is read: block mappings and
sequences, plain scalars (which may continue on more indented lines),
single- and double-quoted scalars, integers, ``true``/``false``. Anything
else is an error naming the page and line, never a guess.

Python 3.11, stdlib only.
"""

from __future__ import annotations

import re
from typing import Callable


class DocsError(Exception):
    pass


def front_matter(text: str, where: str) -> dict:
    """The YAML between a page's two leading `---` lines.

    >>> page = '''---
    ... acl_categories:
    ... - '@write'
    ... arguments:
    ... - display_text: key
    ...   key_spec_index: 0
    ...   name: key
    ...   type: key
    ... - arguments:
    ...   - name: ifeq-value
    ...     since: 8.4.0
    ...     token: IFEQ
    ...     type: string
    ...   name: condition
    ...   optional: true
    ...   type: oneof
    ... arity: -2
    ... description: Sets the string value of a key, ignoring its type. The key is created
    ...   if it doesn't exist.
    ... history:
    ... - - 8.4.0
    ...   - Added 'IFEQ'.
    ... ---
    ... Body text.'''
    >>> matter = front_matter(page, "delex.md")
    >>> matter["acl_categories"], matter["arity"], matter["history"]
    (['@write'], -2, [['8.4.0', "Added 'IFEQ'."]])
    >>> matter["arguments"][1]["arguments"][0]
    {'name': 'ifeq-value', 'since': '8.4.0', 'token': 'IFEQ', 'type': 'string'}
    >>> matter["arguments"][1]["optional"], matter["description"]
    (True, "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.")
    >>> front_matter("---\\narity -2\\n---", "bad.md")
    Traceback (most recent call last):
    ...
    redis_docs.DocsError: bad.md:2: not a `key: value` line: 'arity -2'
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise DocsError(f"{where}: no front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise DocsError(f"{where}: the front matter does not end") from None
    body = [(number + 2, line) for number, line in enumerate(lines[1:end])]
    parser = _Parser([(n, line) for n, line in body if line.strip()], where)
    value = parser.block(0)
    if parser.position != len(parser.lines):
        raise DocsError(f"{where}:{parser.lines[parser.position][0]}: unexpected indentation")
    return value if isinstance(value, dict) else {}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


KEY = re.compile(r"^([A-Za-z0-9_\-]+):(?: (.*))?$")


class _Parser:
    def __init__(self, lines: list[tuple[int, str]], where: str):
        self.lines = lines
        self.position = 0
        self.where = where

    def error(self, message: str) -> DocsError:
        number = self.lines[min(self.position, len(self.lines) - 1)][0]
        return DocsError(f"{self.where}:{number}: {message}")

    def peek(self) -> tuple[int, str] | None:
        if self.position >= len(self.lines):
            return None
        _, line = self.lines[self.position]
        return _indent(line), line.strip()

    def block(self, indent: int) -> object:
        head = self.peek()
        if head is None or head[0] < indent:
            return None
        if head[1] == "-" or head[1].startswith("- "):
            return self.sequence(head[0])
        return self.mapping(head[0])

    def mapping(self, indent: int, first: str | None = None) -> dict:
        out: dict = {}
        while True:
            if first is not None:
                text, first = first, None
            else:
                head = self.peek()
                if head is None or head[0] < indent:
                    return out
                if head[0] > indent:
                    raise self.error("unexpected indentation")
                text = head[1]
                if text.startswith("- "):
                    return out
                self.position += 1
            match = KEY.match(text)
            if not match:
                raise self.error(f"not a `key: value` line: {text!r}")
            key, rest = match.group(1), match.group(2)
            if rest is None or rest == "":
                nested = self.peek()
                # A sequence may sit at the key's own indentation.
                if nested and (nested[0] > indent or (nested[0] == indent and nested[1].startswith("- "))):
                    out[key] = self.block(nested[0])
                else:
                    out[key] = None
            else:
                out[key] = self.scalar(rest, indent)

    def sequence(self, indent: int) -> list:
        out: list = []
        while True:
            head = self.peek()
            if head is None or head[0] != indent or not (head[1] == "-" or head[1].startswith("- ")):
                return out
            self.position += 1
            rest = head[1][2:] if head[1] != "-" else ""
            inner = indent + 2
            if rest.startswith("- ") or rest == "-":
                # A sequence inside a sequence item: `- - 2.6.12`.
                self.position -= 1
                self.lines[self.position] = (self.lines[self.position][0], " " * inner + rest)
                out.append(self.sequence(inner))
            elif KEY.match(rest) and not rest.startswith(("'", '"')):
                out.append(self.mapping(inner, first=rest))
            elif rest == "":
                out.append(self.block(inner))
            else:
                out.append(self.scalar(rest, indent))

    def scalar(self, text: str, indent: int) -> object:
        """A scalar that starts with `text`; its continuation lines are the
        following ones more indented than `indent`."""
        parts = [text]
        if text.startswith('"'):
            while not _closed_double(" ".join(parts)):
                head = self.peek()
                if head is None:
                    raise self.error("unterminated double-quoted scalar")
                self.position += 1
                parts.append(head[1])
            return _double(parts)
        if text.startswith("'"):
            while not _closed_single(" ".join(parts)):
                head = self.peek()
                if head is None:
                    raise self.error("unterminated single-quoted scalar")
                self.position += 1
                parts.append(head[1])
            joined = " ".join(parts)
            return joined[1:-1].replace("''", "'")
        while True:
            head = self.peek()
            if head is None or head[0] <= indent:
                break
            self.position += 1
            parts.append(head[1])
        return _plain(" ".join(parts))


def _closed_single(text: str) -> bool:
    body = text[1:].replace("''", "")
    return body.endswith("'") and body.count("'") == 1


def _closed_double(text: str) -> bool:
    escaped = False
    for index, char in enumerate(text[1:], 1):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            if index != len(text) - 1:
                raise DocsError(f"text after a double-quoted scalar: {text!r}")
            return True
    return False


ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "_": "\u00a0", " ": " "}


def _double(parts: list[str]) -> str:
    # A line ending in `\` continues without a space; other line breaks fold
    # to one space.
    text = ""
    for index, part in enumerate(parts):
        if index and not text.endswith("\\"):
            text += " "
        elif index:
            text = text[:-1]
        text += part
    out, index, body = [], 0, text[1:-1]
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            out.append(ESCAPES.get(body[index + 1], body[index + 1]))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _plain(text: str) -> object:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    if text in ("null", "~"):
        return None
    return text


# --------------------------------------------------------------------------
# Pages as specification files


def spec_key_spec(raw: dict, where: str) -> dict:
    """A front matter key spec in the specification files' form (`flags`,
    `begin_search: {index: {pos}}`, `find_keys: {range: {...}}`). Pages
    write each part either that way or as `{type: index, spec: {index}}`,
    with the flags as `RW: true` keys or a `flags` list.

    >>> spec_key_spec({"RW": True, "delete": True,
    ...     "begin_search": {"type": "index", "spec": {"index": 1}},
    ...     "find_keys": {"type": "range", "spec": {"keystep": 1, "lastkey": 0, "limit": 0}}}, "delex.md")
    {'flags': ['RW', 'DELETE'], 'begin_search': {'index': {'pos': 1}}, 'find_keys': {'range': {'lastkey': 0, 'step': 1, 'limit': 0}}}
    >>> spec_key_spec({"flags": ["RO"], "begin_search": {"index": {"pos": 1}},
    ...     "find_keys": {"range": {"lastkey": 0, "step": 1, "limit": 0}}}, "arcount.md")
    {'flags': ['RO'], 'begin_search': {'index': {'pos': 1}}, 'find_keys': {'range': {'lastkey': 0, 'step': 1, 'limit': 0}}}
    >>> spec_key_spec({"begin_search": {"index": {"pos": 1}},
    ...     "find_keys": {"range": {"lastkey": 0, "limit": 0}, "type": "range"}}, "xadd.md")
    Traceback (most recent call last):
    ...
    redis_docs.DocsError: xadd.md: key spec part {'range': {'lastkey': 0, 'limit': 0}, 'type': 'range'}
    """
    flags = [str(flag).upper() for flag in raw.get("flags") or []]
    flags += [name.upper() for name, value in raw.items() if value is True]
    return {
        "flags": flags,
        "begin_search": _search_part(raw.get("begin_search"), BEGIN_FIELDS, where),
        "find_keys": _search_part(raw.get("find_keys"), FIND_FIELDS, where),
    }


# Per kind of search step: the specification file's field for each field a
# page may name otherwise (`keystep` for `step`).
BEGIN_FIELDS = {"index": {"pos": "index"}, "keyword": {"keyword": "keyword", "startfrom": "startfrom"}}
FIND_FIELDS = {
    "range": {"lastkey": "lastkey", "step": "keystep", "limit": "limit"},
    "keynum": {"keynumidx": "keynumidx", "firstkey": "firstkey", "step": "keystep"},
}


def _search_part(raw: object, kinds: dict[str, dict[str, str]], where: str) -> dict:
    if not isinstance(raw, dict):
        raise DocsError(f"{where}: key spec part {raw!r}")
    kind = raw.get("type")
    if kind == "unknown" or "unknown" in raw:
        return {"unknown": None}
    if kind is None:
        kind = next((k for k in kinds if isinstance(raw.get(k), dict)), None)
        given = raw.get(kind) if kind else None
    else:
        given = raw.get("spec")
    if kind not in kinds or not isinstance(given, dict):
        raise DocsError(f"{where}: key spec part {raw!r}")
    fields = {}
    for field, other_name in kinds[kind].items():
        value = given.get(field, given.get(other_name))
        if value is None:
            raise DocsError(f"{where}: key spec part {raw!r} has no {field}")
        fields[field] = value
    return {kind: fields}


def spec_body(page: dict, where: str) -> tuple[str, dict]:
    """The command name (`CLUSTER MIGRATION` is `MIGRATION` in container
    `CLUSTER`) and its specification-file body."""
    title = str(page.get("title", "")).strip()
    words = title.split()
    if not words or len(words) > 2:
        raise DocsError(f"{where}: title {title!r} is not a command name")
    body: dict = {}
    for field in ("since", "group", "arity", "deprecated_since", "replaced_by", "reply_schema", "arguments"):
        if page.get(field) is not None:
            body[field] = page[field]
    body["command_flags"] = [str(flag).upper() for flag in page.get("command_flags") or []]
    body["acl_categories"] = [str(c).lstrip("@").upper() for c in page.get("acl_categories") or []]
    body["key_specs"] = [spec_key_spec(spec, where) for spec in page.get("key_specs") or []]
    if "since" in body:
        body["since"] = str(body["since"])
    if len(words) == 2:
        container = str(page.get("container") or words[0])
        if container.upper() != words[0].upper():
            raise DocsError(f"{where}: title {title!r} but container {container!r}")
        body["container"] = container.upper()
        return words[1].upper(), body
    return words[0].upper(), body


def spec_bodies(
    list_pages: Callable[[], list[str]], read_page: Callable[[str], str]
) -> tuple[dict[str, dict], dict[str, str]]:
    """Every server command page (not a module's, not a listing page) as
    {file name: {COMMAND: body}}, as `src/commands/*.json` files read, and
    the pages that could not be read so, with why."""
    out: dict[str, dict] = {}
    unread: dict[str, str] = {}
    for page_name in sorted(list_pages()):
        if not page_name.endswith(".md") or page_name.startswith("_"):
            continue
        where = f"content/commands/{page_name}"
        page = front_matter(read_page(page_name), where)
        if page.get("module") or "arity" not in page:
            # Module commands come from the modules' own repositories, and
            # a page without an arity lists commands, or documents a
            # bundled module's commands (vector sets) without one.
            continue
        try:
            name, body = spec_body(page, where)
        except DocsError as error:
            unread[page_name] = str(error)
            continue
        out[page_name[:-3] + ".json"] = {name: body}
    return out, unread
