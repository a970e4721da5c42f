/**
 * The checks of `crow doctor`, one function each. A check never throws: it returns what it found as lines of
 * {@link Finding}s, each with what to do when it is not fine. Network checks talk only to the configured addresses,
 * with short timeouts, so a broken setup answers in seconds.
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { errorText, openStore } from "@crow/core";
import { sqliteDriverName } from "@crow/core/internal";
import { sandboxAvailability, useBwrapProgram } from "@crow/mcp/sandbox";
import { type AgentConfig, configFiles, displayPath, signedOutText } from "../../config/index.js";
import { listModels } from "../../config/list-models.js";
import { ServerConnection } from "../../tools/mcp-connection.js";
import { builtinServerPath, fromConfig } from "../../tools/servers.js";

/** ✓ fine, ✗ broken (exit code 1), – not set up or not applicable (no failure). */
export type Verdict = "ok" | "fail" | "info";

export interface Finding {
  verdict: Verdict;
  /** What was checked and what was found, one line. */
  text: string;
  /** What to do about it (for ✗ and –). */
  fix?: string;
}

const NETWORK_TIMEOUT_MS = 5000;

/** Node.js itself: Crow needs 20.19 or later. */
export function checkNode(version = process.versions.node): Finding {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const ok = major > 20 || (major === 20 && minor >= 19);
  return ok
    ? { verdict: "ok", text: `Node.js ${version}` }
    : { verdict: "fail", text: `Node.js ${version} is too old`, fix: "install Node.js 20.19 or later (22 LTS)" };
}

/**
 * The Crow home cannot be made: it does not exist and the nearest existing directory above it (usually HOME) is not
 * writable, or a file stands in the way. Undefined when it exists or can be made. Checked before the store, whose
 * failure there would only repeat it.
 */
export function homeUnmakeable(home: string): Finding | undefined {
  if (existsSync(home)) return undefined;
  let above = path.dirname(home);
  while (!existsSync(above) && path.dirname(above) !== above) above = path.dirname(above);
  const shown = above === homedir() ? `HOME (${above})` : above;
  let why: string | undefined;
  try {
    if (!statSync(above).isDirectory()) why = `${shown} is not a directory`;
    else accessSync(above, constants.W_OK);
  } catch {
    why = `${shown} is not writable`;
  }
  if (why === undefined) return undefined;
  return {
    verdict: "fail",
    text: `Crow home ${displayPath(home)} cannot be made: ${why}; config, .env and the store (crow.db) live there`,
    fix: "set CROW_HOME to a directory you can write (e.g. export CROW_HOME=/tmp/crow-$USER), or make HOME writable",
  };
}

/** The Crow home: exists (or can be made on first use) and only its owner can read it. */
export function checkHome(home: string): Finding {
  const shown = displayPath(home);
  if (!existsSync(home)) {
    return {
      verdict: "info",
      text: `Crow home ${shown} does not exist yet`,
      fix: "crow init or a first crow run makes it",
    };
  }
  const stat = statSync(home);
  if (!stat.isDirectory()) {
    return { verdict: "fail", text: `Crow home ${shown} is not a directory`, fix: "move it away or set CROW_HOME" };
  }
  const mode = (stat.mode & 0o777).toString(8);
  if ((stat.mode & 0o077) !== 0) {
    return {
      verdict: "fail",
      text: `Crow home ${shown} is readable by others (mode ${mode}); it holds keys and transcripts`,
      fix: `chmod 700 ${shown}`,
    };
  }
  return { verdict: "ok", text: `Crow home ${shown} (mode ${mode})` };
}

