import { stat } from "node:fs/promises";

/** Whether something is at `p` (following links); unreadable counts as absent. */
export async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}
