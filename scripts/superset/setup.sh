#!/usr/bin/env bash
# Install pinned Apache Superset versions from PyPI into project-local virtualenvs.
#
#   scripts/superset/setup.sh [VERSION...]        (default: 6.1.0 6.0.0, the default test suite's;
#                                                  the version matrix uses 4.1.4 5.0.0 6.0.0 6.1.0)
#
# Result: .tools/superset/<VERSION>/venv/bin/superset
#
# Idempotent and cached: .tools/superset/<VERSION>/.installed is written only after a
# successful install + import check, and holds a fingerprint of the recipe. A run whose
# marker matches returns immediately (no python/pip is started).
#
# Environment:
#   PYTHON                      interpreter used to create the venv (default: python3)
#   SUPERSET_TOOLS_DIR          where venvs go (default: <repo>/.tools/superset)
#   SUPERSET_SETUP_NO_CONSTRAINTS=1   ignore scripts/superset/constraints/<VERSION>.txt
#   SUPERSET_SETUP_FORCE=1      reinstall even when the marker is present
#
# The recipe (why the extra packages): the wheels' metadata misses modules Superset imports
# (rich, cachetools), 6.x needs marshmallow<4, and 6.1.0 breaks with Flask-Caching 2.5.
# 4.1.x and 5.0.x do not pin marshmallow either (marshmallow 4 breaks `superset init`).
# Superset's own `postgres` extra adds psycopg2-binary at the version that release pins, so a
# test instance can keep its metadata in PostgreSQL as production deployments do.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
TOOLS_DIR="${SUPERSET_TOOLS_DIR:-$REPO_ROOT/.tools/superset}"
# The physical path: a venv's scripts name their interpreter by absolute path, so a venv made
# through a symlinked .tools (a git worktree's) must not name the link, which may go away.
mkdir -p "$TOOLS_DIR" && TOOLS_DIR="$(cd "$TOOLS_DIR" && pwd -P)"
PYTHON="${PYTHON:-python3}"
CONSTRAINTS_DIR="$SCRIPT_DIR/constraints"

if [ "$#" -eq 0 ]; then
  set -- 6.1.0 6.0.0
fi

die() {
  echo "superset setup: ERROR: $*" >&2
  exit 1
}

log() {
  echo "superset setup: $*" >&2
}

# Extra requirements per version line (beyond apache-superset==VERSION).
recipe_for() {
  case "$1" in
    # 6.1.0: without rich `db upgrade` fails (No module named 'rich'); without cachetools a
    # connection test answers 422 "Could not load database driver"; Flask-Caching 2.5 fails app
    # creation (SupersetMetastoreCache ... 'ignore_delete_many_errors').
    6.1.*) echo 'marshmallow>=3,<4 rich cachetools flask-caching<2.5' ;;
    # 6.0.0: without rich `db upgrade` fails.
    6.0.*) echo 'marshmallow>=3,<4 rich' ;;
    # 5.0.0 and 4.1.4, measured with Python 3.11 (install, db upgrade, init, serving, imports and
    # exports, chart queries, the whole version matrix): nothing else is missing.
    5.0.* | 4.1.*) echo 'marshmallow>=3,<4' ;;
    *) echo 'marshmallow>=3,<4 rich cachetools flask-caching<2.5' ;;
  esac
}

superset_requirement() {
  echo "apache-superset[postgres]==$1"
}

# Fingerprint written into the marker: a change in recipe or constraints forces a reinstall.
fingerprint_for() {
  local version="$1" constraints="$CONSTRAINTS_DIR/$1.txt" csum="none"
  if [ "${SUPERSET_SETUP_NO_CONSTRAINTS:-}" != "1" ] && [ -f "$constraints" ]; then
    csum="$(cksum <"$constraints" | tr -s ' ' '-')"
  fi
  echo "$(superset_requirement "$version"); extras=$(recipe_for "$version"); constraints=$csum; recipe=3"
}

