/**
 * The simple renderer against Nunjucks itself: every template it accepts must render byte for byte as Nunjucks does
 * in the environment Crow uses (stored sessions' prompts are rendered again from template and arguments), and every
 * template it declines must still render (or fail) through Nunjucks.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, test } from "node:test";
import { PromptTemplateError, renderTemplate } from "@crow/core";
import { DEFAULT_SYSTEM_PROMPT } from "@crow/core/internal";
import nunjucks from "nunjucks";
import { NUNJUCKS_GLOBALS, parseSimpleTemplate, renderSimpleTemplate } from "../src/prompt/simple-template.js";

// The environment of src/prompt/template.ts, spelled out here so that a change there fails these tests.
const env = new nunjucks.Environment(null, { autoescape: false, trimBlocks: true, lstripBlocks: true });

function viaNunjucks(template: string, args: Record<string, unknown>): string {
  return new nunjucks.Template(template, env, undefined, true).render(args);
}

/** Renders through the simple renderer, failing when it declines the template or the arguments. */
function viaSimple(template: string, args: Record<string, unknown>): string {
  const parsed = parseSimpleTemplate(template);
  assert.ok(parsed, `the simple renderer declined ${JSON.stringify(template)}`);
  const out = renderSimpleTemplate(parsed, args);
  assert.ok(out !== undefined, `the simple renderer declined the arguments of ${JSON.stringify(template)}`);
  return out;
}

/** Both renderers agree (untrimmed), and `renderTemplate` gives Nunjucks' output trimmed. */
function same(template: string, args: Record<string, unknown>): void {
  const expected = viaNunjucks(template, args);
  assert.equal(viaSimple(template, args), expected, `template ${JSON.stringify(template)}`);
  assert.equal(renderTemplate(template, args), expected.trim());
}

const builtInArgs = {
  workspace: "/home/u/proj",
  display_tree: "proj/\n  src/\n    a.ts\n  README.md",
  agents_content: "No AGENTS.md found",
  has_agents_md: false,
  date: "2026-11-23",
  platform: "linux",
  skills_hint: "",
};

describe("the built-in system prompt: simple renderer = Nunjucks", () => {
  const agents = [
    "Run `make test`.",
    "Line one\n\n  indented {% if x %} not a tag {% endif %}\n{{ workspace }} stays literal\r\nCRLF line",
    "  leading and trailing whitespace \n\n",
    "",
  ];
  const hints = ["", "Skills: use discover_skills.", "multi\nline\n  {{ hint }} with %} and #} and {# inside"];
  for (const has of [true, false]) {
    for (const agentsContent of agents) {
      for (const hint of hints) {
        test(`has_agents_md=${has}, agents ${JSON.stringify(agentsContent).slice(0, 20)}, hint ${JSON.stringify(hint).slice(0, 20)}`, () => {
          same(DEFAULT_SYSTEM_PROMPT, {
            ...builtInArgs,
            has_agents_md: has,
            agents_content: agentsContent,
            skills_hint: hint,
          });
        });
      }
    }
  }

  test("special characters, missing and extra arguments", () => {
    same(DEFAULT_SYSTEM_PROMPT, {
      workspace: "C:\\Users\\Ünïcode <&> 'quotes' \"double\" $HOME `tick` \u00a0nbsp",
      display_tree: "{{ display_tree }}\n{% endif %}\n\t\ttabs\r\n",
      has_agents_md: 1,
      agents_content: "\u2028line separator\u2029",
      extra: "unused",
    });
  });
});

