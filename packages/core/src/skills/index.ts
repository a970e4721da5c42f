/**
 * Skills: discovery (`skillRoots`, `loadSkills`), ranking (`createSkillIndex`: BM25, optionally fused with dense
 * MaxSim scores from an `Embedder` such as `openAiEmbedder`), triggers (`matchTriggers`, `triggerInjection`) and the
 * model-facing hint and tools (`skillsHint`, `skillTools`, `skillDetails`). No ACP or MCP here: the extension wires it.
 */
export { defaultSkillCacheDir, SkillEmbeddingCache, type SkillEmbeddingStore, type SkillVectors } from "./cache.js";
export { CHUNKER_VERSION, chunkSkill } from "./dense.js";
export { type Embedder, type OpenAiEmbedderOptions, openAiEmbedder, type Vector } from "./embedder.js";
export { externalSkill, loadedSkill } from "./external.js";
export {
  nameProblem,
  normaliseSkillName,
  type ParsedSkill,
  parseSkill,
  type SkillMetadata,
} from "./frontmatter.js";
export {
  loadSkills,
  projectSkillRoots,
  type SkillRoot,
  type SkillRootsOptions,
  skillRoots,
  userSkillRoots,
} from "./load.js";
export { createSkillIndex, type SkillIndex, type SkillIndexOptions } from "./search.js";
export { loadSessionSkills, type SessionSkills, type SessionSkillsOptions } from "./session-load.js";
export { checkSkillSpec, MAX_COMPATIBILITY, type SpecProblem, type SpecResult } from "./spec.js";
export { formatSkillHits, type SkillTool, skillDetails, skillsHint, skillTools } from "./tools.js";
export { matchTriggers, type TriggerMatch, triggerInjection, triggerPattern } from "./triggers.js";
export {
  isProjectTrusted,
  projectRoot,
  type TrustOptions,
  trustedProjects,
  trustProject,
  trustStorePath,
  untrustProject,
} from "./trust.js";
export * from "./types.js";
