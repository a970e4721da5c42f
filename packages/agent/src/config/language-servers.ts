/**
 * config.yaml's `language_servers` as the settings the built-in crow-mcp takes (`_meta["crow/lsp"]` of its
 * `initialize`): which server checks which files after a write or edit, how long to wait, or none at all.
 */
import type { LanguageSettings, LspSettings } from "@crow/mcp/lsp";
import type { ConfigFile } from "./schema.js";

/** The settings `file` gives (undefined: the defaults, every built-in language on). */
export function languageServerSettings(file: ConfigFile): LspSettings | undefined {
  const raw = file.language_servers;
  if (raw === undefined) return undefined;
  if (raw === "off") return { off: true };
  const languages: Record<string, LanguageSettings> = {};
  for (const [name, entry] of Object.entries(raw.servers ?? {})) {
    if (entry === "off") {
      languages[name] = { off: true };
      continue;
    }
    languages[name] = {
      ...(entry.command !== undefined ? { command: entry.command } : {}),
      ...(entry.args !== undefined ? { args: entry.args } : {}),
      ...(entry.files !== undefined ? { files: entry.files } : {}),
      ...(entry.off ? { off: true } : {}),
    };
  }
  return {
    ...(raw.off ? { off: true } : {}),
    ...(Object.keys(languages).length > 0 ? { languages } : {}),
    ...(raw.wait_seconds !== undefined ? { waitMs: raw.wait_seconds * 1000 } : {}),
    ...(raw.start_wait_seconds !== undefined ? { startWaitMs: raw.start_wait_seconds * 1000 } : {}),
  };
}

/** The `languageServers` field of the configuration, present only when config.yaml sets `language_servers`. */
export function languageServersField(file: ConfigFile): { languageServers?: LspSettings } {
  const settings = languageServerSettings(file);
  return settings ? { languageServers: settings } : {};
}
