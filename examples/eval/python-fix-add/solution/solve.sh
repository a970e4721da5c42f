#!/bin/bash
# The reference solution (crow eval run --oracle runs it instead of the agent).
cd "${EVAL_APP_DIR:-/app}" || exit 1
sed -i 's/a - b/a + b/' calc.py
