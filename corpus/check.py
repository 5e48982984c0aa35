#!/usr/bin/env python3
"""Run redis-script-check over the fetched corpus and count value findings.

The corpus scripts declare no keys or arguments, so they are checked with
any number of each (`--keys 0+ --args 0+`), unread ones allowed and keys
from outside KEYS allowed: what is counted is the value findings (the
diagnostics with an `RS1xx` code and a finding name), per name and
severity, each listed with its place. Exit status 0 always; the verdicts are a reviewer's.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    scripts = ROOT / "target" / "corpus" / "scripts"
    if not scripts.exists():
        raise SystemExit("run corpus/fetch.py first")
    run = subprocess.run(
        ["cargo", "run", "-q", "--release", "-p", "redis-script-check", "--",
         "--keys", "0+", "--args", "0+", "--allow-unused", "--dynamic-keys",
         "--format", "json", str(scripts)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    report = json.loads(run.stdout)
    counts = collections.Counter()
    listed = []
    for diagnostic in report["diagnostics"]:
        name = diagnostic.get("finding")
        if not name:
            continue
        counts[(name, diagnostic["severity"])] += 1
        where = f"{Path(diagnostic['path']).resolve().relative_to(scripts)}:{diagnostic['line']}"
        listed.append(f"{diagnostic['severity']:7} {diagnostic['code']} {name:22} {where}: {diagnostic['message']}")
    print(f"{len(report['files'])} scripts")
    for (name, severity), count in sorted(counts.items()):
        print(f"{count:4} {severity:7} {name}")
    print("\n".join(listed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
