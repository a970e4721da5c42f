// Edit engine and read tool speed: `npm run bench -- edit`.
// The engine is called directly (pure, no I/O) on generated source files of 1k, 10k and 100k lines, once per
// kind of match; then the whole edit tool (read + match + atomic write) on the 10k file, and a 10 MB read
// through the read tool's readFile(). Target from issue 2: a fuzzy edit in a 10k-line file under 20 ms p50.
// Last, the fuzzy search's worst cases through a real crow-mcp shared by two sessions (edit-worst.ts): the edit's wall
// time, and the latency of the other session's reads while it runs. Target from issue #25: under 2 s and 100 ms.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { replace } from "../packages/mcp/src/edit/index.js";
import { editFile } from "../packages/mcp/src/tools/edit.js";
import { readFile } from "../packages/mcp/src/tools/read.js";
import { measureWorstCase, worstCases } from "./edit-worst.js";
import { formatTiming, measure, type Timing, writeReport } from "./lib.js";

/** One function of 8 lines (7 + a blank line); `i` makes its name and body unique. */
function block(i: number): string {
  return [
    `function fn${i}(items) {`,
    `  let total${i} = 0;`,
    "  for (const item of items) {",
    `    total${i} += item.price * ${(i % 7) + 1};`,
    "  }",
    `  return total${i};`,
    "}",
    "",
  ].join("\n");
}

function source(lines: number): string {
  const blocks: string[] = [];
  for (let i = 0; i < Math.ceil(lines / 8); i++) blocks.push(block(i));
  return blocks.join("\n");
}

/** The edits measured: old/new strings aimed at the block in the middle of the file, and the matcher expected. */
function cases(mid: number): Array<{ name: string; matcher: string; old: string; new: string }> {
  const k = (mid % 7) + 1;
  const whole = block(mid).trimEnd();
  return [
    { name: "exact", matcher: "exact", old: `  let total${mid} = 0;`, new: `  let total${mid} = 1;` },
    {
      name: "fuzzy: indentation lost",
      matcher: "line-trimmed",
      old: whole
        .split("\n")
        .map((l) => l.trim())
        .join("\n"),
      new: `function fn${mid}(items) {\nreturn 0;\n}`,
    },
    {
      name: "fuzzy: a misremembered line",
      matcher: "block-anchor",
      old: whole.replace("item.price", "item.cost"),
      new: `function fn${mid}(items) {\n  return 0;\n}`,
    },
    {
      name: "fuzzy: common anchors",
      matcher: "block-anchor",
      old: `  for (const item of items) {\n    total${mid} += item.price*${k};\n  }`,
      new: "  // removed",
    },
    {
      name: "not found (closest lines)",
      matcher: "error",
      old: `function fm${mid}(itemz) {\n  let sum = 0;`,
      new: "x",
    },
  ];
}

export async function run(): Promise<void> {
  const results: Record<string, Timing> = {};
  const report = (label: string, timing: Timing) => {
    results[label] = timing;
    console.log(`${label.padEnd(60)} ${formatTiming(timing)}`);
  };

  for (const lines of [1_000, 10_000, 100_000]) {
    const content = source(lines);
    const mid = Math.floor(lines / 16);
    for (const c of cases(mid)) {
      // Check the case hits the intended matcher, so the numbers measure what they claim to.
      let matcher = "error";
      try {
        matcher = replace(content, c.old, c.new).matcher;
      } catch {}
      if (matcher !== c.matcher) throw new Error(`${c.name}: expected ${c.matcher}, got ${matcher}`);
      const runs = lines >= 100_000 ? 15 : 50;
      const timing = await measure(
        () => {
          try {
            replace(content, c.old, c.new);
          } catch {}
        },
        runs,
        3,
      );
      report(`engine ${lines / 1000}k lines, ${c.name} (${c.matcher})`, timing);
    }
  }

  const dir = mkdtempSync(path.join(tmpdir(), "crow-bench-edit-"));
  try {
    const content = source(10_000);
    const file = path.join(dir, "big.js");
    const mid = Math.floor(10_000 / 16);
    const [, , anchored] = cases(mid);
    if (!anchored) throw new Error("missing case");
    report(
      "edit tool 10k lines, block-anchor (read+match+write)",
      await measure(async () => {
        writeFileSync(file, content);
        const result = await editFile(file, anchored.old, anchored.new, false, dir);
        if (result.isError) throw new Error(JSON.stringify(result.content));
      }, 30),
    );

    const big = path.join(dir, "ten-mb.txt");
    const line = `${"lorem ipsum dolor sit amet ".repeat(3)}\n`;
    writeFileSync(big, line.repeat(Math.floor((10 * 1000 * 1000) / line.length)));
    report(
      "read tool readFile() of a 10 MB file (first 2000 lines)",
      await measure(async () => {
        const result = await readFile(big, 1, 2000, dir);
        if (result.isError) throw new Error(JSON.stringify(result.content));
      }, 20),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const worst: Record<string, unknown> = {};
  for (const c of worstCases()) {
    const measured = await measureWorstCase(c);
    worst[c.name] = measured;
    console.log(
      `worst case "${c.name}" (crow-mcp, 500k lines): edit ${measured.editMs.toFixed(0)} ms (${measured.answer})`,
    );
    console.log(
      `  reads from another session meanwhile: max ${measured.reads.max.toFixed(1)} ms  ${formatTiming(measured.reads)}`,
    );
  }
  writeReport("edit", { ...results, worst });
}
