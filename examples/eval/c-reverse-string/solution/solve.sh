#!/bin/bash
# The reference solution (crow eval run --oracle runs it instead of the agent).
cd "${EVAL_APP_DIR:-/app}" || exit 1
sed -i 's/i < n; i++/i < n \/ 2; i++/' reverse.c
