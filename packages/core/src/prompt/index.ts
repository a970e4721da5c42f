/** The system prompt: template (built-in or the user's), directory tree, AGENTS.md, versions in the store. */
export { type IgnoreRule, isIgnored, parseGitignore } from "./gitignore.js";
export * from "./system-prompt.js";
export * from "./template.js";
export { DEFAULT_TREE_IGNORE, type DirectoryTree, directoryTree, type TreeOptions } from "./tree.js";
export * from "./versions.js";