/** Small templates around the whitespace rules (trimBlocks, lstripBlocks) and the value rules. */
const EDGE_TEMPLATES = [
  "plain text, no tags",
  "",
  "{{ a }}",
  "{{a}}{{ b }}{{\ta\n}}",
  "x {{ a }} y\n",
  "{% if a %}yes{% endif %}",
  "{% if a %}\nyes\n{% endif %}\n",
  "{% if a %}\n  yes\n{% else %}\n  no\n{% endif %}\nafter",
  "  {% if a %}\n  indented tag\n  {% endif %}\n",
  "\t \t{% if a %}tabs before{% endif %}  \n",
  "text {% if a %}mid-line{% endif %} text\n",
  "text\n    {% if a %}\n    {{ b }}\n    {% else %}\n    none\n    {% endif %}\n    tail",
  "{{ a }}   {% if a %}whitespace after a variable on the same line{% endif %}",
  "{% if a %}x{% endif %}   {% if b %}y{% endif %}",
  "{% if a %}{% endif %}",
  "{% if a %}{% else %}{% endif %}",
  "{% if a %}\n{% else %}\n{% endif %}\n",
  "{% if a %}{% if b %}ab{% else %}a{% endif %}{% else %}{% if b %}b{% else %}none{% endif %}{% endif %}",
  "{% if a %}\n  {% if b %}\n    both\n  {% endif %}\n{% endif %}\n",
  "{% if a %}\r\nCRLF\r\n{% else %}\r\nelse\r\n{% endif %}\r\nend\r\n",
  "{% if a %}\rCR only\r{% endif %}\r",
  "\r\n  {% if a %}x{% endif %}",
  "{% if a %}\n\n{% endif %}\n\n",
  "{% if a %}tag at end of file without newline{% endif %}",
  "empty if at the end {% if a %}{% endif %}",
  "{% if a %}\n{% endif %}",
  "\n\n  \n{% if a %}a{% endif %}\n",
  "{%if a%}tight{%else%}er{%endif%}",
  "{%\n  if\n  a\n%}  newline inside the tag {% endif %}",
  "{%\u00a0if\u00a0a\u00a0%}nbsp{%\u00a0endif\u00a0%}",
  "{{ a }}}} and { single } braces % and %} and }} in text",
  "  {{ a }} variables do not strip the indentation",
  "{{ a }}\n{{ b }}\n",
  "x\u00a0 {% if a %}nbsp before the tag{% endif %}",
  "x\n\u00a0\u2003{% if a %}unicode whitespace before the tag{% endif %}",
  "{{ _under_score9 }}{{ A }}",
];

const VALUES: unknown[] = [undefined, null, "", "text", "{{ a }}", "%}\n  ", 0, -0, 1.5, Number.NaN, true, false];

