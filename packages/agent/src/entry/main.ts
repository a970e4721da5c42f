// The crow command line's start in the bundle (loaded by cli.ts once the compile cache is on): set the process up,
// run the command, exit with its code.
import { runCrowAndExit } from "./command.js";
import { prepareProcess } from "./process-setup.js";

prepareProcess();
runCrowAndExit(process.argv.slice(2));
