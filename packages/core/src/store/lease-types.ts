/**
 * Session leases: which live process owns a session (migration 0009). A session open in one process cannot be loaded
 * into another behind its back: the opener claims the lease, keeps renewing it while the session is open, and
 * releases it on close; a lease whose owner stopped renewing (killed) expires and may be claimed by anyone.
 */

/** Who holds (or claims) a session's lease. */
export interface LeaseHolder {
  /** Unique per process and runtime (host, pid and a random part). */
  owner: string;
  /** The host name of the owner's machine. */
  host: string;
  /** The owner's process id on that host. */
  pid: number;
  /** What the owner is (`crow acp`, `crow run`, ...), for the refusal's message. */
  agent: string;
}

/** A session's lease as stored. */
export interface SessionLease extends LeaseHolder {
  sessionId: string;
  /** ISO-8601: the owner's last renewal plus the lease's time to live. */
  expiresAt: string;
  /** ISO-8601: when the owner claimed it. */
  acquiredAt: string;
}

/** The lease operations of a store (`Store.leases`). */
export interface LeaseStore {
  /**
   * Claims `sessionId` for `holder` until `expiresAt`, unless another owner holds an unexpired lease (except
   * `replace`: an owner the caller knows is gone, or the one it takes over from). Atomic. Resolves with the lease as
   * stored after the claim: the caller's own when it got it, the other owner's when not.
   */
  claim(sessionId: string, holder: LeaseHolder, expiresAt: string, replace?: string): Promise<SessionLease>;
  /** Extends `owner`'s leases of `sessionIds` to `expiresAt`; resolves with the ids it no longer holds (taken over). */
  renew(owner: string, sessionIds: readonly string[], expiresAt: string): Promise<string[]>;
  /** Gives up `owner`'s lease of `sessionId` (nothing when another owner holds it now). */
  release(sessionId: string, owner: string): Promise<void>;
}
