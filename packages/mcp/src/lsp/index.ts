/**
 * Diagnostics after a change: what write and edit append to their result once the file is saved. The change's
 * language server (pool.ts) is told the file's text before the change, asked for the diagnostics of every document it
 * has open, told the new text and asked again; the errors (and, capped, warnings) that are new are listed in the
 * result's text for the model and in its `_meta["crow/diagnostics"]` for the client (diagnostics.ts).
 *
 * Bounded: the wait has a budget (a warm server's, or a longer one while it starts) after which the result goes back as
 * it was, with one notice; the server keeps working and the next change finds it warm. A session is told once per
 * language that no server was found. Nothing here throws into the tool: any failure becomes a notice.
 */
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { diffFromMeta } from "../edit/diff-meta.js";
import { errorText } from "../error-text.js";
import { log } from "../log.js";
import { hostPath } from "../sandbox/binds.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import type { LanguageClient } from "./client.js";
import { DIAGNOSTICS_META_KEY, type DiagnosticsMeta, formatSection, summarizeChange } from "./diagnostics.js";
import { describeSearch } from "./find.js";
import { type Language, type LspDefaults, type LspSettings, languageOf, languagesFor } from "./languages.js";
import { noteRead, serverFor } from "./pool.js";

export { DIAGNOSTICS_META_KEY, type Diagnostic, type DiagnosticsMeta } from "./diagnostics.js";
export { type LanguageSettings, LSP_META_KEY, type LspSettings, parseLspSettings } from "./languages.js";
export { stopLanguageServers } from "./pool.js";

/**
 * What the diagnostics read of the tool call's connection: its `LspCallContext` (context.ts), named here by what is used
 * because context.ts sits above lsp/ in the folder order (it holds lsp's settings).
 */
export interface LspCallContext {
  readonly cwd: string;
  readonly options: { readonly lsp?: LspSettings; readonly lspDefaults?: LspDefaults };
  readonly sandbox: { readonly current: SandboxPolicy };
}

/** Default budgets: a warm server's answer, and the first answer of a server that is starting. */
const WARM_WAIT_MS = 2_000;
const START_WAIT_MS = 20_000;

/** The waits: the session's, else the process's own (CROW_LSP_WAIT, CROW_LSP_START_WAIT), else the defaults. */
function budgets(settings: LspSettings | undefined, defaults: LspDefaults = {}): { warm: number; start: number } {
  return {
    warm: settings?.waitMs ?? defaults.waitMs ?? WARM_WAIT_MS,
    start: settings?.startWaitMs ?? defaults.startWaitMs ?? START_WAIT_MS,
  };
}

/** Per session: the notices it was already given (`missing:python`: no server; `broken:…`: one that cannot start). */
const told = new WeakMap<LspCallContext, Set<string>>();

/** `{ notice: text }` the first time a session is told `what`; afterwards nothing. */
function tellOnce(context: LspCallContext, what: string, text: string): ChangeOutcome {
  const seen = told.get(context) ?? new Set<string>();
  told.set(context, seen);
  if (seen.has(what)) return undefined;
  seen.add(what);
  return { notice: text };
}

/** One change's outcome: what to add (section and meta), or a notice, or nothing. */
type ChangeOutcome = { meta: DiagnosticsMeta } | { notice: string } | undefined;

/**
 * `result` of a write or edit with the diagnostics of its change appended (see the file comment); unchanged for an
 * error, a dry run, a file of no configured language, or a change that made no difference worth saying.
 */
