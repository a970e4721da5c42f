#!/bin/bash
# Under Harbor the workspace is /app and the reward goes to /logs/verifier; crow eval passes its own paths as
# EVAL_APP_DIR, EVAL_TESTS_DIR and EVAL_LOGS_DIR (cwd is the workspace in both).
APP="${EVAL_APP_DIR:-/app}"
TESTS="${EVAL_TESTS_DIR:-/tests}"
LOGS="${EVAL_LOGS_DIR:-/logs}"
export APP TESTS LOGS
mkdir -p "$LOGS/verifier"
cd "$APP" || exit 1
if bash "$TESTS/check.sh"; then
  echo 1 > "$LOGS/verifier/reward.txt"
else
  echo 0 > "$LOGS/verifier/reward.txt"
fi
