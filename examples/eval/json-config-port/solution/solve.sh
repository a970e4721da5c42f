#!/bin/bash
# The reference solution (crow eval run --oracle runs it instead of the agent).
cd "${EVAL_APP_DIR:-/app}" || exit 1
python3 - <<'PY'
import json
with open('config.json') as f:
    config = json.load(f)
config['server']['port'] = 8080
config['server']['debug'] = False
with open('config.json', 'w') as f:
    json.dump(config, f, indent=2)
PY
