#!/usr/bin/env node
// Validate Mermaid .mmd files with the real Mermaid 11 parser (mermaid.parse),
// running under jsdom because mermaid expects a DOM.
//
// Usage:
//   node mermaid_parse.mjs FILE_OR_DIR [FILE_OR_DIR ...]
//   echo '["a.mmd","b.mmd"]' | node mermaid_parse.mjs -
// Directories are searched recursively for *.mmd files.
//
// Prints ONE JSON object on stdout:
//   {"results":[{"file","ok","type","error","detail"}], "summary":{...}}
// type  = mermaid's diagramType on success; on failure, mermaid.detectType()'s
//         guess if it can detect one, else null.
// error = first line of the parser's error message (null when ok).
// detail= full error message (null when ok) - jison errors put the useful
//         "Expecting ..., got ..." on later lines.
// warning (only present when relevant) = parses, but render() would refuse it (size).
// Exit: 0 all ok, 1 any failed, 2 usage error (no/invalid arguments, or a path that
//       cannot be read - it is still listed in results with ok:false).

import { readFileSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const USAGE = 'usage: node mermaid_parse.mjs FILE_OR_DIR... | node mermaid_parse.mjs - (JSON list of paths on stdin)';

function usageError(msg) {
  process.stdout.write(JSON.stringify({ error: msg, usage: USAGE }) + '\n');
  process.exit(2);
}

// Keep stdout for the single JSON object: mermaid/jsdom chatter goes to stderr.
for (const k of ['log', 'info', 'warn', 'debug']) {
  console[k] = (...a) => process.stderr.write(a.map(String).join(' ') + '\n');
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function expand(p, out) {
  let st;
  try { st = statSync(p); } catch { out.push(p); return; } // reported as a per-file failure
  if (st.isDirectory()) {
    for (const e of readdirSync(p, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const q = join(p, e.name);
      if (e.isDirectory()) expand(q, out);
      else if (e.name.endsWith('.mmd')) out.push(q);
    }
  } else out.push(p);
}

const args = process.argv.slice(2);
if (args.length === 0 || args.includes('-h') || args.includes('--help')) usageError('no input files');
let inputs;
if (args.length === 1 && args[0] === '-') {
  let list;
  try { list = JSON.parse(await readStdin()); } catch (e) { usageError('stdin is not valid JSON: ' + e.message); }
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) usageError('stdin must be a JSON array of path strings');
  inputs = list;
} else if (args.includes('-')) {
  usageError("'-' must be the only argument");
} else inputs = args;
const files = [];
for (const p of inputs) expand(p, files);
if (files.length === 0) usageError('no .mmd files found');

const t0 = performance.now();
const { loadMermaid } = await import('./lib/mermaid_env.mjs');
const mermaid = await loadMermaid(); // mermaid.initialize({startOnLoad:false}) happens here
const tLoad = performance.now();

const MAX_TEXT = 50000; // mermaid's default config.maxTextSize
const firstLine = (s) => String(s).split('\n').map((l) => l.trim()).find((l) => l.length) ?? String(s);

const results = [];
for (const file of files) {
  let text;
  try { text = readFileSync(file, 'utf8'); } catch (e) {
    results.push({ file, ok: false, type: null, error: `cannot read file: ${e.code || e.message}`, detail: String(e.message) });
    continue;
  }
  try {
    const r = await mermaid.parse(text);
    const res = { file, ok: true, type: r?.diagramType ?? null, error: null, detail: null };
    // parse() has no size limit, but render() silently swaps a diagram longer than
    // maxTextSize (default 50000 chars) for a "Maximum text size in diagram exceeded" box.
    if (text.length > MAX_TEXT) res.warning = `text is ${text.length} chars > maxTextSize ${MAX_TEXT}: mermaid.render() would not draw it`;
    results.push(res);
  } catch (e) {
    let type = null;
    try { type = mermaid.detectType(text); } catch { /* undetectable */ }
    const msg = e?.message ?? String(e);
    results.push({ file, ok: false, type, error: firstLine(msg), detail: msg.trim() });
  }
}
const tDone = performance.now();
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(JSON.stringify({
  results,
  summary: {
    files: results.length, ok: results.length - failed, failed,
    load_ms: Math.round(tLoad - t0), parse_ms: Math.round(tDone - tLoad),
  },
}, null, 1) + '\n');
const unreadable = results.some((r) => r.error?.startsWith('cannot read file'));
process.exitCode = unreadable ? 2 : failed ? 1 : 0;
