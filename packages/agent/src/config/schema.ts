/**
 * The schema of `config.yaml` (after interpolation): upstream's keys (providers, models, db_uri, mcpServers, the
 * limits and the tool-name keys; those Crow refuses or checks further are in upstream-keys.ts), plus Crow's own
 * (default_model, mode, permissions, skills, extensions, and per model context_window / price / max_tokens). Every key
 * is optional; a key left empty in YAML (`providers:` with its entries commented out) counts as absent. Unknown keys
 * are errors, so a misspelled limit does not silently do nothing.
 */
import { z } from "zod";
import { closest } from "./errors.js";

/** Null (an empty YAML value) reads as absent. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === null ? undefined : value), schema.optional());
}

/** A whole number ≥ min; a numeric string is accepted since `${VAR}` interpolation always yields strings. */
function count(min: number) {
  return z.preprocess(
    (value) => (typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value),
    z.int().min(min),
  );
}

/** A number ≥ 0 (prices), numeric strings accepted for the same reason. */
const amount = z.preprocess(
  (value) => (typeof value === "string" && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value),
  z.number().min(0),
);

/** An object that rejects unknown keys, naming the known ones (and the likely intended one). */
function strict<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== "unrecognized_keys") return undefined;
      const key = issue.keys[0] ?? "";
      const guess = closest(key, known);
      return guess ? `unknown key (did you mean "${guess}"?)` : `unknown key (known: ${known.join(", ")})`;
    },
  });
}

const text = z.string();
const nonEmpty = z.string().min(1);
const httpUrl = z.string().refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), {
  error: (issue) => `expected an http(s) URL, got ${JSON.stringify(issue.input)}`,
});
const stringMap = z.record(z.string(), z.string());
const stringList = z.array(z.string());

/**
 * A permission rule: `TOOL` or `TOOL(PATTERN)` (`terminal`, `github_*`, `terminal(git push*)`, `edit(/etc/**)`).
 * The same grammar as core's `parsePermissionRule`, checked here so a typo is reported with the file and key
 * (core is not loaded while the config is read).
 */
const permissionRule = z.string().refine(
  (value) => {
    const match = /^[^\s()]+(?:\((.*)\))?$/s.exec(value.trim());
    return match !== null && (match[1] === undefined || match[1].trim() !== "");
  },
  {
    error: (issue) =>
      `invalid permission rule ${JSON.stringify(issue.input)}: write a tool name ("terminal", "github_*", "*") or a ` +
      'tool with a non-empty pattern ("terminal(git push*)", "edit(/etc/**)")',
  },
);
const ruleList = z.array(permissionRule);

/** A variable name, or a pattern of names with `*` (`GH_TOKEN`, `AWS_*`), for `child_env.allow`. */
const variableName = z.string().refine((value) => /^[A-Za-z_*][A-Za-z0-9_.*-]*$/.test(value), {
  error: (issue) =>
    `invalid variable name ${JSON.stringify(issue.input)}: write a name such as GH_TOKEN, or a pattern with *, ` +
    "such as AWS_*",
});

/** The languages crow-mcp knows a server for (any other needs its command and files). */
const BUILTIN_LANGUAGES = ["typescript", "python", "go", "rust"];

/** `off`, or one language server's settings (docs/toolserver.md "Language servers"). */
const languageServerSchema = z.union([
  z.literal("off"),
  strict({
    /** The executable: a name looked up in the project's node_modules/.bin and PATH, or an absolute path. */
    command: optional(nonEmpty),
    args: optional(stringList),
    /** File patterns (`*.ts`, `src/**\/*.ts`). */
    files: optional(z.array(nonEmpty).min(1)),
    off: optional(z.boolean()),
  }),
]);

/** Seconds > 0 (a numeric string accepted, as interpolation yields strings). */
const positiveSeconds = z.preprocess(
  (value) => (typeof value === "string" && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value),
  z.number().positive(),
);

export const providerSchema = strict({
  base_url: httpUrl,
  api_key: optional(text),
  /** Extra HTTP headers on every request (e.g. OpenRouter's HTTP-Referer). */
  headers: optional(stringMap),
});

export const priceSchema = strict({
  /** Price per million prompt tokens. */
  input: amount,
  /** Price per million completion tokens. */
  output: amount,
  /** Price per million cached prompt tokens (default: the input price). */
  cached_input: optional(amount),
  /** ISO 4217 code or another unit (default USD). */
  currency: optional(nonEmpty),
});

