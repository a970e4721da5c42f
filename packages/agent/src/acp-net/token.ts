/**
 * The token of `crow acp --listen`, `crow run --connect` and `crow sessions serve`: from `--token-file FILE` (its first line) or the
 * `CROW_ACP_TOKEN` environment variable, never from a bare argument (every user of the machine can read a command
 * line in ps or /proc). As crow-mcp does for `--http` (packages/mcp/src/command.ts).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

/** A token that cannot be read; the message says which source and what to do. */
export class TokenError extends Error {}

/**
 * The configured token (file first, then the environment variable `variable`), or undefined when neither is given.
 * Throws `TokenError`. The viewer (`crow sessions serve`) reads it the same way from `CROW_VIEWER_TOKEN`.
 */
export function configuredToken(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  variable = "CROW_ACP_TOKEN",
): string | undefined {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new TokenError(`cannot read --token-file ${file}: ${(error as Error).message}`);
    }
    const token = (text.split("\n")[0] ?? "").trim();
    if (token === "") throw new TokenError(`--token-file ${file} is empty: put the token on its first line`);
    return token;
  }
  const fromEnv = env[variable]?.trim();
  return fromEnv ? fromEnv : undefined;
}

/** A fresh random token (192 bits, URL-safe). */
export function newToken(): string {
  return randomBytes(24).toString("base64url");
}
