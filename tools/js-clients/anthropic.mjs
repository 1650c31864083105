// Drives vrender's /v1/messages with the official Anthropic TypeScript SDK (@anthropic-ai/sdk) for cmd/vrender's
// client tests. Reads a JSON list of calls on stdin:
//   {"op": "create" | "stream" | "count", "baseURL": "...", "params": {...messages.create params...}}
// and writes one result per call: {"message": <the SDK's Message>, "events": [event types], "text": "...",
// "thinking": "...", "inputs": [tool inputs as the stream helper parsed them]}, {"count": <countTokens answer>} or
// {"error": {...}}.
// JS_CLIENTS_MODULES is the node_modules directory `make models` installs.
import { createRequire } from "node:module";
import path from "node:path";

const mods = process.env.JS_CLIENTS_MODULES;
if (!mods) {
  console.error("JS_CLIENTS_MODULES is not set");
  process.exit(2);
}
const req = createRequire(path.join(mods, "noop.js"));
const { default: Anthropic } = await import(req.resolve("@anthropic-ai/sdk"));

function errorOf(e) {
  return {
    name: e && e.constructor ? e.constructor.name : typeof e,
    status: e && e.status !== undefined ? e.status : null,
    message: e && e.message ? String(e.message) : String(e),
    type: e && e.error && e.error.error ? e.error.error.type : null,
  };
}

async function run(c) {
  const client = new Anthropic({ baseURL: c.baseURL, apiKey: "unused", maxRetries: 0, timeout: 60000 });
  try {
    if (c.op === "create") {
      return { message: await client.messages.create(c.params) };
    }
    if (c.op === "count") {
      return { count: await client.messages.countTokens(c.params) };
    }
    const stream = client.messages.stream(c.params);
    const events = [];
    let text = "";
    let thinking = "";
    const inputs = [];
    stream.on("streamEvent", (ev) => events.push(ev.delta && ev.delta.type ? ev.type + ":" + ev.delta.type : ev.type));
    stream.on("text", (t) => (text += t));
    stream.on("thinking", (t) => (thinking += t));
    stream.on("contentBlock", (b) => {
      if (b.type === "tool_use") inputs.push(b.input);
    });
    const message = await stream.finalMessage();
    return { message, events, text, thinking, inputs };
  } catch (e) {
    return { error: errorOf(e) };
  }
}

let input = "";
for await (const part of process.stdin) input += part;
const out = [];
for (const c of JSON.parse(input)) out.push(await run(c));
process.stdout.write(JSON.stringify(out));
