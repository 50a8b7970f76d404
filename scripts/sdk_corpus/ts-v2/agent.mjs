// An ACP v2 agent built on @agentclientprotocol/sdk 2.4.0 (experimental/v2 entry point).
//
//     node agent.mjs BEHAVIOUR      (or: node agent.mjs --mode BEHAVIOUR; `ok` is the default, conforming one)
//
// It speaks ACP over stdio. BEHAVIOUR (see BEHAVIOURS below) picks how it runs a
// turn: most behaviours conform to the v2 prompt lifecycle, the `neg_*` ones break
// exactly one rule on purpose. All IDs are deterministic counters (sess_1,
// msg_u1, msg_a1, call_1, ...). If ACP_CORPUS_STATE names a file, the agent keeps
// its sessions' retained history and ID counters there, so a second agent process
// (a restart) can serve session/resume with replay. If ACP_CORPUS_CONN_FDS is "IN,OUT",
// the same process serves a second connection on those file descriptors (one agent,
// two clients: every session update goes to every connection attached to the session,
// by session/new or session/resume; a resume's replay and state snapshot go to the
// resuming connection only).
//
// Everything goes through the SDK: typed request/notification handlers on an
// AgentApp, `ctx.client.notify("session/update", ...)` for updates and
// `ctx.client.request("session/request_permission", ...)` for permissions. The SDK
// does not validate what an agent *sends* in notifications or prompt results, so
// non-conforming payloads go out through the same calls. The one exception is
// neg_empty_prompt_accepted: the typed session/prompt handler never sees an empty
// prompt (the SDK answers -32602 itself), so that behaviour handles session/prompt
// through the SDK's raw "*" request fallback instead.

import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { Readable, Transform, Writable } from "node:stream";
import fs from "node:fs";
import net from "node:net";

const BEHAVIOUR = ((m) => (m === undefined || m === "ok" ? "ok_response_before_user_message" : m))(process.argv[2] === "--mode" ? process.argv[3] : process.argv[2]);
const STATE_FILE = process.env.ACP_CORPUS_STATE || null;
const CONN_FDS = process.env.ACP_CORPUS_CONN_FDS ? process.env.ACP_CORPUS_CONN_FDS.split(",").map(Number) : null;
const { RequestError } = acp;

// ------------------------------------------------------------------ small helpers

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tick = () => new Promise((r) => setImmediate(r));
function deferred() {
  let resolve, reject;
  const promise = new Promise((a, b) => { resolve = a; reject = b; });
  promise.catch(() => {});
  return { promise, resolve, reject };
}
const text = (t) => ({ type: "text", text: t });
function promptText(prompt) {
  return (prompt ?? []).filter((b) => b && b.type === "text").map((b) => b.text).join(" ");
}
/** Resolves when `cond()` is true (polled), or after `ms` (fallback so a broken run never hangs). */
async function until(cond, ms = 4000) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(5);
  return cond();
}
function abortError() {
  const e = new Error("aborted");
  e.name = "AbortError";
  return e;
}

// ------------------------------------------------------------------ the order of the input (C11)
//
// The SDK dispatches a response to the agent's request (a permission answer) before a notification
// that came earlier on the wire (session/cancel): a permission answered after the cancel would read
// as approval. So every input line is counted as it is read, in wire order, before the SDK parses
// it, and the last session/cancel of each session remembered by its count: a turn whose permission
// answer arrives checks whether a cancel was read since it asked (`cancelReadSince`).

const input = { lines: 0, cancels: new Map() }; // session -> the count of its last session/cancel line
function countInput(readable) {
  let rest = "";
  const counted = new Transform({
    transform(chunk, _enc, done) {
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop();
      for (const line of lines) {
        input.lines += 1;
        if (!line.includes('"session/cancel"')) continue;
        try {
          const m = JSON.parse(line);
          if (m.method === "session/cancel" && m.params?.sessionId) input.cancels.set(m.params.sessionId, input.lines);
        } catch { /* the SDK reports bad lines */ }
      }
      done(null, chunk);
    },
  });
  return readable.pipe(counted);
}
const cancelReadSince = (sid, mark) => (input.cancels.get(sid) ?? 0) > mark;

// ------------------------------------------------------------------ persistent state

const store = loadStore();
function loadStore() {
  if (STATE_FILE && fs.existsSync(STATE_FILE)) return JSON.parse(fs.readFileSync(STATE_FILE, "utf8"));
  return { counters: { session: 0, user: 0, agent: 0, tool: 0 }, sessions: {} };
}
function saveStore() {
  if (STATE_FILE) fs.writeFileSync(STATE_FILE, JSON.stringify(store, null, 1));
}
const nextId = (kind, prefix) => { store.counters[kind] += 1; saveStore(); return `${prefix}${store.counters[kind]}`; };

// ------------------------------------------------------------------ sessions

