/**
 * `crow doctor`: checks the installation and the setup in one short list, ✓ fine, ✗ broken (with what to do), –
 * not set up. Exit code 0 only when nothing is ✗; 1 when something is; 2 for a configuration that does not load
 * (bad setup, as the exit-code table of every command has it) or a usage error.
 */
import path from "node:path";
import { errorText } from "@crow/core";
import { parseDbUri } from "@crow/core/internal";
import { parseArgs } from "@crow/mcp/parse-args";
import { type AgentConfig, adoptSingleModel, ConfigError, crowHome, loadConfig } from "../../config/index.js";
import {
  checkConfig,
  checkHome,
  checkMcpServers,
  checkNode,
  checkProviders,
  checkSandbox,
  checkSearxng,
  checkStore,
  checkTerminal,
  type Finding,
  homeUnmakeable,
} from "./checks.js";
import { checkLanguageServers } from "./language-servers.js";

/** Whether the store is a SQLite file inside the Crow home (its default), which cannot exist without the home. */
function storeInside(config: AgentConfig): boolean {
  try {
    const target = parseDbUri(config.dbUri, config.home);
    if (target.kind !== "sqlite" || target.file === ":memory:") return false;
    const relative = path.relative(config.home, target.file);
    return !relative.startsWith("..") && !path.isAbsolute(relative);
  } catch {
    return false; // an unusable db_uri: the store check says so
  }
}

export const DOCTOR_HELP = `Usage: crow doctor

Checks what Crow needs, one line each: Node.js, the Crow home and its permissions, the configuration files and
where each setting came from, the store (SQLite driver, database file writable), each provider reachable and its
models, the default model, SearXNG, the MCP servers, the terminal's PTY module, the sandbox (bubblewrap), the language servers checking edits.
✓ fine, ✗ broken (with what to do), – not set up. Exit code 0 when nothing is ✗, 1 when something is, 2 when the
configuration does not load (bad setup: most checks cannot run).`;

const MARK: Record<Finding["verdict"], string> = { ok: "✓", fail: "✗", info: "–" };

function line(finding: Finding): string {
  const fix = finding.fix && finding.verdict !== "ok" ? `\n    → ${finding.fix}` : "";
  return `${MARK[finding.verdict]} ${finding.text}${fix}\n`;
}

/** Runs the checks, printing each line as soon as it is known; resolves to the exit code. */
export async function runDoctor(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const parsed = parseArgs({ args: [...args], options: { help: { type: "boolean", short: "h" } }, strict: true });
    if (parsed.values.help) {
      process.stdout.write(`${DOCTOR_HELP}\n`);
      return 0;
    }
  } catch (error) {
    process.stderr.write(`crow doctor: ${errorText(error)}\nRun 'crow doctor --help' for usage.\n`);
    return 2;
  }
  let failed = false;
  /** The configuration does not load: bad setup (2), as for every command; most checks could not run. */
  let badConfig = false;
  const say = (findings: Finding | Finding[]) => {
    for (const finding of [findings].flat()) {
      if (finding.verdict === "fail") failed = true;
      process.stdout.write(line(finding));
    }
  };
  say(checkNode());
  let config: AgentConfig | undefined;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    say({ verdict: "fail", text: `configuration: ${error.message}`, fix: "correct it (see docs/configuration.md)" });
    badConfig = true;
    say(checkHome(crowHome(env)));
  }
  if (config) {
    // As crow run and crow acp do: OPENAI_BASE_URL alone, and the endpoint lists one model, is that model.
    const adopted = await adoptSingleModel(config, env);
    if (adopted) config.notices.push(adopted);
    say(checkConfig(config));
    const unmakeable = homeUnmakeable(config.home);
    if (unmakeable) {
      // Said once: a store inside the home would fail for the same reason.
      say(unmakeable);
      if (!storeInside(config)) say(await checkStore(config));
    } else {
      say(await checkStore(config));
      // After the store: opening it makes the home (0700) on a first run.
      say(checkHome(config.home));
    }
    say(await checkProviders(config));
    say(await checkSearxng(config));
    say(await checkMcpServers(config, process.cwd()));
  }
  say(await checkTerminal());
  say(checkSandbox(config));
  say(checkLanguageServers(config, process.cwd()));
  process.stdout.write(failed ? "Something needs fixing (✗ above).\n" : "Crow is ready.\n");
  return badConfig ? 2 : failed ? 1 : 0;
}
