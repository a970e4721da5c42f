#!/bin/bash
# The reference solution (crow eval run --oracle runs it instead of the agent).
cd "${EVAL_APP_DIR:-/app}" || exit 1
printf '#!/bin/bash\nwc -w < "$1"\n' > count_words.sh
chmod +x count_words.sh
