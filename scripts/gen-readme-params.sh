#!/usr/bin/env bash
# Regenerates the parameter table in README.md (between the params markers) from
# `loom-info --params-md`, i.e. from src/core/params.def.  Usage: gen-readme-params.sh [BUILD_DIR] [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
table=$(env -i PATH="$PATH" "$build/tools/loom-info/loom-info" --params-md)
python3 - "$table" "${2:-}" <<'PY'
import sys, re
table, mode = sys.argv[1], sys.argv[2]
text = open("README.md").read()
new = re.sub(r"(<!-- params:begin -->\n).*?(<!-- params:end -->)",
             lambda m: m.group(1) + table + "\n" + m.group(2), text, flags=re.S)
if mode == "--check":
    if new != text:
        sys.exit("README.md parameter table is out of date: run scripts/gen-readme-params.sh")
    print("README parameter table is up to date")
else:
    open("README.md", "w").write(new)
PY
