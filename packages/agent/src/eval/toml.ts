/**
 * task.toml through smol-toml (TOML 1.0, maintained): every construct Harbor's schemas use — `[[task.authors]]`
 * arrays of tables, inline tables, dotted keys, dates — reads as it is written. A file that is not TOML is a
 * {@link TomlError} naming the file, line and column.
 */
import { parse, TomlError as SmolTomlError } from "smol-toml";

export type TomlValue = string | number | boolean | Date | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

/** A file `parseToml` cannot read. */
export class TomlError extends Error {
  override name = "TomlError";
}

/** Parses `text`, the content of `file` (named in errors). */
export function parseToml(text: string, file: string): TomlTable {
  try {
    return parse(text) as TomlTable;
  } catch (error) {
    if (error instanceof SmolTomlError) {
      const first = error.message.split("\n")[0] ?? error.message;
      throw new TomlError(`${file}:${error.line}:${error.column}: ${first.replace(/^Invalid TOML document: /, "")}`);
    }
    throw error;
  }
}
