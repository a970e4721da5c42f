import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { errorText } from "@crow/core";
import { declaredBin, ownPackageRoot, packageBin, packageRoot } from "../base/package-paths.js";
import type { ConfigMcpServer } from "../config/types.js";
import { childProcessEnvironment } from "./child-env.js";
import type { AcpMcpServer } from "./types.js";

/** Name of the built-in toolserver. The client fs/terminal routing applies to this server's tools. */
export const BUILTIN_SERVER = "crow-mcp";

/** A server to connect, normalized from any of the accepted shapes. */
export type ServerSpec =
  | { name: string; transport: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd: string }
  | { name: string; transport: "http" | "sse"; url: string; headers: Record<string, string> }
  /** The built-in crow-mcp: an MCP session in this agent's shared crow-mcp process (see shared.ts), in `cwd`. */
  | { name: string; transport: "shared"; cwd: string }
  /** An entry that cannot be used; reported as a failure with `error`. */
  | { name: string; transport: "invalid"; error: string };

function pairs(list: readonly { name: string; value: string }[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of list ?? []) out[name] = value;
  return out;
}

let builtinPath: string | undefined;

/**
 * Path of the built-in crow-mcp executable of this installation: the `crow-mcp` bin of the package this module is
 * in when it declares one (the published package ships both executables), else the `crow-mcp` bin that the
 * `@crow/mcp` package resolving from here declares (a checkout or workspace: its bundle). Resolution goes through
 * package.json files, so it works from a checkout, a workspace and an installed tree alike.
 */
export function builtinServerPath(): string {
  // Resolved once: the installation does not move while the agent runs, and every session asks.
  builtinPath ??=
    declaredBin(ownPackageRoot(fileURLToPath(import.meta.url)), "crow-mcp") ??
    packageBin(packageRoot(createRequire(import.meta.url).resolve("@crow/mcp"), "@crow/mcp"), "@crow/mcp", "crow-mcp");
  return builtinPath;
}

/** The built-in crow-mcp: a session of the installation's crow-mcp shared by this process, in the session cwd. */
export function builtinSpec(cwd: string): ServerSpec {
  let entry: string;
  try {
    entry = builtinServerPath();
  } catch (error) {
    return { name: BUILTIN_SERVER, transport: "invalid", error: errorText(error) };
  }
  if (!existsSync(entry)) {
    return { name: BUILTIN_SERVER, transport: "invalid", error: `${entry} does not exist (run npm run build)` };
  }
  return { name: BUILTIN_SERVER, transport: "shared", cwd };
}

function badUrl(name: string, url: string): ServerSpec | undefined {
  if (URL.canParse(url)) return undefined;
  return { name, transport: "invalid", error: `invalid url ${JSON.stringify(url)}` };
}

/**
 * Normalizes an ACP `McpServer` entry. Stdio servers get the agent's environment without its secrets (see
 * child-env.ts) plus their own `env`, which always passes.
 */
export function fromAcp(server: AcpMcpServer, cwd: string): ServerSpec {
  if (server.type === "http" || server.type === "sse") {
    return (
      badUrl(server.name, server.url) ?? {
        name: server.name,
        transport: server.type,
        url: server.url,
        headers: pairs(server.headers),
      }
    );
  }
  return {
    name: server.name,
    transport: "stdio",
    command: server.command,
    args: [...(server.args ?? [])],
    env: { ...childProcessEnvironment(), ...pairs(server.env) },
    cwd,
  };
}

/**
 * Normalizes a config `mcpServers` entry; a malformed one becomes an `invalid` spec that says what is wrong. A stdio
 * server's environment is built as for an ACP entry (its `env:` always passes).
 */
export function fromConfig(name: string, server: ConfigMcpServer, cwd: string): ServerSpec {
  const kind = (server.transport ?? server.type ?? (server.url ? "http" : "stdio")).toLowerCase();
  if (kind === "http" || kind === "streamable-http" || kind === "streamable_http" || kind === "sse") {
    if (typeof server.url !== "string" || server.url === "") {
      return { name, transport: "invalid", error: `mcpServers.${name}: transport ${kind} needs a url` };
    }
    const transport = kind === "sse" ? "sse" : "http";
    return badUrl(name, server.url) ?? { name, transport, url: server.url, headers: { ...server.headers } };
  }
  if (kind !== "stdio") {
    return { name, transport: "invalid", error: `mcpServers.${name}: unknown transport "${kind}" (stdio, http, sse)` };
  }
  if (typeof server.command !== "string" || server.command === "") {
    return { name, transport: "invalid", error: `mcpServers.${name}: a stdio server needs a command` };
  }
  return {
    name,
    transport: "stdio",
    command: server.command,
    args: [...(server.args ?? [])].map(String),
    env: { ...childProcessEnvironment(), ...server.env },
    cwd: server.cwd ?? cwd,
  };
}

/**
 * The servers of a session, by name: the built-in first, then config entries, then ACP entries; a later entry
 * replaces an earlier one of the same name (a session's own servers are the most specific).
 */
export function collectServers(options: {
  cwd: string;
  builtin: boolean;
  configServers?: Readonly<Record<string, ConfigMcpServer>>;
  mcpServers?: readonly AcpMcpServer[];
}): ServerSpec[] {
  const byName = new Map<string, ServerSpec>();
  if (options.builtin) byName.set(BUILTIN_SERVER, builtinSpec(options.cwd));
  for (const [name, server] of Object.entries(options.configServers ?? {})) {
    byName.set(name, fromConfig(name, server, options.cwd));
  }
  for (const server of options.mcpServers ?? []) byName.set(server.name, fromAcp(server, options.cwd));
  return [...byName.values()];
}
