#!/usr/bin/env python3
"""Fetch the corpus of real scripts named in corpus/manifest.json.

Downloads each pinned archive (npm tarball, PyPI wheel or sdist, crate)
with the registry's own client (npm, pip, cargo) into target/corpus/cache,
verifies its sha256, and writes each script to
target/corpus/scripts/<project>/<file>.lua. Scripts assembled from
includes at load time (bull, bullmq: `--- @include "file"`) are written
with their includes expanded once each, as their loaders send them;
scripts a loader assembles from several files (bottleneck) are joined
the same way.
Python 3, standard library only; idempotent.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "corpus"
INCLUDE = re.compile(r'^\s*---\s*@include\s+"([^"]+)"\s*$', re.M)


def download(source: dict, directory: Path) -> None:
    """Fetches the pinned archive with the registry's own client."""
    package = source.get("package", source["project"])
    version = source["version"]
    if source["kind"] == "pypi":
        run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(directory),
             f"{package}=={version}"])
    elif source["kind"] == "npm":
        run(["npm", "pack", "--silent", "--pack-destination", str(directory), f"{package}@{version}"])
    elif source["kind"] == "crate":
        # cargo fetches a crate only as a dependency; its cache keeps the .crate file.
        with tempfile.TemporaryDirectory() as scratch:
            manifest = Path(scratch) / "Cargo.toml"
            manifest.write_text(
                '[package]\nname = "corpus-fetch"\nversion = "0.0.0"\nedition = "2021"\n'
                f'[lib]\npath = "lib.rs"\n[dependencies]\n{package} = {{ version = "={version}", default-features = false }}\n'
            )
            (Path(scratch) / "lib.rs").write_text("")
            run(["cargo", "fetch", "-q", "--manifest-path", str(manifest)])
        home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
        for cached in (home / "registry" / "cache").glob(f"*/{source['file']}"):
            shutil.copy(cached, directory / source["file"])
            break
    else:
        raise SystemExit(f"{source['project']}: unknown kind {source['kind']!r}")


def run(command: list[str]) -> None:
    subprocess.run(command, check=True)


def archive(source: dict) -> bytes:
    cache = OUT / "cache" / source["file"]
    if not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        download(source, cache.parent)
    if not cache.exists():
        raise SystemExit(f"{source['project']}: the download did not produce {source['file']}")
    data = cache.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != source["sha256"]:
        raise SystemExit(f"{source['project']}: sha256 {digest}, the manifest pins {source['sha256']}")
    return data


def members(source: dict, data: bytes) -> dict[str, str]:
    if source["file"].endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            return {n: wheel.read(n).decode() for n in wheel.namelist() if n.endswith(".lua")}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {
            m.name: tar.extractfile(m).read().decode()
            for m in tar.getmembers()
            if m.isfile() and m.name.endswith(".lua")
        }


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


def scripts(source: dict, files: dict[str, str]):
    """Yields (file name, archive path, text as sent to the server) per script."""
    for name, parts in sorted(source.get("assemble", {}).items()):
        yield name, parts[-1], "\n".join(files[part] for part in parts)
    patterns = source.get("scripts", [])
    for path in sorted(p for p in files if any(PurePosixPath(p).match(g) for g in patterns)):
        text = expand(path, files, set()) if source.get("includes") else files[path]
        yield posixpath.basename(path), path, text


def main() -> int:
    manifest = json.loads((ROOT / "corpus" / "manifest.json").read_text())
    index = []
    for source in manifest["sources"]:
        files = members(source, archive(source))
        for name, path, text in scripts(source, files):
            out = OUT / "scripts" / source["project"] / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
            index.append({"project": source["project"], "path": path, "file": str(out.relative_to(ROOT))})
    (OUT / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    projects = len({entry["project"] for entry in index})
    print(f"{len(index)} scripts from {projects} projects in {(OUT / 'scripts').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
