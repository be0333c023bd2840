#!/usr/bin/env bash
# Benchmarks shipshape against helm template on the same chart and values, and writes
# the results as a Markdown table (with the machine it ran on) into BENCHMARKS.md,
# between its `bench.sh results` markers (the rest of the file is left as it is).
#
#   scripts/bench.sh                 release build; the examples, then synthetic specs
#                                    of 50, 200, 300 and 400 workloads (benches/synth.py),
#                                    and 400 whose allocations the startup settings state
#                                    (`synth.py 400 --stated`)
#   scripts/bench.sh --quick         one example and 10-workload specs, two runs each:
#                                    checks that the benchmark works (CI runs it), says
#                                    nothing about speed
#   --out FILE                       write the results into FILE instead of BENCHMARKS.md
#   --shipshape BIN                  time BIN instead of the release build's
#
# Per case: `shipshape render --preset P` vs `helm template` (Helm 3 and 4) with the
# generated chart and its `values-P.yaml`, and `shipshape generate`, timed with
# hyperfine (medians, no shell in between), and the peak resident memory of each
# command from `/usr/bin/time -v` (the median of three runs). Then `render`, Helm 3's
# `helm template` and `generate` again, each run 3 s after the previous one ended
# (hyperfine `--prepare 'sleep 3'`, five runs; in quick mode no pause, two runs): what
# a person's single run after a pause takes, in a second table. A third table sets
# each case's figures beside those of the run the file held before (read from the data
# comment the script leaves with its tables, or from the first table of a section
# written before it did), with Helm 3's change beside them: on a shared machine that
# is the host's. Needs hyperfine,
# /usr/bin/time and python3 (scripts/install-test-tools.sh installs them) and Helm 3
# and 4 (SHIPSHAPE_HELM3 / SHIPSHAPE_HELM4, else .tools/bin/helm3 and helm4).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { printf 'scripts/bench.sh: ERROR: %s\n' "$*" >&2; exit 1; }
log() { printf '[bench] %s\n' "$*" >&2; }

quick=0
out="$ROOT/BENCHMARKS.md"
bin=""
while (($#)); do
    case "$1" in
        --quick) quick=1 ;;
        --out) out="${2:?--out needs a file}"; shift ;;
        --shipshape) bin="${2:?--shipshape needs a binary}"; shift ;;
        *) die "unknown argument '$1' (see the header of scripts/bench.sh)" ;;
    esac
    shift
done

helm3="${SHIPSHAPE_HELM3:-$ROOT/.tools/bin/helm3}"
helm4="${SHIPSHAPE_HELM4:-$ROOT/.tools/bin/helm4}"
for tool in "$helm3" "$helm4" /usr/bin/time "$(command -v hyperfine || echo hyperfine)" "$(command -v python3 || echo python3)"; do
    [[ -x "$tool" ]] || die "$tool is missing: run scripts/install-test-tools.sh"
done

# shellcheck source=scripts/release-binary.sh
source "$ROOT/scripts/release-binary.sh"

if [[ -z "$bin" ]]; then
    log "cargo build --release"
    bin="$(release_binary)" || die "cargo build --release failed"
fi
[[ -x "$bin" ]] || die "$bin is not an executable"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Helm runs apart from the user's Helm configuration.
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" HELM_DATA_HOME="$work/helm/data"

# case name, spec file, preset, workload count
cases=()
if ((quick)); then
    runs=(--runs 2)
    spaced_gap=0
    spaced=(--runs 2 --prepare "sleep $spaced_gap")
    rss_runs=1
    cases+=("agent-platform|$ROOT/examples/agent-platform/shipshape.yaml|all-pools|8")
    sizes=(10)
    stated_sizes=(10)
