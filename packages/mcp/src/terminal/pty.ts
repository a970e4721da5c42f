/**
 * The PTY addon (@lydell/node-pty, a CommonJS package with a native addon), loaded on first use: a connection that
 * never uses the terminal does not pay for it. require(), not import(): the same module, and crow-mcp started from its
 * startup snapshot (snapshot-entry.ts) has no import().
 */
import { createRequire } from "node:module";

type NodePty = typeof import("@lydell/node-pty");

let loaded: NodePty | undefined;

export function nodePty(): NodePty {
  loaded ??= createRequire(import.meta.url)("@lydell/node-pty") as NodePty;
  return loaded;
}
