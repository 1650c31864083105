// Drives the Vercel AI SDK (ai + @ai-sdk/openai-compatible) and LangChain JS (@langchain/openai) against a
// vrender server for cmd/vrender's client tests. Reads a JSON list of calls on stdin:
//   {"lib": "ai" | "langchain", "stream": bool, "baseURL": "...", "model": "...", "choice": "required" | "named"}
// and writes one result per call: {"calls": [[name, argumentsJSON]], "finish": "...", "rawFinish": "..."} or
// {"error": "..."}. JS_CLIENTS_MODULES is the node_modules directory `make models` installs.
import { createRequire } from "node:module";
import path from "node:path";

const mods = process.env.JS_CLIENTS_MODULES;
if (!mods) {
  console.error("JS_CLIENTS_MODULES is not set");
  process.exit(2);
}
const req = createRequire(path.join(mods, "noop.js"));
// Every library is imported before the first call: importing one takes
// seconds of synchronous work on a loaded machine, and a call made after
// such a pause can be handed a pooled keep-alive connection the server has
// already closed for idleness (a reset the test would misread as vrender's).
const loaded = new Map();
for (const name of ["ai", "@ai-sdk/openai-compatible", "@langchain/openai"]) {
  loaded.set(name, await import(req.resolve(name)));
}
const load = async (name) => loaded.get(name);

const weather = {
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
    required: ["city"],
  },
};
const prompt = "Tell me something.";

async function viaAI(c) {
  const { generateText, streamText, tool, jsonSchema } = await load("ai");
  const { createOpenAICompatible } = await load("@ai-sdk/openai-compatible");
  const provider = createOpenAICompatible({ name: "vrender", baseURL: c.baseURL, apiKey: "unused" });
  const args = {
    model: provider.chatModel(c.model),
    prompt,
    tools: { get_weather: tool({ description: weather.description, inputSchema: jsonSchema(weather.parameters) }) },
    toolChoice: c.choice === "named" ? { type: "tool", toolName: "get_weather" } : "required",
  };
  let calls, finish, rawFinish;
  if (c.stream) {
    const r = streamText({ ...args, onError: () => {} });
    for await (const part of r.fullStream) {
      if (part.type === "error") throw part.error;
    }
    [calls, finish, rawFinish] = await Promise.all([r.toolCalls, r.finishReason, r.rawFinishReason]);
  } else {
    const r = await generateText(args);
    [calls, finish, rawFinish] = [r.toolCalls, r.finishReason, r.rawFinishReason];
  }
  return {
    calls: calls.map((tc) => [tc.toolName, JSON.stringify(tc.input)]),
    finish,
    rawFinish: rawFinish ?? null,
  };
}

async function viaLangChain(c) {
  const { ChatOpenAI } = await load("@langchain/openai");
  const model = new ChatOpenAI({ model: c.model, apiKey: "unused", configuration: { baseURL: c.baseURL }, maxRetries: 0 });
  const choice = c.choice === "named" ? { type: "function", function: { name: "get_weather" } } : "required";
  const bound = model.bindTools([{ type: "function", function: weather }], { tool_choice: choice });
  let msg;
  if (c.stream) {
    for await (const chunk of await bound.stream(prompt)) {
      msg = msg ? msg.concat(chunk) : chunk;
    }
  } else {
    msg = await bound.invoke(prompt);
  }
  return {
    calls: (msg.tool_calls ?? []).map((tc) => [tc.name, JSON.stringify(tc.args)]),
    finish: msg.response_metadata?.finish_reason ?? null,
    rawFinish: msg.response_metadata?.finish_reason ?? null,
  };
}

const input = JSON.parse(require_stdin());
function require_stdin() {
  return req("node:fs").readFileSync(0, "utf8");
}
const out = [];
for (const c of input) {
  try {
    out.push(c.lib === "langchain" ? await viaLangChain(c) : await viaAI(c));
  } catch (e) {
    out.push({ error: String(e && e.stack ? e.stack : e) });
  }
}
process.stdout.write(JSON.stringify(out));