else
    runs=(--warmup 1 --min-runs 10 --max-runs 40)
    spaced_gap=3
    spaced=(--runs 5 --prepare "sleep $spaced_gap")
    rss_runs=3
    cases+=("llm-gateway|$ROOT/examples/llm-gateway/shipshape.yaml|production|2")
    cases+=("agent-platform|$ROOT/examples/agent-platform/shipshape.yaml|all-pools|8")
    cases+=("web-shop|$ROOT/examples/web-shop/shipshape.yaml|evaluation|3")
    sizes=(50 200 300 400)
    stated_sizes=(400)
fi
for n in "${sizes[@]}"; do
    python3 "$ROOT/benches/synth.py" "$n" >"$work/synth-$n.yaml"
    cases+=("synth-$n|$work/synth-$n.yaml|all-pools|$n")
done
for n in "${stated_sizes[@]}"; do
    python3 "$ROOT/benches/synth.py" "$n" --stated >"$work/synth-stated-$n.yaml"
    cases+=("synth-stated-$n|$work/synth-stated-$n.yaml|all-pools|$n")
done

load_before="$(uptime | sed 's/.*load average: //')"
rows="$work/rows.tsv"
: >"$rows"

# Peak resident memory in KiB of a command (median of $rss_runs runs).
peak_rss() {
    local i samples=()
    for ((i = 0; i < rss_runs; i++)); do
        /usr/bin/time -v -o "$work/rss" "$@" >/dev/null 2>"$work/rss.err" \
            || die "$* failed: $(cat "$work/rss.err")"
        samples+=("$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$work/rss")")
    done
    printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(((rss_runs + 1) / 2))p"
}

for c in "${cases[@]}"; do
    IFS='|' read -r name spec preset workloads <<<"$c"
    dir="$work/$name"
    mkdir -p "$dir"
    log "$name: generate"
    "$bin" --spec "$spec" generate --out "$dir/out" >/dev/null 2>&1 \
        || die "$name: shipshape generate failed"
    chart="$dir/out/chart"
    values="$chart/values-$preset.yaml"
    [[ -f "$values" ]] || die "$name: no preset $preset ($values)"
    render=("$bin" --spec "$spec" render --preset "$preset")
    h3=("$helm3" template release-name "$chart" -f "$values")
    h4=("$helm4" template release-name "$chart" -f "$values")
    gen=("$bin" --spec "$spec" generate --out "$dir/gen")
    "${render[@]}" >"$dir/native.yaml"
    objects="$(grep -c '^kind:' "$dir/native.yaml")"
    presets="$(find "$dir/out/rendered" -name '*.yaml' | wc -l)"
    # A chart Helm refuses is recorded with Helm's reason instead of a time.
    names=(-n render -n generate)
    commands=("${render[*]}" "${gen[*]}")
    refused3="" refused4=""
    if "${h3[@]}" >"$dir/helm3.yaml" 2>"$dir/helm3.err"; then
        cmp -s "$dir/native.yaml" "$dir/helm3.yaml" || log "$name: note: render and helm 3 template differ in text"
        names+=(-n helm3) commands+=("${h3[*]}")
    else
        refused3="$(head -n 1 "$dir/helm3.err")"
        log "$name: helm 3 refuses the chart: $refused3"
    fi
    if "${h4[@]}" >"$dir/helm4.yaml" 2>"$dir/helm4.err"; then
        names+=(-n helm4) commands+=("${h4[*]}")
    else
        refused4="$(head -n 1 "$dir/helm4.err")"
        log "$name: helm 4 refuses the chart: $refused4"
    fi
    log "$name: hyperfine"
    hyperfine -N --style none "${runs[@]}" --export-json "$dir/times.json" \
        "${names[@]}" "${commands[@]}" >/dev/null \
        || die "$name: hyperfine failed"
    log "$name: hyperfine, runs ${spaced_gap} s apart"
    spaced_names=(-n render -n generate) spaced_commands=("${render[*]}" "${gen[*]}")
    [[ -n "$refused3" ]] || { spaced_names+=(-n helm3); spaced_commands+=("${h3[*]}"); }
    hyperfine -N --style none "${spaced[@]}" --export-json "$dir/spaced.json" \
        "${spaced_names[@]}" "${spaced_commands[@]}" >/dev/null \
        || die "$name: hyperfine (spaced runs) failed"
    log "$name: peak memory"
    r1="$(peak_rss "${render[@]}")"
    r4="$(peak_rss "${gen[@]}")"
    r2="-" r3="-"
    [[ -n "$refused3" ]] || r2="$(peak_rss "${h3[@]}")"
    [[ -n "$refused4" ]] || r3="$(peak_rss "${h4[@]}")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$preset" "$workloads" "$objects" \
        "$presets" "$dir/times.json" "$r1" "$r2" "$r3" "$r4" "$refused3" "$refused4" >>"$rows"
