import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { loadSkills, type SkillProblem, skillRoots } from "@crow/core";
import { MAX_DESCRIPTION, parseSkill } from "@crow/core/internal";
import { tempWorkspace } from "@crow/testkit";

const FIXTURES = path.join(import.meta.dirname, "fixtures", "skills");
const GOOD = path.join(FIXTURES, "good");
const BROKEN = path.join(FIXTURES, "broken");

function problemsFor(problems: readonly SkillProblem[], folder: string): SkillProblem[] {
  return problems.filter((p) => p.path.split(path.sep).includes(folder));
}

describe("skill discovery", () => {
  test("valid skills load with their metadata, body, triggers and files", async () => {
    const { skills, problems } = await loadSkills([GOOD]);
    assert.deepEqual(problems, []);
    assert.equal(skills.length, 10);
    const pdf = skills.find((s) => s.name === "pdf-processing");
    assert.ok(pdf);
    assert.match(pdf.description, /^Extract text and tables from PDF files/);
    assert.deepEqual(pdf.triggers, ["pdf"]);
    assert.match(pdf.body, /^# PDF processing/);
    assert.equal(pdf.file, path.join(GOOD, "pdf-processing", "SKILL.md"));
    assert.equal(pdf.dir, path.join(GOOD, "pdf-processing"));
    assert.deepEqual(pdf.files, ["assets/template.pdf", "references/FORMS.md", "scripts/extract.py"]);
    assert.match(pdf.hash, /^[0-9a-f]{64}$/);
    // Sorted by name for stable output.
    assert.deepEqual(
      skills.map((s) => s.name),
      [...skills.map((s) => s.name)].sort(),
    );
  });

  test("broken skills are reported with their paths and never stop the others from loading", async () => {
    const { skills, problems } = await loadSkills([BROKEN, GOOD]);
    const names = skills.map((s) => s.name);
    assert.ok(names.includes("pdf-processing"), "good skills still load");

    const badYaml = problemsFor(problems, "bad-yaml");
    assert.equal(badYaml[0]?.severity, "error");
    assert.match(badYaml[0]?.message ?? "", /invalid YAML frontmatter/);
    assert.equal(badYaml[0]?.path, path.join(BROKEN, "bad-yaml", "SKILL.md"));
    assert.ok(!names.includes("bad-yaml"));

    // A mismatched name is loaded under its folder name, with a warning naming both.
    const wrong = problemsFor(problems, "wrong-name");
    assert.equal(wrong[0]?.severity, "warning");
    assert.match(wrong[0]?.message ?? "", /"other-name" differs from its folder name "wrong-name"/);
    assert.ok(names.includes("wrong-name") && !names.includes("other-name"));

    // An overlong description is cut to the limit and reported.
    const long = problemsFor(problems, "long-description");
    assert.match(long[0]?.message ?? "", /description is \d+ characters long \(at most 1024\)/);
    const longSkill = skills.find((s) => s.name === "long-description");
    assert.equal(longSkill?.description.length, MAX_DESCRIPTION);

    assert.match(problemsFor(problems, "missing-description")[0]?.message ?? "", /missing description/);
    assert.ok(!names.includes("missing-description"));
    assert.match(problemsFor(problems, "no-frontmatter")[0]?.message ?? "", /no YAML frontmatter/);
    assert.match(problemsFor(problems, "Bad_Folder")[0]?.message ?? "", /folder name "Bad_Folder" must use lowercase/);
    assert.ok(!names.includes("bad-folder"));

    // Triggers of the wrong shape are dropped, the skill kept.
    assert.match(problemsFor(problems, "bad-triggers")[0]?.message ?? "", /triggers must be a list/);
    assert.deepEqual(skills.find((s) => s.name === "bad-triggers")?.triggers, []);

    // A folder without SKILL.md is simply not a skill.
    assert.deepEqual(problemsFor(problems, "not-a-skill"), []);
    assert.ok(!names.includes("not-a-skill"));
  });

  test("missing roots are fine; a root that is a file is ignored", async () => {
    const ws = await tempWorkspace();
    try {
      const file = await ws.write("not-a-dir", "x");
      const result = await loadSkills([ws.path("nowhere"), file]);
      assert.deepEqual(result, { skills: [], problems: [] });
    } finally {
      await ws.cleanup();
    }
  });

  test("roots: ~/.agents/skills, crow home, then the workspace's .crow/skills, .agents/skills; later ones override by name", async () => {
    const ws = await tempWorkspace();
    try {
      const home = ws.path("home");
      const workspace = ws.path("project");
      const skill = (desc: string) => `---\nname: deploy\ndescription: ${desc}\n---\nSteps.\n`;
      await ws.write("home/skills/deploy/SKILL.md", skill("User-wide deploy."));
      await ws.write("home/skills/notes/SKILL.md", "---\nname: notes\ndescription: Take notes.\n---\n");
      await ws.write("project/.crow/skills/deploy/SKILL.md", skill("Project deploy."));
      await ws.write("project/.agents/skills/deploy/SKILL.md", skill("Agents-folder deploy."));

      await ws.write("user/.agents/skills/deploy/SKILL.md", skill("Shared deploy."));
      await ws.write("user/.agents/skills/lint/SKILL.md", "---\nname: lint\ndescription: Lint code.\n---\n");
      const roots = skillRoots({ workspace, env: { CROW_HOME: home, HOME: ws.path("user") } });
      assert.deepEqual(roots, [
        ws.path("user/.agents/skills"),
        path.join(home, "skills"),
        path.join(workspace, ".crow", "skills"),
        path.join(workspace, ".agents", "skills"),
      ]);
      const { skills, problems } = await loadSkills(roots);
      assert.deepEqual(
        skills.map((s) => [s.name, s.description]),
        [
          ["deploy", "Agents-folder deploy."],
          ["lint", "Lint code."],
          ["notes", "Take notes."],
        ],
      );
      const overrides = problems.filter((p) => p.severity === "info");
      assert.equal(overrides.length, 3);
      assert.match(overrides[0]?.message ?? "", /skill "deploy" overrides the one in .*user\/\.agents\/skills\/deploy/);
      assert.match(overrides[2]?.message ?? "", /skill "deploy" overrides the one in .*\.crow\/skills\/deploy/);
      assert.deepEqual(skillRoots({ home, env: { HOME: ws.path("user") } }), [
        ws.path("user/.agents/skills"),
        path.join(home, "skills"),
      ]);
    } finally {
      await ws.cleanup();
    }
  });
});

describe("SKILL.md frontmatter", () => {
  test("name rules: length, characters, hyphens, folder equality", () => {
    const parse = (name: string, folder = name) =>
      parseSkill(`---\nname: "${name}"\ndescription: d\n---\nbody`, folder);
    assert.equal(parse("a".repeat(64)).metadata?.name, "a".repeat(64));
    assert.deepEqual(parse("a".repeat(64)).warnings, []);
    assert.match(parse("a".repeat(65), "ok").warnings[0] ?? "", /65 characters long \(at most 64\)/);
    assert.match(parse("Has-Caps", "other").warnings[0] ?? "", /lowercase/);
    // In the folder an installer normalised it to (crow skills, the skills CLI): loaded, a note for the log only.
    for (const [name, folder] of [
      ["Has-Caps", "has-caps"],
      ["double--hyphen", "double-hyphen"],
      ["-leading", "leading"],
      ["Reviewing Pull Requests", "reviewing-pull-requests"],
    ] as const) {
      const parsed = parse(name, folder);
      assert.deepEqual(parsed.warnings, [], name);
      assert.equal(parsed.metadata?.name, folder);
      assert.match(parsed.notes?.[0] ?? "", /loaded as ".*", its normalised name and folder/, name);
    }
    assert.equal(parse("x", "y").metadata?.name, "y");
  });

  test("empty frontmatter, CRLF line endings, a BOM and a single-string trigger", () => {
    assert.match(parseSkill("---\n---\nbody", "s").errors[0] ?? "", /missing description/);
    const crlf = parseSkill(
      "\uFEFF---\r\nname: s\r\ndescription: Works.\r\ntriggers: deploy now\r\n---\r\nBody\r\n",
      "s",
    );
    assert.deepEqual(crlf.errors, []);
    assert.equal(crlf.metadata?.description, "Works.");
    assert.deepEqual(crlf.metadata?.triggers, ["deploy now"]);
    assert.equal(crlf.metadata?.body, "Body\r\n");
    assert.match(parseSkill("---\n- a list\n---\n", "s").errors[0] ?? "", /must be a YAML mapping/);
  });
});
