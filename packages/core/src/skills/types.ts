/** A skill loaded from a `<root>/<name>/SKILL.md` folder (Agent Skills layout). */
export interface Skill {
  /** The skill's name: the frontmatter `name`, or the folder name when that one is missing or wrong (see problems). */
  name: string;
  /** The frontmatter `description` (at most {@link MAX_DESCRIPTION} characters; longer ones are cut and reported). */
  description: string;
  /** Keywords or phrases that inject this skill's instructions when a user message contains them. */
  triggers: string[];
  /** The Markdown after the frontmatter: the instructions. */
  body: string;
  /** The whole SKILL.md text as read from disk. */
  content: string;
  /** SHA-256 (hex) of `content`: the key of the embedding cache. */
  hash: string;
  /** Absolute path of the skill folder. */
  dir: string;
  /** Absolute path of its SKILL.md. */
  file: string;
  /** The other files of the folder, relative POSIX paths, sorted (`scripts/run.py`, `references/API.md`, …). */
  files: string[];
  /** The root directory the skill was found in (for an external skill: where it is served from, e.g. `mcp:docs`). */
  root: string;
  /**
   * Set on an external skill (an `ExternalSkill` of the session's tool set): reads its SKILL.md on demand; `body` and `content` are ""
   * until then, and `hash` is the publisher's digest ("" when none).
   */
  load?: (signal?: AbortSignal) => Promise<string>;
}

/**
 * Something wrong with a skill folder. `error`: the skill was skipped. `warning`: it was loaded with a fix (the
 * folder name for a bad name, a cut description, ignored triggers). `info`: worth knowing (a skill overriding another).
 */
export interface SkillProblem {
  severity: "error" | "warning" | "info";
  /** The file or folder concerned (absolute). */
  path: string;
  message: string;
}

/** The outcome of loading skills: never throws, problems are data. */
export interface LoadedSkills {
  skills: Skill[];
  problems: SkillProblem[];
}

/** One ranked answer of a skill search. */
export interface SkillHit {
  skill: Skill;
  /** Higher is better. BM25 score on the keyword path; the fused score in [0, 1] on the hybrid path. */
  score: number;
  /** The keyword (BM25) score, 0 when the skill matched no query term. */
  keywordScore: number;
  /** The dense similarity (MaxSim, cosine scale), when embeddings were used. */
  denseScore?: number;
}

/** A search's answer: the hits, how they were ranked, and why the dense path was skipped if it was. */
export interface SkillSearchResult {
  hits: SkillHit[];
  mode: "keyword" | "hybrid";
  problems: SkillProblem[];
}

/** The longest accepted skill name (Agent Skills specification). */
export const MAX_NAME = 64;
/** The longest accepted description (Agent Skills specification). */
export const MAX_DESCRIPTION = 1024;
