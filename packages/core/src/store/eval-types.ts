/** The records of `crow eval` (see eval.ts): a run, a finished trial, and the store's methods for them. */

/** One eval run: what it measures and how (its settings, as given to `crow eval run`). */
export interface EvalRunRecord {
  id: string;
  name: string | null;
  /** The suite directory (absolute). */
  suite: string;
  config: Record<string, unknown>;
  createdAt: string;
}

/** The outcome of one trial: one task, one variant (model × prompt version), one repetition. */
export interface EvalTrialRecord {
  runId: string;
  task: string;
  /** The variant's label (`model` or `model+prompt@version`, `oracle`). */
  variant: string;
  /** 0-based repetition index. */
  trial: number;
  /** The Crow session the agent ran in (null for an oracle trial or one that failed before its session). */
  sessionId: string | null;
  reward: number;
  passed: boolean;
  stopReason: string | null;
  wallMs: number;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Null when the model has no price in the configuration. */
  cost: number | null;
  toolCalls: number;
  toolErrors: number;
  /** What went wrong (agent timeout, verifier crash, provider error…), or null. */
  error: string | null;
  finishedAt: string;
  /** What explains the outcome (null on trials recorded before it was kept). */
  details: EvalTrialDetails | null;
}

/** A trial's diagnosis: what its scripts printed, how long each phase took, what its reward was made of. */
export interface EvalTrialDetails {
  /** reward.json's named rewards, when it wrote several (or one not called `reward`). */
  rewards?: Record<string, number>;
  /** Milliseconds per phase: setup (workspace, Dockerfile steps), agent (or the oracle's solve.sh), verifier. */
  phaseMs?: { setup?: number; agent?: number; verifier?: number };
  /** The end of tests/test.sh's output (Harbor's test-stdout.txt). */
  verifierOutput?: string;
  /** The output of solution/solve.sh (oracle); its start and end when long. */
  solverOutput?: string;
  /** What the setup's steps printed (the Dockerfile's RUN steps, a failing COPY): whole up to 256 000 characters. */
  setupOutput?: string;
  /** The Dockerfile's instructions applied in the trial's sandbox instead of an image (none: no Dockerfile). */
  emulated?: string[];
  /** The worker that ran it and the attempt (queued runs). */
  attempt?: { worker: string; number: number };
  /** A multi-step task's steps that ran, in order (the trial's reward rolls theirs up). */
  steps?: EvalStepDetails[];
  /** Files the trial left that the task asked to keep (`artifacts`, `/logs/artifacts/`). */
  artifacts?: EvalArtifact[];
  /** What the collect hooks (`[[verifier.collect]]`) printed, after the agent's part. */
  hookOutput?: string;
}

/** One step of a multi-step trial. */
export interface EvalStepDetails {
  name: string;
  reward: number;
  rewards?: Record<string, number>;
  /** Why the agent's (or the oracle's) part or the verifier failed, when one did. */
  error: string | null;
  /** The session of this step's agent (each step is a fresh session); null for the oracle. */
  sessionId: string | null;
  verifierOutput?: string;
  solverOutput?: string;
  /** Set on the step whose reward fell below its `min_reward` (or whose setup.sh failed): the trial stopped after it. */
  stopped?: string;
  /** What the step's `workdir/setup.sh` and its collect hooks printed. */
  hookOutput?: string;
}

/** One collected artifact: its text (bounded), or why it is not there. */
export interface EvalArtifact {
  /** The path in the trial. */
  source: string;
  /** Where the task files it (relative). */
  destination: string;
  content?: string;
  note?: string;
}

/** Runs and trials. Methods reject with {@link StoreError}. */
export interface EvalStore {
  createRun(run: Omit<EvalRunRecord, "createdAt">): Promise<EvalRunRecord>;
  getRun(id: string): Promise<EvalRunRecord | undefined>;
  /** Newest first. */
  listRuns(limit?: number): Promise<EvalRunRecord[]>;
  /** Records a finished trial; false (and nothing written) when this trial was recorded before. */
  recordTrial(trial: Omit<EvalTrialRecord, "finishedAt">): Promise<boolean>;
  /** The run's recorded trials by task, variant, trial. */
  listTrials(runId: string): Promise<EvalTrialRecord[]>;
}
