// Drives agent.mjs with a client built on @agentclientprotocol/sdk 2.4.0 (experimental/v2)
// and records every connection with `acplab trace record`.
//
//     node driver.mjs [--only NAME[,NAME...]] [--out-dir captures] [--acplab PATH]
//
// One capture per scenario, captures/<scenario>.jsonl. The agent runs with the
// behaviour of the same name. Scenarios that reconnect (session/resume) record the
// second connection with `--append`; its records are then relabelled conn "c2" and
// their `t` shifted past the first connection's last record (each proxy starts its
// clock at 0). Nothing else in a capture is touched. Scenarios with `clients: 2` run ONE
// agent process serving two SDK connections: the second on file descriptors 3 and 4,
// recorded by the same proxy (`trace record --conn-fds 3,4`) as connection c2.

import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CWD = "/home/user/project"; // the session cwd on the wire (no local paths in captures)
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const ACPLAB = opt("--acplab", process.env.ACPLAB || "acplab");
const OUT_DIR = path.resolve(HERE, opt("--out-dir", "captures"));
const ONLY = opt("--only", null)?.split(",");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: "text", text: t });

// ------------------------------------------------------------------ one recorded connection

/** Starts the agent behind `acplab trace record`; with `clients: 2` it also serves a connection on fds 3 and 4. */
function spawnRecorded(behaviour, { out, append, stateFile, clients = 1 }) {
  const two = clients === 2;
  const recordArgs = ["trace", "record", "--out", out, append ? "--append" : "--force",
    ...(two ? ["--conn-fds", "3,4"] : []), "--", "node", "agent.mjs", behaviour];
  const child = spawn(ACPLAB, recordArgs, {
    cwd: HERE,
    stdio: ["pipe", "pipe", "inherit", ...(two ? ["pipe", "pipe"] : [])],
    env: { ...process.env, ACP_CORPUS_STATE: stateFile, ...(two ? { ACP_CORPUS_CONN_FDS: "3,4" } : {}) },
  });
  child.exitedP = new Promise((r) => child.on("exit", (code, sig) => r({ code, sig })));
  return child;
}

class Conn {
  constructor(name, behaviour, { out, append, stateFile, child = null, second = false }) {
    this.name = name;
    this.log = []; // raw JSON-RPC messages received from the agent, in order
    this.cursor = 0;
    this.waiters = [];
    this.permissionPolicy = "allow";
    this.child = child ?? spawnRecorded(behaviour, { out, append, stateFile });
    this.exited = this.child.exitedP;
    const [input, output] = second ? [this.child.stdio[3], this.child.stdio[4]] : [this.child.stdin, this.child.stdout];
    this.input = input;
    const base = acp.ndJsonStream(Writable.toWeb(input), Readable.toWeb(output));
    const self = this;
    const readable = base.readable.pipeThrough(new TransformStream({
      transform(msg, controller) {
        self.log.push(msg);
        for (const w of self.waiters.splice(0)) w();
        controller.enqueue(msg);
      },
    }));
    const app = acp.client({ name: "acplab-corpus-client" })
      .onRequest("session/request_permission", async (ctx) => {
        if (this.permissionPolicy === "allow") return { outcome: { outcome: "selected", optionId: "allow" } };
        // "hold": the user never answers; answer `cancelled` once the agent cancels the request
        await new Promise((r) => (ctx.signal.aborted ? r() : ctx.signal.addEventListener("abort", r, { once: true })));
        return { outcome: { outcome: "cancelled" } };
      })
      .onNotification("session/update", async () => {});
    this.connection = app.connect({ readable, writable: base.writable });
    this.ctx = this.connection.agent;
  }

  /** Waits for the next received message (from the cursor on) that matches `pred`; moves the cursor past it. */
  async expect(pred, what = "message", ms = 6000) {
    const end = Date.now() + ms;
    for (;;) {
      for (let i = this.cursor; i < this.log.length; i++) {
        if (pred(this.log[i])) { this.cursor = i + 1; return this.log[i]; }
      }
      const left = end - Date.now();
      if (left <= 0) throw new Error(`${this.name}: timed out waiting for ${what}`);
      await Promise.race([new Promise((r) => this.waiters.push(r)), sleep(left)]);
    }
  }
  expectUpdate(pred, what) {
    return this.expect((m) => m.method === "session/update" && pred(m.params.update), what);
  }
  expectIdle(stopReason) {
    return this.expectUpdate((u) => u.sessionUpdate === "state_update" && u.state === "idle" &&
      (stopReason === undefined || u.stopReason === stopReason), `idle ${stopReason ?? ""}`);
  }

