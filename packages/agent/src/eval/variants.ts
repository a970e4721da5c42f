/**
 * Variants: every model × every prompt version of `--model a,b --prompt v3,./lean.njk`. A prompt is a built-in
 * version by name (`lean`, the default; `full`, the fuller texts of earlier versions), a stored version
 * (`system_prompt@3`, `v3` or `3`) or a template file, stored as a version of `system_prompt` when used (the same
 * content is the same version). Without `--prompt`, sessions render the prompt they would anyway (the user's
 * template or the built-in one).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { builtinPromptVersion, PromptTemplateError, renderTemplate, type Store, SYSTEM_PROMPT_NAME } from "@crow/core";

export interface Variant {
  /** How reports name it: `model` (the configured one without --model), `model+system_prompt@3`, or `oracle`. */
  label: string;
  model?: string;
  prompt?: { id: string; content: string };
  /** Runs solution/solve.sh instead of the agent. */
  oracle?: boolean;
}

/** A `--model` or `--prompt` value that names nothing usable. */
export class VariantError extends Error {
  override name = "VariantError";
}

/** Sample arguments: a template that cannot render with them is refused before any trial runs. */
const SAMPLE_ARGS = {
  workspace: "/workspace",
  display_tree: "",
  agents_content: "",
  has_agents_md: false,
  date: "2026-01-01",
  platform: process.platform,
  skills_hint: "",
};

function checkTemplate(spec: string, content: string): void {
  try {
    renderTemplate(content, SAMPLE_ARGS, spec);
  } catch (error) {
    if (error instanceof PromptTemplateError) throw new VariantError(`--prompt ${spec}: ${error.message}`);
    throw error;
  }
}

/** The stored prompt version `spec` names, or the template file it names, stored as a version now. */
async function resolvePrompt(
  store: Store,
  spec: string,
  cwd: string,
): Promise<{ id: string; content: string; name?: string }> {
  const builtin = builtinPromptVersion(spec);
  if (builtin !== undefined) {
    const record = await store.getOrCreatePrompt(SYSTEM_PROMPT_NAME, builtin);
    return { id: record.id, content: record.content, name: spec };
  }
  const file = path.resolve(cwd, spec);
  if ((spec.includes("/") || spec.includes(".")) && existsSync(file) && !spec.includes("@")) {
    const content = readFileSync(file, "utf8");
    checkTemplate(spec, content);
    const record = await store.getOrCreatePrompt(SYSTEM_PROMPT_NAME, content);
    // Reports name it as it was given (its file), not by the version it was stored as.
    return { id: record.id, content: record.content, name: path.basename(spec) };
  }
  const short = /^v?(\d+)$/.exec(spec);
  const id = short ? `${SYSTEM_PROMPT_NAME}@${short[1]}` : spec;
  const record = await store.getPrompt(id);
  if (!record) {
    const versions = (await store.listPromptVersions(SYSTEM_PROMPT_NAME)).map((p) => p.id);
    const known = versions.length > 0 ? versions.join(", ") : "none yet";
    throw new VariantError(
      `--prompt ${spec}: no such prompt version or template file (stored versions: ${known}; a file path must exist)`,
    );
  }
  checkTemplate(spec, record.content);
  return { id: record.id, content: record.content };
}

/** Splits a comma-separated option value, dropping empties. */
export function listOption(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** The variants of a run: models × prompts (one each when not given). */
export async function resolveVariants(
  store: Store,
  models: readonly string[],
  prompts: readonly string[],
  cwd: string,
  defaultModel: string | undefined,
): Promise<Variant[]> {
  const resolved = [];
  for (const spec of prompts) resolved.push(await resolvePrompt(store, spec, cwd));
  // A file's name labels its variant unless two prompts would then share a label (then the stored version does).
  const names = resolved.map((p) => p.name ?? p.id);
  const labelOf = (p: { id: string; name?: string }) =>
    p.name && names.filter((n) => n === p.name).length === 1 ? p.name : p.id;
  const variants: Variant[] = [];
  for (const model of models.length > 0 ? models : [undefined]) {
    for (const prompt of resolved.length > 0 ? resolved : [undefined]) {
      const label = [model ?? defaultModel ?? "default", ...(prompt ? [labelOf(prompt)] : [])].join("+");
      const stored = prompt ? { id: prompt.id, content: prompt.content } : undefined;
      variants.push({ label, ...(model ? { model } : {}), ...(stored ? { prompt: stored } : {}) });
    }
  }
  return variants;
}
