/**
 * `crow init`: writes `config.yaml` and `.env` in the config home, from a wizard or from flags.
 *
 *   crow init                                   # interactive
 *   crow init --provider local=http://127.0.0.1:11434/v1 --model llama3.2 --yes
 *   OPENROUTER_API_KEY=… crow init --provider openrouter=https://openrouter.ai/api/v1 --model fast=z-ai/glm-5
 *
 * API keys are never printed and never written to config.yaml.
 */
import { existsSync } from "node:fs";
import { errorText } from "@crow/core";
import { homeDir } from "@crow/core/home";
import { parseArgs } from "@crow/mcp/parse-args";
import { UsageError } from "../base/exit-codes.js";
import { configFiles, crowHome, displayPath } from "../config/index.js";
import { listModels, type ModelList } from "../config/list-models.js";
import {
  ConfigExists,
  checkPlan,
  defaultModelName,
  type InitPlan,
  keyVariable,
  type PlannedProvider,
  renderPlan,
  writePlan,
} from "./init-plan.js";
import { runWizard } from "./init-wizard.js";
import { createPrompter, PromptAborted } from "./prompter.js";

export const INIT_HELP = `Usage: crow init [options]

Writes config.yaml and .env in the config directory (CROW_HOME, CROW_CONFIG_DIR or ~/.crow). Without --provider it
asks its questions interactively; with --provider everything comes from the flags.

Options:
  --provider NAME=URL    an OpenAI-compatible provider (repeatable), e.g. openrouter=https://openrouter.ai/api/v1
  --api-key NAME=KEY     its API key (repeatable; KEY alone with one provider). Default: the NAME_API_KEY
                         environment variable. Stored in .env as NAME_API_KEY, never in config.yaml.
  --model [ALIAS=][PROVIDER:]ID
                         a model to offer (repeatable); PROVIDER can be left out with one provider
  --all-models           every model the provider lists at GET /models
  --searxng URL          SearXNG base URL for web_search (stored in .env as SEARXNG_URL)
  --db sqlite|URI        session store: SQLite in the config directory (default) or postgresql://…
  --home DIR             config directory to write (default as above)
  --force                replace an existing config.yaml (.env is merged, other variables kept)
  -h, --help             show this help`;

export interface InitIo {
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  output?: NodeJS.WritableStream & { columns?: number };
  errors?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
}

function split(value: string, separator: string): [string, string] | undefined {
  const at = value.indexOf(separator);
  return at > 0 ? [value.slice(0, at), value.slice(at + separator.length)] : undefined;
}

/** Builds the plan from flags; `warn` gets non-fatal notes (a model the provider does not list). */
async function planFromFlags(
  values: {
    provider?: string[];
    "api-key"?: string[];
    model?: string[];
    "all-models"?: boolean;
    searxng?: string;
    db?: string;
  },
  env: NodeJS.ProcessEnv,
  warn: (text: string) => void,
): Promise<InitPlan> {
  const providers: PlannedProvider[] = [];
  for (const spec of values.provider ?? []) {
    const parts = split(spec, "=");
    if (!parts) throw new UsageError(`--provider ${spec}: expected NAME=URL`);
    providers.push({ name: parts[0], baseURL: parts[1] });
  }
  const names = new Set(providers.map((p) => p.name));
  for (const spec of values["api-key"] ?? []) {
    const parts = split(spec, "=");
    const target = parts && names.has(parts[0]) ? parts[0] : providers.length === 1 ? providers[0]?.name : undefined;
    if (target === undefined) throw new UsageError("--api-key: expected NAME=KEY naming one of the --provider names");
    const provider = providers.find((p) => p.name === target) as PlannedProvider;
    provider.apiKey = parts && names.has(parts[0]) ? parts[1] : spec;
  }
  for (const provider of providers) {
    const fromEnv = env[keyVariable(provider.name)]?.trim();
    if (!provider.apiKey && fromEnv) provider.apiKey = fromEnv;
  }
  const plan: InitPlan = { providers, models: [] };
  const problems = checkPlan({ ...plan, models: [{ name: "-", provider: providers[0]?.name ?? "", id: "-" }] });
  if (problems.length > 0) throw new UsageError(problems.join("; "));

  const lists = new Map<string, ModelList>();
  await Promise.all(providers.map(async (p) => lists.set(p.name, await listModels(p.baseURL, p.apiKey))));
  for (const spec of values.model ?? []) {
    const aliased = split(spec, "=");
    const rest = aliased ? aliased[1] : spec;
    const prefixed = split(rest, ":");
    let provider: string;
    let id: string;
    if (prefixed && names.has(prefixed[0])) [provider, id] = prefixed;
    else if (providers.length === 1) [provider, id] = [providers[0]?.name as string, rest];
    else throw new UsageError(`--model ${spec}: say which provider, as PROVIDER:ID (${[...names].join(", ")})`);
    const list = lists.get(provider);
    if (list?.ok && !list.ids.includes(id)) warn(`note: ${provider} does not list a model "${id}" at GET /models`);
    plan.models.push({ name: aliased ? aliased[0] : defaultModelName(id), provider, id });
  }
  if (values["all-models"]) {
    for (const p of providers) {
      const list = lists.get(p.name);
      if (!list?.ok) throw new UsageError(`--all-models: ${p.name}: ${list?.error ?? "no list"}`);
      for (const id of list.ids) {
        const taken = plan.models.some((m) => m.name === defaultModelName(id));
        plan.models.push({
          name: taken ? `${p.name}-${defaultModelName(id)}` : defaultModelName(id),
          provider: p.name,
          id,
        });
      }
    }
  }
  if (plan.models.length === 0) {
    const offers = providers.map((p) => {
      const list = lists.get(p.name);
      if (!list?.ok) return `${p.name}: ${list?.error ?? "no list"}`;
      const shown = list.ids.slice(0, 15).join(", ");
      return `${p.name} offers ${shown}${list.ids.length > 15 ? `… (${list.ids.length})` : ""}`;
    });
    throw new UsageError(`choose models with --model or --all-models (${offers.join("; ")})`);
  }
  if (values.searxng) plan.searxngUrl = values.searxng;
  if (values.db && values.db.toLowerCase() !== "sqlite") plan.postgres = values.db;
  return plan;
}

