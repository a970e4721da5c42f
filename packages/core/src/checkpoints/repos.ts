/**
 * The shadow repositories of one process, one per workspace, each used by one git operation at a time (two sessions
 * in the same workspace would otherwise race on the shadow index's lock).
 */
import { hostname } from "node:os";
import { type ShadowGuard, ShadowRepo, shadowGitDir } from "./shadow-repo.js";

export class ShadowRepos {
  private readonly repos = new Map<string, ShadowRepo>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    /** The Crow home: repositories live in `<home>/checkpoints/`. */
    readonly home: string,
    readonly maxFileBytes: number,
    /** This host's name, recorded with every checkpoint. */
    readonly host: string = hostname(),
    /** What every repository must never run or copy (the sandbox's writable directories, Crow's secret files). */
    readonly guard: ShadowGuard = {},
  ) {}

  get(workspace: string): ShadowRepo {
    let repo = this.repos.get(workspace);
    if (!repo) {
      repo = new ShadowRepo(shadowGitDir(this.home, workspace), workspace, this.maxFileBytes, undefined, this.guard);
      this.repos.set(workspace, repo);
    }
    return repo;
  }

  /**
   * Runs `work` on the workspace's repository after the operations queued before it. `roots`: the session's other
   * directories the model's commands may write (no git there is run).
   */
  run<T>(workspace: string, work: (repo: ShadowRepo) => Promise<T>, roots: readonly string[] = []): Promise<T> {
    const previous = this.queues.get(workspace) ?? Promise.resolve();
    const start = () => {
      const repo = this.get(workspace);
      repo.distrust(roots);
      return work(repo);
    };
    const next = previous.then(start, start);
    this.queues.set(
      workspace,
      next.catch(() => undefined),
    );
    return next;
  }
}