class Session {
  constructor(id, cwd) {
    this.id = id;
    this.cwd = cwd;
    this.queue = []; // held submissions (not yet inserted), FIFO
    this.current = null; // the submission whose turn is running
    this.work = null; // { cancelled: deferred, isCancelled, closing }
    this.backgroundReported = false;
    this.closed = false;
    this.pendingPermissions = new Set(); // AbortControllers of outstanding permission requests
    this.clients = new Map(); // connection tag -> AgentContext, for the connections attached to this session
    if (!store.sessions[id]) store.sessions[id] = { cwd, history: [] };
  }
  get history() { return store.sessions[this.id].history; }
  retain(entry) {
    this.history.push(entry);
    // a retention policy: only the last `retainLast` entries are kept for replay
    if (behaviour.retainLast) this.history.splice(0, Math.max(0, this.history.length - behaviour.retainLast));
    saveStore();
  }
  /** Sends `u` to every attached connection (`behaviour.fanout` may change what a non-submitting one gets). */
  update(u, submitter = null) {
    if (this.silenced) return Promise.resolve([]); // the close was answered: nothing more for this session (C14)
    return Promise.all([...this.clients].map(([tag, c]) => {
      const v = behaviour.fanout && submitter !== null && tag !== submitter ? behaviour.fanout(u) : u;
      return v ? c.notify("session/update", { sessionId: this.id, update: v }).catch(() => {}) : null;
    }));
  }
  /** The connection for requests no prompt started (the first attached). */
  get client() { return [...this.clients.values()][0]; }
  state(state, extra = {}) { return this.update({ sessionUpdate: "state_update", state, ...extra }); }
}
const sessions = new Map();

// ------------------------------------------------------------------ a turn

class Turn {
  constructor(session, sub) {
    this.s = session;
    this.sub = sub;
    this.prompt = sub.params.prompt;
    this.text = promptText(sub.params.prompt);
    this.cancelled = deferred();
    this.isCancelled = false;
    this.closing = false;
  }
  update(u) { return this.s.update(u, this.sub.tag ?? null); }
  state(st, extra) { return this.s.state(st, extra); }
  running(extra) { return this.state("running", extra); }
  idle(stopReason, extra = {}) {
    return this.state("idle", stopReason === undefined ? extra : { stopReason, ...extra });
  }
  /** Ends the work: `cancelled` if a session/cancel (or close) of it has been read by now, else end_turn (C7). */
  finish(extra = {}) { return this.idle(this.isCancelled ? "cancelled" : "end_turn", extra); }
  /** Answers the pending session/prompt successfully and lets the SDK write the response first. */
  async respond(result) {
    this.sub.responded = true;
    this.sub.deferred.resolve(result);
    await tick();
  }
  async reject(error) {
    this.sub.responded = true;
    this.sub.deferred.reject(error);
    await tick();
  }
  newUserId() { return nextId("user", "msg_u"); }
  newAgentId() { return nextId("agent", "msg_a"); }
  newToolId() { return nextId("tool", "call_"); }
  userMessage(messageId, content = this.prompt) {
    return this.update({ sessionUpdate: "user_message", messageId, content });
  }
  async userChunks(messageId, blocks = this.prompt) {
    for (const b of blocks) await this.update({ sessionUpdate: "user_message_chunk", messageId, content: b });
  }
  /** Streams an agent message in chunks; retains it for replay. */
  async reply(parts, { retain = true } = {}) {
    const id = this.newAgentId();
    for (const p of parts) await this.update({ sessionUpdate: "agent_message_chunk", messageId: id, content: text(p) });
    if (retain) this.s.retain({ kind: "agent", messageId: id, content: parts.map(text) });
    return id;
  }
  tool(toolCallId, fields) { return this.update({ sessionUpdate: "tool_call_update", toolCallId, ...fields }); }
  notice(severity, title, description) {
    return this.update({ sessionUpdate: "notice", severity, title, ...(description ? { description } : {}) });
  }
  /** Inserts the user message: the standard conforming way (running first, then response, then report). */
  async insert({ order = "response_first", chunked = false, retain = true, content = this.prompt, command = false } = {}) {
    const mid = this.newUserId();
    if (retain) this.s.retain({ kind: "user", messageId: mid, content, chunked, ...(command ? { command } : {}) });
    const report = () => (chunked ? this.userChunks(mid, content) : this.userMessage(mid, content));
    if (order === "response_first") {
      await this.respond({ messageId: mid });
      await report();
    } else {
      await report();
      await this.respond({ messageId: mid });
    }
    return mid;
  }
  /** Waits for session/cancel (or session/close) of this work, or gives up after `ms`. */
  async waitCancel(ms = 4000) {
    await Promise.race([this.cancelled.promise, sleep(ms)]);
    return this.isCancelled;
  }
}

/** The common conforming turn. */
async function standardTurn(t, opts = {}) {
  await t.running();
  await t.insert(opts);
  await t.reply(opts.reply ?? ["You said: ", t.text]);
  await t.finish();
}

// ------------------------------------------------------------------ behaviours
//
// Each behaviour may define:
//   turn(t)                 run one inserted-or-rejected submission (default standardTurn)
//   onNewSession(s)         after the session/new response (agent-initiated work)
//   onCancel(s, work)       custom session/cancel handling (default: cancel current work, -32800 held prompts)
//   resume(s, replay)       custom replay (default: conforming replay)
//   close(s)                custom session/close handling
//   cancelRequestInserted   how to answer $/cancel_request for an inserted but not yet answered prompt

const B = {};

B.ok_response_before_user_message = {
  turn: (t) => standardTurn(t, { order: "response_first", reply: ["The capital of France ", "is Paris."] }),
};
B.ok_user_message_before_response = {
  turn: (t) => standardTurn(t, { order: "user_message_first", reply: ["The capital of France ", "is Paris."] }),
};
B.ok_chunked_user_message = {
  turn: (t) => standardTurn(t, { chunked: true, reply: ["Both files ", "look fine."] }),
};
B.ok_tool_calls = {
  async turn(t) {
    await t.running();
    await t.insert();
    const c = t.newToolId();
    await t.tool(c, { title: "Read README.md", kind: "read", status: "pending", locations: [{ path: "/home/user/project/README.md" }] });
    await t.tool(c, { status: "in_progress" });
    await t.tool(c, { status: "completed", content: [{ type: "content", content: text("# Project\nA demo project.") }] });
    await t.reply(["The README describes ", "a demo project."]);
    await t.finish();
  },
};