  async initialize() {
    return this.ctx.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acplab-corpus-client", version: "0.1.0" },
      capabilities: {},
    });
  }
  async newSession() {
    await this.initialize();
    this.session = await this.ctx.buildSession(CWD).start();
    return this.session;
  }
  /** session/prompt through ActiveSession.prompt; resolves to {ok, value|error} (never throws). */
  prompt(content, options) {
    return settle(this.session.prompt(content, options));
  }
  /** A raw session/prompt through ClientContext.request (bypasses ActiveSession's checks). */
  rawPrompt(params) {
    return settle(this.ctx.request("session/prompt", params));
  }
  cancel(sessionId = this.session.sessionId) {
    return this.ctx.notify("session/cancel", { sessionId });
  }
  close(sessionId = this.session.sessionId) {
    return settle(this.ctx.request("session/close", { sessionId }));
  }
  async resume(sessionId, { replay }) {
    await this.initialize();
    const r = await settle(this.ctx.request("session/resume", { sessionId, cwd: CWD, mcpServers: [], ...(replay ? { replayFrom: { type: "start" } } : {}) }));
    this.cursor = this.log.length; // replay and the state snapshot came before the response
    return r;
  }

  /** Attaches this connection to the live session `sid` (session/resume) and sends its prompts there. */
  async attach(sid, { replay }) {
    const r = await this.resume(sid, { replay });
    this.useSession(sid);
    return r;
  }
  useSession(sid) {
    this.session = { sessionId: sid, prompt: (content) => this.ctx.request("session/prompt", { sessionId: sid, prompt: typeof content === "string" ? [text(content)] : content }) };
  }

  /** Ends the second connection of a two-client agent: close its input; the agent goes on serving the first. */
  async endSecond() {
    await sleep(50);
    this.input.end();
    await sleep(50);
    this.connection.close();
  }

  /** Ends the connection the way an editor does: close the agent's stdin, wait for it to exit. */
  async end() {
    await sleep(50);
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGTERM"), 15000);
    const status = await this.exited;
    clearTimeout(timer);
    this.connection.close();
    return status;
  }
}

async function settle(p) {
  try { return { ok: true, value: await p }; } catch (e) { return { ok: false, error: e }; }
}
const describe = (r) => (r.ok ? `ok ${JSON.stringify(r.value)}` : `error ${r.error?.code ?? ""} ${r.error?.message ?? r.error}`);

// ------------------------------------------------------------------ scenarios

