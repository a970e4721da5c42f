/**
 * The part of TOML that Harbor's `task.toml` uses: `[table]` and `[a.b]` headers, `key = value` with strings (basic,
 * literal and `"""` multi-line), numbers, booleans and arrays of those (over several lines too), and `#` comments.
 * Anything else is a clear error naming the line, rather than a silently wrong value.
 */

export type TomlValue = string | number | boolean | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

/** A line `parseToml` cannot read. */
export class TomlError extends Error {
  override name = "TomlError";
}

function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#") return line.slice(0, i);
  }
  return line;
}

/** Splits `a, "b, c", [1, 2]` at top-level commas. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "[") depth++;
    else if (ch === "]") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function parseValue(raw: string, where: string): TomlValue {
  const text = raw.trim();
  if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) {
    try {
      return JSON.parse(text) as string;
    } catch {
      throw new TomlError(`${where}: bad string ${text}`);
    }
  }
  if (text.startsWith("'") && text.endsWith("'") && text.length >= 2) return text.slice(1, -1);
  if (text === "true") return true;
  if (text === "false") return false;
  if (text.startsWith("[") && text.endsWith("]")) {
    return splitTopLevel(text.slice(1, -1)).map((part) => parseValue(part, where));
  }
  const number = Number(text.replaceAll("_", ""));
  if (text !== "" && Number.isFinite(number)) return number;
  throw new TomlError(`${where}: unsupported value ${text} (strings, numbers, booleans and arrays only)`);
}

/** How many `[` are still open at the end of `text` (outside strings). */
function openBrackets(text: string): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "[") depth++;
    else if (ch === "]") depth--;
  }
  return depth;
}

/** Parses `text` (named `source` in errors) into nested tables. */
export function parseToml(text: string, source: string): TomlTable {
  const root: TomlTable = {};
  let table = root;
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const where = `${source}:${n + 1}`;
    const line = stripComment(lines[n] ?? "").trim();
    if (line === "") continue;
    const header = /^\[\s*([A-Za-z0-9_.-]+)\s*\]$/.exec(line);
    if (header?.[1]) {
      table = root;
      for (const key of header[1].split(".")) {
        const next = table[key];
        if (next === undefined) table[key] = {};
        else if (typeof next !== "object" || Array.isArray(next))
          throw new TomlError(`${where}: ${key} is not a table`);
        table = table[key] as TomlTable;
      }
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new TomlError(`${where}: expected "key = value" or "[table]", got: ${line}`);
    const key = line
      .slice(0, eq)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    let value = line.slice(eq + 1).trim();
    if (value.startsWith('"""')) {
      // A multi-line basic string: up to the closing """ (a newline right after the opening one is dropped).
      let body = value.slice(3);
      while (!body.includes('"""') && n + 1 < lines.length) body += `\n${lines[++n] ?? ""}`;
      const end = body.indexOf('"""');
      if (end < 0) throw new TomlError(`${where}: unterminated """ string`);
      table[key] = body.slice(0, end).replace(/^\n/, "");
      continue;
    }
    // An array over several lines: read on until its brackets close.
    while (value.startsWith("[") && openBrackets(value) > 0 && n + 1 < lines.length) {
      value += ` ${stripComment(lines[++n] ?? "").trim()}`;
    }
    table[key] = parseValue(value, where);
  }
  return root;
}