// ACP v2's diff (schema v2 `Diff`): structured `changes` plus an optional git patch, every path absolute
const MAIN_PY = "/home/user/project/src/main.py";
const MAIN_PY_DIFF = {
  type: "diff",
  changes: [{ operation: "modify", path: MAIN_PY, fileType: "text" }],
  patch: {
    format: "git_patch",
    text: `diff --git ${MAIN_PY} ${MAIN_PY}\n--- ${MAIN_PY}\n+++ ${MAIN_PY}\n@@ -1 +1 @@\n-print('hi')\n+print('hello')\n`,
  },
};

async function permissionTurn(t, { expectCancel = false } = {}) {
  await t.running();
  await t.insert();
  const c = t.newToolId();
  await t.tool(c, { title: "Edit src/main.py", kind: "edit", status: "pending" });
  await t.state("requires_action");
  const ac = new AbortController();
  t.s.pendingPermissions.add(ac);
  const onCancel = () => ac.abort(RequestError.requestCancelled());
  t.cancelled.promise.then(onCancel);
  let outcome;
  const asked = input.lines; // a session/cancel read after this, and before the answer is used, wins (C11)
  try {
    // Without stopWaitingOnCancel the promise still settles with the client's answer after
    // $/cancel_request; the agent gives the client a short grace period for it, then stops
    // waiting (so the wire order is fixed: $/cancel_request, the client's answer, idle).
    const answer = (t.sub.client ?? t.s.client).request("session/request_permission", {
      sessionId: t.s.id,
      title: "Allow editing src/main.py?",
      subject: { type: "tool_call", toolCall: { toolCallId: c } },
      options: [
        { optionId: "allow", name: "Allow once", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    }, { cancellationSignal: ac.signal });
    const gaveUp = t.cancelled.promise.then(() => sleep(500)).then(() => ({ outcome: { outcome: "cancelled" } }));
    const res = await Promise.race([answer, gaveUp]);
    outcome = res.outcome;
  } catch (e) {
    outcome = { outcome: "cancelled" };
  } finally {
    t.s.pendingPermissions.delete(ac);
  }
  if (!t.isCancelled && cancelReadSince(t.s.id, asked)) cancelSession(t.s); // the SDK has not run its handler yet
  if (t.isCancelled) {
    await t.tool(c, { status: "cancelled" });
    await t.idle("cancelled");
    return;
  }
  if (outcome.outcome === "selected" && outcome.optionId === "allow") {
    await t.running();
    await t.tool(c, { status: "in_progress" });
    await t.tool(c, { status: "completed", content: [MAIN_PY_DIFF] });
    await t.reply(["Updated src/main.py."]);
    await t.finish();
  } else {
    await t.running();
    await t.tool(c, { status: "cancelled" });
    await t.reply(["Left src/main.py unchanged."]);
    await t.finish();
  }
}
B.ok_permission_requires_action = { turn: (t) => permissionTurn(t) };
B.ok_cancel_pending_permission = { turn: (t) => permissionTurn(t, { expectCancel: true }) };

B.ok_cancel_active_work = {
  async turn(t) {
    await t.running();
    await t.insert();
    const a = t.newAgentId();
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: a, content: text("Running the test suite...") });
    const c = t.newToolId();
    await t.tool(c, { title: "pytest", kind: "execute", status: "in_progress" });
    if (await t.waitCancel()) {
      await t.tool(c, { status: "cancelled" });
      await t.idle("cancelled");
    } else {
      await t.tool(c, { status: "completed" });
      await t.idle("end_turn");
    }
  },
};

// Failure after insertion: one capture, three prompts (error object / omitted / null).
B.ok_failure_after_insertion = {
  async turn(t) {
    await t.running();
    await t.insert();
    const n = t.s.history.filter((e) => e.kind === "user").length;
    if (n === 1) {
      const c = t.newToolId();
      await t.tool(c, { title: "Fetch https://example.com/api", kind: "fetch", status: "in_progress" });
      await t.tool(c, { status: "failed" });
      await t.idle("error", { error: { code: -32000, message: "Authentication required" } });
    } else if (n === 2) {
      await t.reply(["Let me check..."]);
      await t.idle("error");
    } else {
      await t.idle("error", { error: null });
    }
  },
};
B.ok_failure_before_response = {
  async turn(t) {
    await t.running();
    const mid = t.newUserId();
    t.s.retain({ kind: "user", messageId: mid, content: t.prompt, chunked: false });
    await t.userMessage(mid); // inserted and reported
    // the provider fails before the response went out: still a success, failure on the idle
    await t.idle("error", { error: { code: -32603, message: "Provider unavailable" } });
    await t.respond({ messageId: mid });
  },
};

function rejectsUnsupported(t) {
  const bad = t.prompt.find((b) => !["text", "resource_link"].includes(b.type));
  return bad ? RequestError.invalidParams({ unsupportedContentType: bad.type }, "prompt content type not supported") : null;
}
B.ok_reject_unsupported_content = {
  async turn(t) {
    const err = rejectsUnsupported(t);
    if (err) return t.reject(err);
    return standardTurn(t, { reply: ["I can only read text."] });
  },
};
B.ok_identical_prompts = { turn: (t) => standardTurn(t, { reply: ["Okay."] }) };

