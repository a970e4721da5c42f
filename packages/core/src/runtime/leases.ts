/**
 * One live owner per session: the runtime claims a session's lease in the store when it opens it (new or loaded),
 * renews its leases while they are open, and releases each when its session closes (store/lease-types.ts). Another
 * process loading the session meanwhile is refused with where it is open and how to take it over. An owner that died
 * without releasing is recognised at once on its own host (its pid is gone) and anywhere once its lease expired
 * (it renews every third of the time to live).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import path from "node:path";
import type { LeaseHolder, LeaseStore, SessionLease } from "../store/lease-types.js";

/** How long a lease lasts without renewal: how soon a session whose owner died on another host can be taken. */
export const LEASE_TTL_MS = 15_000;

/** The session is open in another live process (thrown by `loadSession`). */
export class SessionLeaseError extends Error {
  override readonly name = "SessionLeaseError";
  constructor(
    readonly sessionId: string,
    readonly holder: SessionLease,
  ) {
    super(
      `session ${sessionId} is open in another Crow process: ${holder.agent} (pid ${holder.pid} on ${holder.host}, ` +
        `since ${holder.acquiredAt}). Close it there (or quit that program) and load it again; to take it over ` +
        `anyway, load it with takeOver (ACP: session/load with "_meta": {"crow/takeOver": true}); the other process ` +
        "then stops using it.",
    );
  }
}

/** Whether `pid` runs on this machine (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What this process is, for the refusal another one shows (`crow acp`, `crow run`). */
function agentName(): string {
  const script = process.argv[1] ? path.basename(process.argv[1]).replace(/\.[cm]?js$/, "") : "node";
  const command = process.argv[2] && !process.argv[2].startsWith("-") ? ` ${process.argv[2]}` : "";
  return `${script}${command}`;
}

export class RuntimeLeases {
  readonly me: LeaseHolder = {
    owner: `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`,
    host: hostname(),
    pid: process.pid,
    agent: agentName(),
  };
  private readonly held = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private renewing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: LeaseStore,
    /** Told when a lease this process held was taken over (the session must stop using it). */
    private readonly lost: (sessionId: string) => void,
    private readonly warn: (message: string) => void,
    private readonly ttlMs = LEASE_TTL_MS,
  ) {}

  private expiry(): string {
    return new Date(Date.now() + this.ttlMs).toISOString();
  }

  /** Claims `sessionId` for this process; throws {@link SessionLeaseError} when another live process holds it. */
  async claim(sessionId: string, takeOver = false): Promise<void> {
    let lease = await this.store.claim(sessionId, this.me, this.expiry());
    if (lease.owner !== this.me.owner) {
      // Its owner died on this host (kill -9): no need to wait for the lease to expire.
      const dead = lease.host === this.me.host && lease.pid !== process.pid && !alive(lease.pid);
      if (dead || takeOver) lease = await this.store.claim(sessionId, this.me, this.expiry(), lease.owner);
      if (lease.owner !== this.me.owner) throw new SessionLeaseError(sessionId, lease);
    }
    this.held.add(sessionId);
    this.timer ??= setInterval(() => this.renew(), Math.max(1000, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  private renew(): void {
    const ids = [...this.held];
    this.renewing = this.store
      .renew(this.me.owner, ids, this.expiry())
      .then((gone) => {
        for (const id of gone) {
          if (!this.held.delete(id)) continue;
          this.lost(id);
        }
      })
      .catch((error: unknown) => this.warn(`could not renew the session leases: ${String(error)}`));
  }

  /** Gives up the lease of a session this process closes. */
  async release(sessionId: string): Promise<void> {
    if (!this.held.delete(sessionId)) return;
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    await this.store
      .release(sessionId, this.me.owner)
      .catch((error: unknown) => this.warn(`could not release the lease of session ${sessionId}: ${String(error)}`));
  }

  /** Stops renewing (the runtime closes; its sessions released their leases already). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
  }
}