const isUpdate = (kind) => (u) => u.sessionUpdate === kind;
const S = {};
const IMAGE = { type: "image", mimeType: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" };

async function simpleTurn(c, content) {
  const r = await c.prompt(content);
  await c.expectIdle();
  return r;
}

S.ok_response_before_user_message = async (c) => [describe(await simpleTurn(c, "What's the capital of France?"))];
S.ok_user_message_before_response = S.ok_response_before_user_message;
S.ok_chunked_user_message = async (c) => [describe(await simpleTurn(c, [text("Review a.py"), text("and b.py, please.")]))];
S.ok_tool_calls = async (c) => [describe(await simpleTurn(c, "What does the README say?"))];
S.ok_permission_requires_action = async (c) => [describe(await simpleTurn(c, "Change the greeting in src/main.py"))];
S.ok_cancel_pending_permission = async (c) => {
  c.permissionPolicy = "hold";
  const p = c.prompt("Change the greeting in src/main.py");
  await c.expect((m) => m.method === "session/request_permission", "permission request");
  await c.cancel();
  await c.expectIdle("cancelled");
  return [describe(await p)];
};
S.ok_cancel_active_work = async (c) => {
  const p = c.prompt("Run the tests");
  await c.expectUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress", "tool in progress");
  await c.cancel();
  await c.expectIdle("cancelled");
  return [describe(await p)];
};
S.ok_failure_after_insertion = async (c) => [
  describe(await simpleTurn(c, "Call the API")),
  describe(await simpleTurn(c, "Try again")),
  describe(await simpleTurn(c, "Once more")),
];
S.ok_failure_before_response = async (c) => [describe(await simpleTurn(c, "Summarise the changelog"))];
S.ok_reject_unsupported_content = async (c) => {
  const r1 = await c.prompt([text("What is in this picture?"), IMAGE]);
  const r2 = await simpleTurn(c, "Describe README.md instead");
  return [describe(r1), describe(r2)];
};
S.ok_identical_prompts = async (c) => [describe(await simpleTurn(c, "yes")), describe(await simpleTurn(c, "yes"))];
S.ok_held_prompts_fifo = async (c) => {
  const pA = c.prompt("A: write the parser");
  await c.expectUpdate(isUpdate("agent_message_chunk"), "A working");
  const pB = c.prompt("B: write the tests");
  const pC = c.prompt("C: update the docs");
  const rs = await Promise.all([pA, pB, pC]);
  await c.expectIdle(); await c.expectIdle(); await c.expectIdle();
  return rs.map(describe);
};
S.ok_local_command = async (c) => [describe(await simpleTurn(c, "Hello")), describe(await simpleTurn(c, "/status"))];
S.ok_pre_insertion_hook = async (c) => {
  const r1 = await c.prompt("Here is my secret token: abc123");
  await c.expectIdle("error");
  const r2 = await simpleTurn(c, "What is 2+2?");
  return [describe(r1), describe(r2)];
};
S.ok_close_active_session = async (c) => {
  const pA = c.prompt("A: refactor the module");
  await c.expectUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress", "tool in progress");
  const pB = c.prompt("B: and add tests");
  await sleep(100); // B reaches the agent and is held
  const rc = await c.close();
  return [describe(await pA), describe(await pB), `close ${describe(rc)}`];
};
S.ok_background_work = async (c) => {
  const r1 = await simpleTurn(c, "Run the test suite in the background");
  const p2 = c.prompt("Meanwhile, look at the lint warnings");
  await c.expectUpdate((u) => u.sessionUpdate === "agent_message_chunk", "reply chunk");
  await c.cancel();
  await c.expectIdle("cancelled");
  await c.expectUpdate((u) => u.sessionUpdate === "state_update" && Array.isArray(u.background) && u.background.length === 0, "empty background");
  return [describe(r1), describe(await p2)];
};
S.ok_agent_initiated_work = {
  async run(c) {
    await c.newSession();
    await c.expectIdle("end_turn"); // the agent's own work, no prompt
    return [describe(await simpleTurn(c, "Thanks for the heads-up"))];
  },
};
S.ok_notices = {
  async run(c) {
    await c.newSession();
    await c.expectUpdate(isUpdate("notice"), "notice");
    return [describe(await simpleTurn(c, "How do I enable verbose output?"))];
  },
};
S.ok_cancel_request_held_prompt = async (c) => {
  const pA = c.prompt("A: build the project");
  await c.expectUpdate(isUpdate("agent_message_chunk"), "A working");
  const ac = new AbortController();
  const pB = c.prompt("B: also deploy it", { cancellationSignal: ac.signal });
  await sleep(100); // B reaches the agent and is held
  ac.abort(); // the SDK sends $/cancel_request for B
  const rB = await pB;
  await c.expectIdle("end_turn");
  return [describe(await pA), describe(rB)];
};
async function cancelRequestAfterInsertion(c) {
  const ac = new AbortController();
  const p = c.prompt("Write a long essay about parsers", { cancellationSignal: ac.signal });
  await c.expectUpdate(isUpdate("user_message"), "user_message");
  ac.abort(); // $/cancel_request after the message was reported inserted
  const r = await p;
  if (r.ok) {
    await c.expectUpdate(isUpdate("agent_message_chunk"), "still working");
    await c.cancel();
  }
  await c.expectIdle("cancelled");
  return [describe(r)];
}
S.ok_cancel_request_after_insertion = cancelRequestAfterInsertion;
async function heldThenCancel(c, { thirdPrompt }) {
  const pA = c.prompt("A: migrate the database");
  await c.expectUpdate(isUpdate("agent_message_chunk"), "A working");
  const pB = c.prompt("B: then update the ORM models");
  await sleep(100); // B reaches the agent and is held
  await c.cancel();
  await c.expectIdle("cancelled");
  const out = [describe(await pA), describe(await pB)];
  if (!out[1].startsWith("error")) await c.expectIdle("end_turn");
  if (thirdPrompt) out.push(describe(await simpleTurn(c, "C: just summarise the plan")));
  return out;
}
S.ok_held_prompt_cancelled_by_session_cancel = (c) => heldThenCancel(c, { thirdPrompt: true });

async function twoConnections(name, c1fn, c2fn, ctx) {
  const c1 = ctx.open();
  const s = await c1.newSession();
  const log = await c1fn(c1, s);
  await c1.end();
  const c2 = ctx.open({ append: true });
  log.push(...(await c2fn(c2, s.sessionId)));
  await c2.end();
  return log;
}
S.ok_resume_replay_start = {
  run: (c, ctx) => twoConnections("ok_resume_replay_start", async (c1) => [
    describe(await simpleTurn(c1, [text("Summarise README.md"), text("in one line")])),
    describe(await simpleTurn(c1, "/status")),
  ], async (c2, sid) => {
    const r = await c2.resume(sid, { replay: true });
    const out = [`resume ${describe(r)}`];
    c2.session = { prompt: (content) => c2.ctx.request("session/prompt", { sessionId: sid, prompt: typeof content === "string" ? [text(content)] : content }), sessionId: sid };
    out.push(describe(await simpleTurn(c2, "Thanks")));
    out.push(`close ${describe(await c2.close(sid))}`);
    return out;
  }, ctx),
  connections: 2,
};
S.ok_resume_without_replay = {
  run: (c, ctx) => twoConnections("ok_resume_without_replay", async (c1) => [
    describe(await simpleTurn(c1, "Remember: the build uses make")),
  ], async (c2, sid) => {
    const r = await c2.resume(sid, { replay: false });
    const out = [`resume ${describe(r)}`];
    c2.session = { prompt: (content) => c2.ctx.request("session/prompt", { sessionId: sid, prompt: [text(content)] }), sessionId: sid };
    out.push(describe(await simpleTurn(c2, "What build tool do we use?")));
    out.push(`close ${describe(await c2.close(sid))}`);
    return out;
  }, ctx),
  connections: 2,
};

// ---- one agent process, two SDK connections (c1 on stdio, c2 on fds 3/4): `clients: 2` ----

async function fanoutScenario(c1, c2) {
  const s = await c1.newSession();
  const out = [`c2 attach ${describe(await c2.attach(s.sessionId, { replay: false }))}`];
  out.push(`c1 ${describe(await simpleTurn(c1, "Hello from the editor"))}`);
  await c2.expectIdle("end_turn"); // the same turn, fanned out
  out.push(`c2 ${describe(await simpleTurn(c2, "Hello from the phone"))}`);
  await c1.expectIdle("end_turn");
  return out;
}
S.ok_two_clients_fanout = { clients: 2, run: fanoutScenario };
S.neg_two_clients_fanout_other_id = { clients: 2, run: fanoutScenario };
S.ok_prompt_during_replay = {
  clients: 2,
  async run(c1, c2) {
    const s = await c1.newSession();
    const out = [`c1 ${describe(await simpleTurn(c1, [text("Summarise README.md"), text("in one line")]))}`];
    const resumed = c2.resume(s.sessionId, { replay: true });
    await c2.expectUpdate(isUpdate("user_message"), "c2 replay starts");
    const live = c1.prompt([text("Now summarise"), text("CHANGELOG.md")]); // inserted while c2 replays
    out.push(`c2 resume ${describe(await resumed)}`);
    out.push(`c1 ${describe(await live)}`);
    await c1.expectIdle("end_turn");
    return out;
  },
};
async function replayToSecond(c1, c2) {
  const s = await c1.newSession();
  const out = [`c1 ${describe(await simpleTurn(c1, [text("Review a.py"), text("and b.py, please.")]))}`];
  out.push(`c1 ${describe(await simpleTurn(c1, "Thanks"))}`);
  out.push(`c2 resume ${describe(await c2.attach(s.sessionId, { replay: true }))}`);
  out.push(`c2 ${describe(await simpleTurn(c2, "Anything else?"))}`);
  await c1.expectIdle("end_turn");
  return out;
}
S.ok_resume_replay_two_clients = { clients: 2, run: replayToSecond };
S.neg_replay_full_then_chunks = { clients: 2, run: replayToSecond };
async function retentionScenario(c1, c2) {
  const s = await c1.newSession();
  const out = [`c1 ${describe(await simpleTurn(c1, "Remember: the build uses make"))}`];
  out.push(`c1 ${describe(await simpleTurn(c1, "Remember: the tests use pytest"))}`);
  out.push(`c2 resume ${describe(await c2.attach(s.sessionId, { replay: true }))}`);
  return out;
}
S.ok_retention_forgets = { clients: 2, run: retentionScenario };
S.neg_retention_reuses_id = { clients: 2, run: retentionScenario };
async function commandsScenario(c1, c2) {
  const s = await c1.newSession();
  const out = [`c1 ${describe(await simpleTurn(c1, "Hello"))}`];
  out.push(`c1 ${describe(await simpleTurn(c1, "/status"))}`); // live-only: absent from replay
  out.push(`c1 ${describe(await simpleTurn(c1, "/remember the build uses make"))}`); // retained: replayed, not re-run
  out.push(`c2 resume ${describe(await c2.attach(s.sessionId, { replay: true }))}`);
  await sleep(200); // a re-run command would show here
  out.push(`c2 ${describe(await simpleTurn(c2, "What did I ask you to remember?"))}`);
  await c1.expectIdle("end_turn");
  return out;
}
S.ok_commands_two_clients = { clients: 2, run: commandsScenario };
S.neg_command_rerun_on_replay = { clients: 2, run: commandsScenario };

// ---- non-conforming agents ----
S.neg_error_after_user_message = async (c) => [describe(await simpleTurn(c, "Summarise the changelog"))];
S.neg_response_after_idle = S.ok_response_before_user_message;
S.neg_double_idle = async (c) => {
  const r = await simpleTurn(c, "Say done");
  await c.expectIdle();
  return [describe(r)];
};
S.neg_error_object_without_code = async (c) => [describe(await simpleTurn(c, "Call the API"))];
S.neg_missing_message_id = async (c) => [describe(await simpleTurn(c, "Hello"))];
S.neg_duplicate_message_id = S.ok_identical_prompts;
S.neg_user_message_never_reported = async (c) => [describe(await simpleTurn(c, "Hello"))];
S.neg_tool_update_after_idle = async (c) => {
  const r = await simpleTurn(c, "Format the code");
  await c.expectUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed", "late tool update");
  return [describe(r)];
};
S.neg_running_never_idle = async (c) => {
  const r = await c.prompt("Finish up");
  await c.expectUpdate(isUpdate("agent_message_chunk"), "reply");
  await sleep(500); // the agent has finished everything it will ever send
  return [describe(r)];
};
S.neg_cancel_request_32800_after_insertion = cancelRequestAfterInsertion;
S.neg_error_idle_after_cancel = async (c) => {
  const p = c.prompt("Run the tests");
  await c.expectUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress", "tool in progress");
  await c.cancel();
  await c.expectIdle();
  return [describe(await p)];
};
S.neg_cancelled_idle_after_end_turn = async (c) => {
  const r = await simpleTurn(c, "Say done");
  await c.cancel(); // the user pressed stop just as the turn ended
  await c.expectIdle("cancelled");
  return [describe(r)];
};
S.neg_held_prompt_run_after_cancel = (c) => heldThenCancel(c, { thirdPrompt: false });
S.neg_replay_new_ids = {
  run: (c, ctx) => twoConnections("neg_replay_new_ids", async (c1) => [describe(await simpleTurn(c1, "Hello"))],
    async (c2, sid) => [`resume ${describe(await c2.resume(sid, { replay: true }))}`, `close ${describe(await c2.close(sid))}`], ctx),
  connections: 2,
};
S.neg_replay_chunks_without_reset = {
  run: (c, ctx) => twoConnections("neg_replay_chunks_without_reset", async (c1) => [describe(await simpleTurn(c1, [text("Review a.py"), text("and b.py, please.")]))],
    async (c2, sid) => [`resume ${describe(await c2.resume(sid, { replay: true }))}`, `close ${describe(await c2.close(sid))}`], ctx),
  connections: 2,
};
S.neg_updates_after_close = async (c) => {
  const p = c.prompt("Refactor the module");
  await c.expectUpdate((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress", "tool in progress");
  const rc = await c.close();
  await c.expectIdle("cancelled"); // arrives after the close response
  return [describe(await p), `close ${describe(rc)}`];
};
S.neg_unknown_state = async (c) => [describe(await simpleTurn(c, "Say done"))];
S.neg_background_omitted = async (c) => {
  const r1 = await simpleTurn(c, "Run the test suite in the background");
  const r2 = await simpleTurn(c, "Meanwhile, look at the lint warnings");
  await c.expectUpdate((u) => u.sessionUpdate === "state_update" && Array.isArray(u.background) && u.background.length === 0, "empty background");
  return [describe(r1), describe(r2)];
};
S.neg_user_message_for_rejected_prompt = async (c) => {
  const r = await c.prompt([text("What is in this picture?"), IMAGE]);
  await c.expectUpdate(isUpdate("user_message"), "user_message");
  return [describe(r)];
};
S.neg_empty_prompt_accepted = async (c) => {
  const r = await c.rawPrompt({ sessionId: c.session.sessionId, prompt: [] });
  await c.expectIdle();
  return [describe(r)];
};
S.neg_client_empty_prompt = async (c) => {
  const viaHelper = await c.prompt([]); // ActiveSession.prompt refuses locally (nothing sent)
  const r = await c.rawPrompt({ sessionId: c.session.sessionId, prompt: [] });
  return [`ActiveSession.prompt([]): ${describe(viaHelper)}`, describe(r)];
};
S.neg_chunk_without_message_id = async (c) => [describe(await simpleTurn(c, "Say done"))];
S.neg_idle_without_stop_reason = async (c) => [describe(await simpleTurn(c, "Say done"))];
S.neg_resume_without_state_snapshot = {
  run: (c, ctx) => twoConnections("neg_resume_without_state_snapshot", async (c1) => [describe(await simpleTurn(c1, "Remember: the build uses make"))],
    async (c2, sid) => {
      const out = [`resume ${describe(await c2.resume(sid, { replay: false }))}`];
      out.push(`close ${describe(await c2.close(sid))}`);
      return out;
    }, ctx),
  connections: 2,
};
S.neg_custom_stop_reason_without_prefix = async (c) => [describe(await simpleTurn(c, "Think hard"))];
S.neg_tool_left_unfinished_on_error = async (c) => [describe(await simpleTurn(c, "Call the API"))];

// ------------------------------------------------------------------ capture post-processing (reconnects)

function relabelSecondConnection(file, firstPartLines) {
  const lines = fs.readFileSync(file, "utf8").split("\n").filter(Boolean);
  const recs = lines.map((l) => JSON.parse(l));
  const tEnd = recs[firstPartLines - 1]?.t ?? 0;
  const out = recs.map((r, i) => (i < firstPartLines ? r : { ...r, conn: "c2", t: Math.round((r.t + tEnd + 1) * 1000) / 1000 }));
  fs.writeFileSync(file, out.map((r) => JSON.stringify(r)).join("\n") + "\n");
}

// ------------------------------------------------------------------ main

async function record(name) {
  const scenario = S[name];
  // one agent serving two clients: captures/two_clients/ (tests/fixtures/sdk/v2/two_clients/)
  const out = path.join(OUT_DIR, scenario.clients === 2 ? "two_clients" : "", `${name}.jsonl`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const stateFile = path.join(os.tmpdir(), `acplab-corpus-${name}.json`);
  fs.rmSync(stateFile, { force: true });
  let firstPartLines = 0;
  const ctx = {
    open: ({ append = false } = {}) => {
      if (append) firstPartLines = fs.readFileSync(out, "utf8").split("\n").filter(Boolean).length;
      return new Conn(name, name, { out, append, stateFile });
    },
  };
  let log;
  if (typeof scenario === "function") {
    const c = ctx.open();
    await c.newSession();
    log = await scenario(c);
    const st = await c.end();
    log.push(`agent exit ${JSON.stringify(st)}`);
  } else if (scenario.clients === 2) {
    const child = spawnRecorded(name, { out, stateFile, clients: 2 });
    const c1 = new Conn(`${name} c1`, name, { child });
    const c2 = new Conn(`${name} c2`, name, { child, second: true });
    log = await scenario.run(c1, c2);
    await c2.endSecond();
    const st = await c1.end();
    log.push(`agent exit ${JSON.stringify(st)}`);
  } else if (scenario.connections === 2) {
    log = await scenario.run(null, ctx);
    relabelSecondConnection(out, firstPartLines);
  } else {
    const c = ctx.open();
    log = await scenario.run(c, ctx);
    const st = await c.end();
    log.push(`agent exit ${JSON.stringify(st)}`);
  }
  fs.rmSync(stateFile, { force: true });
  return log;
}

fs.mkdirSync(OUT_DIR, { recursive: true });
const names = ONLY ?? Object.keys(S);
let failed = 0;
for (const name of names) {
  if (!S[name]) { console.error(`unknown scenario ${name}`); failed++; continue; }
  try {
    const log = await record(name);
    console.log(`${name}:\n  ${log.join("\n  ")}`);
  } catch (e) {
    failed++;
    console.error(`${name}: FAILED ${e?.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
