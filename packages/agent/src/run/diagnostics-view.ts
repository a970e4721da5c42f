/**
 * How `crow run` shows the diagnostics a write or edit introduced (crow-mcp's language servers, carried in the
 * tool_call_update's `_meta["crow/diagnostics"]`): under the diff, one line per diagnostic, errors red and warnings
 * yellow, paths relative to the session's directory; or one green line when the change fixed every error.
 */
import path from "node:path";
import type { ToolDiagnostics } from "@crow/core";
import { DIAGNOSTICS_META_KEY } from "@crow/mcp/lsp";
import type { Style } from "./ansi.js";

/** The diagnostics an update's `_meta` carries (as the agent's translate.ts put them), if any. */
export function diagnosticsOf(meta: unknown): ToolDiagnostics | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const raw = (meta as Record<string, unknown>)[DIAGNOSTICS_META_KEY] as ToolDiagnostics | undefined;
  return raw && typeof raw.language === "string" && Array.isArray(raw.added) ? raw : undefined;
}

/** The lines to print (indented like the diff's), none when there is nothing to say. */
export function diagnosticsLines(diagnostics: ToolDiagnostics, cwd: string, s: Style): string[] {
  const lines: string[] = [];
  for (const d of diagnostics.added) {
    const rel = path.relative(cwd, d.path);
    const shown = rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : d.path;
    const paint = d.severity === "error" ? s.red : s.yellow;
    const message = d.message.split("\n")[0] ?? "";
    const code = d.code ? `${s.dim(d.code)} ` : "";
    lines.push(`  ${paint(`${d.severity === "error" ? "✗" : "⚠"} ${shown}:${d.line}:${d.column}`)} ${code}${message}`);
  }
  const more = diagnostics.total - diagnostics.added.length;
  if (more > 0) lines.push(`  ${s.dim(`… ${more} more`)}`);
  if (diagnostics.fixed > 0) {
    const what =
      diagnostics.fixed === 1 ? "the error from before is" : `the ${diagnostics.fixed} errors from before are`;
    lines.push(`  ${s.green(`✓ ${diagnostics.language}: ${what} fixed`)}`);
  }
  return lines;
}
