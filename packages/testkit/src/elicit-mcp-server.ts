/**
 * A small stdio MCP server that asks its client questions in the middle of a tool call, on the MCP SDK's own
 * elicitation support (`Server.elicitInput`), and returns what it got: run it as `node <ELICIT_MCP_SERVER>`.
 *
 * - `book_table`: asks a form (guests: number, required; name: string; terrace: boolean; dishes: multi-select) and
 *   returns `answer: {"action":…,"content":…,"_meta":…}` as its text.
 * - `sign_in`: asks the client to open a URL (`elicitationId` "sign-in-1"); on accept, it says the sign-in is done
 *   (`notifications/elicitation/complete`) and returns the answer the same way.
 * If the client cannot be asked at all (no elicitation capability), the tool returns `error: <message>`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, type ElicitResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** The elicitation id of `sign_in`'s URL question. */
const SIGN_IN_ELICITATION_ID = "sign-in-1";

const server = new Server({ name: "elicit", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "book_table", description: "Books a table (asks the user for details).", inputSchema: { type: "object" } },
    { name: "sign_in", description: "Signs in (the user opens a page).", inputSchema: { type: "object" } },
  ],
}));

async function ask(tool: string, signal: AbortSignal): Promise<ElicitResult> {
  if (tool === "sign_in") {
    const result = await server.elicitInput(
      {
        mode: "url",
        message: "Sign in to the booking service",
        url: "https://booking.example/sign-in",
        elicitationId: SIGN_IN_ELICITATION_ID,
      },
      { signal },
    );
    if (result.action === "accept") await server.createElicitationCompletionNotifier(SIGN_IN_ELICITATION_ID)();
    return result;
  }
  return server.elicitInput(
    {
      mode: "form",
      message: "How many guests?",
      requestedSchema: {
        type: "object",
        properties: {
          guests: { type: "number", title: "Guests", minimum: 1 },
          name: { type: "string", title: "Name" },
          terrace: { type: "boolean", title: "Terrace" },
          dishes: { type: "array", title: "Dishes", items: { type: "string", enum: ["soup", "fish", "cake"] } },
        },
        required: ["guests"],
      },
    },
    { signal },
  );
}

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  try {
    const result = await ask(request.params.name, extra.signal);
    return { content: [{ type: "text", text: `answer: ${JSON.stringify(result)}` }] };
  } catch (error) {
    // Not errorText: the testkit imports no Crow package, so the fakes stay independent of the code under test.
    const message = error instanceof Error ? error.message : String(error);
    return { content: [{ type: "text", text: `error: ${message}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
