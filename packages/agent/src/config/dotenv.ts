/**
 * `.env` files: parsing (for the config loader) and updating (for `crow init`). The format is the common subset of
 * python-dotenv and docker compose: `KEY=value` lines, optional `export ` prefix, `#` comments, single quotes literal,
 * double quotes with `\n \r \t \\ \"` escapes (and may span lines), unquoted values trimmed with a ` #` comment cut
 * off. No `${VAR}` expansion inside `.env` (config.yaml interpolation sees the merged environment anyway).
 */
import { ConfigError } from "./errors.js";

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", "\\": "\\", '"': '"', $: "$" };

/**
 * Parses `.env` text into variables (later lines win). `file` names the file in errors; a bad line is reported by
 * number only, never by content, since it may hold a secret.
 */
export function parseDotenv(text: string, file = ".env"): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = (lines[i] as string).trim();
    if (line === "" || line.startsWith("#")) continue;
    const body = line.startsWith("export ") ? line.slice(7).trimStart() : line;
    const eq = body.indexOf("=");
    const key = eq < 0 ? body : body.slice(0, eq).trim();
    if (eq < 0 || !KEY.test(key)) {
      throw new ConfigError(`${file}:${lineNo}: expected KEY=value (a variable name, "=", then the value)`);
    }
    let rest = body.slice(eq + 1).trimStart();
    const quote = rest[0];
    if (quote === "'" || quote === '"') {
      // A quoted value may continue on the following lines until its closing quote.
      let value = "";
      let j = 1;
      for (;;) {
        if (j >= rest.length) {
          if (i + 1 >= lines.length) throw new ConfigError(`${file}:${lineNo}: ${key}: missing closing ${quote}`);
          i++;
          rest += `\n${lines[i] as string}`;
          continue;
        }
        const c = rest[j] as string;
        if (c === quote) break;
        if (quote === '"' && c === "\\" && j + 1 < rest.length) {
          const next = rest[j + 1] as string;
          value += ESCAPES[next] ?? `\\${next}`;
          j += 2;
          continue;
        }
        value += c;
        j++;
      }
      const after = rest.slice(j + 1).trim();
      if (after !== "" && !after.startsWith("#")) {
        throw new ConfigError(`${file}:${lineNo}: ${key}: unexpected text after the closing ${quote}`);
      }
      out[key] = value;
      continue;
    }
    const comment = rest.search(/\s#/);
    out[key] = (comment >= 0 ? rest.slice(0, comment) : rest).trim();
  }
  return out;
}

/** A value as it must be written so that `parseDotenv` reads it back unchanged. */
export function quoteDotenv(value: string): string {
  if (/^[A-Za-z0-9_./:@%+,=-]*$/.test(value)) return value;
  const escaped = value
    .replace(/\\/g, "\\\\")
    .replace(/"/g, '\\"')
    .replace(/\n/g, "\\n")
    .replace(/\r/g, "\\r")
    .replace(/\t/g, "\\t");
  return `"${escaped}"`;
}

/**
 * `.env` text with `updates` applied: a key already assigned keeps its place (its first assignment is rewritten,
 * later duplicates dropped), new keys are appended, everything else (comments, other keys) is left as is.
 */
export function updateDotenv(text: string, updates: Readonly<Record<string, string>>): string {
  const pending = new Map(Object.entries(updates));
  const written = new Set<string>();
  const out: string[] = [];
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  for (const line of lines) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=/.exec(line);
    const key = match?.[1];
    if (key !== undefined && updates[key] !== undefined) {
      if (!written.has(key)) out.push(`${key}=${quoteDotenv(updates[key])}`);
      written.add(key);
      pending.delete(key);
      continue;
    }
    out.push(line);
  }
  for (const [key, value] of pending) out.push(`${key}=${quoteDotenv(value)}`);
  return `${out.join("\n")}\n`;
}