describe("edge-case templates: simple renderer = Nunjucks", () => {
  for (const template of EDGE_TEMPLATES) {
    test(JSON.stringify(template), () => {
      for (const a of VALUES) {
        for (const b of [undefined, "B", true, 0]) same(template, { a, b, _under_score9: a, A: b });
      }
    });
  }

  test("randomly generated templates of the subset", () => {
    // A fixed-seed generator: the same templates every run, a few thousand of them.
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T;
    const texts = ["", " ", "  ", "\t", "\n", "\r\n", "\r", "x", "word ", "\n  ", " \n", "{", "}", "%", "#", "\u00a0"];
    const pad = ["", " ", "  ", "\n", "\t"];
    const name = () => pick(["a", "b", "c"]);
    const block = (): string => {
      const parts: string[] = [];
      for (let i = random(5); i > 0; i--) {
        const kind = random(6);
        if (kind < 3) parts.push(pick(texts));
        else if (kind < 5) parts.push(`{{${pick(pad)}${name()}${pick(pad)}}}`);
        else if (parts.length < 30) {
          const otherwise = random(2) === 0 ? `{%${pick(pad)}else${pick(pad)}%}${block()}` : "";
          parts.push(`{%${pick(pad)}if ${name()}${pick(pad)}%}${block()}${otherwise}{%${pick(pad)}endif${pick(pad)}%}`);
        }
      }
      return parts.join(pick(["", "\n", " ", "  "]));
    };
    let compared = 0;
    for (let i = 0; i < 3000; i++) {
      const template = block() + pick(texts) + block();
      const args = { a: pick(VALUES), b: pick(VALUES), c: pick(VALUES) };
      const parsed = parseSimpleTemplate(template);
      // Text ending in `{` right before a tag makes a different tag (`{{{`): the simple renderer declines those.
      if (!parsed) {
        assert.match(template, /\{\{\{|\{\{%|\{\{#|\{%\{|\{%%|\{#|#\}/, `declined ${JSON.stringify(template)}`);
        continue;
      }
      assert.equal(renderSimpleTemplate(parsed, args), viaNunjucks(template, args), JSON.stringify(template));
      compared++;
    }
    assert.ok(compared > 2000, `only ${compared} generated templates were compared`);
  });
});

describe("templates outside the subset render through Nunjucks", () => {
  const outside: Array<[string, Record<string, unknown>]> = [
    ["{{ a | upper }}", { a: "x" }],
    ["{% for i in items %}{{ i }},{% endfor %}", { items: [1, 2, 3] }],
    ["{# comment #}{{ a }}", { a: "x" }],
    ["{{ a.b }}", { a: { b: "dotted" } }],
    ["  {%- if a -%}  dash  {%- endif -%}  ", { a: true }],
    ["{{- a -}}", { a: "x" }],
    ["{% if a %}1{% elif b %}2{% endif %}", { b: true }],
    ["{% set x = 3 %}{{ x }}", {}],
    ["{% raw %}{{ a }}{% endraw %}", { a: "x" }],
    ["{% if not a %}no{% endif %}", {}],
    ["{% if a == 1 %}one{% endif %}", { a: 1 }],
    ["{{ 'literal' }}{{ 3 }}{{ true }}{{ none }}", {}],
    ["{{ range }}|{{ joiner }}|{{ constructor }}|{{ toString }}", {}],
  ];
  for (const [template, args] of outside) {
    test(JSON.stringify(template), () => {
      assert.equal(parseSimpleTemplate(template), undefined);
      assert.equal(renderTemplate(template, args), viaNunjucks(template, args).trim());
    });
  }

  test("values the simple renderer does not print (arrays, objects) are printed by Nunjucks", () => {
    const template = "{{ a }}|{% if a %}truthy{% endif %}";
    const parsed = parseSimpleTemplate(template);
    assert.ok(parsed);
    for (const a of [[], [1, [2, null]], { k: "v" }]) {
      assert.equal(renderSimpleTemplate(parsed, { a }), undefined);
      assert.equal(renderTemplate(template, { a }), viaNunjucks(template, { a }).trim());
    }
    // Only the printed value matters: conditions take any value, as in Nunjucks (an empty array is true).
    same("{% if a %}truthy{% else %}falsy{% endif %}", { a: [] });
    same("{% if a %}truthy{% else %}falsy{% endif %}", { a: {} });
  });

  test("the names left to Nunjucks include all of its globals", () => {
    // `globals` is real but missing from @types/nunjucks.
    const { globals } = env as unknown as { globals: Record<string, unknown> };
    assert.deepEqual(Object.keys(globals).sort(), [...NUNJUCKS_GLOBALS].sort());
  });

  test("syntax errors are PromptTemplateErrors with Nunjucks' message", () => {
    const broken: Array<[string, RegExp]> = [
      ["{% if %}broken", /could not be rendered: .*unexpected token/s],
      ["{% if a %}never closed", /could not be rendered: .*expected elif, else, or endif/s],
      ["{% endif %}", /could not be rendered: .*unknown block tag: endif/s],
      ["{% if a %}{% else %}{% else %}{% endif %}", /could not be rendered: .*unknown block tag: else/s],
      ["{{ a", /could not be rendered: .*expected variable end/s],
      ["text #} text", /could not be rendered: .*unexpected end of comment/s],
    ];
    for (const [template, message] of broken) {
      assert.equal(parseSimpleTemplate(template), undefined, template);
      assert.throws(
        () => renderTemplate(template, { a: true }, "my.njk"),
        (error: unknown) =>
          error instanceof PromptTemplateError &&
          error.message.startsWith("system prompt my.njk could not be rendered: ") &&
          message.test(error.message) &&
          !error.message.includes("(unknown path)"),
        template,
      );
    }
  });
});

test("rendering the built-in prompt does not load Nunjucks", () => {
  // A fresh process, as at the agent's start: Nunjucks is a CommonJS module, so loading it puts it in the CommonJS
  // cache.
  const core = path.resolve(import.meta.dirname, "../dist/index.js");
  const internal = path.resolve(import.meta.dirname, "../dist/internal.js");
  const script = `
    import { createRequire } from "node:module";
    const { renderTemplate } = await import(${JSON.stringify(core)});
    const { DEFAULT_SYSTEM_PROMPT } = await import(${JSON.stringify(internal)});
    const text = renderTemplate(DEFAULT_SYSTEM_PROMPT, ${JSON.stringify(builtInArgs)});
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => /[\\\\/]nunjucks[\\\\/]/.test(f));
    renderTemplate("{{ a | upper }}", { a: "x" });
    const after = Object.keys(createRequire(import.meta.url).cache).filter((f) => /[\\\\/]nunjucks[\\\\/]/.test(f));
    console.log(JSON.stringify({ loaded: loaded.length, after: after.length, starts: text.slice(0, 12) }));`;
  const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
  assert.deepEqual(out.loaded, 0);
  assert.equal(out.starts, "You are Crow");
  // …and a template outside the subset does (the check above would pass if nothing could ever see Nunjucks).
  assert.ok(out.after > 0);
});
