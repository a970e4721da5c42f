/**
 * `crow doctor`'s language-server lines: for each language config.yaml leaves on, the server crow-mcp would start in
 * this directory after a write or edit (found as crow-mcp finds it: the project's node_modules/.bin, then PATH), or
 * that there is none. A missing server is not a fault: those files are just not checked.
 */
import { describeSearch, findServer, languagesFor } from "@crow/mcp/lsp";
import type { AgentConfig } from "../../config/index.js";
import type { Finding } from "./checks.js";

/** One finding per language (one line when language_servers is off). */
export function checkLanguageServers(config: AgentConfig | undefined, cwd: string): Finding[] {
  const settings = config?.languageServers;
  if (settings?.off || config?.lspOffByEnv) {
    const where = settings?.off ? "in config.yaml" : "by CROW_LSP=off";
    return [{ verdict: "info", text: `language servers: off ${where} (edits are not checked for errors)` }];
  }
  return languagesFor(settings).map((language): Finding => {
    const found = findServer(language, cwd);
    const files = language.files.slice(0, 4).join(" ") + (language.files.length > 4 ? " …" : "");
    return found
      ? { verdict: "ok", text: `language server ${language.name}: ${found} checks ${files} after each change` }
      : {
          verdict: "info",
          text: `language server ${language.name}: none found (${describeSearch(language)})`,
          fix: `install one to have changes to ${files} checked, or set it in config.yaml's language_servers`,
        };
  });
}
