#!/usr/bin/env bash
# The pinned preset-cli (`superset-cli`, the tool Superset users reach for to move assets), the
# peer bench:migration measures Switchyard against; cached in .tools/preset-cli/venv.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../python-tool/setup.sh" preset-cli==0.3.13 superset-cli