// Two prompts sent while busy: held, then inserted one after another in arrival order.
B.ok_held_prompts_fifo = {
  async turn(t) {
    const first = t.text.startsWith("A:");
    await t.running();
    await t.insert();
    if (first) {
      await t.reply(["Working on A..."]);
      await until(() => t.s.queue.length >= 2 || t.isCancelled); // a cancel ends the wait (C7)
      await t.reply(["A is done."]);
    } else {
      await t.reply([`Done with ${t.text.slice(0, 1)}.`]);
    }
    await t.finish();
  },
};

// A local command: a live-only user message, still running -> idle end_turn.
async function localCommand(t) {
  await t.running();
  await t.insert({ retain: false });
  const a = t.newAgentId();
  const n = t.s.history.filter((e) => e.kind === "user").length;
  await t.update({ sessionUpdate: "agent_message", messageId: a, content: [text(`Session ${t.s.id}: ${n} retained user message(s).`)] });
  await t.finish();
}
B.ok_local_command = { turn: (t) => (t.text.startsWith("/") ? localCommand(t) : standardTurn(t)) };

B.ok_resume_replay_start = {
  turn: (t) => (t.text.startsWith("/") ? localCommand(t) : standardTurn(t, { chunked: t.prompt.length > 1, reply: ["The README ", "is short."] })),
};
B.ok_resume_without_replay = { turn: (t) => standardTurn(t, { reply: ["Noted."] }) };

B.ok_close_active_session = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.reply(["Refactoring..."]);
    const c = t.newToolId();
    await t.tool(c, { title: "Rewrite module", kind: "edit", status: "in_progress" });
    await t.waitCancel();
    await t.tool(c, { status: "cancelled" });
    await t.idle("cancelled");
  },
};

// Background work: listed in every state update once reported; survives session/cancel.
async function backgroundTurn(t, { omitOnce = false } = {}) {
  const s = t.s;
  if (!s.bg) {
    // first prompt: start a detached test run
    await t.running();
    await t.insert();
    const c = t.newToolId();
    s.bg = c;
    await t.tool(c, { title: "Run test suite (background)", kind: "execute", status: "in_progress" });
    await t.running({ background: [{ type: "tool_call", toolCallId: c }] });
    await t.reply(["Started the test suite in the background."]);
    await t.finish({ background: [{ type: "tool_call", toolCallId: c }] });
    return;
  }
  // second prompt: foreground work that gets cancelled (ok) or finishes (neg)
  const bg = [{ type: "tool_call", toolCallId: s.bg }];
  await t.running(omitOnce ? {} : { background: bg });
  await t.insert();
  await t.reply(["Looking at the lint warnings..."]);
  if (omitOnce) {
    await t.idle("end_turn", { background: bg });
  } else {
    await t.waitCancel();
    await t.idle(t.isCancelled ? "cancelled" : "end_turn", { background: bg });
  }
  // the background run finishes while idle: final status first, then a snapshot without it
  await sleep(30);
  await t.tool(s.bg, { status: "completed", content: [{ type: "content", content: text("42 passed") }] });
  await s.state("idle", { background: [] });
}
B.ok_background_work = { turn: (t) => backgroundTurn(t) };

B.ok_agent_initiated_work = {
  async onNewSession(s) {
    await sleep(20);
    await s.state("running");
    const a = nextId("agent", "msg_a");
    await s.update({ sessionUpdate: "agent_message_chunk", messageId: a, content: text("Good morning. ") });
    await s.update({ sessionUpdate: "agent_message_chunk", messageId: a, content: text("The nightly build failed; I looked into it.") });
    s.retain({ kind: "agent", messageId: a, content: [text("Good morning. The nightly build failed; I looked into it.")] });
    await s.state("idle", { stopReason: "end_turn" });
  },
  turn: (t) => standardTurn(t, { reply: ["You're welcome."] }),
};

// A foreground hook runs before insertion. It can reject the prompt (error response,
// and the pre-insertion work still ends with idle error) or let it through.
B.ok_pre_insertion_hook = {
  async turn(t) {
    await t.running();
    const h = t.newToolId();
    await t.tool(h, { title: "pre-prompt hook", kind: "other", status: "in_progress" });
    if (t.text.includes("secret")) {
      await t.tool(h, { status: "failed" });
      const err = new RequestError(-32602, "Prompt rejected by pre-prompt hook", { hook: "no-secrets" });
      await t.reject(err);
      await t.idle("error", { error: { code: err.code, message: err.message, data: err.data } });
      return;
    }
    await t.tool(h, { status: "completed" });
    await t.insert({ order: "user_message_first" });
    await t.reply(["Hook passed; ", "here is the answer."]);
    await t.finish();
  },
};

B.ok_notices = {
  async onNewSession(s) {
    await sleep(10);
    await s.update({ sessionUpdate: "notice", severity: "info", title: "Indexing workspace", description: "Search results may be incomplete for a minute." });
  },
  async turn(t) {
    await t.running();
    await t.insert();
    const c = t.newToolId();
    await t.tool(c, { title: "Fetch docs", kind: "fetch", status: "in_progress" });
    await t.notice("warning", "Rate limited by provider; retrying");
    await t.tool(c, { status: "failed", content: [{ type: "content", content: text("HTTP 503") }] });
    await t.notice("error", "Could not fetch the docs", "Answering from the local copy instead.");
    await t.reply(["From the local copy: ", "use --verbose."]);
    await t.finish();
  },
};

