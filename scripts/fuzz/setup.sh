#!/usr/bin/env bash
# The pinned Schemathesis (the OpenAPI fuzzer test/fuzz/schemathesis.test.ts runs), cached in
# .tools/schemathesis/venv (FUZZ_TOOLS_DIR to put it elsewhere).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../python-tool/setup.sh" schemathesis==4.32.5 st ${FUZZ_TOOLS_DIR:+"$FUZZ_TOOLS_DIR"}
