/**
 * The verifier: tests/test.sh, after the agent (or the oracle), in the same workspace, with its own timeout. Its
 * reward is what it wrote to logs/verifier/reward.txt (a number) or reward.json (`{"reward": n}`); a verifier that
 * crashed or timed out without writing one scores 0 with the reason recorded.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { runScript } from "./script.js";
import type { EvalTask } from "./suite.js";
import type { TrialWorkspace } from "./workspace.js";

export interface Verdict {
  reward: number;
  /** Why there is no reward from the verifier, when there is none. */
  error: string | null;
}

/** A trial passes when its reward reaches 1 (Harbor's binary tasks write 1 or 0). */
export const PASS_REWARD = 1;

function readReward(logs: string): number | undefined {
  const text = path.join(logs, "verifier", "reward.txt");
  if (existsSync(text)) {
    const value = Number(readFileSync(text, "utf8").trim());
    return Number.isFinite(value) ? value : undefined;
  }
  const json = path.join(logs, "verifier", "reward.json");
  if (existsSync(json)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(json, "utf8"));
      if (typeof parsed === "number") return parsed;
      if (parsed && typeof parsed === "object") {
        const record = parsed as Record<string, unknown>;
        const value = typeof record.reward === "number" ? record.reward : Object.values(record).find(Number.isFinite);
        return typeof value === "number" ? value : undefined;
      }
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function tail(output: string): string {
  const trimmed = output.trim();
  return trimmed ? `: ${trimmed.slice(-500)}` : "";
}

/** Runs the verifier of `task` in `workspace`. */
export async function verify(task: EvalTask, workspace: TrialWorkspace, signal?: AbortSignal): Promise<Verdict> {
  workspace.revealTests();
  const outcome = await runScript(path.join(workspace.tests, "test.sh"), {
    cwd: workspace.app,
    env: workspace.scriptEnv(),
    timeoutMs: task.verifierTimeoutSec * 1000,
    ...(signal ? { signal } : {}),
  });
  if (outcome.timedOut) {
    return { reward: 0, error: `verifier timed out after ${task.verifierTimeoutSec}s${tail(outcome.output)}` };
  }
  const reward = readReward(workspace.logs);
  if (reward !== undefined) return { reward, error: null };
  return {
    reward: 0,
    error: `verifier wrote no reward (tests/test.sh exited with ${outcome.code ?? "a signal"})${tail(outcome.output)}`,
  };
}
