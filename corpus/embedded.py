#!/usr/bin/env python3
"""Measure how redis-script-check finds Lua scripts embedded in host
sources: real Go, Python, JavaScript, Ruby and PHP files of public
projects (corpus/embedded.json), held out from the checker's development.

Each source comes from its registry with its own client (pip, npm, or
Debian's apt-get), pinned by version; every file is checked by sha256 and
written to target/corpus/embedded/<project>/. The checker then runs on all
of them (`--format json`), and each file's scripts are compared with the
expected ones by the host line of their first line of code, and its
scripts built at run time likewise.

Exit status 1 when fewer than 95% of the expected scripts are found at
their line, when a script is reported that is not one (a file without Lua
must yield none), or when a file is not as pinned.
Python 3, standard library only.
"""

from __future__ import annotations

import collections
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from fetch import ROOT, download

OUT = ROOT / "target" / "corpus"
LANGUAGES = {".go": "Go", ".py": "Python", ".js": "JavaScript", ".cjs": "JavaScript",
             ".mjs": "JavaScript", ".ts": "TypeScript", ".rb": "Ruby", ".php": "PHP"}


def archive(source: dict) -> Path:
    """The package file in the cache, downloaded once."""
    cache = OUT / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    if source["kind"] == "debian":
        name = source["package"]
        found = sorted(cache.glob(f"{name}_*.deb"))
        if not found:
            command = ["apt-get", "-o", "APT::Sandbox::User=root", "download", "-qq", name]
            if subprocess.run(command, cwd=cache, check=False).returncode != 0:
                subprocess.run(["apt-get", "update", "-qq"], check=True)
                subprocess.run(command, cwd=cache, check=True)
            found = sorted(cache.glob(f"{name}_*.deb"))
        if not found:
            raise SystemExit(f"{source['project']}: apt-get download {name} produced no package")
        return found[-1]
    path = cache / source["file"]
    if not path.exists():
        download(source, cache)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != source["sha256"]:
        raise SystemExit(f"{source['project']}: sha256 {digest}, the manifest pins {source['sha256']}")
    return path


def members(source: dict, path: Path, wanted: set[str]) -> dict[str, bytes]:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            return {name: wheel.read(name) for name in wheel.namelist() if name in wanted}
    if path.suffix == ".deb":
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(["dpkg-deb", "-x", str(path), scratch], check=True)
            return {name: (Path(scratch) / name).read_bytes() for name in wanted if (Path(scratch) / name).exists()}
    with tarfile.open(fileobj=io.BytesIO(path.read_bytes())) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.name in wanted}


def main() -> int:
    manifest = json.loads((ROOT / "corpus" / "embedded.json").read_text())
    target = OUT / "embedded"
    expected = {}
    problems = []
    for source in manifest["sources"]:
        wanted = {file["path"]: file for file in source["files"]}
        found = members(source, archive(source), set(wanted))
        for name, file in wanted.items():
            data = found.get(name)
            if data is None:
                raise SystemExit(f"{source['project']}: the package holds no {name}")
            digest = hashlib.sha256(data).hexdigest()
            if digest != file["sha256"]:
                raise SystemExit(f"{source['project']}: {name} has sha256 {digest}, the manifest pins {file['sha256']}")
            local = Path(source["project"]) / name
            (target / local).parent.mkdir(parents=True, exist_ok=True)
            (target / local).write_bytes(data)
            expected[str(local)] = file
    run = subprocess.run(
        ["cargo", "run", "-q", "-p", "redis-script-check", "--", "--format", "json", *sorted(expected)],
        capture_output=True, text=True, cwd=target, check=False,
    )
    if run.returncode not in (0, 1):
        raise SystemExit(f"redis-script-check failed: {run.stderr}")
    report = json.loads(run.stdout)
    scripts = collections.defaultdict(list)
    for entry in report["files"]:
        host = entry.get("embedded_in")
        if host:
            scripts[host["path"]].append(host["line"])
    built = collections.defaultdict(list)
    for place in report["built_at_run_time"]:
        path, _, line = place.rpartition(":")
        built[path].append(int(line))
    totals = collections.defaultdict(collections.Counter)
    for path, file in sorted(expected.items()):
        language = LANGUAGES[Path(path).suffix]
        count = totals[language]
        count["files"] += 1
        want, got = set(file["scripts"]), set(scripts[path])
        count["scripts"] += len(want)
        count["found"] += len(want & got)
        count["extra"] += len(got - want)
        run_time_want, run_time_got = set(file.get("built_at_run_time", [])), set(built[path])
        count["run time"] += len(run_time_want)
        count["run time found"] += len(run_time_want & run_time_got)
        count["run time extra"] += len(run_time_got - run_time_want)
        for line in sorted(want - got):
            problems.append(f"missed   {path}:{line}")
        for line in sorted(got - want):
            problems.append(f"not one  {path}:{line}")
        for line in sorted(run_time_want - run_time_got):
            print(f"built at run time, not reported: {path}:{line}" + (f" ({file['note']})" if file.get("note") else ""))
        for line in sorted(run_time_got - run_time_want):
            problems.append(f"not built at run time: {path}:{line}")
    print(f"{'language':12} {'files':>5} {'scripts':>7} {'found':>5} {'not one':>7} {'run time':>8} {'reported':>8}")
    all_scripts = all_found = all_extra = 0
    for language, count in sorted(totals.items()):
        print(f"{language:12} {count['files']:5} {count['scripts']:7} {count['found']:5} {count['extra']:7} "
              f"{count['run time']:8} {count['run time found']:8}")
        all_scripts += count["scripts"]
        all_found += count["found"]
        all_extra += count["extra"] + count["run time extra"]
    recall = all_found / all_scripts if all_scripts else 1.0
    print(f"found {all_found} of {all_scripts} scripts at their line ({recall:.0%}); {all_extra} reported that are not scripts")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 0 if recall >= 0.95 and all_extra == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
