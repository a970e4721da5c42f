/**
 * What the agent may know of crow-mcp's language servers (`@crow/mcp/lsp`, Node built-ins only): the settings it
 * sends in `initialize`'s `_meta["crow/lsp"]` (config.yaml's `language_servers`), where a server is found (for
 * `crow doctor`), and the shape of the diagnostics a write's or edit's result carries in `_meta["crow/diagnostics"]`.
 */
export { DIAGNOSTICS_META_KEY, type Diagnostic, type DiagnosticsMeta, formatSection } from "./diagnostics.js";
export { describeSearch, findServer } from "./find.js";
export {
  type Language,
  type LanguageSettings,
  LSP_META_KEY,
  type LspSettings,
  languagesFor,
  parseLspSettings,
} from "./languages.js";
