#!/usr/bin/env bash
# Build a pinned Gitea from its Go module into a project-local tool folder, for the git tests
# (a real self-hosted git server: REST API and smart HTTP).
#
#   scripts/gitea/setup.sh            (version: GITEA_VERSION, default 1.24.6)
#
# Result: .tools/gitea/<VERSION>/gitea plus options/ and templates/ beside it (without the
# bindata build tag Gitea reads them from its work path; the starter copies them there).
#
# Idempotent and cached: .tools/gitea/<VERSION>/.installed is written only after a successful
# build; a run that finds it returns at once. `go install` refuses the module (its go.mod has
# replace directives), so the module is downloaded and built as the main module, where they apply.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
VERSION="${GITEA_VERSION:-1.24.6}"
DEST="${GITEA_TOOLS_DIR:-$REPO_ROOT/.tools/gitea}/$VERSION"

log() { echo "gitea setup: $*" >&2; }

installed() { [ -f "$DEST/.installed" ] && [ -x "$DEST/gitea" ] && [ -d "$DEST/options" ] && [ -d "$DEST/templates" ]; }
installed && exit 0
# One build at a time: a test run's global setup builds Gitea when it is missing, and may do so while
# .ci/run (or another run) is building it; the second waits here and finds it built.
mkdir -p "$(dirname "$DEST")"
exec 9>"$DEST.lock"
flock 9
installed && exit 0
command -v go >/dev/null 2>&1 || { log "ERROR: Go is not on PATH (Gitea is built from its Go module; install Go 1.24+)"; exit 1; }

started=$SECONDS
log "downloading code.gitea.io/gitea@v$VERSION"
dir="$(go mod download -json "code.gitea.io/gitea@v$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -n "$dir" ] && [ -d "$dir" ] || { log "ERROR: go mod download gave no module directory"; exit 1; }

mkdir -p "$DEST"
log "building (about 3 minutes on 2 cores the first time)"
# The module cache is read-only; building there only writes the output and Go's build cache.
(cd "$dir" && GOFLAGS=-buildvcs=false go build -tags 'sqlite sqlite_unlock_notify' -o "$DEST/gitea.tmp" .)
mv "$DEST/gitea.tmp" "$DEST/gitea"
rm -rf "$DEST/options" "$DEST/templates"
cp -r "$dir/options" "$DEST/options"
cp -r "$dir/templates" "$DEST/templates"
chmod -R u+w,a+rX "$DEST"
"$DEST/gitea" --version >&2
echo "gitea $VERSION built $(date -u +%FT%TZ)" >"$DEST/.installed"
log "ready in $((SECONDS - started)) s: $DEST/gitea"