done

load_after="$(uptime | sed 's/.*load average: //')"

export BENCH_ROWS="$rows" BENCH_OUT="$out" BENCH_QUICK="$quick" BENCH_GAP="$spaced_gap"
export BENCH_LOAD_BEFORE="$load_before" BENCH_LOAD_AFTER="$load_after"
export BENCH_HELM3="$("$helm3" version --template '{{.Version}}')"
export BENCH_HELM4="$("$helm4" version --template '{{.Version}}')"
export BENCH_HYPERFINE="$(hyperfine --version)"
export BENCH_COMMIT="$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
# How many of link/hot-functions.txt's functions the binary has (build.rs places them
# first): the list names symbols of one build, and a later change renames some, which
# costs page faults at every start. Regenerate it with scripts/order-hot-functions.sh.
hot_list="$ROOT/link/hot-functions.txt"
if [[ -f "$hot_list" ]] && command -v nm >/dev/null; then
    export BENCH_HOT="$(nm --defined-only "$bin" | awk '{print $3}' | sort -u |
        comm -12 - <(sort -u "$hot_list") | wc -l) of $(sort -u "$hot_list" | wc -l)"
else
    export BENCH_HOT="not counted (no list or no nm)"
fi
python3 - <<'PY'
import json, os, platform, re, subprocess

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""

cpu = re.search(r"^model name\s*:\s*(.*)$", read("/proc/cpuinfo"), re.M)
mem = re.search(r"^MemTotal:\s*(\d+) kB", read("/proc/meminfo"), re.M)
osname = re.search(r'^PRETTY_NAME="?([^"\n]*)', read("/etc/os-release"), re.M)
machine = (
    f"{cpu.group(1) if cpu else platform.processor()}, {os.cpu_count()} cores, "
    f"{int(mem.group(1)) / 1024 / 1024:.1f} GiB RAM, "
    f"{osname.group(1) if osname else platform.system()} (Linux {platform.release()})"
)

def ms(seconds):
    v = seconds * 1000
    return f"{v:.1f} ms" if v < 100 else f"{v:,.0f} ms"

def seconds(cell):
    """A table's time ("3.1 ms", "1,555 ms") in seconds; None for anything else."""
    m = re.fullmatch(r"([\d,]+(?:\.\d+)?) ms(?: \(\d+\))?", cell.strip())
    return float(m.group(1).replace(",", "")) / 1000 if m else None

