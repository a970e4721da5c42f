/** Diagnostics as the servers send them (LSP's, tsserver's), read into crow-mcp's {@link Diagnostic}. */
import type { Diagnostic, Severity } from "./diagnostics.js";

const LSP_SEVERITIES: readonly Severity[] = ["error", "warning", "information", "hint"];

/** An LSP `Diagnostic` of `file` (0-based positions) as crow-mcp's (1-based); undefined when malformed. */
export function fromLsp(file: string, raw: unknown): Diagnostic | undefined {
  const d = raw as {
    range?: { start?: { line?: number; character?: number } };
    severity?: number;
    code?: string | number;
    message?: string;
    source?: string;
  };
  if (typeof d.message !== "string") return undefined;
  return {
    file,
    line: (d.range?.start?.line ?? 0) + 1,
    column: (d.range?.start?.character ?? 0) + 1,
    severity: LSP_SEVERITIES[(d.severity ?? 1) - 1] ?? "error",
    ...(d.code !== undefined ? { code: String(d.code) } : {}),
    message: d.message,
  };
}

/** A tsserver diagnostic of `file` (1-based `start`, `category`, numeric `code` → `TS1234`); undefined when malformed. */
export function fromTsserver(file: string, raw: unknown): Diagnostic | undefined {
  const d = raw as { start?: { line?: number; offset?: number }; text?: string; code?: number; category?: string };
  if (typeof d.text !== "string") return undefined;
  const severity: Severity =
    d.category === "error"
      ? "error"
      : d.category === "warning"
        ? "warning"
        : d.category === "suggestion"
          ? "hint"
          : "information";
  return {
    file,
    line: d.start?.line ?? 1,
    column: d.start?.offset ?? 1,
    severity,
    ...(d.code !== undefined ? { code: `TS${d.code}` } : {}),
    message: d.text,
  };
}
