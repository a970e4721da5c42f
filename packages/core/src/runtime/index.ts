/** The SDK: `createCrow` and its sessions (see types.ts for the contracts). */
export * from "./types.js";
