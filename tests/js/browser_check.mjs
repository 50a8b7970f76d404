#!/usr/bin/env node
// Drive a local, self-contained HTML page in headless Chromium (Debian's /usr/bin/chromium via
// playwright-core; playwright's own browsers are never downloaded) and check it.
//
// Usage: node browser_check.mjs PAGE.html STEPS.json
//   STEPS.json: a JSON array of steps, or {"viewport":{"width":W,"height":H},"steps":[...]}.
//   Each step is an object with exactly one action key (plus that action's options):
//     {"press": "ArrowRight"}                 keyboard key (Playwright key names), sent to the page
//     {"press": "Enter", "on": "#next"}        ... sent to a focused element instead
//     {"click": "#next"}                      click the first element matching a CSS selector
//     {"wait": 200}                           sleep N ms (rarely needed: expect already retries)
//     {"expect": {"selector": S, ...one check...[, "timeout": ms]}}   retried until true or timeout
//         "count": N                      number of elements matching S equals N
//         "text": "..."                   whitespace-normalised textContent of first match equals
//         "contains": "..."               ... contains
//         "attr": "name", "equals": "v"   attribute of first match equals v ("attr" alone: present)
//         "visible": true|false           first match is (not) visible
//     {"noConsoleErrors": true}               no console.error / uncaught exception so far
//     {"screenshot": "out.png"[, "fullPage": true]}   path relative to the current directory
//   Optional on any step: "name": "label shown in the report".
//
// Every request that is not file:, data:, blob: or about: is recorded in "network" and aborted
// (and Chromium resolves no host names at all); any such request fails the run.
// Prints ONE JSON object. Exit 0 all ok, 1 a step/expectation failed or a network request was
// seen, 2 usage error (bad arguments, missing file, invalid steps) or Chromium failed to start.
import { readFileSync, existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // resolve no host names at all, so nothing can leave the machine even before routing
  '--host-resolver-rules=MAP * ~NOTFOUND'];
const LOCAL_SCHEMES = new Set(['file:', 'data:', 'blob:', 'about:']);
const ACTIONS = ['press', 'click', 'wait', 'expect', 'noConsoleErrors', 'screenshot'];
const CHECKS = ['count', 'text', 'contains', 'attr', 'visible'];
const ACTION_TIMEOUT = 2000;
const EXPECT_TIMEOUT = 1000;

const t0 = performance.now();
function finish(code, obj) {
  process.stdout.write(JSON.stringify({ ...obj, durationMs: Math.round(performance.now() - t0) }, null, 1) + '\n');
  process.exitCode = code;
}
function usage(msg) {
  finish(2, { ok: false, error: msg, usage: 'node browser_check.mjs PAGE.html STEPS.json' });
  process.exit(2);
}

// ---- arguments and step validation (all before launching the browser) ----
const [pageArg, stepsArg, ...extra] = process.argv.slice(2);
if (!pageArg || !stepsArg || extra.length) usage('expected exactly two arguments');
if (!existsSync(pageArg) || !statSync(pageArg).isFile()) usage(`page not found: ${pageArg}`);
if (!existsSync(stepsArg)) usage(`steps file not found: ${stepsArg}`);
let spec;
try { spec = JSON.parse(readFileSync(stepsArg, 'utf8')); } catch (e) { usage(`steps file is not valid JSON: ${e.message}`); }
const steps = Array.isArray(spec) ? spec : spec?.steps;
const viewport = (!Array.isArray(spec) && spec?.viewport) || { width: 1024, height: 700 };
if (!Array.isArray(steps)) usage('steps must be a JSON array, or an object with a "steps" array');
steps.forEach((s, i) => {
  const keys = s && typeof s === 'object' ? Object.keys(s).filter((k) => ACTIONS.includes(k)) : [];
  if (keys.length !== 1) usage(`step ${i}: needs exactly one of ${ACTIONS.join(', ')}: ${JSON.stringify(s)}`);
  if (s.expect) {
    const e = s.expect;
    if (typeof e.selector !== 'string') usage(`step ${i}: expect needs a "selector"`);
    const checks = CHECKS.filter((k) => k in e);
    if (checks.length !== 1) usage(`step ${i}: expect needs exactly one of ${CHECKS.join(', ')}`);
    if ('equals' in e && !('attr' in e)) usage(`step ${i}: "equals" goes with "attr"`);
  }
  if ('click' in s && typeof s.click !== 'string') usage(`step ${i}: click takes a selector string`);
  if ('press' in s && typeof s.press !== 'string') usage(`step ${i}: press takes a key name`);
  if ('wait' in s && typeof s.wait !== 'number') usage(`step ${i}: wait takes milliseconds`);
  if ('screenshot' in s && typeof s.screenshot !== 'string') usage(`step ${i}: screenshot takes a file path`);
});

