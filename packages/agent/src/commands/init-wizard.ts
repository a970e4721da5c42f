/** The interactive side of `crow init`: questions that build an `InitPlan`. */

import { listModels } from "../config/list-models.js";
import { defaultModelName, type InitPlan, NAME, type PlannedModel, type PlannedProvider } from "./init-plan.js";
import type { Prompter } from "./prompter.js";

/** How many listed models are shown by number (OpenRouter lists hundreds; any id can still be typed). */
const SHOWN = 40;

async function askName(p: Prompter, question: string, fallback: string, taken: Set<string>): Promise<string> {
  for (;;) {
    const name = await p.ask(question, { default: fallback });
    if (!NAME.test(name)) p.say('  Use letters, digits, ".", "_" or "-".');
    else if (taken.has(name)) p.say(`  "${name}" is already used.`);
    else return name;
  }
}

async function askUrl(p: Prompter, question: string, fallback: string): Promise<string> {
  for (;;) {
    const url = await p.ask(question, { default: fallback });
    if (/^https?:\/\//i.test(url) && URL.canParse(url)) return url.replace(/\/+$/, "");
    p.say("  Expected an http(s) URL, e.g. http://127.0.0.1:11434/v1");
  }
}

/** Parses a pick: `all`, numbers and ranges (`1,3-5`) into listed ids, anything else as a typed id. */
export function parsePick(answer: string, listed: readonly string[]): string[] | string {
  if (answer.toLowerCase() === "all") return [...listed];
  const picked: string[] = [];
  for (const part of answer
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (range && listed.length > 0) {
      const from = Number(range[1]);
      const to = Number(range[2] ?? range[1]);
      if (from < 1 || to > listed.length || from > to) return `"${part}" is not between 1 and ${listed.length}`;
      for (let i = from; i <= to; i++) picked.push(listed[i - 1] as string);
    } else picked.push(part);
  }
  return picked.length > 0 ? [...new Set(picked)] : "choose at least one model";
}

async function pickModels(p: Prompter, provider: PlannedProvider, taken: Set<string>): Promise<PlannedModel[]> {
  p.say(`Asking ${provider.baseURL}/models which models ${provider.name} offers…`);
  const list = await listModels(provider.baseURL, provider.apiKey);
  let listed: string[] = [];
  if (list.ok && list.ids.length > 0) {
    listed = list.ids;
    listed.slice(0, SHOWN).forEach((id, i) => {
      p.say(`  ${String(i + 1).padStart(3)}. ${id}`);
    });
    if (listed.length > SHOWN) p.say(`  … and ${listed.length - SHOWN} more (type their ids).`);
  } else {
    p.say(`  Could not list the models (${list.ok ? "the list is empty" : list.error}); type the ids instead.`);
  }
  const question = listed.length > 0 ? "Models to use (numbers like 1,3-4, all, or ids)" : "Model ids, comma-separated";
  let ids: string[];
  for (;;) {
    const pick = parsePick(await p.ask(question, listed.length > 0 ? { default: "1" } : {}), listed);
    if (typeof pick !== "string") {
      ids = pick;
      break;
    }
    p.say(`  ${pick}`);
  }
  const models: PlannedModel[] = [];
  for (const id of ids) {
    let fallback = defaultModelName(id);
    if (taken.has(fallback)) fallback = `${provider.name}-${fallback}`;
    const name =
      ids.length > 1 || fallback !== id
        ? await askName(p, `Name for ${id} in the model picker`, fallback, taken)
        : fallback;
    taken.add(name);
    models.push({ name, provider: provider.name, id });
  }
  return models;
}

/** Asks for everything `crow init` writes. Throws `PromptAborted` when the user quits. */
export async function runWizard(p: Prompter): Promise<InitPlan> {
  const plan: InitPlan = { providers: [], models: [] };
  const providerNames = new Set<string>();
  const modelNames = new Set<string>();
  p.say("LLM providers (any OpenAI-compatible endpoint: OpenAI, OpenRouter, Ollama, llama.cpp, vLLM…).");
  do {
    const first = plan.providers.length === 0;
    const name = await askName(p, "Provider name", first ? "openai" : "", providerNames);
    providerNames.add(name);
    const baseURL = await askUrl(p, "Base URL", name === "openai" ? "https://api.openai.com/v1" : "");
    const apiKey = await p.ask("API key (hidden; empty if none)", { secret: true });
    const provider: PlannedProvider = { name, baseURL, ...(apiKey ? { apiKey } : {}) };
    plan.providers.push(provider);
    plan.models.push(...(await pickModels(p, provider, modelNames)));
  } while (await p.confirm("Add another provider?", false));

  const searxng = await p.ask(
    "SearXNG URL for web search (empty: none saved; web_search then tries http://localhost:2946)",
  );
  if (searxng) plan.searxngUrl = searxng;
  for (;;) {
    const db = await p.ask("Session store: sqlite, or a postgresql://user:password@host:port/db URI", {
      default: "sqlite",
    });
    if (db.toLowerCase() === "sqlite") break;
    if (/^postgres(ql)?(\+\w+)?:\/\/[^/]/i.test(db) && URL.canParse(db.replace(/^[^:]+:/, "postgresql:"))) {
      plan.postgres = db;
      break;
    }
    p.say("  Expected sqlite or a postgresql:// URI.");
  }
  return plan;
}