// $/cancel_request for a held prompt -> -32800 (it was never inserted).
B.ok_cancel_request_held_prompt = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.reply(["Working on it..."]);
    // keep busy until the held prompt has been withdrawn
    await until(() => t.s.withdrawn >= 1 || t.isCancelled); // a cancel ends the wait (C7)
    await t.reply(["Done."]);
    await t.finish();
  },
};

// $/cancel_request after insertion but before the response: the response still succeeds.
async function insertThenAwaitCancelRequest(t, { answer }) {
  await t.running();
  const mid = t.newUserId();
  t.s.retain({ kind: "user", messageId: mid, content: t.prompt, chunked: false });
  await t.userMessage(mid);
  await until(() => t.sub.signal.aborted); // the client's $/cancel_request arrives
  if (answer === "success") {
    await t.respond({ messageId: mid });
    await t.reply(["Still working..."]);
    await t.waitCancel();
    await t.idle(t.isCancelled ? "cancelled" : "end_turn");
  } else {
    // The natural SDK path: the runtime call was given the request's AbortSignal and
    // rejects with an AbortError; the SDK turns that into -32800 by itself (C1).
    await t.reject(abortError());
    await t.idle("cancelled");
  }
}
B.ok_cancel_request_after_insertion = { turn: (t) => insertThenAwaitCancelRequest(t, { answer: "success" }) };

B.ok_held_prompt_cancelled_by_session_cancel = {
  async turn(t) {
    await t.running();
    await t.insert();
    if (t.text.startsWith("A:")) {
      await t.reply(["Working on A..."]);
      await t.waitCancel();
      await t.idle(t.isCancelled ? "cancelled" : "end_turn");
    } else {
      await t.reply([`Done with ${t.text.slice(0, 1)}.`]);
      await t.finish();
    }
  },
};

// ---- non-conforming behaviours (each breaks one rule) ----

B.neg_error_after_user_message = {
  async turn(t) {
    await t.running();
    const mid = t.newUserId();
    t.s.retain({ kind: "user", messageId: mid, content: t.prompt, chunked: false });
    await t.userMessage(mid);
    const err = new RequestError(-32603, "Provider returned HTTP 500");
    await t.reject(err); // v1 habit: failure after insertion as an error response (E2)
    await t.idle("error", { error: { code: err.code, message: err.message } });
  },
};
B.neg_response_after_idle = {
  async turn(t) {
    await t.running();
    const mid = t.newUserId();
    await t.userMessage(mid);
    await t.reply(["The capital of France ", "is Paris."]);
    await t.idle("end_turn");
    await t.respond({ messageId: mid }); // held until the work ended (P2 smell)
  },
};
B.neg_double_idle = {
  async turn(t) {
    await standardTurn(t, { reply: ["Done."] });
    await t.idle("end_turn"); // a second ending idle for the same work
  },
};
B.neg_error_object_without_code = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.idle("error", { error: { message: "Quota exhausted" } });
  },
};
B.neg_missing_message_id = {
  async turn(t) {
    await t.running();
    const mid = t.newUserId();
    await t.respond({}); // no messageId
    await t.userMessage(mid);
    await t.reply(["Hello!"]);
    await t.idle("end_turn");
  },
};
const dedup = new Map();
B.neg_duplicate_message_id = {
  async turn(t) {
    await t.running();
    const key = JSON.stringify(t.prompt);
    const mid = dedup.get(key) ?? t.newUserId();
    dedup.set(key, mid); // "deduplicates" identical content (P5)
    await t.respond({ messageId: mid });
    await t.userMessage(mid);
    await t.reply(["Okay."]);
    await t.idle("end_turn");
  },
};
B.neg_user_message_never_reported = {
  async turn(t) {
    await t.running();
    const mid = t.newUserId();
    await t.respond({ messageId: mid }); // never reported with user_message (U1)
    await t.reply(["Hello!"]);
    await t.idle("end_turn");
  },
};
B.neg_tool_update_after_idle = {
  async turn(t) {
    await t.running();
    await t.insert();
    const c = t.newToolId();
    await t.tool(c, { title: "Format files", kind: "edit", status: "in_progress" });
    await t.reply(["Formatting..."]);
    await t.idle("end_turn", { background: [] }); // nothing runs in the background...
    await sleep(20);
    await t.tool(c, { status: "completed" }); // ...yet the work's tool call goes on (S6)
  },
};
B.neg_running_never_idle = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.reply(["All done."]);
    // no idle: the work ended inside the agent but the state never says so (S2)
  },
};
B.neg_cancel_request_32800_after_insertion = { turn: (t) => insertThenAwaitCancelRequest(t, { answer: "error" }) };
B.neg_error_idle_after_cancel = {
  async turn(t) {
    await t.running();
    await t.insert();
    const c = t.newToolId();
    await t.tool(c, { title: "pytest", kind: "execute", status: "in_progress" });
    await t.waitCancel();
    await t.tool(c, { status: "cancelled" });
    await t.idle("error", { error: { code: -32603, message: "AbortError: the operation was aborted" } }); // C9
  },
};
B.neg_cancelled_idle_after_end_turn = {
  turn: (t) => standardTurn(t, { reply: ["Done."] }),
  async onCancel(s) {
    await s.state("idle", { stopReason: "cancelled" }); // nothing was running
  },
};
B.neg_held_prompt_run_after_cancel = {
  turn: B.ok_held_prompt_cancelled_by_session_cancel.turn,
  keepHeldOnCancel: true, // held prompts survive session/cancel and run afterwards (C4)
};
B.neg_replay_new_ids = { turn: (t) => standardTurn(t, { reply: ["Hi there."] }), replayNewIds: true };
B.neg_replay_chunks_without_reset = {
  turn: (t) => standardTurn(t, { chunked: true, reply: ["Both files ", "look fine."] }),
  replayNoReset: true,
};
B.neg_updates_after_close = { turn: B.ok_close_active_session.turn, closeRespondsFirst: true };
B.neg_unknown_state = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.state("busy"); // not a v2 state and not `_`-prefixed (S15)
    await t.reply(["Done."]);
    await t.idle("end_turn");
  },
};
B.neg_background_omitted = { turn: (t) => backgroundTurn(t, { omitOnce: true }) };
B.neg_user_message_for_rejected_prompt = {
  async turn(t) {
    const err = rejectsUnsupported(t);
    if (err) {
      await t.reject(err);
      await t.userMessage(t.newUserId()); // a rejected prompt still shows up as a user message (P16)
      return;
    }
    return standardTurn(t);
  },
};
B.neg_empty_prompt_accepted = { rawPrompt: true, turn: (t) => standardTurn(t, { reply: ["Nothing to do."] }) };
B.neg_client_empty_prompt = { turn: (t) => standardTurn(t) };
B.neg_chunk_without_message_id = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.update({ sessionUpdate: "agent_message_chunk", content: text("Done.") }); // v1 habit: no messageId (U10)
    await t.idle("end_turn");
  },
};
B.neg_idle_without_stop_reason = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.reply(["Done."]);
    await t.idle(undefined); // ends the work without a stop reason (S5)
  },
};
B.neg_resume_without_state_snapshot = { turn: (t) => standardTurn(t, { reply: ["Noted."] }), resumeNoSnapshot: true };
B.neg_custom_stop_reason_without_prefix = {
  async turn(t) {
    await t.running();
    await t.insert();
    await t.reply(["Thinking..."]);
    await t.idle("timeout"); // custom stop reason without `_` (W6)
  },
};
B.neg_tool_left_unfinished_on_error = {
  async turn(t) {
    await t.running();
    await t.insert();
    const c = t.newToolId();
    await t.tool(c, { title: "Fetch https://example.com/api", kind: "fetch", status: "in_progress" });
    await t.idle("error", { error: { code: -32603, message: "Provider unavailable" } }); // tool never gets a final status (E6)
  },
};

