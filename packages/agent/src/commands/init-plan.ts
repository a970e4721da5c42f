/**
 * What `crow init` writes, whichever way it was gathered (wizard or flags): providers with their keys, models,
 * SearXNG URL and store. Keys and database passwords go to `.env` (mode 0600) and are referenced from config.yaml as
 * `${NAME_API_KEY}` / `${POSTGRES_PASSWORD}`, so config.yaml can be shared or committed.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { configFiles, updateDotenv } from "../config/index.js";

export interface PlannedProvider {
  name: string;
  baseURL: string;
  apiKey?: string;
}

export interface PlannedModel {
  /** Name in the model select (config.yaml key). */
  name: string;
  provider: string;
  /** Id sent to the provider. */
  id: string;
}

export interface InitPlan {
  providers: PlannedProvider[];
  models: PlannedModel[];
  searxngUrl?: string;
  /** A `postgresql://` URI (its password moves to .env), or undefined for SQLite in the config home. */
  postgres?: string;
}

/** Provider and model names: what YAML keys and env var names can carry without quoting surprises. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** `openrouter` → `OPENROUTER_API_KEY`; `my-llm.local` → `MY_LLM_LOCAL_API_KEY`. */
export function keyVariable(provider: string): string {
  return `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

/** A default select name for a model id: its last path segment (`z-ai/glm-5` → `glm-5`). */
export function defaultModelName(id: string): string {
  return id.split("/").filter(Boolean).pop() ?? id;
}

/** Problems with a plan (empty when it can be written). */
export function checkPlan(plan: InitPlan): string[] {
  const problems: string[] = [];
  if (plan.providers.length === 0) problems.push("no provider given");
  const names = new Set<string>();
  for (const p of plan.providers) {
    if (!NAME.test(p.name)) problems.push(`provider name "${p.name}": use letters, digits, ".", "_" or "-"`);
    if (names.has(p.name)) problems.push(`provider "${p.name}" given twice`);
    names.add(p.name);
    if (!/^https?:\/\//i.test(p.baseURL) || !URL.canParse(p.baseURL)) {
      problems.push(`provider "${p.name}": base URL "${p.baseURL}" is not an http(s) URL`);
    }
  }
  if (plan.models.length === 0) problems.push("no model chosen");
  const modelNames = new Set<string>();
  for (const m of plan.models) {
    if (!names.has(m.provider)) problems.push(`model "${m.name}": unknown provider "${m.provider}"`);
    if (modelNames.has(m.name)) problems.push(`model name "${m.name}" used twice`);
    if (m.name.trim() === "") problems.push(`model "${m.id}": empty name`);
    modelNames.add(m.name);
  }
  if (plan.searxngUrl !== undefined && !URL.canParse(plan.searxngUrl)) {
    problems.push(`SearXNG URL "${plan.searxngUrl}" is not a URL`);
  }
  if (plan.postgres !== undefined && !/^postgres(ql)?(\+\w+)?:\/\/[^/]/i.test(plan.postgres)) {
    problems.push("the database must be sqlite or a postgresql://user:password@host:port/database URI");
  }
  return problems;
}

/** The `.env` variables and config.yaml text of a plan. */
export function renderPlan(plan: InitPlan, home: string): { yaml: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const providers: Record<string, Record<string, string>> = {};
  for (const p of plan.providers) {
    const entry: Record<string, string> = { base_url: p.baseURL.replace(/\/+$/, "") };
    if (p.apiKey) {
      const variable = keyVariable(p.name);
      env[variable] = p.apiKey;
      entry.api_key = `\${${variable}}`;
    }
    providers[p.name] = entry;
  }
  const models: Record<string, Record<string, string>> = {};
  for (const m of plan.models) models[m.name] = { provider: m.provider, model: m.id };
  let dbUri = `sqlite:///${path.join(home, "crow.db")}`;
  if (plan.postgres) {
    const url = new URL(plan.postgres.replace(/^[^:]+:/, "postgresql:"));
    if (url.password) {
      env.POSTGRES_PASSWORD = decodeURIComponent(url.password);
      url.password = "PASSWORD";
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a config.yaml reference, resolved when it is loaded
      dbUri = url.toString().replace(":PASSWORD@", ":${POSTGRES_PASSWORD}@");
    } else dbUri = url.toString();
  }
  if (plan.searxngUrl) env.SEARXNG_URL = plan.searxngUrl;
  const body = stringify({ providers, models, db_uri: dbUri }, { lineWidth: 0 });
  const yaml = `# Crow configuration, written by crow init. API keys and passwords are in .env next to this file.
# Per model you can add context_window (tokens) and price (per million tokens), e.g.
#   context_window: 200000
#   price: { input: 0.6, output: 2.2, currency: USD }
${body}`;
  return { yaml, env };
}

/** Thrown when config.yaml exists and overwriting was not allowed. */
export class ConfigExists extends Error {
  constructor(readonly file: string) {
    super(`${file} already exists; rerun with --force to replace it`);
  }
}

/**
 * Writes config.yaml (refusing to replace one unless `overwrite`) and merges the plan's variables into `.env`
 * (other lines kept), creating the config directory. Returns the paths written: `dotenv` only when the plan has
 * variables (no empty `.env` is left behind).
 */
export async function writePlan(
  plan: InitPlan,
  home: string,
  overwrite: boolean,
): Promise<{ config: string; dotenv?: string }> {
  const files = configFiles(home);
  if (existsSync(files.config) && !overwrite) {
    throw new ConfigExists(files.config);
  }
  const { yaml, env } = renderPlan(plan, home);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const secrets = Object.keys(env).length > 0;
  if (secrets) {
    const previous = existsSync(files.dotenv) ? await readFile(files.dotenv, "utf8") : "";
    await writeFile(files.dotenv, updateDotenv(previous, env), { mode: 0o600 });
    await chmod(files.dotenv, 0o600);
  }
  await writeFile(files.config, yaml);
  return secrets ? files : { config: files.config };
}
