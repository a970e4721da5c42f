import { parseSandboxPolicy, SANDBOX_META_KEY, type SandboxPolicy, withHidden } from "./policy.js";

/**
 * What a call's policy updates: the connection's `ToolContext` (context.ts), named here by what is used because
 * context.ts sits above sandbox/ in the folder order (it holds the sandbox's types).
 */
export interface PolicyHolder {
  readonly options: { readonly hideFromSandbox?: string[] };
  readonly sandbox: { current: SandboxPolicy };
}

/**
 * Takes the sandbox policy a tool call carries in `_meta["crow/sandbox"]` (if any) as the session's current one.
 * Returns an error message for a malformed policy (the call must then not run: it would run under rules nobody
 * chose).
 */
export function takeCallPolicy(context: PolicyHolder, meta: Record<string, unknown> | undefined): string | undefined {
  const raw = meta?.[SANDBOX_META_KEY];
  if (raw === undefined) return undefined;
  const parsed = parseSandboxPolicy(raw);
  if ("error" in parsed) return `Error: invalid _meta["${SANDBOX_META_KEY}"]: ${parsed.error}`;
  context.sandbox.current = withHidden(parsed.policy, context.options.hideFromSandbox);
  return undefined;
}
