// Drives `engine mcp serve` with the official TypeScript MCP SDK, as an
// MCP client nobody at Stepgate wrote would: node client.mjs ENGINE ARGS...
// starts ENGINE ARGS... over stdio, then prints one JSON line per event on
// stdout for integration/mcpserve_node_test.go to check:
//   {"event":"tools","names":[...]}              tools/list
//   {"event":"allowed", ...result}               read notes.txt
//   {"event":"denied", ...result}                read secret.txt
//   {"event":"asking"}                           bash is called now; the test approves its ticket
//   {"event":"asked", ...result, "progress":N}   bash's result once approved
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const say = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");
const summary = (r) => ({ isError: r.isError === true, text: r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n") });

const client = new Client({ name: "stepgate-ts-test", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));

const { tools } = await client.listTools();
say("tools", { names: tools.map((t) => t.name).sort() });

say("allowed", summary(await client.callTool({ name: "read", arguments: { path: "notes.txt" } })));
say("denied", summary(await client.callTool({ name: "read", arguments: { path: "secret.txt" } })));

let progress = 0;
say("asking");
const asked = await client.callTool({ name: "bash", arguments: { command: "echo approved-from-elsewhere" } }, undefined, {
  timeout: 120000,
  resetTimeoutOnProgress: true,
  onprogress: () => { progress++; },
});
say("asked", { ...summary(asked), progress });

await client.close();
