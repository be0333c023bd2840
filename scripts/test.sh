#!/usr/bin/env bash
# The project's single test command: installs the test tools, then runs
# rustfmt, clippy and the test suite. Extra arguments go to `cargo test`,
# e.g. `scripts/test.sh -- --nocapture` or `scripts/test.sh helm`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

step() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'scripts/test.sh: ERROR: %s\n' "$*" >&2; exit 1; }

step "installing test tools"
scripts/install-test-tools.sh

export SHIPSHAPE_HELM3="$ROOT/.tools/bin/helm3"
export SHIPSHAPE_HELM4="$ROOT/.tools/bin/helm4"
export SHIPSHAPE_KUBERNETES_VALIDATE="$ROOT/.tools/venv/bin/kubernetes-validate"
export SHIPSHAPE_CHECKOV="$ROOT/.tools/checkov/bin/checkov"
export SHIPSHAPE_REGISTRY
SHIPSHAPE_REGISTRY="$(command -v docker-registry || echo /usr/bin/docker-registry)"
export SHIPSHAPE_RSVG_CONVERT
SHIPSHAPE_RSVG_CONVERT="$(command -v rsvg-convert || echo /usr/bin/rsvg-convert)"
# The preflight tests start a real PostgreSQL (initdb, postgres from this folder) and Redis.
export SHIPSHAPE_POSTGRES_BIN
SHIPSHAPE_POSTGRES_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
export SHIPSHAPE_REDIS_SERVER
SHIPSHAPE_REDIS_SERVER="$(command -v redis-server || echo /usr/bin/redis-server)"
[[ -x "$SHIPSHAPE_POSTGRES_BIN/initdb" && -x "$SHIPSHAPE_POSTGRES_BIN/postgres" ]] \
    || die "SHIPSHAPE_POSTGRES_BIN=$SHIPSHAPE_POSTGRES_BIN has no initdb and postgres"
for var in SHIPSHAPE_HELM3 SHIPSHAPE_HELM4 SHIPSHAPE_KUBERNETES_VALIDATE SHIPSHAPE_CHECKOV SHIPSHAPE_REGISTRY SHIPSHAPE_RSVG_CONVERT SHIPSHAPE_POSTGRES_BIN SHIPSHAPE_REDIS_SERVER; do
    [[ -x "${!var}" ]] || die "$var=${!var} is not an executable"
    printf '%s=%s\n' "$var" "${!var}" >&2
done

# rustfmt and clippy come as rustup components; add them only if missing.
missing=()
cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || missing+=(clippy)
if ((${#missing[@]})); then
    command -v rustup >/dev/null 2>&1 || die "cargo lacks ${missing[*]} and rustup is not available to add them"
    step "rustup component add ${missing[*]}"
    rustup component add "${missing[@]}" || die "rustup component add ${missing[*]} failed"
fi

step "cargo fmt --check"
cargo fmt --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings

step "cargo test $*"
cargo test "$@"
