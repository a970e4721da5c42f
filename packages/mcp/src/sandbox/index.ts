export { hostPath, hostRootArgs } from "./binds.js";
export {
  type BwrapLayout,
  bwrapArgs,
  latestSandboxAnswer,
  probeSandbox,
  resetSandboxAvailability,
  type SandboxAvailability,
  sandboxAvailability,
  useBwrapProgram,
} from "./bwrap.js";
export { explainBlocked } from "./explain.js";
export { checkOpenedReadable, checkReadable, showsHiddenContent } from "./hidden.js";
export { type HiddenPathEntry, type PathVisibility, pathNotice, pathVisibility } from "./path-dirs.js";
export {
  describePolicy,
  type HiddenReason,
  parseSandboxPolicy,
  policyForFlag,
  SANDBOX_META_KEY,
  type SandboxBind,
  type SandboxMode,
  type SandboxPolicy,
  samePolicy,
  UNCONFINED,
  UNSANDBOXED_META_KEY,
} from "./policy.js";
export { checkWritable, checkWritableAt, realTarget } from "./roots.js";
export { procWallArgs } from "./walls.js";
