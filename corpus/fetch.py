#!/usr/bin/env python3
"""Fetch the corpus of real scripts named in corpus/manifest.json.

Downloads each pinned archive (npm tarball or PyPI wheel) into
target/corpus/cache, verifies its sha256, and writes each script to
target/corpus/scripts/<project>/<file>.lua. Scripts assembled from
includes at load time (bull, bullmq: `--- @include "file"`) are written
with their includes expanded once each, as their loaders send them.
Python 3, standard library only; idempotent.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "corpus"
INCLUDE = re.compile(r'^\s*---\s*@include\s+"([^"]+)"\s*$', re.M)


def archive(source: dict) -> bytes:
    name = source["file"] if "file" in source else source["url"].rsplit("/", 1)[1]
    cache = OUT / "cache" / name
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        if source["kind"] == "pypi":
            # pip knows the package index's layout and mirrors.
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                 "-q", "-d", str(cache.parent), f"{source['project']}=={source['version']}"],
                check=True,
            )
        else:
            cache.write_bytes(urllib.request.urlopen(source["url"]).read())
    data = cache.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != source["sha256"]:
        raise SystemExit(f"{source['project']}: sha256 {digest}, the manifest pins {source['sha256']}")
    return data


def members(source: dict, data: bytes) -> dict[str, str]:
    if source["kind"] == "npm":
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            return {
                m.name: tar.extractfile(m).read().decode()
                for m in tar.getmembers()
                if m.isfile() and m.name.endswith(".lua")
            }
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        return {n: wheel.read(n).decode() for n in wheel.namelist() if n.endswith(".lua")}


def expand(path: str, files: dict[str, str], seen: set[str]) -> str:
    def include(match: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), match.group(1)))
        if not target.endswith(".lua"):
            target += ".lua"
        if target in seen:
            return ""
        seen.add(target)
        return expand(target, files, seen)

    return INCLUDE.sub(include, files[path])


def main() -> int:
    manifest = json.loads((ROOT / "corpus" / "manifest.json").read_text())
    index = []
    for source in manifest["sources"]:
        files = members(source, archive(source))
        chosen = sorted(p for p in files if PurePosixPath(p).match(source["scripts"]))
        for path in chosen:
            text = expand(path, files, set()) if source.get("includes") else files[path]
            out = OUT / "scripts" / source["project"] / posixpath.basename(path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
            index.append({"project": source["project"], "path": path, "file": str(out.relative_to(ROOT))})
    (OUT / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    projects = len({entry["project"] for entry in index})
    print(f"{len(index)} scripts from {projects} projects in {(OUT / 'scripts').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
