/**
 * The runtime's built-in extensions, in load order, loaded through the same API as everyone else's (options
 * `disableBuiltins` skips them by name). What they need of a live session they reach through `CrowSessionImpl`.
 */

import type { ModelInfo } from "../api/types.js";
import { SessionBusyError } from "../api/types.js";
import type { SessionCompactions } from "../compaction/index.js";
import type { Extension } from "../extensions/api.js";
import { askUserExtension } from "../extensions/ask-user.js";
import {
  commandsExtension,
  compactionExtension,
  doomLoopExtension,
  type permissionGates,
  permissionsExtension,
  persistenceExtension,
} from "../extensions/builtin.js";
import { skillsExtension } from "../extensions/skills-extension.js";
import { subagentsExtension } from "../extensions/subagents.js";
import { todoExtension } from "../extensions/todo.js";
import type { Store } from "../store/types.js";
import type { Checkpointing } from "./checkpointing.js";
import type { CrowSessionImpl } from "./session.js";

/** What the built-ins are made with. */
export interface BuiltinParts {
  gates: ReturnType<typeof permissionGates>;
  /** Each live session's compaction (the watcher records prompt sizes there). */
  compactions: SessionCompactions;
  store: Store | undefined;
  home: string;
  checkpoints: Checkpointing;
  /** The runtime's known models (empty: any model name is accepted). */
  models: readonly ModelInfo[] | undefined;
  /** Names of the built-ins to leave out. */
  disabled: readonly string[];
}

/** The built-in extensions to load, named, in order, without the disabled ones. */
export function builtinExtensions(parts: BuiltinParts): Array<{ name: string; extension: Extension }> {
  const { gates, store, home, checkpoints, models } = parts;
  const disabled = new Set(parts.disabled);
  return [
    { name: "doom-loop", extension: doomLoopExtension(gates) },
    { name: "permissions", extension: permissionsExtension(gates) },
    { name: "compaction", extension: compactionExtension(parts.compactions) },
    ...(store
      ? [
          {
            name: "persistence",
            extension: persistenceExtension(store, (session, title, at) =>
              (session as CrowSessionImpl).setTitle(title, at),
            ),
          },
        ]
      : []),
    {
      name: "commands",
      extension: commandsExtension((error): error is SessionBusyError => error instanceof SessionBusyError),
    },
    ...checkpoints.builtins,
    { name: "skills", extension: skillsExtension({ home }) },
    {
      name: "subagents",
      extension: subagentsExtension({
        toolsOf: (session) => (session as CrowSessionImpl).tools,
        knowsModel: (name) => !models?.length || models.some((m) => m.name === name),
      }),
    },
    { name: "todo", extension: todoExtension },
    { name: "ask-user", extension: askUserExtension },
  ].filter((b) => !disabled.has(b.name));
}