const REASONING_LEVELS = "expected the levels the model accepts, e.g. [low, medium, high], or true for those three";

export const modelSchema = strict({
  provider: nonEmpty,
  /** The id sent as `model` (default: the entry's name). */
  model: optional(nonEmpty),
  /** Context window in tokens: usage_update `size` and the compaction threshold. */
  context_window: optional(count(1)),
  price: optional(priceSchema),
  /**
   * The `reasoning_effort` values the model accepts (`true`: low, medium, high); the editor then offers them as the
   * session's thought level. Models without it get no such field in their requests.
   */
  reasoning_effort: optional(z.union([z.boolean(), z.array(nonEmpty).min(1)], { error: REASONING_LEVELS })),
  /** The request's `max_tokens` for this model (default: the file's `MAX_TOKENS`, else none sent). */
  max_tokens: optional(count(1)),
});

const transports = ["stdio", "http", "streamable-http", "streamable_http", "sse"] as const;

/** Other tools' MCP entries carry extra keys (timeouts, descriptions…): those are ignored, not rejected. */
export const mcpServerSchema = z
  .object({
    transport: optional(z.enum(transports)),
    type: optional(z.enum(transports)),
    command: optional(nonEmpty),
    args: optional(z.array(z.union([z.string(), z.number()]).transform(String))),
    env: optional(stringMap),
    cwd: optional(nonEmpty),
    url: optional(httpUrl),
    headers: optional(stringMap),
    /** `disabled: true` keeps an entry in the file without starting it. */
    disabled: optional(z.boolean()),
  })
  .superRefine((server, ctx) => {
    const kind = server.transport ?? server.type ?? (server.url ? "http" : "stdio");
    if (kind === "stdio" && !server.command) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "missing: the stdio transport needs a command" });
    }
    if (kind !== "stdio" && !server.url) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `missing: the ${kind} transport needs a url` });
    }
  });

/** `skills.embeddings`: an OpenAI-compatible `/v1/embeddings` endpoint for the dense re-rank of skills. */
export const skillEmbeddingsSchema = strict({
  base_url: httpUrl,
  model: nonEmpty,
  api_key: optional(text),
  /** Shorter vectors where the model supports it (OpenAI `dimensions`). */
  dimensions: optional(count(1)),
});

/** `skills:` is a list of extra directories, or a mapping (a bare list means `{dirs: [...]}`). */
const skillsSchema = z.preprocess(
  (value) => (Array.isArray(value) ? { dirs: value } : value),
  strict({
    dirs: optional(stringList),
    enabled: optional(z.boolean()),
    embeddings: optional(skillEmbeddingsSchema),
  }),
);

const extensionSchema = z.union(
  [nonEmpty, strict({ module: nonEmpty, options: optional(z.record(z.string(), z.unknown())) })],
  {
    error: () => "expected a module path or name, or a mapping with module (and options)",
  },
);

const SANDBOX_USE = ["auto", "required", "off"] as const;
const absolutePath = z.string().refine((value) => value.startsWith("/") || value.startsWith("~/"), {
  error: (issue) => `expected an absolute path (or ~/…), got ${JSON.stringify(issue.input)}`,
});

/**
 * `sandbox:` is `auto`, `required` or `off`, or a mapping with `enabled` (one of those), `writable` (more directories
 * commands may write) and `network` (on or off). A domain list for `network` needs a filtering proxy Crow does not
 * have yet: it is refused rather than read as "on".
 */
