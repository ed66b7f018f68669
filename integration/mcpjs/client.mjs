// Drives `engine mcp serve` with the official TypeScript MCP SDK, as an
// MCP client nobody at Stepgate wrote would: node client.mjs ENGINE ARGS...
// starts ENGINE ARGS... over stdio, then prints one JSON line per event on
// stdout for integration/mcpserve_node_test.go to check:
//   {"event":"tools","names":[...]}              tools/list
//   {"event":"allowed", ...result}               read notes.txt
//   {"event":"denied", ...result}                read secret.txt
//   {"event":"asking"}                           bash is called now
//   {"event":"progress"}                         its first progress notification: the test approves its ticket
//   {"event":"asked", ...result, "progress":N}   bash's result once approved
// With --elicit first (node client.mjs --elicit ENGINE ARGS...) the client
// declares elicitation, approves what it is asked, and calls bash only:
//   {"event":"elicited", ...result, "asked":[messages]}
// With --repeat first the client sends one bash call twice at once (the
// same arguments, keys in another order) and says when both report
// progress (the test then approves the one ticket), then both results:
//   {"event":"progressed"}
//   {"event":"repeated", "results":[...result, ...result]}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

let argv = process.argv.slice(2);
const elicit = argv[0] === "--elicit";
const repeat = argv[0] === "--repeat";
if (elicit || repeat) argv = argv.slice(1);
const [command, ...args] = argv;
const say = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");
const summary = (r) => ({ isError: r.isError === true, text: r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n") });

const client = new Client({ name: "stepgate-ts-test", version: "1.0.0" }, elicit ? { capabilities: { elicitation: { form: {} } } } : {});
const asked = [];
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return { action: "accept", content: { decision: "approve" } };
  });
}
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));

if (elicit) {
  const r = await client.callTool({ name: "bash", arguments: { command: "echo approved-in-the-client" } }, undefined, { timeout: 120000 });
  say("elicited", { ...summary(r), asked });
  await client.close();
  process.exit(0);
}

if (repeat) {
  const progressed = [false, false];
  const call = (i, args) => client.callTool({ name: "bash", arguments: args }, undefined, {
    timeout: 240000,
    resetTimeoutOnProgress: true,
    onprogress: () => {
      if (!progressed[i]) {
        progressed[i] = true;
        if (progressed.every(Boolean)) say("progressed");
      }
    },
  });
  const results = await Promise.all([
    call(0, { command: "echo ran >> ran.log && echo ran-once", timeout: 60000 }),
    call(1, { timeout: 60000, command: "echo ran >> ran.log && echo ran-once" }),
  ]);
  say("repeated", { results: results.map(summary) });
  await client.close();
  process.exit(0);
}

const { tools } = await client.listTools();
say("tools", { names: tools.map((t) => t.name).sort() });

say("allowed", summary(await client.callTool({ name: "read", arguments: { path: "notes.txt" } })));
say("denied", summary(await client.callTool({ name: "read", arguments: { path: "secret.txt" } })));

let progress = 0;
say("asking");
const answered = await client.callTool({ name: "bash", arguments: { command: "echo approved-from-elsewhere" } }, undefined, {
  timeout: 120000,
  resetTimeoutOnProgress: true,
  onprogress: () => { if (++progress === 1) say("progress"); },
});
say("asked", { ...summary(answered), progress });

await client.close();
