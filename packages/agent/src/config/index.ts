/**
 * Crow's configuration: `~/.crow/config.yaml` + `.env` (or `CROW_HOME` / `CROW_CONFIG_DIR`), `${VAR}` interpolation,
 * validation with messages naming file and key, and the environment fallbacks.
 */

export { COMPACT_FRACTION, compactionThresholdOf } from "./compaction-threshold.js";
export { parseDotenv, quoteDotenv, updateDotenv } from "./dotenv.js";
export { ENV_PROVIDER, OPENAI_BASE_URL } from "./env.js";
export { ConfigError, displayPath } from "./errors.js";
export { configFiles, crowHome } from "./home.js";
export { type LoadOptions, loadConfig } from "./load.js";
export {
  CostMeter,
  contextWindowOf,
  createModelRouter,
  findModel,
  type LlmFactory,
  providerProblem,
  usageCost,
} from "./models.js";
export { describeLogout, type LoggedOut, removeSavedKeys, signedOutText } from "./saved-keys.js";
export { adoptSingleModel } from "./single-model.js";
export type * from "./types.js";
export { preloadYaml } from "./yaml.js";
