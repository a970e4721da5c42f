/**
 * zod without its JIT, for both executables. By default a zod object schema compiles a parser with `new Function` on
 * its first parse, and a process that parses each message kind only a few times (a `crow run`, the first tool rounds of
 * a fresh agent or toolserver) pays more for the compiles than they save.
 *
 * zod decides per schema, when the schema is constructed, whether it may compile: so each executable's entry
 * (cli.ts) awaits this before it loads the modules that create schemas. Every package of a bundle shares one zod.
 */
export async function turnOffZodJit(): Promise<void> {
  const { config } = await import("zod");
  config({ jitless: true });
}