// ==================================================================== acplab test: races of RACES.md
// Modes for races the behaviours above did not have; `acplab test` must find each without being
// told which client actions provoke it (tests/test_agent_tester_sdk.py). Each turn works until
// cancelled or for a short while, so prompts sent meanwhile are held.

/** Running work: a tool call in progress until session/cancel (or `ms`), then the given ending. */
async function interruptibleTurn(t, { ms = 1500, onCancelled } = {}) {
  await t.running();
  await t.insert();
  const c = t.newToolId();
  await t.tool(c, { title: "Run the build", kind: "execute", status: "in_progress" });
  if (await t.waitCancel(ms)) {
    await onCancelled(t, c);
  } else {
    await t.tool(c, { status: "completed" });
    await t.reply(["Built."]);
    await t.idle("end_turn");
  }
}

// X18 / C8, S6: the cancelled idle goes out before the cancelled tool call's final status.
B.neg_tool_cancelled_after_idle = {
  turn: (t) => interruptibleTurn(t, {
    async onCancelled(t, c) {
      await t.idle("cancelled", { background: [] }); // nothing goes on in the background...
      await t.tool(c, { status: "cancelled" }); // ...yet the cancelled work's tool call still reports
    },
  }),
};

// X13 / E1, C4: at the cancel, held prompts are first reported inserted, then answered -32800.
B.neg_held_prompt_inserted_then_cancelled = {
  turn: (t) => interruptibleTurn(t, {
    async onCancelled(t, c) {
      await t.tool(c, { status: "cancelled" });
      await t.idle("cancelled");
    },
  }),
  async onCancel(s) {
    for (const sub of s.queue) {
      const mid = nextId("user", "msg_u");
      await s.update({ sessionUpdate: "user_message", messageId: mid, content: sub.params.prompt });
    }
    cancelSession(s);
  },
};

// X08 / P5: after a restart, a prompt with the content of one inserted before the restart is
// "recognised as a retry" and answered with the earlier messageId.
B.neg_retry_merged_after_restart = {
  async turn(t) {
    store.retries ??= {};
    const key = `${t.s.id} ${JSON.stringify(t.prompt)}`;
    const earlier = store.retries[key];
    const mid = earlier && earlier.pid !== process.pid ? earlier.mid : t.newUserId();
    store.retries[key] = { mid, pid: process.pid };
    saveStore();
    await t.running();
    await t.respond({ messageId: mid });
    await t.userMessage(mid);
    await t.reply(["Okay."]);
    await t.idle("end_turn");
  },
};

// X28 / R3, S13: session/resume is answered before the replay and the state snapshot.
B.neg_resume_response_before_replay = { turn: (t) => standardTurn(t, { reply: ["Noted."] }), resumeAnswersFirst: true };
// ==================================================================== end of the acplab test block