// ---- browser ----
const { chromium } = await import('playwright-core');
let browser;
try {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
} catch (e) {
  finish(2, { ok: false, error: `could not launch ${CHROMIUM}: ${String(e.message).split('\n')[0]}` });
  process.exit(2);
}
const url = pathToFileURL(resolve(pageArg)).href;
const network = [];
const consoleMsgs = [];
const pageErrors = [];
const results = [];
let ok = true;
const chromiumVersion = browser.version();
try {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  const isLocal = (u) => { try { return LOCAL_SCHEMES.has(new URL(u).protocol); } catch { return false; } };
  context.on('request', (r) => { if (!isLocal(r.url())) network.push({ url: r.url(), method: r.method(), resourceType: r.resourceType() }); });
  await context.route((u) => !LOCAL_SCHEMES.has(u.protocol), (route) => route.abort('blockedbyclient'));
  const page = await context.newPage();
  page.on('websocket', (ws) => network.push({ url: ws.url(), method: 'GET', resourceType: 'websocket' }));
  page.on('console', (m) => consoleMsgs.push({ type: m.type(), text: m.text(), url: m.location()?.url || undefined }));
  page.on('pageerror', (e) => pageErrors.push(String(e?.message ?? e)));
  await page.goto(url, { waitUntil: 'load', timeout: 10000 });

  const check = async (e) => page.evaluate((e) => {
    const els = document.querySelectorAll(e.selector);
    const el = els[0];
    const norm = (s) => (s ?? '').replace(/\s+/g, ' ').trim();
    if ('count' in e) return { pass: els.length === e.count, actual: els.length };
    if (!el) return { pass: false, actual: null, note: 'no element matches selector' };
    if ('text' in e) { const a = norm(el.textContent); return { pass: a === e.text, actual: a }; }
    if ('contains' in e) { const a = norm(el.textContent); return { pass: a.includes(e.contains), actual: a }; }
    if ('attr' in e) {
      const a = el.getAttribute(e.attr);
      return { pass: 'equals' in e ? a === String(e.equals) : a !== null, actual: a };
    }
    if ('visible' in e) {
      const r = el.getBoundingClientRect(); const cs = getComputedStyle(el);
      const vis = r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
      return { pass: vis === e.visible, actual: vis };
    }
  }, e);

  let aborted = false;
  for (const [i, s] of steps.entries()) {
    const rec = { i, step: s };
    if (aborted) { results.push({ ...rec, ok: null, detail: 'skipped: an earlier action failed' }); continue; }
    try {
      if ('press' in s) {
        if (s.on) await page.locator(s.on).first().press(s.press, { timeout: ACTION_TIMEOUT });
        else await page.keyboard.press(s.press);
        rec.ok = true;
      } else if ('click' in s) {
        await page.locator(s.click).first().click({ timeout: ACTION_TIMEOUT });
        rec.ok = true;
      } else if ('wait' in s) {
        await page.waitForTimeout(s.wait);
        rec.ok = true;
      } else if ('screenshot' in s) {
        const path = resolve(s.screenshot);
        await page.screenshot({ path, fullPage: !!s.fullPage });
        rec.ok = true; rec.detail = path;
      } else if ('noConsoleErrors' in s) {
        const errs = [...consoleMsgs.filter((m) => m.type === 'error').map((m) => 'console.error: ' + m.text),
          ...pageErrors.map((m) => 'uncaught: ' + m)];
        rec.ok = errs.length === 0; if (!rec.ok) rec.detail = errs;
      } else if ('expect' in s) {
        const deadline = Date.now() + (s.expect.timeout ?? EXPECT_TIMEOUT);
        let r = await check(s.expect);
        while (!r.pass && Date.now() < deadline) { await page.waitForTimeout(50); r = await check(s.expect); }
        rec.ok = r.pass; rec.actual = r.actual; if (r.note) rec.detail = r.note;
      }
    } catch (e) {
      rec.ok = false; rec.detail = String(e?.message ?? e).split('\n')[0];
      aborted = true; // the page is in an unknown state: later steps are skipped
    }
    if (!rec.ok) ok = false;
    results.push(rec);
  }
  await context.close();
} catch (e) {
  ok = false;
  results.push({ i: null, ok: false, detail: 'harness error: ' + String(e?.message ?? e).split('\n')[0] });
} finally {
  await browser.close();
}
if (network.length) ok = false;
finish(ok ? 0 : 1, {
  ok, page: url,
  chromium: chromiumVersion,
  passed: results.filter((r) => r.ok === true).length,
  failed: results.filter((r) => r.ok === false).length,
  skipped: results.filter((r) => r.ok === null).length,
  steps: results, network, console: consoleMsgs, pageErrors,
});
