import type { Logger } from "../extensions/api.js";

/** The default logger: stderr, never stdout (a host may speak a protocol there). */
export const stderrLogger: Logger = {
  debug: (m, ...d) => {
    if (process.env.CROW_DEBUG) console.error(m, ...d);
  },
  info: (m, ...d) => console.error(m, ...d),
  warn: (m, ...d) => console.error(m, ...d),
  error: (m, ...d) => console.error(m, ...d),
};