# A venv's scripts start their interpreter by absolute path; a venv whose path went away (made
# through a worktree's symlink that was removed since) is installed again.
shebang_ok() {
  local line
  line="$(head -n1 "$1")"
  [ -x "${line#\#!}" ]
}

marker_ok() {
  local marker="$TOOLS_DIR/$1/.installed"
  [ "${SUPERSET_SETUP_FORCE:-}" != "1" ] &&
    [ -f "$marker" ] &&
    [ -x "$TOOLS_DIR/$1/venv/bin/superset" ] &&
    shebang_ok "$TOOLS_DIR/$1/venv/bin/superset" &&
    [ "$(head -n1 "$marker")" = "$(fingerprint_for "$1")" ]
}

check_python() {
  command -v "$PYTHON" >/dev/null 2>&1 ||
    die "'$PYTHON' not found on PATH. Install Python 3.10-3.12 (Debian: apt-get install python3 python3-venv) or set PYTHON=/path/to/python3."
  "$PYTHON" - <<'EOF' || die "'$PYTHON' must be Python >=3.10,<3.13 (Superset 6.x supports 3.10-3.12). Set PYTHON=/path/to/python3.11."
import sys
sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 12) else 1)
EOF
  "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 ||
    die "'$PYTHON' has no working venv/ensurepip module (Debian: apt-get install python3-venv)."
}

install_version() {
  local version="$1"
  local dir="$TOOLS_DIR/$version"
  local venv="$dir/venv"
  local marker="$dir/.installed"
  local logf="$dir/install.log"
  local constraints="$CONSTRAINTS_DIR/$version.txt"
  local -a extras constraint_args=()
  read -r -a extras <<<"$(recipe_for "$version")"
  if [ "${SUPERSET_SETUP_NO_CONSTRAINTS:-}" != "1" ] && [ -f "$constraints" ]; then
    constraint_args=(-c "$constraints")
  fi

  rm -f "$marker"
  rm -rf "$venv"
  mkdir -p "$dir"
  local started=$SECONDS
  log "installing apache-superset==$version (+ ${extras[*]}) into $venv; log: $logf"
  {
    echo "# $(date -u +%FT%TZ) apache-superset==$version extras: ${extras[*]} constraints: ${constraint_args[*]:-none}"
    "$PYTHON" -m venv "$venv"
  } >"$logf" 2>&1 || {
    tail -n 20 "$logf" >&2
    die "creating the virtualenv failed (see $logf)"
  }
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --prefer-binary \
    "${constraint_args[@]}" "$(superset_requirement "$version")" "${extras[@]}" >>"$logf" 2>&1; then
    tail -n 30 "$logf" >&2
    die "pip install apache-superset==$version failed (full log: $logf)"
  fi
  # Import check: the CLI, the app factory and the modules the wheels forget.
  if ! "$venv/bin/python" -c 'import importlib.metadata as md, psycopg2, superset.cli.main, superset.app; assert int(md.version("marshmallow").split(".")[0]) < 4, "marshmallow>=4"' >>"$logf" 2>&1; then
    tail -n 30 "$logf" >&2
    die "apache-superset==$version installed but does not import (full log: $logf)"
  fi
  "$venv/bin/python" -m pip freeze --all >"$dir/freeze.txt" 2>>"$logf" || true
  fingerprint_for "$version" >"$marker"
  echo "installed_seconds=$((SECONDS - started))" >>"$marker"
  log "apache-superset==$version ready in $((SECONDS - started))s"
}

for version in "$@"; do
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([a-z0-9.]*)$ ]] || die "not a version: '$version' (expected e.g. 6.1.0)"
  marker_ok "$version" && continue
  check_python
  mkdir -p "$TOOLS_DIR/$version"
  # Serialise concurrent setups of the same version (e.g. two test workers starting at once).
  exec {lock_fd}>"$TOOLS_DIR/$version/.lock"
  if command -v flock >/dev/null 2>&1; then
    flock "$lock_fd"
  fi
  if ! marker_ok "$version"; then
    install_version "$version"
  fi
  exec {lock_fd}>&-
done
