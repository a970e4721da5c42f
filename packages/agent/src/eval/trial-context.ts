/** What every trial of a run shares, and the cancel that ends one unrecorded. */
import type { Crow } from "@crow/core";
import type { AgentConfig } from "../config/index.js";

/** The run was cancelled while this trial ran. */
export class TrialInterrupted extends Error {
  override name = "TrialInterrupted";
}

export interface TrialContext {
  runId: string;
  /** The runtime the agent trials share (absent for oracle-only runs). */
  crow?: Crow;
  config: AgentConfig;
  /** Keep the workspace after the trial (for debugging a task). */
  keepWorkspace?: boolean;
  /** Told what the trial has made as it makes it (a queue worker records them, to be cleaned up should it die). */
  onStarted?: (what: { workspace?: string; sessionId?: string }) => void | Promise<void>;
}
