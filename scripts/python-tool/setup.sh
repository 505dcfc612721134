#!/usr/bin/env bash
# Install one pinned Python command-line tool from PyPI into a project-local virtualenv.
#
#   scripts/python-tool/setup.sh NAME==VERSION BIN [DIR]
#
# Result: DIR/venv/bin/BIN (DIR defaults to <repo>/.tools/NAME). Used for Schemathesis (the API
# fuzz test) and preset-cli (the peer in bench:migration).
#
# Idempotent and cached: DIR/.installed is written only after a successful install and version
# check and holds the pin; a run whose marker matches returns at once without starting python.
#
# Environment:
#   PYTHON                    interpreter for the venv (default: python3; 3.9+)
#   PYTHON_TOOL_SETUP_FORCE=1 reinstall even when the marker is present
set -euo pipefail

PIN="${1:?usage: setup.sh NAME==VERSION BIN [DIR]}"
BIN="${2:?usage: setup.sh NAME==VERSION BIN [DIR]}"
NAME="${PIN%%==*}"
VERSION="${PIN##*==}"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
DIR="${3:-$REPO_ROOT/.tools/$NAME}"
# The physical path: venv scripts name their interpreter by absolute path (see scripts/superset/setup.sh).
mkdir -p "$DIR" && DIR="$(cd "$DIR" && pwd -P)"
PYTHON="${PYTHON:-python3}"
VENV="$DIR/venv"
MARKER="$DIR/.installed"

die() {
  echo "$NAME setup: ERROR: $*" >&2
  exit 1
}
log() { echo "$NAME setup: $*" >&2; }

marker_ok() {
  [ "${PYTHON_TOOL_SETUP_FORCE:-}" != "1" ] && [ -f "$MARKER" ] && [ -x "$VENV/bin/$BIN" ] && [ -x "$(head -n1 "$VENV/bin/$BIN" | sed 's/^#!//')" ] && [ "$(head -n1 "$MARKER")" = "$PIN" ]
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
log "installing $PIN into $VENV; log: $LOGF"
rm -f "$MARKER"
rm -rf "$VENV"
{
  echo "# $(date -u +%FT%TZ) $PIN"
  "$PYTHON" -m venv "$VENV"
} >"$LOGF" 2>&1 || {
  tail -n 20 "$LOGF" >&2
  die "creating the virtualenv failed (see $LOGF)"
}
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --prefer-binary "$PIN" >>"$LOGF" 2>&1; then
  tail -n 30 "$LOGF" >&2
  die "pip install $PIN failed (full log: $LOGF)"
fi
installed="$("$VENV/bin/python" -c "import importlib.metadata as md; print(md.version('$NAME'))" 2>>"$LOGF")" ||
  die "$NAME installed but its metadata cannot be read (see $LOGF)"
[ "$installed" = "$VERSION" ] || die "expected $NAME $VERSION, got $installed"
"$VENV/bin/$BIN" --help >>"$LOGF" 2>&1 || die "'$BIN --help' failed (see $LOGF)"
"$VENV/bin/python" -m pip freeze --all >"$DIR/freeze.txt" 2>>"$LOGF" || true
echo "$PIN" >"$MARKER"
echo "installed_seconds=$((SECONDS - started))" >>"$MARKER"
log "$PIN ready in $((SECONDS - started))s"
