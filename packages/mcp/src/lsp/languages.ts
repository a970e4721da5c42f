/**
 * Which language server checks which file: the built-in table (TypeScript/JavaScript, Python, Go, Rust) and the
 * settings that change it (config.yaml's `language_servers`, sent by the agent in `initialize`'s `_meta["crow/lsp"]`).
 */
import path from "node:path";

/** Key of the language-server settings in `initialize`'s `_meta`. */
export const LSP_META_KEY = "crow/lsp";

/** One language's settings as configured; every field optional (the built-in entry fills the rest). */
export interface LanguageSettings {
  /** The server's executable: a name looked up in the project's node_modules/.bin and PATH, or an absolute path. */
  command?: string;
  /** Its arguments (the built-in servers: `--stdio` where they need it). */
  args?: string[];
  /** File patterns it checks: `*.ts` matches a file name, `src/**\/*.ts` a path relative to the workspace. */
  files?: string[];
  /** true: no server for this language. */
  off?: boolean;
}

/** Every language's settings; `off` switches all of them off. */
export interface LspSettings {
  off?: boolean;
  languages?: Record<string, LanguageSettings>;
  /** The wait for a warm server's diagnostics after a change (default: the process's own ({@link LspDefaults}), else 2 s). */
  waitMs?: number;
  /** The wait while a server starts (default: the process's own ({@link LspDefaults}), else 20 s). */
  startWaitMs?: number;
}

/**
 * The process's own settings (crow-mcp's environment: CROW_LSP=off, CROW_LSP_WAIT, CROW_LSP_START_WAIT, read by
 * settings.ts): `off` wins over whatever a session asks; the waits apply where the session's {@link LspSettings} name
 * none.
 */
export interface LspDefaults {
  off?: boolean;
  waitMs?: number;
  startWaitMs?: number;
}

/** A language with everything needed to start and address its server. */
export interface Language {
  readonly name: string;
  /** Executable names tried in order (the first found wins). */
  readonly commands: readonly string[];
  readonly args: readonly string[];
  readonly files: readonly string[];
  /** The LSP languageId of a file of this language. */
  languageId(file: string): string;
}

const TS_IDS: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "typescriptreact",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascriptreact",
};

const BUILTIN: readonly Language[] = [
  {
    name: "typescript",
    commands: ["typescript-language-server"],
    args: ["--stdio"],
    files: Object.keys(TS_IDS).map((ext) => `*${ext}`),
    languageId: (file) => TS_IDS[path.extname(file)] ?? "typescript",
  },
  {
    name: "python",
    commands: ["pyright-langserver", "basedpyright-langserver"],
    args: ["--stdio"],
    files: ["*.py", "*.pyi"],
    languageId: () => "python",
  },
  { name: "go", commands: ["gopls"], args: [], files: ["*.go"], languageId: () => "go" },
  { name: "rust", commands: ["rust-analyzer"], args: [], files: ["*.rs"], languageId: () => "rust" },
];

/**
 * The languages `settings` leave on: the built-in ones with their overrides, plus any configured new one; none when
 * `defaults` say off (crow-mcp's own switch, CROW_LSP=off, whatever a session asks).
 */
export function languagesFor(settings: LspSettings | undefined, defaults: LspDefaults = {}): Language[] {
  if (settings?.off || defaults.off) return [];
  const configured = settings?.languages ?? {};
  const result: Language[] = [];
  for (const builtin of BUILTIN) {
    const own = configured[builtin.name];
    if (own?.off) continue;
    result.push({
      name: builtin.name,
      commands: own?.command ? [own.command] : builtin.commands,
      args: own?.args ?? builtin.args,
      files: own?.files ?? builtin.files,
      languageId: builtin.languageId,
    });
  }
  for (const [name, own] of Object.entries(configured)) {
    if (own.off || BUILTIN.some((b) => b.name === name) || !own.command || !own.files) continue;
    result.push({ name, commands: [own.command], args: own.args ?? [], files: own.files, languageId: () => name });
  }
  return result;
}

/** A file pattern as a regular expression: `**` any path, `*` and `?` within one name, `{a,b}` alternatives. */
function patternRegex(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? "";
    if (c === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
      if (pattern[i + 1] === "/") i++;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else if (c === "{") source += "(?:";
    else if (c === "}") source += ")";
    else if (c === ",") source += "|";
    else source += c.replace(/[.+^$()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** The language whose patterns match `file` (absolute; patterns with a slash are relative to `root`), if any. */
export function languageOf(file: string, root: string, languages: readonly Language[]): Language | undefined {
  const name = path.basename(file);
  const relative = path.relative(root, file).split(path.sep).join("/");
  return languages.find((language) =>
    language.files.some((pattern) => patternRegex(pattern).test(pattern.includes("/") ? relative : name)),
  );
}

/** Reads `_meta["crow/lsp"]` as sent by the agent; anything malformed counts as absent (the defaults apply). */
export function parseLspSettings(value: unknown): LspSettings | undefined {
  if (value === undefined || value === null || typeof value !== "object") return undefined;
  const raw = value as { off?: unknown; languages?: unknown; waitMs?: unknown; startWaitMs?: unknown };
  const settings: LspSettings = { off: raw.off === true };
  const positive = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : undefined);
  if (positive(raw.waitMs)) settings.waitMs = positive(raw.waitMs);
  if (positive(raw.startWaitMs)) settings.startWaitMs = positive(raw.startWaitMs);
  if (raw.languages && typeof raw.languages === "object") {
    const languages: Record<string, LanguageSettings> = {};
    for (const [name, entry] of Object.entries(raw.languages as Record<string, unknown>)) {
      if (!entry || typeof entry !== "object") continue;
      const e = entry as Record<string, unknown>;
      const strings = (v: unknown) => (Array.isArray(v) && v.every((s) => typeof s === "string") ? v : undefined);
      languages[name] = {
        ...(typeof e.command === "string" && e.command !== "" ? { command: e.command } : {}),
        ...(strings(e.args) ? { args: strings(e.args) } : {}),
        ...(strings(e.files) ? { files: strings(e.files) } : {}),
        ...(e.off === true ? { off: true } : {}),
      };
    }
    settings.languages = languages;
  }
  return settings;
}
