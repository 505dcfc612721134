#!/usr/bin/env bash
# The pinned Schemathesis (the OpenAPI fuzzer test/fuzz/schemathesis.test.ts runs), cached in
# .tools/schemathesis/venv (FUZZ_TOOLS_DIR to put it elsewhere).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# CPython before 3.11.8 and 3.12.2 can fail a parse under threads with "SystemError: AST
# constructor recursion depth mismatch" (python/cpython#106905), which crashed a fuzz run once on
# the machine's 3.11.7. The newest interpreter found that has the fix builds the virtualenv; PYTHON
# chooses one by hand, and python3 is the fallback when none is found.
fixed() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12, 2) or (3, 11, 8) <= sys.version_info < (3, 12) else 1)' >/dev/null 2>&1; }
if [ -z "${PYTHON:-}" ]; then
  pyenv_root="$(pyenv root 2>/dev/null || true)"
  for candidate in python3.13 python3.12 ${pyenv_root:+"$pyenv_root"/versions/3.13*/bin/python3 "$pyenv_root"/versions/3.12*/bin/python3} python3; do
    if fixed "$candidate"; then
      export PYTHON="$candidate"
      break
    fi
  done
fi

exec bash "$here/../python-tool/setup.sh" schemathesis==4.32.5 st ${FUZZ_TOOLS_DIR:+"$FUZZ_TOOLS_DIR"}