// ---- one agent process serving two connections (ACP_CORPUS_CONN_FDS; driver.mjs `clients: 2`) ----
// Kept in their own table, merged into B below: `acplab test` drives one client, and its tests list
// the single-connection modes only (the `B.name =` lines).
const TWO = {};
const chunkedWhenSplit = (reply) => (t) => standardTurn(t, { chunked: t.prompt.length > 1, reply });
TWO.ok_two_clients_fanout = { turn: (t) => standardTurn(t, { reply: ["Hello ", "to you both."] }) };
// U3: the other connection gets the user message under another ID than the one returned
TWO.neg_two_clients_fanout_other_id = {
  turn: TWO.ok_two_clients_fanout.turn,
  fanout: (u) => (u.sessionUpdate === "user_message" ? { ...u, messageId: `${u.messageId}-copy` } : u),
};
TWO.ok_prompt_during_replay = { turn: chunkedWhenSplit(["Done: ", "see the summary."]), replayDelay: 150 };
TWO.ok_resume_replay_two_clients = { turn: chunkedWhenSplit(["The README ", "is short."]) };
// R7: replay sends the full message, then streams its chunks again (the client ends with the text twice)
TWO.neg_replay_full_then_chunks = { turn: TWO.ok_resume_replay_two_clients.turn, replayFullThenChunks: true };
// R4: only the latest turn (user + agent message) is retained
TWO.ok_retention_forgets = { turn: (t) => standardTurn(t, { reply: ["Noted."] }), retainLast: 2 };
// R5: after the trim, the retained message is replayed under the forgotten message's ID
TWO.neg_retention_reuses_id = { ...TWO.ok_retention_forgets, replayUnderOldId: () => "msg_u1" };
// a retained command: its user message and result are retained; replay reports them without running it
async function rememberCommand(t) {
  await t.running();
  await t.insert({ command: true });
  const a = t.newAgentId();
  const content = [text(`I will remember: ${t.text.slice("/remember ".length)}`)];
  await t.update({ sessionUpdate: "agent_message", messageId: a, content });
  t.s.retain({ kind: "agent", messageId: a, content });
  await t.finish();
}
const commandsTurn = (t) => (t.text.startsWith("/status") ? localCommand(t)
  : t.text.startsWith("/remember") ? rememberCommand(t) : standardTurn(t, { reply: ["Hi."] }));
TWO.ok_commands_two_clients = { turn: commandsTurn };
// R9: replaying the retained command runs it again (new work, a new result message)
TWO.neg_command_rerun_on_replay = {
  turn: commandsTurn,
  async rerunCommands(s, e) {
    await s.state("running");
    await s.update({ sessionUpdate: "agent_message", messageId: nextId("agent", "msg_a"), content: [text("I will remember that (again).")] });
    await s.state("idle", { stopReason: "end_turn" });
  },
};

Object.assign(B, TWO);

const behaviour = B[BEHAVIOUR];
if (!behaviour) {
  process.stderr.write(`unknown behaviour ${BEHAVIOUR}; known: ${Object.keys(B).join(", ")}\n`);
  process.exit(2);
}

// ------------------------------------------------------------------ the worker (held prompts, FIFO)

async function pump(s) {
  if (s.current || s.closed || s.closing) return; // a close under way starts no held prompt (C14)
  const sub = s.queue.shift();
  if (!sub) return;
  s.current = sub;
  sub.state = "running";
  const t = new Turn(s, sub);
  s.work = t;
  try {
    await (behaviour.turn ?? standardTurn)(t);
  } catch (e) {
    process.stderr.write(`turn failed: ${e?.stack ?? e}\n`);
    if (!sub.responded) sub.deferred.reject(RequestError.internalError({ details: String(e) }));
  } finally {
    if (!sub.responded) sub.deferred.reject(RequestError.internalError({}, "turn ended without answering"));
    s.current = null;
    s.work = null;
  }
  pump(s);
}

function submit(ctx, tag) {
  const s = sessions.get(ctx.params.sessionId);
  if (!s || s.closing) throw RequestError.sessionNotFound(ctx.params.sessionId); // closing: as good as closed
  const sub = { params: ctx.params, signal: ctx.signal, requestId: ctx.requestId, client: ctx.client, tag, deferred: deferred(), state: "held", responded: false };
  ctx.signal.addEventListener("abort", () => {
    const i = s.queue.indexOf(sub);
    if (i >= 0) {
      // still held: withdraw it (never inserted)
      s.queue.splice(i, 1);
      sub.responded = true;
      s.withdrawn = (s.withdrawn ?? 0) + 1;
      sub.deferred.reject(RequestError.requestCancelled({ requestId: ctx.requestId }));
    }
    // inserted: the behaviour decides (a conforming agent still answers with the messageId)
  });
  s.queue.push(sub);
  pump(s);
  return sub.deferred.promise;
}

function cancelSession(s, { closing = false } = {}) {
  const t = s.work;
  if (t && !t.isCancelled) {
    t.isCancelled = true;
    t.closing = closing;
    t.cancelled.resolve();
  }
  for (const ac of s.pendingPermissions) ac.abort(RequestError.requestCancelled());
  if (!behaviour.keepHeldOnCancel || closing) {
    for (const sub of s.queue.splice(0)) {
      sub.responded = true;
      sub.deferred.reject(RequestError.requestCancelled({ reason: closing ? "session closed" : "session cancelled" }));
    }
  }
}