export async function appendDiagnostics(
  context: LspCallContext,
  result: CallToolResult,
  dryRun: boolean,
): Promise<CallToolResult> {
  if (result.isError || dryRun) return result;
  const diff = diffFromMeta(result._meta);
  if (!diff) return result;
  const policy = context.sandbox.current;
  const root = hostPath(context.cwd, policy);
  const { lsp: settings, lspDefaults } = context.options;
  const language = languageOf(diff.path, root, languagesFor(settings, lspDefaults));
  if (!language) return result;
  let outcome: ChangeOutcome;
  try {
    const budget = budgets(settings, lspDefaults);
    outcome = await checkChange(context, language, root, diff.path, diff.oldText, diff.newText, budget);
  } catch (error) {
    log.warn(`diagnostics of ${diff.path} failed`, error);
    outcome = { notice: `Diagnostics unavailable for this change: ${errorText(error)}` };
  }
  if (!outcome) return result;
  const text = "meta" in outcome ? formatSection(outcome.meta, root) : outcome.notice;
  return {
    ...result,
    content: [...result.content, { type: "text", text }],
    ...("meta" in outcome ? { _meta: { ...result._meta, [DIAGNOSTICS_META_KEY]: outcome.meta } } : {}),
  };
}

/**
 * After a successful read of `filePath` (as the model gave it): its language's server will have it open, so that a
 * change elsewhere that breaks it is reported (see pool.ts `noteRead`). Never starts a server, never waits.
 */
export function afterRead(context: LspCallContext, filePath: string, result: CallToolResult): void {
  if (result.isError || !path.isAbsolute(filePath)) return;
  const policy = context.sandbox.current;
  const file = hostPath(path.normalize(filePath), policy);
  const root = hostPath(context.cwd, policy);
  const language = languageOf(file, root, languagesFor(context.options.lsp, context.options.lspDefaults));
  if (language) noteRead(language, root, policy, file);
}

async function checkChange(
  context: LspCallContext,
  language: Language,
  root: string,
  file: string,
  before: string | null,
  after: string,
  budget: { warm: number; start: number },
): Promise<ChangeOutcome> {
  const policy = context.sandbox.current;
  for (let attempt = 0; ; attempt++) {
    const found = serverFor(language, root, policy);
    if ("missing" in found) {
      return tellOnce(
        context,
        `missing:${language.name}`,
        `Note: no ${language.name} language server was found (${describeSearch(language)}), so changes to ${language.name} files are not checked for errors.`,
      );
    }
    if ("failed" in found) {
      const text = `Note: the ${language.name} language server could not start: ${found.failed}`;
      return tellOnce(context, `failed:${language.name}`, text);
    }
    // Said once per session: the change that found it broken already carried the reason.
    if ("broken" in found) {
      return tellOnce(context, `broken:${language.name}`, `Note: ${found.broken}; changes are not checked for now.`);
    }
    const { client, started } = found;
    const wait = started ? budget.start : budget.warm;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), wait);
    });
    try {
      const comparison = client.exclusive(() => compare(client, language, file, before, after));
      const outcome = await Promise.race([comparison, late]);
      if (outcome !== "late") return outcome;
      return {
        notice: `Note: the ${language.name} language server ${started ? "is still starting" : "did not answer"} within ${Math.round(wait / 1000)} s, so this change was not checked for errors.`,
      };
    } catch (error) {
      // Its output closes before its exit is seen: give the exit a moment, to say how it ended.
      await Promise.race([client.ended, new Promise((resolve) => setTimeout(resolve, 1000))]);
      if (client.exited === undefined) throw error;
      // A server that died under this change: once, start it again and ask the new one.
      if (attempt === 0) continue;
      throw new Error(`the ${language.name} language server ${client.exited}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

async function compare(
  client: LanguageClient,
  language: Language,
  file: string,
  before: string | null,
  after: string,
): Promise<ChangeOutcome> {
  await client.ready;
  client.resyncFromDisk(file);
  if (before !== null) client.setText(file, before);
  // A new file has nothing of its own before; the other open documents may (it may fix their imports).
  const baseline = await client.diagnostics();
  client.setText(file, after);
  const current = await client.diagnostics();
  const meta = summarizeChange(language.name, baseline, current);
  return meta ? { meta } : undefined;
}
