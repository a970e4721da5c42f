/**
 * The token of `crow acp --listen`, `crow run --connect` and `crow sessions serve`: from `--token-file FILE` (its first line) or the
 * `CROW_ACP_TOKEN` environment variable, never from a bare argument (every user of the machine can read a command
 * line in ps or /proc). As crow-mcp does for `--http` (packages/mcp/src/command.ts).
 */
import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { errorText } from "@crow/core";

/** A token that cannot be read; the message says which source and what to do. */
export class TokenError extends Error {}

/**
 * The configured token (file first, then the environment variable `variable`), or undefined when neither is given.
 * Throws `TokenError`. The viewer (`crow sessions serve`) reads it the same way from `CROW_VIEWER_TOKEN`. Read here,
 * not by the configuration loader: a secret of one command, never taken from `.env` and kept out of the loaded
 * configuration, which extensions are given (`crow.config`).
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
      throw new TokenError(`cannot read --token-file ${file}: ${errorText(error)}`);
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

/** The shortest token `crow acp --listen` serves with: as long as the one it makes up (192 bits in base64url). */
export const MIN_TOKEN_LENGTH = 32;

/**
 * Throws `TokenError` when `token` (from `source`: "--token-file FILE" or "CROW_ACP_TOKEN") is too short to serve
 * with: whoever guesses it runs commands as this user, and a listener takes guesses as fast as the network allows.
 */
export function checkListenToken(token: string, source: string): void {
  const length = [...token].length;
  if (length >= MIN_TOKEN_LENGTH) return;
  const into = source.startsWith("--token-file ") ? source.slice("--token-file ".length) : "FILE";
  throw new TokenError(
    `the token from ${source} has ${length} character${length === 1 ? "" : "s"}; crow acp --listen needs at least ${MIN_TOKEN_LENGTH} (a short one can be guessed over the network). Make one with: (umask 077; openssl rand -hex 32 > ${into}), or give neither --token-file nor CROW_ACP_TOKEN and crow makes one up and prints it.`,
  );
}

/**
 * A warning when the token file can be read or written by its group or other users (undefined when it cannot).
 * Only a warning: container secret mounts (Docker 0444, Kubernetes 0644 by default) are readable by all and yet
 * seen by no other user; on a shared machine, the warning says what to do.
 */
export function tokenFileWarning(file: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o066) === 0) return undefined;
  return `warning: --token-file ${file} can be read or written by other users (mode ${mode.toString(8).padStart(4, "0")}): whoever reads the token can run commands as you through this agent; run chmod 600 ${file}`;
}
