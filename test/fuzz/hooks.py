# Schemathesis hooks for test/fuzz/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).
#
# The run signs in as one admin; a generated request that would change or delete that very
# account (its id is known to the fuzzer through GET /api/admin/users) would end the run's own
# session and turn every later answer into a 401. Such a request is sent for another id.
import os

import schemathesis

PROTECTED_USER_ID = os.environ.get("FUZZ_PROTECTED_USER_ID", "")
STAND_IN = "00000000-0000-4000-8000-0000000000ff"


@schemathesis.hook
def before_call(context, case, kwargs):
    params = case.path_parameters or {}
    if PROTECTED_USER_ID and params.get("user_id") == PROTECTED_USER_ID:
        params["user_id"] = STAND_IN
