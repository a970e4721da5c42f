/**
 * A permission gate: refuses destructive shell commands (`rm -rf` and friends) and file changes outside the
 * session's workspace, whatever the session's mode. It is a `before_tool_call` gate: the first handler that answers
 * `{ block: true, reason }` stops the call, and the model gets `reason` as the tool result (so it can change course).
 *
 * config.yaml:
 *
 *   extensions:
 *     - module: /path/to/crow/examples/extensions/permission-gate.mjs
 *       options:
 *         # Extra regular expressions for commands to refuse (case-insensitive).
 *         denyCommands: ["\\bgit\\s+push\\s+--force\\b"]
 *         # Folders besides the workspace that file tools may change.
 *         allowDirs: ["/tmp/scratch"]
 */
import path from "node:path";

/** `rm` with both a recursive and a force flag, in any spelling (`-rf`, `-fr`, `-r -f`, `--recursive --force`). */
const RM_RF = /\brm(?=[^;&|]*\s(?:-[a-z]*r|--recursive\b))(?=[^;&|]*\s(?:-[a-z]*f|--force\b))/i;
/** Other commands that destroy data wholesale. */
const BUILT_IN = [RM_RF, /\bmkfs(\.\w+)?\b/i, /\bdd\s+[^|;&]*\bof=\/dev\//i, /\bgit\s+clean\b[^;&|]*\s-[a-z]*f/i];
/** Argument names file tools use for the file they change. */
const PATH_KEYS = ["file_path", "path", "filePath", "target", "destination", "new_path"];

export default (api) => {
  const extra = (api.options.denyCommands ?? []).map((pattern) => new RegExp(pattern, "i"));
  const denied = [...BUILT_IN, ...extra];
  const allowDirs = (api.options.allowDirs ?? []).map((dir) => path.resolve(dir));

  /** Whether `file` is inside `dir` (or is it). */
  const inside = (file, dir) => {
    const rel = path.relative(dir, file);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  };

  api.on("before_tool_call", ({ call, kind }, { session }) => {
    if (kind === "execute" && typeof call.args.command === "string") {
      const hit = denied.find((pattern) => pattern.test(call.args.command));
      if (hit) {
        api.log.warn(`blocked a command in session ${session.id}: ${call.args.command}`);
        return {
          block: true,
          reason:
            `Blocked by the permission gate: "${call.args.command}" matches ${hit}. Destructive commands are not ` +
            "allowed; delete specific files instead, or ask the user to do it.",
        };
      }
    }
    if (kind === "edit" || kind === "delete" || kind === "move") {
      for (const key of PATH_KEYS) {
        const value = call.args[key];
        if (typeof value !== "string" || value === "") continue;
        const file = path.resolve(session.cwd, value);
        if (inside(file, session.cwd) || allowDirs.some((dir) => inside(file, dir))) continue;
        return {
          block: true,
          reason: `Blocked by the permission gate: ${file} is outside the workspace ${session.cwd}. Only change files in the workspace.`,
        };
      }
    }
    return undefined;
  });
};
