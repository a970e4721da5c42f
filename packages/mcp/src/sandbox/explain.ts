/**
 * Turns the usual symptoms of a sandboxed command hitting the sandbox (EROFS on a write, no route or no DNS with the
 * network off) into a note the model can act on: what was blocked, why, and what it may do instead.
 */
import { describePolicy, type SandboxPolicy } from "./policy.js";

const READ_ONLY_FS = /Read-only file system/;
/** What moving or removing a mount point (`.git`, a protected or hidden path) says. */
const MOUNT_POINT = /Device or resource busy/;
const NETWORK_DOWN =
  /Network is unreachable|Could not resolve host|Temporary failure in name resolution|Name or service not known|EAI_AGAIN|ENETUNREACH|Connection refused|No address associated with hostname/;

/** The paths an error line names: quoted ('/etc/x', "/etc/x", ‘/etc/x’) or before a colon (bash: /etc/x: …). */
function pathsIn(line: string): string[] {
  const found = new Set<string>();
  for (const match of line.matchAll(/['"‘`](\/[^'"’`\n]*)['"’`]|(?:^|\s)(\/[^\s:'"]+):/g)) {
    const p = match[1] ?? match[2];
    if (p) found.add(p);
  }
  return [...found];
}

/**
 * A note to append to a command's result when its output shows the sandbox blocked it (undefined otherwise). In `ask`
 * mode the agent then offers the user to run the command once outside the sandbox; the model is not asked to.
 */
export function explainBlocked(output: string, policy: SandboxPolicy): string | undefined {
  if (policy.mode === "off") return undefined;
  const notes: string[] = [];
  const blockedLines = output.split("\n").filter((line) => READ_ONLY_FS.test(line));
  if (blockedLines.length > 0) {
    const paths = [...new Set(blockedLines.flatMap(pathsIn))].slice(0, 5);
    const what = paths.length > 0 ? `writing ${paths.join(", ")} was blocked` : "a write was blocked";
    notes.push(`${what} ("Read-only file system" comes from the sandbox, not from the file's permissions)`);
  }
  if (MOUNT_POINT.test(output)) {
    notes.push(
      '"Device or resource busy" comes from the sandbox too: .git and the other protected paths are mounted read-only in place, so they cannot be moved, replaced or removed',
    );
  }
  if (!policy.network && NETWORK_DOWN.test(output)) {
    notes.push("the network is off for commands in this session, so hosts (even the host's own ports) are unreachable");
  }
  if (notes.length === 0) return undefined;
  const instead =
    "Work within these limits, or ask the user to change the mode or the sandbox settings; do not try to get around it.";
  return `[Sandbox: ${notes.join("; ")}. ${describePolicy(policy)} ${instead}]`;
}