def previous_run(section):
    """The run an earlier bench.sh wrote between the markers: its data comment, or,
    for a section written before the comment existed, its first table read back."""
    m = re.search(r"<!-- bench.sh data (\{.*\}) -->", section)
    if m:
        return json.loads(m.group(1))
    commit = re.search(r"Commit (\S+);", section)
    machine = re.search(r"^Machine: (.*?)\. Load average", section, re.M)
    if not commit:
        return None
    cases = {}
    for row in section.split("\n\n| case | preset | workloads |", 1)[-1].splitlines()[2:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if not row.startswith("| ") or len(cells) != 10:
            break
        peaks = [None if p.strip() == "-" else int(p) for p in cells[9].split("/")]
        ratio = cells[7].split("/")[0].strip()
        cases[cells[0]] = {"preset": cells[1], "render": seconds(cells[4]), "helm3": seconds(cells[5]),
                           "helm4": seconds(cells[6]), "generate": seconds(cells[8]), "peak": peaks,
                           # The table's ratio, from the unrounded times.
                           "render_per_helm3": float(ratio) if re.fullmatch(r"[\d.]+", ratio) else None}
    return {"commit": commit.group(1), "machine": machine.group(1) if machine else "",
            "quick": "**Quick mode**" in section, "cases": cases}

def against_previous(previous, data):
    """The table of this run's figures next to the previous run's, case by case."""
    out = ["### Against the previous run", ""]
    common = [n for n in data["cases"] if previous and n in previous["cases"]]
    if not common:
        out.append("No earlier run of this script with the same cases in this file: nothing to compare with.")
        return out
    def change(old, new, unit):
        if old is None or new is None:
            return "-"
        shown = {"s": ms, "ratio": lambda v: f"{v:.3f}"}.get(unit, str)
        pct = "" if old == 0 else f" ({100 * (new - old) / old:+.0f} %)"
        return f"{shown(old)} -> {shown(new)}{pct}"
    def per_helm3(case, key):
        if key == "render" and case.get("render_per_helm3") is not None:
            return case["render_per_helm3"]
        return None if case[key] is None or not case.get("helm3") else case[key] / case["helm3"]
    note = (f"The previous run in this file: commit {previous['commit']}"
            + ("" if previous["machine"] == data["machine"] else f", on {previous['machine'] or 'a machine not stated'}")
            + (" (quick mode)" if previous["quick"] else "")
            + ("; this run is in quick mode" if data["quick"] and not previous["quick"] else "") + ". "
            "Each cell: the previous figure -> this run's (the change). Helm's own change is the host's, "
            "not shipshape's: the ratios to Helm 3's `helm template` in the same run compare builds "
            "across hours of a shared machine.")
    out += [note, "",
            "| case | render | helm 3 template | render / helm 3 | generate | generate / helm 3 | peak MiB render | peak MiB generate |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in common:
        old, new = previous["cases"][name], data["cases"][name]
        out.append(f"| {name} | {change(old['render'], new['render'], 's')} | "
                   f"{change(old['helm3'], new['helm3'], 's')} | "
                   f"{change(per_helm3(old, 'render'), per_helm3(new, 'render'), 'ratio')} | "
                   f"{change(old['generate'], new['generate'], 's')} | "
                   f"{change(per_helm3(old, 'generate'), per_helm3(new, 'generate'), 'ratio')} | "
                   f"{change(old['peak'][0], new['peak'][0], 'MiB')} | "
                   f"{change(old['peak'][3], new['peak'][3], 'MiB')} |")
    return out

def mib(kib):
    return "-" if kib == "-" else f"{int(kib) / 1024:.0f}"

lines = []
w = lines.append
begin, end = "<!-- bench.sh results begin -->", "<!-- bench.sh results end -->"
out = os.environ["BENCH_OUT"]
text = read(out)
previous = previous_run(text.split(begin, 1)[1].split(end, 1)[0] if begin in text and end in text else "")
data = {"commit": os.environ["BENCH_COMMIT"], "machine": machine,
        "quick": os.environ["BENCH_QUICK"] == "1", "cases": {}}
w(f"Machine: {machine}. Load average (1, 5, 15 min) {os.environ['BENCH_LOAD_BEFORE']} before, "
  f"{os.environ['BENCH_LOAD_AFTER']} after. Commit {os.environ['BENCH_COMMIT']}; "
  f"Helm {os.environ['BENCH_HELM3']} and {os.environ['BENCH_HELM4']}; {os.environ['BENCH_HYPERFINE']}. "
  f"Functions of `link/hot-functions.txt` in the binary: {os.environ['BENCH_HOT']}.")
if os.environ["BENCH_QUICK"] == "1":
    w("")
    w("**Quick mode** (`scripts/bench.sh --quick`, two runs each): these figures only show that the benchmark runs.")
w("")
w("Wall time, the median of hyperfine's runs (no shell). Ratio = render / helm template. "
  "Peak = peak resident memory in MiB (`/usr/bin/time -v`), median of "
  f"{'one run' if os.environ['BENCH_QUICK'] == '1' else 'three runs'}.")
w("")
w("| case | preset | workloads | objects | render | helm 3 template | helm 4 template | ratio 3 / 4 | generate (presets) | peak MiB render / helm 3 / helm 4 / generate |")
w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
refusals = []
spaced_rows = []
with open(os.environ["BENCH_ROWS"]) as f:
    for row in f:
        (name, preset, workloads, objects, presets, times, r1, r2, r3, r4,
         refused3, refused4) = row.rstrip("\n").split("\t")
        with open(times) as t:
            res = {r["command"]: r["median"] for r in json.load(t)["results"]}
        render, gen = res["render"], res["generate"]
        cells, ratios = [], []
        for helm, refused in (("helm3", refused3), ("helm4", refused4)):
            if refused:
                refusals.append(f"{name}, {helm}: {refused}")
                cells.append(f"refused [{len(refusals)}]")
                ratios.append("-")
            else:
                cells.append(ms(res[helm]))
                ratios.append(f"{render / res[helm]:.3f}")
        w(f"| {name} | {preset} | {workloads} | {objects} | {ms(render)} | {cells[0]} | {cells[1]} | "
          f"{ratios[0]} / {ratios[1]} | {ms(gen)} ({presets}) | "
          f"{mib(r1)} / {mib(r2)} / {mib(r3)} / {mib(r4)} |")
        with open(os.path.join(os.path.dirname(times), "spaced.json")) as t:
            apart = {r["command"]: r["median"] for r in json.load(t)["results"]}
        data["cases"][name] = {
            "preset": preset,
            "render": render,
            "helm3": None if refused3 else res["helm3"],
            "helm4": None if refused4 else res["helm4"],
            "generate": gen,
            "peak": [None if r == "-" else round(int(r) / 1024) for r in (r1, r2, r3, r4)],
        }
        helm3 = apart.get("helm3")
        helm3_cell, ratio = (cells[0], "-") if helm3 is None else (
            ms(helm3), f"{apart['render'] / helm3:.3f}")
        spaced_rows.append(
            f"| {name} | {preset} | {ms(apart['render'])} | {helm3_cell} | {ratio} | "
            f"{ms(apart['generate'])} |")
gap = os.environ["BENCH_GAP"]
w("")
if os.environ["BENCH_QUICK"] == "1":
    w(f"Runs apart, in quick mode without the pause: hyperfine `--prepare 'sleep {gap}'`, "
      "two runs each, medians (a full run pauses 3 s before each run).")
else:
    w(f"Runs {gap} s apart: each run of `render`, Helm 3's `helm template` and `generate` "
      f"starts {gap} s after the previous one ended (hyperfine `--prepare 'sleep {gap}'`, "
      "five runs each, medians), as a person runs them once; on a VM whose host takes "
      "back free memory that costs more than back to back (see the round of runs "
      "spaced apart in `benches/ROUNDS.md`).")
w("")
w("| case | preset | render | helm 3 template | ratio | generate |")
w("|---|---|---:|---:|---:|---:|")
for row in spaced_rows:
    w(row)
if refusals:
    w("")
    for i, refusal in enumerate(refusals, 1):
        w(f"[{i}] {refusal}  ")
w("")
lines.extend(against_previous(previous, data))
w("")
w(f"<!-- bench.sh data {json.dumps(data, sort_keys=True)} -->")
table = "\n".join(lines) + "\n"

if begin in text and end in text:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    text = f"{head}{begin}\n{table}{end}{tail}"
else:
    text = (text or "# Benchmarks\n") + f"\n## Latest run of scripts/bench.sh\n\n{begin}\n{table}{end}\n"
with open(out, "w") as f:
    f.write(text)
print(table, end="")
PY
log "wrote $out"
