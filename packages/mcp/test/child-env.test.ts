import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { childEnvironment, isSecretName } from "../src/child-env.js";

describe("which variables are secrets", () => {
  test("names with a secret word as a whole part, or a part ending in one", () => {
    for (const name of [
      "OPENAI_API_KEY",
      "OPENROUTER_API_KEY",
      "GH_TOKEN",
      "GITHUB_PAT",
      "NPM_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_ACCESS_KEY_ID",
      "PGPASSWORD",
      "DB_PASS",
      "MYSQL_PWD",
      "DOCKER_AUTH_CONFIG",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "npm_config__authToken",
      "openai-api-key",
      "CROW_MCP_TOKEN",
      "SIGNING_PRIVATE",
    ]) {
      assert.equal(isSecretName(name), true, name);
    }
  });

  test("not names that merely contain such a word, nor the ssh agent's socket", () => {
    for (const name of [
      "PATH",
      "HOME",
      "PWD",
      "OLDPWD",
      "KEYBOARD",
      "TOKENIZERS_PARALLELISM",
      "XAUTHORITY",
      "SSH_AUTH_SOCK",
      "GIT_ASKPASS",
      "KEYTIMEOUT",
      "SEARXNG_URL",
      "LANG",
      "PASSAGE",
      "GIT_AUTHOR_NAME",
      "GIT_COMMITTER_EMAIL",
    ]) {
      assert.equal(isSecretName(name), false, name);
    }
  });

  test("secret names, dropped names and secret values are left out; allowed names always pass", () => {
    const base = {
      PATH: "/usr/bin",
      OPENAI_API_KEY: "sk-0123456789",
      ALIAS: "sk-0123456789",
      CONFIGURED: "literal-provider-key",
      GH_TOKEN: "ghp-allowed",
      AWS_SECRET_ACCESS_KEY: "aws-secret",
      FROM_DOTENV: "x",
      SHORT_TOKEN: "1",
      ONE: "1",
      CROW_CHILD_ENV_ALLOW: "GH_TOKEN, AWS_*",
      CROW_CHILD_ENV_DROP: "FROM_DOTENV",
    };
    assert.deepEqual(childEnvironment(base, { secretValues: ["literal-provider-key"] }), {
      PATH: "/usr/bin",
      GH_TOKEN: "ghp-allowed",
      AWS_SECRET_ACCESS_KEY: "aws-secret",
      // A value as short as "1" is no secret to hunt for in other variables.
      ONE: "1",
    });
  });
});

describe("crow-mcp started by any MCP client: its shell gets no secrets", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;

  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({
      cwd: ws.dir,
      env: {
        OPENAI_API_KEY: "sk-standalone-secret-1234",
        GH_TOKEN: "ghp-allowed-through",
        CROW_CHILD_ENV_ALLOW: "GH_TOKEN",
        HIDDEN_SETTING: "for-crow-mcp-only",
        CROW_CHILD_ENV_DROP: "HIDDEN_SETTING",
        PLAIN_SETTING: "visible",
      },
    });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("echo $OPENAI_API_KEY is empty, env shows no key; allowed and ordinary variables are there", async () => {
    const result = await callTool(mcp.client, "terminal", { command: 'echo "k=$OPENAI_API_KEY"; env' });
    assert.ok(!result.isError, result.text);
    assert.match(result.text, /^k=$/m);
    assert.ok(!result.text.includes("sk-standalone-secret-1234"), result.text);
    assert.match(result.text, /^GH_TOKEN=ghp-allowed-through$/m);
    assert.match(result.text, /^PLAIN_SETTING=visible$/m);
    assert.match(result.text, /^PATH=/m);
    assert.match(result.text, /^HOME=/m);
    assert.doesNotMatch(result.text, /HIDDEN_SETTING|CROW_CHILD_ENV/);
  });
});
