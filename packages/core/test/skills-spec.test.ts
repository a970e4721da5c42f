import assert from "node:assert/strict";
import { test } from "node:test";
import { checkSkillSpec } from "@crow/core";

const errors = (text: string, folder = "pdf-tools") =>
  checkSkillSpec(text, folder)
    .problems.filter((p) => p.severity === "error")
    .map((p) => `${p.field}: ${p.message}`);

test("a skill meeting every rule has no problems and reports allowed-tools", () => {
  const result = checkSkillSpec(
    "---\nname: pdf-tools\ndescription: Fill PDF forms.\nlicense: MIT\ncompatibility: needs python3\nmetadata:\n  author: me\nallowed-tools: Bash(python3:*) Read\n---\nbody\n",
    "pdf-tools",
  );
  assert.deepEqual(result.problems, []);
  assert.equal(result.allowedTools, "Bash(python3:*) Read");
});

test("each spec rule is reported with its field", () => {
  assert.deepEqual(errors("no frontmatter"), [
    "frontmatter: missing: SKILL.md must start with a '---' line, the YAML fields, and another '---' line",
  ]);
  assert.match(errors("---\ndescription: d\n---\n").join(), /^name: missing/);
  assert.match(errors("---\nname: -pdf\ndescription: d\n---\n", "-pdf").join(), /name: .*starts or ends with a hyphen/);
  assert.match(errors("---\nname: pdf--x\ndescription: d\n---\n", "pdf--x").join(), /consecutive hyphens/);
  assert.match(errors("---\nname: PDF\ndescription: d\n---\n", "PDF").join(), /name: "PDF" .*other characters/);
  assert.match(errors(`---\nname: ${"a".repeat(65)}\ndescription: d\n---\n`, "a".repeat(65)).join(), /65 characters/);
  assert.match(errors("---\nname: other\ndescription: d\n---\n").join(), /must equal its folder name "pdf-tools"/);
  assert.match(errors("---\nname: pdf-tools\n---\n").join(), /^description: missing/);
  assert.match(errors(`---\nname: pdf-tools\ndescription: ${"x".repeat(1025)}\n---\n`).join(), /1025 characters long/);
  assert.match(
    errors(`---\nname: pdf-tools\ndescription: d\ncompatibility: ${"x".repeat(501)}\n---\n`).join(),
    /^compatibility: is 501/,
  );
  assert.match(
    errors("---\nname: pdf-tools\ndescription: d\nmetadata:\n  version: 2\n---\n").join(),
    /^metadata.version: must be a string, not a number/,
  );
  assert.match(
    errors("---\nname: pdf-tools\ndescription: d\nmetadata: [a]\n---\n").join(),
    /^metadata: must be a mapping/,
  );
  assert.match(errors("---\nname: pdf-tools\ndescription: d\nlicense: 3\n---\n").join(), /^license: must be a string/);
  assert.match(
    errors("---\nname: pdf-tools\ndescription: d\nallowed-tools: [Read]\n---\n").join(),
    /^allowed-tools: must be a string, not a list/,
  );
  const unknown = checkSkillSpec("---\nname: pdf-tools\ndescription: d\nversion: 1\n---\n", "pdf-tools").problems;
  assert.deepEqual(
    unknown.map((p) => [p.severity, p.field]),
    [["warning", "version"]],
  );
});