export const sandboxSchema = z.preprocess(
  (value) => (typeof value === "string" || typeof value === "boolean" ? { enabled: value } : value),
  strict({
    enabled: optional(
      z.preprocess(
        (value) => (value === false ? "off" : value),
        z.enum(SANDBOX_USE, { error: () => "expected auto, required or off" }),
      ),
    ),
    writable: optional(z.array(absolutePath)),
    network: optional(
      z.unknown().transform((value, ctx) => {
        if (value === true || value === "on") return true;
        if (value === false || value === "off") return false;
        ctx.addIssue({
          code: "custom",
          message: Array.isArray(value)
            ? "a list of allowed domains is not supported yet (it needs a filtering proxy); use on or off"
            : `expected on or off, got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }),
    ),
  }),
);

export const configFileSchema = strict({
  providers: optional(z.record(z.string(), providerSchema)),
  models: optional(z.record(z.string(), modelSchema)),
  /** The model selected in new sessions (default: the first of `models`). */
  default_model: optional(nonEmpty),
  db_uri: optional(nonEmpty),
  mcpServers: optional(z.record(z.string(), mcpServerSchema)),
  /** false: every MCP tool in every request; by default many of them wait behind find_tools. */
  defer_tools: optional(z.boolean()),
  max_steps_per_turn: optional(count(1)),
  /** The most recent tool results sent whole (older long ones are shortened); `all`: none shortened. */
  keep_tool_results: optional(z.union([z.literal("all"), count(1)])),
  max_retries_per_step: optional(count(0)),
  MAX_COMPACT_TOKENS: optional(count(1)),
  /** Every model's `max_tokens` (a model's own wins); refused upstream keys are in upstream-keys.ts. */
  MAX_TOKENS: optional(count(1)),
  TERMINAL_TOOL: optional(nonEmpty),
  WRITE_TOOL: optional(nonEmpty),
  READ_TOOL: optional(nonEmpty),
  EDIT_TOOL: optional(nonEmpty),
  SEARCH_TOOL: optional(nonEmpty),
  FETCH_TOOL: optional(nonEmpty),
  mode: optional(z.enum(["code", "ask", "read-only"])),
  permissions: optional(
    strict({
      /** Rules (`TOOL` or `TOOL(PATTERN)`) for calls that run without asking, in every mode but read-only. */
      allow: optional(ruleList),
      /** Rules for calls that always ask, even in code mode. */
      ask: optional(ruleList),
      /** Rules for calls refused outright (deny > ask > allow). */
      deny: optional(ruleList),
    }),
  ),
  skills: optional(skillsSchema),
  extensions: optional(z.array(extensionSchema)),
  /**
   * The environment of the processes Crow starts (the terminal's shell, MCP servers): `allow` lists variables passed
   * although their name looks secret or only `.env` sets them (docs/security.md "Secrets and child processes").
   */
  child_env: optional(strict({ allow: optional(z.array(variableName)) })),
  sandbox: optional(sandboxSchema),
  /** Diagnostics after write and edit from language servers: `off`, or the waits and per-language servers. */
  language_servers: optional(
    z.union([
      z.literal("off"),
      strict({
        off: optional(z.boolean()),
        /** The wait for a warm server's diagnostics after a change. */
        wait_seconds: optional(positiveSeconds),
        /** The wait while a server starts. */
        start_wait_seconds: optional(positiveSeconds),
        /** Per language (`typescript`, `python`, `go`, `rust`, or a new one with command and files). */
        servers: optional(
          z.record(z.string(), languageServerSchema).superRefine((servers, ctx) => {
            for (const [name, entry] of Object.entries(servers)) {
              if (BUILTIN_LANGUAGES.includes(name) || entry === "off" || entry.off) continue;
              if (entry.command === undefined || entry.files === undefined) {
                ctx.addIssue({
                  code: "custom",
                  path: [name],
                  message: `"${name}" is not a built-in language (${BUILTIN_LANGUAGES.join(", ")}): give its command and files`,
                });
              }
            }
          }),
        ),
      }),
    ]),
  ),
  /** Workspace checkpoints per turn for `/rewind` (docs/configuration.md "Checkpoints and /rewind"). */
  checkpoints: optional(
    strict({
      enabled: optional(z.boolean()),
      /** Files larger than this (MB) are not captured. */
      max_file_mb: optional(amount),
      /** Checkpoints older than this many days are garbage-collected. */
      keep_days: optional(count(1)),
    }),
  ),
});

export type ConfigFile = z.infer<typeof configFileSchema>;
export type ProviderEntry = z.infer<typeof providerSchema>;
export type ModelEntry = z.infer<typeof modelSchema>;
export type McpServerEntry = z.infer<typeof mcpServerSchema>;

/** What a value looks like, for "expected X, got Y". */
function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "an empty value";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "a mapping",
  record: "a mapping",
  array: "a list",
};

/** The message of one zod issue, without its path. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      if (issue.input === undefined) return `missing (expected ${expected})`;
      return `expected ${expected}, got ${describe(issue.input)}`;
    }
    case "too_small":
      if (issue.origin === "string") return "must not be empty";
      return `expected ${issue.origin === "array" ? "at least" : "a number ≥"} ${String(issue.minimum)}, got ${describe(issue.input)}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => String(v)).join(", ")}, got ${describe(issue.input)}`;
    default:
      return issue.message;
  }
}
