#!/bin/bash
# The reference solution (crow eval run --oracle runs it instead of the agent).
cd "${EVAL_APP_DIR:-/app}" || exit 1
cat > lib.rs <<'RS'
pub fn sum_evens(values: &[i64]) -> i64 {
    values.iter().filter(|v| *v % 2 == 0).sum()
}
RS