// ------------------------------------------------------------------ replay

/** Replays the retained history to the resuming connection `client` only. */
async function replay(s, client) {
  const send = (u) => client.notify("session/update", { sessionId: s.id, update: u });
  let forgotten = behaviour.replayUnderOldId ? behaviour.replayUnderOldId(s) : null;
  for (const e of s.history) {
    if (behaviour.replayDelay) await sleep(behaviour.replayDelay);
    if (e.kind === "user") {
      let messageId = behaviour.replayNewIds ? nextId("user", "msg_u") : e.messageId;
      if (forgotten) { messageId = forgotten; forgotten = null; } // neg: a different message under a forgotten ID
      if (e.chunked) {
        if (behaviour.replayFullThenChunks) await send({ sessionUpdate: "user_message", messageId, content: e.content });
        else if (!behaviour.replayNoReset) await send({ sessionUpdate: "user_message", messageId, content: [] });
        for (const b of e.content) await send({ sessionUpdate: "user_message_chunk", messageId, content: b });
      } else {
        await send({ sessionUpdate: "user_message", messageId, content: e.content });
      }
      if (e.command && behaviour.rerunCommands) await behaviour.rerunCommands(s, e); // neg: executed again
    } else if (e.kind === "agent") {
      await send({ sessionUpdate: "agent_message", messageId: e.messageId, content: e.content });
    }
  }
}

// ------------------------------------------------------------------ the app

/** The agent app of one connection; `tag` names the connection (handler contexts are not stable identities). */
function makeApp(tag) {
  const app = acp.agent({ name: "acplab-corpus-agent" })
    .onRequest("initialize", async () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acplab-corpus-agent", version: "0.1.0" },
      capabilities: { session: {} },
    }))
    .onRequest("session/new", async (ctx) => {
      const id = nextId("session", "sess_");
      const s = new Session(id, ctx.params.cwd);
      s.clients.set(tag, ctx.client);
      sessions.set(id, s);
      saveStore();
      if (behaviour.onNewSession) setTimeout(() => behaviour.onNewSession(s).catch((e) => process.stderr.write(`${e}\n`)), 0);
      return { sessionId: id };
    })
    .onRequest("session/resume", async (ctx) => {
      const { sessionId, cwd, replayFrom } = ctx.params;
      if (!store.sessions[sessionId]) throw RequestError.sessionNotFound(sessionId);
      if (replayFrom != null && replayFrom.type !== "start") {
        throw RequestError.invalidParams({ replayFrom }, "unsupported replay cursor");
      }
      const s = sessions.get(sessionId) ?? new Session(sessionId, cwd);
      sessions.set(sessionId, s);
      s.clients.set(tag, ctx.client); // live updates reach this connection from now on, during its replay too
      const snapshot = () => ctx.client.notify("session/update", { sessionId, update: { sessionUpdate: "state_update", state: s.current ? "running" : "idle" } });
      if (behaviour.resumeAnswersFirst) { // acplab test block: neg_resume_response_before_replay
        setTimeout(async () => { if (replayFrom?.type === "start") await replay(s, ctx.client); await snapshot(); }, 5);
        return {};
      }
      if (replayFrom?.type === "start") await replay(s, ctx.client);
      if (!behaviour.resumeNoSnapshot) await snapshot();
      return {};
    })
    .onRequest("session/close", async (ctx) => {
      const s = sessions.get(ctx.params.sessionId);
      if (!s) return {};
      const active = s.work;
      if (behaviour.closeRespondsFirst && active) {
        // answers first, then still reports the ended work (C14)
        setTimeout(() => { cancelSession(s, { closing: true }); s.closed = true; }, 10);
        return {};
      }
      s.closing = true; // no held prompt starts and no new prompt is taken while the close is under way
      cancelSession(s, { closing: true });
      if (active) await until(() => s.work === null); // final updates and cancelled idle before the close response
      s.closed = true;
      s.silenced = true; // agent-initiated work, background snapshots: nothing goes out after the response (C14)
      sessions.delete(s.id);
      return {};
    })
    .onNotification("session/cancel", async (ctx) => {
      const s = sessions.get(ctx.params.sessionId);
      if (!s) return;
      if (behaviour.onCancel) return behaviour.onCancel(s, s.work);
      cancelSession(s);
    });

  if (behaviour.rawPrompt) {
    // The typed handler would never see an empty prompt: the SDK rejects it with -32602
    // while parsing. The raw fallback gets the params unparsed.
    app.onRequest("*", async (ctx) => {
      if (ctx.method !== "session/prompt") throw RequestError.methodNotFound(ctx.method);
      return submit(ctx, tag);
    });
  } else {
    app.onRequest("session/prompt", async (ctx) => submit(ctx, tag));
  }
  return app;
}

/** Serves one connection; the process exits when every connection has closed. */
let open = 0;
function serve(tag, writable, readable) {
  open += 1;
  const connection = makeApp(tag).connect(acp.ndJsonStream(Writable.toWeb(writable), Readable.toWeb(countInput(readable))));
  connection.closed.then(() => {
    for (const s of sessions.values()) s.clients.delete(tag);
    open -= 1;
    if (open === 0) setTimeout(() => process.exit(0), 20);
  });
}
serve("stdio", process.stdout, process.stdin);
if (CONN_FDS) serve("fds", new net.Socket({ fd: CONN_FDS[1], readable: false, writable: true }), new net.Socket({ fd: CONN_FDS[0], readable: true, writable: false }));
