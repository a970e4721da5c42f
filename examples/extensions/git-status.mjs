/**
 * A context injector: every request gets the workspace's `git status --short` appended to the latest user message,
 * so the model knows what is modified, staged or untracked without spending a tool call. A `before_request` chained
 * transform: it returns a new draft and changes this request only — the stored history keeps what the user wrote,
 * and the status is fresh on every step (after the model's own edits too). Nothing is added outside a git repository.
 *
 * config.yaml:
 *
 *   extensions:
 *     - module: /path/to/crow/examples/extensions/git-status.mjs
 *       options:
 *         maxLines: 40   # longer listings are cut (default 50)
 */
import { execFile } from "node:child_process";

/** `git status --short --branch` in `cwd`, or undefined when it is not a repository (or git is missing). */
function gitStatus(cwd, signal) {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["status", "--short", "--branch"],
      { cwd, signal, timeout: 5_000, maxBuffer: 1 << 20 },
      (error, stdout) => resolve(error ? undefined : stdout.trimEnd()),
    );
  });
}

export default (api) => {
  const maxLines = Number(api.options.maxLines ?? 50);

  api.on("before_request", async (draft, { session, signal }) => {
    const status = await gitStatus(session.cwd, signal);
    if (status === undefined) return undefined;
    const lines = status.split("\n");
    const shown = lines.length > maxLines ? [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more`] : lines;
    const context = `<git-status workspace="${session.cwd}">\n${shown.join("\n")}\n</git-status>`;
    const at = draft.messages.findLastIndex((m) => m.role === "user");
    if (at < 0) return undefined;
    const messages = draft.messages.map((m, i) => {
      if (i !== at) return m;
      const content =
        typeof m.content === "string" ? `${m.content}\n\n${context}` : [...m.content, { type: "text", text: context }];
      return { ...m, content };
    });
    return { ...draft, messages };
  });
};
