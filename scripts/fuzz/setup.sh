#!/usr/bin/env bash
# Install the pinned Schemathesis (the OpenAPI fuzzer test/fuzz/schemathesis.test.ts runs) into a
# project-local virtualenv.
#
#   scripts/fuzz/setup.sh
#
# Result: .tools/schemathesis/venv/bin/st
#
# Idempotent and cached: .tools/schemathesis/.installed is written only after a successful
# install and version check and holds the pinned version; a run whose marker matches returns at
# once without starting python or pip.
#
# Environment:
#   PYTHON                  interpreter for the venv (default: python3; Schemathesis 4 needs 3.9+)
#   FUZZ_TOOLS_DIR          where the venv goes (default: <repo>/.tools/schemathesis)
#   FUZZ_SETUP_FORCE=1      reinstall even when the marker is present
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
DIR="${FUZZ_TOOLS_DIR:-$REPO_ROOT/.tools/schemathesis}"
PYTHON="${PYTHON:-python3}"
VENV="$DIR/venv"
MARKER="$DIR/.installed"
FINGERPRINT="schemathesis==$SCHEMATHESIS_VERSION"

die() {
  echo "fuzz setup: ERROR: $*" >&2
  exit 1
}
log() { echo "fuzz setup: $*" >&2; }

marker_ok() {
  [ "${FUZZ_SETUP_FORCE:-}" != "1" ] && [ -f "$MARKER" ] && [ -x "$VENV/bin/st" ] && [ "$(head -n1 "$MARKER")" = "$FINGERPRINT" ]
}

marker_ok && exit 0

command -v "$PYTHON" >/dev/null 2>&1 ||
  die "'$PYTHON' not found on PATH. Install Python 3.9+ (Debian: apt-get install python3 python3-venv) or set PYTHON=/path/to/python3."
"$PYTHON" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info[:2] >= (3, 9) else 1)' >/dev/null 2>&1 ||
  die "'$PYTHON' must be Python 3.9+ with the venv module (Debian: apt-get install python3-venv)."

mkdir -p "$DIR"
# Serialise concurrent setups (two checkouts sharing .tools, or CI retries).
exec {lock_fd}>"$DIR/.lock"
command -v flock >/dev/null 2>&1 && flock "$lock_fd"
marker_ok && exit 0

LOGF="$DIR/install.log"
started=$SECONDS
log "installing $FINGERPRINT into $VENV; log: $LOGF"
rm -f "$MARKER"
rm -rf "$VENV"
{
  echo "# $(date -u +%FT%TZ) $FINGERPRINT"
  "$PYTHON" -m venv "$VENV"
} >"$LOGF" 2>&1 || {
  tail -n 20 "$LOGF" >&2
  die "creating the virtualenv failed (see $LOGF)"
}
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --prefer-binary "$FINGERPRINT" >>"$LOGF" 2>&1; then
  tail -n 30 "$LOGF" >&2
  die "pip install $FINGERPRINT failed (full log: $LOGF)"
fi
installed="$("$VENV/bin/python" -c 'import importlib.metadata as md; print(md.version("schemathesis"))' 2>>"$LOGF")" ||
  die "schemathesis installed but does not import (see $LOGF)"
[ "$installed" = "$SCHEMATHESIS_VERSION" ] || die "expected schemathesis $SCHEMATHESIS_VERSION, got $installed"
"$VENV/bin/st" --version >>"$LOGF" 2>&1 || die "'st --version' failed (see $LOGF)"
"$VENV/bin/python" -m pip freeze --all >"$DIR/freeze.txt" 2>>"$LOGF" || true
echo "$FINGERPRINT" >"$MARKER"
echo "installed_seconds=$((SECONDS - started))" >>"$MARKER"
log "$FINGERPRINT ready in $((SECONDS - started))s"
