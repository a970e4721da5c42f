/**
 * Tool parameter schemas as the model gets them: what a schema converter adds that says nothing to a model goes
 * (`$schema`, which some providers reject, the safe-integer bounds zod's `.int()` writes on every integer, and
 * `additionalProperties: false`). Every
 * byte here is resent with every request of every session.
 */

/** The bounds zod writes for an integer without its own; they constrain nothing a model would send. */
const NOISE_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** `schema` without `$schema`, the safe-integer bounds and `additionalProperties: false`, at every depth. A new object; the input is not touched. */
export function compactSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return compact(schema, true) as Record<string, unknown>;
}

function compact(value: unknown, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => compact(item, false));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (top && key === "$schema") continue;
    if ((key === "maximum" || key === "minimum") && typeof inner === "number" && NOISE_BOUNDS.has(inner)) continue;
    // A model sends the parameters it was shown; the tool itself still refuses unknown ones, saying which.
    if (key === "additionalProperties" && inner === false) continue;
    out[key] = compact(inner, false);
  }
  return out;
}
