// The crow-mcp command line's start in the bundle (loaded by cli.ts once the compile cache is on).
import { runCrowMcp } from "./command.js";
import { log } from "./log.js";

runCrowMcp().catch((error: unknown) => {
  log.error("fatal", error);
  process.exit(1);
});
