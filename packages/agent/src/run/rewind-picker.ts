/**
 * `crow run -s ID --rewind`: the picker. It lists the session's user messages with the files the agent changed after
 * each (`_crow/rewind` without a seq), reads which one to go back to and what to restore, shows what would happen (a
 * dry run), asks before overwriting files someone else changed since, then rewinds. Lines are read at the keyboard,
 * or from stdin when it is not a terminal (scripts, tests).
 */
import type { RewindPoint, RewindResult, RewindScope } from "@crow/core";
import type { AgentProcess } from "./agent-process.js";
import type { Keyboard } from "./keyboard.js";
import type { RunOutput } from "./output.js";

const METHOD = "_crow/rewind";
const SCOPES: Record<string, RewindScope> = { "": "both", b: "both", f: "files", c: "conversation" };

/** Reads a line; undefined at end of input or Ctrl-C (nothing is rewound then). */
async function ask(keyboard: Keyboard, prompt: string): Promise<string | undefined> {
  const line = await keyboard.readLine(prompt);
  return line.kind === "line" ? line.text.trim() : undefined;
}

function listing(points: readonly RewindPoint[]): string {
  return points
    .map((p) => {
      const files = p.files.length === 0 ? "" : `\n     changed after: ${p.files.map((f) => f.path).join(", ")}`;
      return `  ${p.number}. ${p.text}${files}`;
    })
    .join("\n");
}

/** Runs the picker; resolves true when something was rewound. */
export async function pickRewind(
  agent: AgentProcess,
  sessionId: string,
  keyboard: Keyboard,
  output: RunOutput,
): Promise<boolean> {
  const call = <T>(params: Record<string, unknown>) =>
    agent.guard(agent.agent.request(METHOD, { sessionId, ...params }) as Promise<T>);
  const { points } = await call<{ points: RewindPoint[] }>({});
  if (points.length === 0) {
    output.notice("Nothing to rewind: the session has no messages yet.");
    return false;
  }
  output.notice(`Messages you can rewind to (to just before one):\n${listing(points)}`);
  let point: RewindPoint | undefined;
  while (!point) {
    const answer = await ask(keyboard, `Rewind to before message (1-${points.length}, empty to keep all): `);
    if (answer === undefined || answer === "") {
      output.notice("Nothing rewound.");
      return false;
    }
    point = points.find((p) => String(p.number) === answer);
    if (!point) output.notice(`No message ${answer}: type a number from the list.`);
  }
  let scope: RewindScope | undefined;
  while (!scope) {
    const answer = await ask(keyboard, "Restore [b]oth, [f]iles only or [c]onversation only? (b) ");
    if (answer === undefined) return false;
    scope = SCOPES[answer.toLowerCase().slice(0, 1)];
    if (!scope) output.notice("Type b, f or c.");
  }
  const plan = await call<RewindResult>({ seq: point.seq, scope, dryRun: true });
  let overwrite = false;
  if (plan.conflicts.length > 0) {
    output.notice(`Changed since by someone other than the agent: ${plan.conflicts.join(", ")}`);
    const answer = await ask(keyboard, "Overwrite them with the earlier version too? [y/N] ");
    overwrite = answer?.toLowerCase().startsWith("y") === true;
  }
  const result = await call<RewindResult>({ seq: point.seq, scope, overwrite });
  output.notice(result.message);
  return true;
}
