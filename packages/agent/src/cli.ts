#!/usr/bin/env node
// The `crow` executable's entry. Node's compile cache covers only the modules compiled after it is enabled, and an
// ESM module's static imports are all compiled before its first line runs: so this entry imports nothing but the
// cache switch, turns it on, and only then loads the rest: the small toolserver starter first, then the command
// line. In the bundle, main.js becomes a chunk of its own. (A start from the startup snapshot does not come here:
// see snapshot/entry.ts.)
import { enableCompileCache } from "@crow/mcp/compile-cache";

enableCompileCache();
const args = process.argv.slice(2);
// The launcher found no startup snapshot for this crow and node: build one, in the background, for the next start.
(await import("./snapshot/request.js")).buildSnapshotInBackground(args);
// `crow acp` and `crow run` spawn their toolserver first, so it boots while the rest of crow loads.
(await import("./early-toolserver.js")).startToolserverEarly(args);
await import("./main.js");
