// Drives vrender with the official OpenAI Node SDK for the end-to-end client tests
// (internal/e2e). Reads a JSON array of calls on stdin, runs them in order and prints
// a JSON array of results: what the SDK returned, the chunks it yielded, or the error
// it raised. The Go test owns the expectations; this file only speaks the SDK.
//
// Environment: OPENAI_MODULE is the path of the installed `openai` package.
"use strict";

const OpenAI = require(process.env.OPENAI_MODULE);

function errorOf(e) {
  return {
    name: e && e.constructor ? e.constructor.name : typeof e,
    status: e && e.status !== undefined ? e.status : null,
    message: e && e.message ? String(e.message) : String(e),
    type: e && e.type !== undefined ? e.type : null,
    code: e && e.code !== undefined ? e.code : null,
    param: e && e.param !== undefined ? e.param : null,
  };
}

async function runStream(stream, abortAfter, controller) {
  const chunks = [];
  try {
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (abortAfter && chunks.length >= abortAfter) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    return { chunks, error: errorOf(e) };
  }
  return { chunks, error: null };
}

async function runCall(call) {
  const client = new OpenAI({ baseURL: call.baseURL, apiKey: call.apiKey || "none", maxRetries: 0, timeout: 60000 });
  const controller = new AbortController();
  const opts = { signal: controller.signal, headers: call.headers || {} };
  try {
    switch (call.op) {
      case "models": {
        const page = await client.models.list();
        return { result: page.data };
      }
      case "chat":
        return { result: await client.chat.completions.create(call.params, opts) };
      case "completion":
        return { result: await client.completions.create(call.params, opts) };
      case "chat_stream": {
        const stream = await client.chat.completions.create({ ...call.params, stream: true }, opts);
        return await runStream(stream, call.abortAfterChunks, controller);
      }
      case "completion_stream": {
        const stream = await client.completions.create({ ...call.params, stream: true }, opts);
        return await runStream(stream, call.abortAfterChunks, controller);
      }
      case "responses":
        return { result: await client.responses.create(call.params, opts) };
      case "responses_stream": {
        // responses.stream: the events as yielded, then the SDK's final
        // response (the snapshot it accumulated, checked against
        // response.completed).
        const stream = client.responses.stream(call.params, opts);
        const chunks = [];
        try {
          for await (const event of stream) chunks.push(event);
          return { result: await stream.finalResponse(), chunks, error: null };
        } catch (e) {
          return { chunks, error: errorOf(e) };
        }
      }
      default:
        return { error: { name: "UsageError", message: "unknown op " + call.op } };
    }
  } catch (e) {
    return { error: errorOf(e) };
  }
}

async function main() {
  let input = "";
  for await (const part of process.stdin) input += part;
  const calls = JSON.parse(input);
  const out = [];
  for (const call of calls) out.push(await runCall(call));
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
