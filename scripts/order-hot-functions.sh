#!/usr/bin/env bash
# Writes link/hot-functions.txt: the functions the usual runs of shipshape execute, in
# the order they are first seen. build.rs passes the file to the linker
# (`--symbol-ordering-file`), which places those functions first and together in the
# executable's code. A run then touches a few megabytes of code instead of pages spread
# over all 14: fewer page faults at every start (see build.rs).
#
#   scripts/order-hot-functions.sh   release build, then the runs below under valgrind
#
# The runs: `--version`; `render` of each example with the preset the benchmarks use;
# `generate` of each example; `render` and `generate` of a synthetic spec of 50
# workloads (benches/synth.py). Names are the executable's own symbols (mangled);
# one missing from a later build is skipped by the linker, so a stale file costs
# speed, never correctness. Rerun it after a large change or a new Rust toolchain.
# Needs valgrind (callgrind), nm and python3.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { printf 'scripts/order-hot-functions.sh: ERROR: %s\n' "$*" >&2; exit 1; }
for tool in valgrind nm python3; do
    command -v "$tool" >/dev/null || die "$tool is missing"
done

# shellcheck source=scripts/release-binary.sh
source "$ROOT/scripts/release-binary.sh"
bin="$(release_binary)" || die "cargo build --release failed"
[[ -x "$bin" ]] || die "cargo build --release gave no shipshape executable"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$ROOT/benches/synth.py" 50 >"$work/synth-50.yaml"

runs=(
    "--version"
    "--spec $ROOT/examples/llm-gateway/shipshape.yaml render --preset production"
    "--spec $ROOT/examples/agent-platform/shipshape.yaml render --preset all-pools"
    "--spec $ROOT/examples/web-shop/shipshape.yaml render --preset evaluation"
    "--spec $work/synth-50.yaml render --preset all-pools"
    "--spec $ROOT/examples/llm-gateway/shipshape.yaml generate --out $work/out-llm"
    "--spec $ROOT/examples/agent-platform/shipshape.yaml generate --out $work/out-agent"
    "--spec $ROOT/examples/web-shop/shipshape.yaml generate --out $work/out-web"
    "--spec $work/synth-50.yaml generate --out $work/out-synth"
)
n=0
for run in "${runs[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # each run is a list of arguments
    valgrind --tool=callgrind --demangle=no --compress-strings=no \
        --callgrind-out-file="$work/run-$n.out" "$bin" $run >/dev/null 2>"$work/run-$n.err" ||
        die "shipshape $run failed under valgrind (see $work/run-$n.err)"
done

nm --defined-only "$bin" >"$work/symbols.txt"
mkdir -p "$ROOT/link"
python3 - "$work" "$n" "$ROOT/link/hot-functions.txt" <<'EOF'
import sys

work, runs, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
code = set()
for line in open(f"{work}/symbols.txt"):
    fields = line.split()
    if len(fields) == 3 and fields[1] in "tTwW":
        code.add(fields[2])
seen, order = set(), []
for n in range(1, runs + 1):
    for line in open(f"{work}/run-{n}.out"):
        if line.startswith(("fn=", "cfn=")):
            name = line.split("=", 1)[1].strip()
            if name in code and name not in seen:
                seen.add(name)
                order.append(name)
with open(out, "w") as f:
    f.write("".join(name + "\n" for name in order))
print(f"link/hot-functions.txt: {len(order)} functions", file=sys.stderr)
EOF
