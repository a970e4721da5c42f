// The crow command line's start in the bundle (loaded by cli.ts once the compile cache is on): set the process up,
// run the command, exit with its code. A start from the startup snapshot does the same in snapshot/entry.ts.
import { runCrow } from "./command.js";
import { log } from "./log.js";
import { prepareProcess } from "./process-setup.js";

prepareProcess();
runCrow(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    log.error("crow failed", error);
    process.exit(1);
  },
);