/** The configuration files and where the provider and model settings came from. */
export function checkConfig(config: AgentConfig): Finding[] {
  const files = configFiles(config.home);
  const found = [files.config, files.dotenv].filter((file) => existsSync(file)).map((file) => displayPath(file));
  const findings: Finding[] = [
    found.length > 0
      ? { verdict: "ok", text: `configuration: ${found.join(", ")}` }
      : { verdict: "info", text: "configuration: no config.yaml or .env (the environment only)", fix: "crow init" },
  ];
  for (const provider of Object.values(config.providers)) {
    const signedOut = signedOutText(provider);
    if (signedOut) {
      findings.push({ verdict: "fail", text: signedOut, fix: "crow init" });
      continue;
    }
    const key = provider.apiKey ? `, key from ${provider.keyFrom ?? "the configuration"}` : ", no key";
    findings.push({
      verdict: "ok",
      text: `provider "${provider.name}": ${provider.baseURL} from ${provider.urlFrom ?? "the configuration"}${key}`,
    });
  }
  const model = config.models.find((m) => m.name === config.model);
  // Nothing named it: adoptSingleModel took the endpoint's only model.
  const from = config.modelFrom ?? "the endpoint's only model (GET /models)";
  if (model) findings.push({ verdict: "ok", text: `default model "${model.name}" from ${from}` });
  for (const notice of config.notices) findings.push({ verdict: "info", text: notice });
  return findings;
}

/** The store: which driver, which database, and whether it opens (and migrates) for writing. */
export async function checkStore(config: AgentConfig): Promise<Finding> {
  const sqlite = !/^postgres(ql)?:/i.test(config.dbUri);
  const what = sqlite ? `SQLite (${sqliteDriverName()})` : "PostgreSQL";
  try {
    const store = await openStore(config.dbUri, { baseDir: config.home });
    const where = store.location;
    await store.close();
    return { verdict: "ok", text: `store: ${what} at ${sqlite ? displayPath(where) : where}, writable` };
  } catch (error) {
    // Location and driver errors carry their advice apart from the problem: said once, on the fix line.
    const { problem, fix } = error as { problem?: unknown; fix?: unknown };
    const told = typeof problem === "string" && typeof fix === "string";
    return {
      verdict: "fail",
      text: `store: ${what}: ${told ? problem : errorText(error)}`,
      fix: told
        ? fix.replace(/^\w/, (c) => c.toLowerCase()).replace(/\.$/, "")
        : "set CROW_HOME to a writable directory, or CROW_DB_URI to a database Crow can write",
    };
  }
}

/** Each provider answers `GET /models`, and the default model is one of them. */
export async function checkProviders(config: AgentConfig): Promise<Finding[]> {
  const providers = Object.values(config.providers);
  if (providers.length === 0) {
    return [
      {
        verdict: "fail",
        text: "no LLM provider configured",
        fix: "set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1) or run crow init",
      },
    ];
  }
  const defaultModel = config.models.find((m) => m.name === config.model);
  const findings: Finding[] = [];
  for (const provider of providers) {
    const listed = await listModels(provider.baseURL, provider.apiKey, NETWORK_TIMEOUT_MS);
    if (!listed.ok) {
      findings.push({
        verdict: "fail",
        text: `provider "${provider.name}": ${listed.error}`,
        fix: signedOutText(provider)
          ? "sign in again: crow init saves the key (crow logout removed it)"
          : `start the server or correct ${provider.urlFrom ?? "its base_url"}${provider.apiKey ? " and the key" : ""}`,
      });
      continue;
    }
    const shown = listed.ids.length > 6 ? `${listed.ids.slice(0, 6).join(", ")}, …` : listed.ids.join(", ");
    findings.push({
      verdict: "ok",
      text: `provider "${provider.name}" answers: ${listed.ids.length} model(s)${shown ? ` (${shown})` : ""}`,
    });
    if (defaultModel?.provider === provider.name && listed.ids.length > 0) {
      findings.push(
        listed.ids.includes(defaultModel.id)
          ? { verdict: "ok", text: `default model "${defaultModel.name}" is offered by "${provider.name}"` }
          : {
              verdict: "fail",
              text: `default model "${defaultModel.name}" (id ${defaultModel.id}) is not offered by "${provider.name}"`,
              fix: "pick one of its models (CROW_MODEL, or default_model in config.yaml)",
            },
      );
    }
  }
  if (!defaultModel) {
    findings.push({
      verdict: "fail",
      text: "no default model",
      fix: "set CROW_MODEL, or add models and default_model to config.yaml (crow init)",
    });
  }
  return findings;
}

