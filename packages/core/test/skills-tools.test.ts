import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, test } from "node:test";
import {
  createSkillIndex,
  loadSkills,
  matchTriggers,
  type Skill,
  type SkillIndex,
  type SkillTool,
  skillsHint,
  skillTools,
  triggerInjection,
} from "@crow/core";

const GOOD = path.join(import.meta.dirname, "fixtures", "skills", "good");

function text(content: string | unknown[]): string {
  assert.equal(typeof content, "string");
  return content as string;
}

describe("skill tools", () => {
  let index: SkillIndex;
  let discover: SkillTool;
  let details: SkillTool;
  before(async () => {
    index = await createSkillIndex((await loadSkills([GOOD])).skills);
    [discover, details] = skillTools(index) as [SkillTool, SkillTool];
  });

  test("definitions: names and JSON-schema parameters the model can call", () => {
    assert.equal(discover.definition.function.name, "discover_skills");
    assert.deepEqual(discover.definition.function.parameters?.required, ["query"]);
    assert.equal(details.definition.function.name, "get_skill_details");
    assert.deepEqual(details.definition.function.parameters?.required, ["name"]);
  });

  test("discover_skills lists ranked skills with name, score, description and SKILL.md path", async () => {
    const result = await discover.execute({ query: "merge excel workbooks", limit: 2 });
    assert.equal(result.isError, undefined);
    const lines = text(result.content).split("\n");
    assert.match(lines[0] ?? "", /^1\. excel-merge \(score \d+\.\d{3}\)$/);
    assert.match(lines[1] ?? "", /^ {3}Merge several Excel workbooks/);
    assert.equal(lines[2], `   path: ${path.join(GOOD, "excel-merge", "SKILL.md")}`);
    assert.match(lines[3] ?? "", /^2\. /);
    assert.equal(lines.filter((l) => /^\d+\. /.test(l)).length, 2);
    assert.match(text(result.content), /get_skill_details/);
    // Default limit 5.
    const defaults = await discover.execute({ query: "git" });
    assert.ok(
      text(defaults.content)
        .split("\n")
        .filter((l) => /^\d+\. /.test(l)).length <= 5,
    );
  });

  test("discover_skills: no match and bad arguments", async () => {
    assert.match(text((await discover.execute({ query: "xyzzy qqqq" })).content), /No skill matches "xyzzy qqqq"/);
    const noQuery = await discover.execute({});
    assert.equal(noQuery.isError, true);
    assert.match(text(noQuery.content), /query must be a non-empty string/);
    const badLimit = await discover.execute({ query: "pdf", limit: 0 });
    assert.equal(badLimit.isError, true);
    assert.match(text(badLimit.content), /limit must be an integer from 1 to 20/);
  });

  test("get_skill_details returns the whole SKILL.md, the folder and its scripts, references and assets", async () => {
    const result = await details.execute({ name: "pdf-processing" });
    assert.equal(result.isError, undefined);
    const out = text(result.content);
    const skill = index.get("pdf-processing") as Skill;
    assert.ok(out.startsWith(skill.content.trimEnd()), "starts with SKILL.md verbatim");
    assert.match(out, /^name: pdf-processing$/m);
    assert.ok(out.includes(`Skill folder: ${path.join(GOOD, "pdf-processing")}`));
    assert.ok(
      out.includes(
        "Scripts:\n- scripts/extract.py\nReferences:\n- references/FORMS.md\nAssets:\n- assets/template.pdf",
      ),
    );
    assert.match(text((await details.execute({ name: "api-docs" })).content), /No other files\./);
  });

  test("get_skill_details with an unknown name lists close names", async () => {
    const result = await details.execute({ name: "pdf-procesing" });
    assert.equal(result.isError, true);
    assert.match(text(result.content), /^No skill is named "pdf-procesing"\. Close names: pdf-processing/);
    assert.match(text(result.content), /Use discover_skills to search by task\./);
    const partial = await details.execute({ name: "docker" });
    assert.match(text(partial.content), /Close names: docker-image-slimming/);
  });

  test("the system-prompt hint is one line naming a few skills, and empty without skills", () => {
    const hint = skillsHint(index.skills);
    assert.equal(hint.split("\n").length, 1);
    assert.match(hint, /^10 skills are installed \(api-docs, c-plus-plus-style, commit-message, .*, …\)/);
    assert.match(hint, /discover_skills/);
    assert.match(hint, /get_skill_details/);
    assert.equal(skillsHint([]), "");
  });
});

describe("skill triggers", () => {
  let skills: Skill[];
  before(async () => {
    skills = (await loadSkills([GOOD])).skills;
  });
  const names = (text: string) => matchTriggers(skills, text).map((m) => `${m.skill.name}:${m.trigger}`);

  test("whole words and phrases, any case, any spacing", () => {
    assert.deepEqual(names("Please convert this PDF."), ["pdf-processing:pdf"]);
    assert.deepEqual(names("write the Release\n  Notes for 2.0"), ["release-notes:release notes"]);
    assert.deepEqual(names("I have a merge conflict in main.ts"), ["git-conflict-resolution:merge conflict"]);
    assert.deepEqual(names("is this test FLAKY?"), ["flaky-test-hunter:flaky"]);
  });

  test("no match inside words; symbols in triggers match as written", () => {
    assert.deepEqual(names("the pdfs folder and a pdfium build"), []);
    assert.deepEqual(names("a changelogger tool"), []);
    assert.deepEqual(names("clean up this c++ file"), ["c-plus-plus-style:c++"]);
    assert.deepEqual(names("use c++17"), []);
    assert.deepEqual(names("run clang-format on it"), ["c-plus-plus-style:clang-format"]);
  });

  test("each skill once, several skills in skill order; an index works as the source too", async () => {
    const both = matchTriggers(skills, "changelog and release notes, then a commit message");
    assert.deepEqual(
      both.map((m) => m.skill.name),
      ["commit-message", "release-notes"],
    );
    const index = await createSkillIndex(skills);
    assert.deepEqual(
      matchTriggers(index, "fix the flaky test").map((m) => m.skill.name),
      ["flaky-test-hunter"],
    );
  });

  test("the injected text carries each matched skill's instructions and folder", () => {
    assert.equal(triggerInjection([]), "");
    const injected = triggerInjection(matchTriggers(skills, "merge these PDF files"));
    assert.match(injected, /^The request mentions a skill trigger, so this skill applies\./);
    assert.ok(
      injected.includes(`<skill name="pdf-processing" folder="${path.join(GOOD, "pdf-processing")}" trigger="pdf">`),
    );
    assert.ok(injected.includes("Run `python scripts/extract.py input.pdf`"));
    assert.ok(!injected.includes("description:"), "the body only, not the frontmatter");
    assert.ok(injected.trimEnd().endsWith("</skill>"));
  });
});
