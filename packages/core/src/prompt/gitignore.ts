/**
 * A `.gitignore` matcher for the directory tree of the system prompt. Pure. Supports what real projects use: comments,
 * blank lines, `!` negation (last matching rule wins), trailing `/` (directories only), anchored patterns (a `/` at the
 * start or in the middle: relative to the `.gitignore`'s directory), unanchored names matched at any depth, `*`, `?`,
 * `[...]` and `**` (leading `**\/`, trailing `/**`, and `/**\/` in the middle). Not supported: escaped trailing spaces
 * and git's rule that a file inside an excluded directory cannot be re-included (the tree never walks an excluded
 * directory, so that case does not arise here).
 */

/** One parsed rule. */
export interface IgnoreRule {
  /** Directory of the `.gitignore` relative to the tree root, `""` for the root (POSIX separators). */
  base: string;
  negate: boolean;
  dirOnly: boolean;
  /** Matches the path relative to `base` (anchored rules) or the entry's name (unanchored ones). */
  regex: RegExp;
  anchored: boolean;
}

/** Translates one glob (without leading `/` or trailing `/`) to a regex source matching a whole path. */
function globToRegex(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const before = i === 0 || glob[i - 1] === "/";
        const after = i + 2 === glob.length || glob[i + 2] === "/";
        if (before && after) {
          if (i + 2 === glob.length) {
            out += ".*"; // trailing `**`: everything inside
          } else {
            out += "(?:.*/)?"; // `**/`: zero or more directories
            i++; // the slash is consumed with the `**`
          }
          i++;
          continue;
        }
      }
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      if (body.startsWith("!")) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else if (c === "\\" && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1] as string);
      i++;
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Parses the text of a `.gitignore` found in `base` (relative to the tree root, `""` for the root). */
export function parseGitignore(text: string, base = ""): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/")) {
      dirOnly = true;
      line = line.replace(/\/+$/, "");
    }
    if (line === "") continue;
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    if (line.startsWith("**/")) {
      // `**/name` matches `name` at any depth, which is what an unanchored rule does.
      const rest = line.slice(3);
      if (!rest.includes("/")) {
        rules.push({ base, negate, dirOnly, anchored: false, regex: new RegExp(`^${globToRegex(rest)}$`) });
        continue;
      }
    }
    rules.push({ base, negate, dirOnly, anchored, regex: new RegExp(`^${globToRegex(line)}$`) });
  }
  return rules;
}

/**
 * Whether `relPath` (relative to the tree root, POSIX separators) is ignored by `rules` (in file order, outer
 * `.gitignore`s first). The last rule that matches decides, as in git.
 */
export function isIgnored(rules: readonly IgnoreRule[], relPath: string, isDir: boolean): boolean {
  let ignored = false;
  const name = relPath.slice(relPath.lastIndexOf("/") + 1);
  for (const rule of rules) {
    if (rule.dirOnly && !isDir) continue;
    let subject: string;
    if (rule.base === "") subject = relPath;
    else if (relPath.startsWith(`${rule.base}/`)) subject = relPath.slice(rule.base.length + 1);
    else continue;
    if (rule.regex.test(rule.anchored ? subject : name)) ignored = !rule.negate;
  }
  return ignored;
}
