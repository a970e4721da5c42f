import type { Logger } from "../extensions/api.js";

/**
 * The default logger: stderr, never stdout (a host may speak a protocol there). For SDK hosts that pass no logger,
 * which load no configuration either, so `CROW_DEBUG` is read here; the agent passes its own logger, leveled by
 * `CROW_LOG` (agent base/log.ts).
 */
export const stderrLogger: Logger = {
  debug: (m, ...d) => {
    if (process.env.CROW_DEBUG) console.error(m, ...d);
  },
  info: (m, ...d) => console.error(m, ...d),
  warn: (m, ...d) => console.error(m, ...d),
  error: (m, ...d) => console.error(m, ...d),
};
