/** What the result of a file-changing call (write, edit) shows: the file, the diff its server returned, diagnostics. */
import type { ToolDiagnostic, ToolDiagnostics, ToolDisplay } from "@crow/core";
import { diffFromMeta } from "@crow/mcp/edit";
import { DIAGNOSTICS_META_KEY } from "@crow/mcp/lsp";
import { diffDisplay } from "../diff.js";
import { fileLocations, located } from "./profile.js";

/**
 * The file a write or edit changed, and unless it failed the diff from its server's `_meta["crow/diff"]` (the agent
 * reads no file, so a remote toolserver's change shows as well), located at its first changed line, with the
 * diagnostics the change introduced or fixed from `_meta["crow/diagnostics"]`.
 */
export function changedFile(args: Record<string, unknown>, meta: unknown, failed: boolean): ToolDisplay {
  const diff = failed ? undefined : diffFromMeta(meta);
  const shown = diff ? diffDisplay(diff) : located(fileLocations(args));
  const diagnostics = failed ? undefined : diagnosticsFromMeta(meta);
  return diagnostics ? { ...shown, diagnostics } : shown;
}

const SEVERITIES = new Set<string>(["error", "warning", "information", "hint"]);

/** The diagnostics a result's `_meta` carries, when well-formed (a malformed entry is left out). */
export function diagnosticsFromMeta(meta: unknown): ToolDiagnostics | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const raw = (meta as Record<string, unknown>)[DIAGNOSTICS_META_KEY];
  if (typeof raw !== "object" || raw === null) return undefined;
  const { language, added, total, fixed } = raw as Record<string, unknown>;
  if (typeof language !== "string" || !Array.isArray(added)) return undefined;
  const list: ToolDiagnostic[] = [];
  for (const entry of added as unknown[]) {
    const d = entry as Record<string, unknown>;
    if (typeof d.file !== "string" || typeof d.message !== "string" || typeof d.severity !== "string") continue;
    if (!SEVERITIES.has(d.severity) || typeof d.line !== "number" || typeof d.column !== "number") continue;
    list.push({
      path: d.file,
      line: d.line,
      column: d.column,
      severity: d.severity as ToolDiagnostic["severity"],
      ...(typeof d.code === "string" ? { code: d.code } : {}),
      message: d.message,
    });
  }
  return {
    language,
    added: list,
    total: typeof total === "number" ? total : list.length,
    fixed: typeof fixed === "number" ? fixed : 0,
  };
}
