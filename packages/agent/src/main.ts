// The crow command line's start in the bundle (loaded by cli.ts once the compile cache is on): set the process up,
// run the command, exit with its code. A start from the startup snapshot does the same in snapshot/entry.ts.
// First, before any module creates a zod schema.
import "@crow/mcp/zod-jitless";
import { runCrowAndExit } from "./command.js";
import { prepareProcess } from "./process-setup.js";

prepareProcess();
runCrowAndExit(process.argv.slice(2));