/** What was written, without secrets. */
function summary(plan: InitPlan, files: { config: string; dotenv?: string }, shown: (file: string) => string): string {
  const keys = plan.providers.filter((p) => p.apiKey).map((p) => keyVariable(p.name));
  if (plan.postgres && /:[^:@/]+@/.test(plan.postgres)) keys.push("POSTGRES_PASSWORD");
  const lines = [
    `Wrote ${shown(files.config)}${files.dotenv ? ` and ${shown(files.dotenv)}` : ""}${keys.length > 0 ? ` (secrets: ${keys.join(", ")})` : ""}.`,
    `  providers: ${plan.providers.map((p) => `${p.name} (${p.baseURL})`).join(", ")}`,
    `  models:    ${plan.models.map((m) => (m.name === m.id ? m.name : `${m.name} = ${m.id}`)).join(", ")}`,
    `  store:     ${plan.postgres ? "PostgreSQL" : "SQLite"}${plan.searxngUrl ? `; SearXNG at ${plan.searxngUrl}` : ""}`,
    'Next: crow run "hello", or add crow to your editor (crow acp).',
  ];
  return lines.join("\n");
}

/** What the wizard is about to write: config.yaml's text and the names of the .env variables (secrets hidden). */
function preview(plan: InitPlan, home: string, shown: (file: string) => string): string {
  const { yaml, env } = renderPlan(plan, home);
  const files = configFiles(home);
  const variables = Object.entries(env).map(([name, value]) =>
    name === "SEARXNG_URL" ? `${name}=${value}` : `${name} (hidden)`,
  );
  const indented = yaml
    .trimEnd()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
  return [
    `Will write ${shown(files.config)}:`,
    indented,
    variables.length > 0 ? `and add to ${shown(files.dotenv)}: ${variables.join(", ")}` : `and no .env variables.`,
  ].join("\n");
}

/** Runs `crow init` with its arguments (after `init`). Resolves to the exit code. */
export async function runInit(args: string[], io: InitIo = {}): Promise<number> {
  const output = io.output ?? process.stdout;
  const errors = io.errors ?? process.stderr;
  const env = io.env ?? process.env;
  let values: ReturnType<typeof parse>["values"];
  function parse() {
    return parseArgs({
      args,
      options: {
        provider: { type: "string", multiple: true },
        "api-key": { type: "string", multiple: true },
        model: { type: "string", multiple: true },
        "all-models": { type: "boolean" },
        searxng: { type: "string" },
        db: { type: "string" },
        home: { type: "string" },
        force: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    });
  }
  try {
    values = parse().values;
  } catch (error) {
    errors.write(`crow init: ${errorText(error)}\nRun 'crow init --help' for usage.\n`);
    return 2;
  }
  if (values.help) {
    output.write(`${INIT_HELP}\n`);
    return 0;
  }
  const home = values.home ? crowHome({ ...env, CROW_HOME: values.home }) : crowHome(env);
  const shown = (file: string) => displayPath(file, homeDir(env));
  try {
    let plan: InitPlan;
    let force = values.force === true;
    if (values.provider && values.provider.length > 0) {
      plan = await planFromFlags(values, env, (text) => errors.write(`${text}\n`));
    } else {
      if (values.model || values["api-key"] || values["all-models"]) {
        throw new UsageError("--model, --api-key and --all-models need --provider");
      }
      const prompter = createPrompter(io.input, output);
      try {
        prompter.say(`Crow setup: writes config.yaml and .env in ${shown(home)}. Ctrl-C quits without writing.`);
        const existing = configFiles(home).config;
        if (existsSync(existing) && !force) {
          force = await prompter.confirm(`${shown(existing)} exists. Replace it?`, false);
          if (!force) {
            prompter.say("Nothing written.");
            return 1;
          }
        }
        plan = await runWizard(prompter);
        const problems = checkPlan(plan);
        if (problems.length > 0) throw new UsageError(problems.join("; "));
        if (values.searxng && !plan.searxngUrl) plan.searxngUrl = values.searxng;
        // What will be written, before asking: config.yaml as it will read, and the .env names (never the values).
        prompter.say(preview(plan, home, shown));
        if (!(await prompter.confirm("Write the configuration?", true))) {
          prompter.say("Nothing written.");
          return 1;
        }
      } finally {
        prompter.close();
      }
    }
    const problems = checkPlan(plan);
    if (problems.length > 0) throw new UsageError(problems.join("; "));
    const files = await writePlan(plan, home, force);
    output.write(`${summary(plan, files, shown)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof PromptAborted) {
      errors.write(`crow init: ${error.interrupted ? "interrupted" : "input ended"}; nothing written.\n`);
      return error.interrupted ? 130 : 1;
    }
    if (error instanceof ConfigExists) {
      errors.write(`crow init: ${shown(error.file)} already exists; rerun with --force to replace it\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      errors.write(`crow init: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