/** SearXNG (web_search): reachable at SEARXNG_URL, or at the default address when that is not set. */
export async function checkSearxng(config: AgentConfig): Promise<Finding> {
  const configured = config.searxngUrl;
  const url = configured || "http://localhost:2946";
  try {
    await fetch(url, { signal: AbortSignal.timeout(NETWORK_TIMEOUT_MS) });
    return { verdict: "ok", text: `SearXNG answers at ${url} (web_search)` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? errorText(error);
    return configured
      ? { verdict: "fail", text: `SearXNG at ${url}: ${cause}`, fix: "start SearXNG or correct SEARXNG_URL" }
      : {
          verdict: "info",
          text: `SearXNG: not set up (nothing at ${url}); web_search is unavailable, web_fetch works`,
          fix: "set SEARXNG_URL (crow init --searxng URL) to enable web_search",
        };
  }
}

/** Each MCP server starts and lists its tools: the built-in crow-mcp and those of config.yaml. */
export async function checkMcpServers(config: AgentConfig, cwd: string): Promise<Finding[]> {
  const specs = [
    {
      name: "crow-mcp",
      spec: fromConfig("crow-mcp", { command: process.execPath, args: [builtinServerPath()] }, cwd),
    },
    ...Object.entries(config.mcpServers).map(([name, server]) => ({ name, spec: fromConfig(name, server, cwd) })),
  ];
  const findings: Finding[] = [];
  for (const { name, spec } of specs) {
    const connection = new ServerConnection(spec, () => {});
    try {
      const ok = await connection.connect();
      findings.push(
        ok
          ? { verdict: "ok", text: `MCP server "${name}" starts (${connection.tools.length} tools)` }
          : {
              verdict: "fail",
              text: `MCP server "${name}": ${connection.error ?? "does not start"}`,
              fix: `correct mcpServers.${name} in config.yaml, or set enabled: false`,
            },
      );
    } finally {
      await connection.close();
    }
  }
  return findings;
}

/** The terminal tool's PTY addon (@lydell/node-pty, a prebuilt binary per platform) loads. */
export async function checkTerminal(): Promise<Finding> {
  try {
    await import("@lydell/node-pty");
    return { verdict: "ok", text: "terminal: the PTY module (@lydell/node-pty) loads" };
  } catch (error) {
    const raw = errorText(error).split("\n")[0] ?? "";
    return {
      verdict: "fail",
      text: `terminal: the PTY module @lydell/node-pty does not load (${raw.replace(/ imported from .*$/, "")}); the terminal tool cannot start bash`,
      fix: "reinstall Crow (npm install -g crow-agent), without --omit=optional: its prebuilt binary is an optional package",
    };
  }
}

/**
 * The sandbox (docs/security.md "Sandbox"): whether bubblewrap can confine the terminal's commands here, judged by the same
 * probe sessions use. ✗ only when config.yaml says `sandbox: required` (sessions would not open); under `auto` an
 * unusable bubblewrap means commands run unconfined, which is said (–) with how to enable confinement.
 */
export function checkSandbox(config: AgentConfig | undefined): Finding {
  const setting = config?.sandbox.enabled ?? "auto";
  if (setting === "off") {
    return { verdict: "info", text: "sandbox: off in config.yaml (commands run unconfined)" };
  }
  // The bubblewrap CROW_BWRAP names, as sessions would run it (config/load.ts reads it).
  useBwrapProgram(config?.sandbox.bwrap);
  const available = sandboxAvailability();
  if (available.ok) {
    const root = available.root
      ? "; run as root: every capability is dropped inside, checked at start (a remount of / is refused)"
      : "";
    return { verdict: "ok", text: `sandbox: ${available.bwrap} confines commands (sandbox: ${setting}${root})` };
  }
  return {
    verdict: setting === "required" ? "fail" : "info",
    text: `sandbox: ${available.reason}`,
    fix:
      setting === "required"
        ? "sessions will not open with sandbox: required; make bubblewrap usable or change the setting"
        : "install bubblewrap (and allow user namespaces) to confine commands",
  };
}
