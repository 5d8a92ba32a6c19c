// Cross-origin use of the adaptmon API from a real browser (the system
// Chromium through playwright-core, no browser download); tests/browser/
// test_cors.py serves the pages and makes the assertions.
//
//   node cors.mjs CONFIG.json
//
// CONFIG: {chromium, api, token, pages: [{name, url, session}]}
// For each page (served from another loopback origin than the API) it runs,
// inside the page: a fetch() POST with a JSON body and an Authorization
// header (preflighted), a POST of a segment reading the exposed Location
// header, a GET reading the exposed ETag, an EventSource on the session's
// event stream waiting for its first event, and a "simple" no-cors POST
// without Content-Type (the request a hostile page can always send). Prints
// one JSON object {pages: [{name, results}]} on stdout.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const report = { pages: [], console: [] };

// Runs in the page: every outcome is recorded, nothing throws.
async function scenario(args) {
  const { api, token, session } = args;
  const out = {};
  const auth = token ? { Authorization: 'Bearer ' + token } : {};
  const attempt = async (name, fn) => {
    try {
      out[name] = await fn();
    } catch (e) {
      out[name] = { error: String(e && e.message || e) };
    }
  };
  await attempt('create', async () => {
    const r = await fetch(api + '/v1/sessions', {
      method: 'POST',
      headers: Object.assign({ 'Content-Type': 'application/json' }, auth),
      body: JSON.stringify({ id: session, source_lang: 'en', target_lang: 'fr' }),
    });
    return { status: r.status, body: await r.json() };
  });
  await attempt('segment', async () => {
    const r = await fetch(api + '/v1/sessions/' + session + '/segments', {
      method: 'POST',
      headers: Object.assign({ 'Content-Type': 'application/json' }, auth),
      body: JSON.stringify({ id: 'p1', source: 'the virus spreads', hypothesis: 'le virus se propage',
        translation: 'le virus se propage' }),
    });
    return { status: r.status, location: r.headers.get('Location'), requestId: r.headers.get('X-Request-Id') };
  });
  await attempt('metrics', async () => {
    const r = await fetch(api + '/v1/sessions/' + session + '/metrics', { headers: auth });
    return { status: r.status, etag: r.headers.get('ETag'), link: r.headers.get('Link') };
  });
  await attempt('events', () => new Promise((resolve) => {
    // EventSource cannot send headers: the token goes in the query (RFC 6750 §2.3)
    const es = new EventSource(api + '/v1/sessions/' + session + '/events?after=0' +
      (token ? '&access_token=' + encodeURIComponent(token) : ''));
    const done = (v) => { es.close(); clearTimeout(t); resolve(v); };
    const t = setTimeout(() => done({ timeout: true }), 5000);
    const got = (e) => done({ type: e.type, data: e.data, lastEventId: e.lastEventId });
    es.onmessage = got;
    for (const name of ['segment', 'segments', 'update', 'ready', 'hello']) es.addEventListener(name, got);
    es.onerror = () => done({ error: 'EventSource error (readyState ' + es.readyState + ')' });
  }));
  await attempt('simple', async () => {
    // no-cors: the browser sends it without asking; the answer is opaque
    const r = await fetch(api + '/v1/sessions', {
      method: 'POST', mode: 'no-cors',
      body: new Blob([JSON.stringify({ id: session + '-simple', source_lang: 'en', target_lang: 'fr' })]),
    });
    return { type: r.type };
  });
  return out;
}

async function main() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'adaptmon-cors-'));
  const ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: cfg.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    for (const p of cfg.pages) {
      const page = await ctx.newPage();
      page.on('console', (m) => report.console.push(p.name + ': ' + m.text()));
      await page.goto(p.url, { waitUntil: 'load' });
      const results = await page.evaluate(scenario, { api: cfg.api, token: cfg.token, session: p.session });
      report.pages.push({ name: p.name, origin: await page.evaluate(() => location.origin), results });
      await page.close();
    }
  } finally {
    await ctx.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

main().then(() => {
  console.log(JSON.stringify(report));
}, (e) => {
  report.fatal = String(e && e.stack || e);
  console.log(JSON.stringify(report));
  process.exit(1);
});
