#!/usr/bin/env python3
"""Check four projects' script folders as they keep them, with the
configurations the checker's README documents.

For bullmq, bull, bottleneck and bee-queue (pinned in manifest.json), the
script folder is unpacked as published into target/corpus/conventions/
<project>/, with corpus/conventions/<project>.toml as its
redis-script.toml: includes stay includes, preludes stay separate files.
redis-script-check then runs on each folder, and every finding must be one
that corpus/conventions/verdicts.txt lists with a reviewer's verdict:

    <project> <severity> <code> <file>:<line> | <verdict>

Exit status 1 when a finding is not listed, a listed one is no longer
found, a verdict is empty, a function of an include is reported undefined,
or the README no longer shows a configuration as it is here.
Python 3, standard library only.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from fetch import ROOT, archive

FOLDERS = {
    "bullmq": "package/dist/cjs/commands",
    "bull": "package/lib/commands",
    "bottleneck": "package/src/redis",
    "bee-queue": "package/lib/lua",
}
HERE = ROOT / "corpus" / "conventions"
OUT = ROOT / "target" / "corpus" / "conventions"


def unpack(project: str, source: dict) -> Path:
    folder = FOLDERS[project] + "/"
    target = OUT / project
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive(source))) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith(folder) and member.name.endswith(".lua"):
                path = target / member.name[len(folder):]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(tar.extractfile(member).read())
    shutil.copy(HERE / f"{project}.toml", target / "redis-script.toml")
    return target


def findings(project: str, folder: Path) -> tuple[int, list[str]]:
    run = subprocess.run(
        ["cargo", "run", "-q", "-p", "redis-script-check", "--", "--format", "json", "."],
        capture_output=True, text=True, cwd=folder, check=False,
    )
    if run.returncode not in (0, 1):
        raise SystemExit(f"{project}: redis-script-check failed: {run.stderr}")
    report = json.loads(run.stdout)
    found = []
    for d in report["diagnostics"]:
        path = d["path"].removeprefix("./")
        found.append(f"{project} {d['severity']} {d['code']} {path}:{d['line']} | {d['message']}")
    return len(report["files"]), found


def main() -> int:
    manifest = json.loads((ROOT / "corpus" / "manifest.json").read_text())
    sources = {source["project"]: source for source in manifest["sources"]}
    readme = (ROOT / "cli" / "README.md").read_text()
    verdicts = {}
    problems = []
    for line in (HERE / "verdicts.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        place, _, verdict = line.partition(" | ")
        if not verdict.strip():
            problems.append(f"no verdict: {line}")
        verdicts[place.strip()] = verdict.strip()
    seen = set()
    for project in FOLDERS:
        config = (HERE / f"{project}.toml").read_text()
        if config not in readme:
            problems.append(f"cli/README.md does not show corpus/conventions/{project}.toml as it is")
        scripts, found = findings(project, unpack(project, sources[project]))
        errors = sum(" error " in f for f in found)
        print(f"{project}: {scripts} scripts, {errors} errors, {len(found) - errors} warnings")
        for finding in found:
            place, _, message = finding.partition(" | ")
            print(f"  {place}: {message}")
            if " RS007 " in place or (" RS030 " in place and "is not defined" in message):
                problems.append(f"an include is not resolved: {finding}")
            if place not in verdicts:
                problems.append(f"not judged: {finding}")
            seen.add(place)
    problems += [f"judged but no longer found: {place}" for place in verdicts if place not in seen]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
