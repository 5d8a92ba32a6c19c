// Drives the adaptmon dashboard in the system Chromium (playwright-core, no
// browser download) and reports what the page shows; tests/browser/
// test_dashboard.py makes the assertions.
//
//   node dashboard.mjs CONFIG.json
//
// CONFIG: {base, session, token, readToken, chromium, artifacts, viewports:
//   [{name, width, height, posts: [segment request, …]}], windowCheck}
// For each viewport it opens the session page, waits until it shows the
// segments already stored, then posts the viewport's segments one by one
// through the API and, after each, waits (without reloading) until the page
// shows that segment, and records the displayed numbers. Prints one JSON
// object on stdout.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const WAIT_MS = cfg.waitMs || 15000;
const report = { viewports: [], errors: [], console: [] };

async function post(body) {
  const headers = { 'Content-Type': 'application/json' };
  if (cfg.token) headers.Authorization = 'Bearer ' + cfg.token;
  const r = await fetch(cfg.base + '/v1/sessions/' + encodeURIComponent(cfg.session) + '/segments',
    { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await r.json();
  if (r.status !== 201) throw new Error('POST segment ' + body.id + ': ' + r.status + ' ' + JSON.stringify(json));
  return json;
}

// What the page shows now (evaluated in the page).
function observe() {
  const q = (s) => document.querySelector(s);
  const out = {
    seq: Number(q('#s-segments') && q('#s-segments').dataset.seq),
    mode: q('#mode') ? q('#mode').dataset.mode : null,
    modeText: q('#mode') ? q('#mode').textContent : null,
    marker: window.__dashMarker || null,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    values: {},
    curves: {},
    segCards: document.querySelectorAll('#seglist > li.seg').length,
    firstCardSeq: q('#seglist > li.seg') ? Number(q('#seglist > li.seg').dataset.seq) : null,
    words: [],
    terms: [],
    signature: q('#s-signature') ? q('#s-signature').textContent : null,
    error: q('#error') && !q('#error').hidden ? q('#error').textContent : null,
    badText: (document.body.innerText.match(/\b(null|undefined|NaN|\[object \w+\])\b/g) || []),
  };
  for (const v of document.querySelectorAll('#latest-body .value')) {
    (out.values[v.dataset.metric] ||= {})[v.dataset.system] = { value: v.dataset.value, text: v.textContent };
  }
  for (const g of document.querySelectorAll('svg.chart g.series')) {
    const metric = g.closest('svg').dataset.metric;
    const line = g.querySelector('path.line');
    (out.curves[metric] ||= {})[g.dataset.system] = {
      points: Number(g.dataset.points),
      markers: g.querySelectorAll('.marker').length,
      last: g.dataset.last,
      dash: line ? line.getAttribute('stroke-dasharray') : null,
      color: line ? line.getAttribute('stroke') : null,
    };
  }
  const first = q('#seglist > li.seg');
  if (first) {
    for (const w of first.querySelectorAll('.sys .w')) {
      const cs = getComputedStyle(w);
      out.words.push({
        system: w.closest('.sys').dataset.system,
        hit: w.dataset.hit,
        shot: Number(w.dataset.shot),
        mark: w.querySelector('.mark') ? w.querySelector('.mark').textContent : '',
        shotText: w.querySelector('.shot') ? w.querySelector('.shot').textContent : '',
        text: w.textContent,
        borderBottomStyle: cs.borderBottomStyle,
        background: cs.backgroundColor,
      });
    }
    for (const t of first.querySelectorAll('.sys .term')) {
      out.terms.push({ system: t.closest('.sys').dataset.system, kind: t.dataset.term, text: t.textContent });
    }
  }
  return out;
}

async function waitSeq(page, seq) {
  await page.waitForFunction((n) => {
    const e = document.querySelector('#s-segments');
    const first = document.querySelector('#seglist > li.seg');
    return e && Number(e.dataset.seq) === n && first && Number(first.dataset.seq) === n;
  }, seq, { timeout: WAIT_MS, polling: 100 });
}

async function main() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'adaptmon-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDataDir, {
    executablePath: cfg.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    let loads = 0;
    page.on('load', () => { loads++; });
    page.on('pageerror', (e) => report.errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') report.console.push(m.text()); });
    // only 127.0.0.1 is reached: anything else is recorded and refused
    const foreign = [];
    await page.route((url) => !url.href.startsWith(cfg.base), (r) => { foreign.push(r.request().url()); r.abort(); });

    if (cfg.readToken) {
      // the token field: without a token the page asks for one
      await page.goto(cfg.base + '/#/s/' + encodeURIComponent(cfg.session));
      await page.waitForFunction(() => !document.querySelector('#error').hidden, null, { timeout: WAIT_MS });
      report.withoutToken = await page.evaluate(() => document.querySelector('#error').textContent);
      await page.fill('#token', cfg.readToken);
      await page.click('#token-form button[type=submit]');
      report.storedToken = await page.evaluate(() => localStorage.getItem('adaptmon.token'));
    }

    for (const vp of cfg.viewports) {
      await page.setViewportSize({ width: vp.width, height: vp.height });
      // blockEvents: the event stream is unavailable → the page must poll
      const noEvents = (url) => /\/events(\?|$)/.test(url.pathname + url.search);
      const refuse = (r) => r.abort();
      if (vp.blockEvents) await page.route(noEvents, refuse);
      await page.goto(cfg.base + '/#/s/' + encodeURIComponent(cfg.session));
      await waitSeq(page, vp.startSeq);
      await page.evaluate(() => { window.__dashMarker = 'no-reload'; });
      const loadsBefore = loads;
      const obs = { name: vp.name, width: vp.width, height: vp.height, initial: await page.evaluate(observe), steps: [] };
      for (const body of vp.posts) {
        const res = await post(body);
        await waitSeq(page, res.seq);
        obs.steps.push({ posted: res, seen: await page.evaluate(observe) });
      }
      obs.reloads = loads - loadsBefore;
      if (vp.blockEvents) await page.unroute(noEvents, refuse);
      // the moving window (computed in the page from per-segment counts)
      if (cfg.windowCheck) {
        await page.selectOption('#window', String(cfg.windowCheck));
        await page.waitForFunction((w) => document.querySelector('#latest-caption').textContent.includes('last ' + w), cfg.windowCheck, { timeout: WAIT_MS });
        obs.windowed = await page.evaluate(observe);
        await page.selectOption('#window', '0');
      }
      // the latest segments in view for the screenshot's second half
      await page.screenshot({ path: path.join(cfg.artifacts, 'dashboard-' + vp.name + '.png'), fullPage: false });
      await page.screenshot({ path: path.join(cfg.artifacts, 'dashboard-' + vp.name + '-full.png'), fullPage: true });
      await page.locator('#charts').screenshot({ path: path.join(cfg.artifacts, 'charts-' + vp.name + '.png') });
      await page.locator('#seglist > li.seg').first().screenshot({ path: path.join(cfg.artifacts, 'segment-' + vp.name + '.png') });
      // the session list
      await page.goto(cfg.base + '/#/');
      await page.waitForSelector('a.session-link[data-session="' + cfg.session + '"]', { timeout: WAIT_MS });
      obs.list = await page.evaluate((sid) => {
        const a = document.querySelector('a.session-link[data-session="' + sid + '"]');
        const rows = [];
        let tr = a.closest('tr');
        while (tr) {
          rows.push([...tr.querySelectorAll('td')].map((td) => td.textContent.trim()));
          tr = tr.nextElementSibling;
          if (tr && tr.classList.contains('first')) break;
        }
        const badText = document.body.innerText.match(/\b(null|undefined|NaN|\[object \w+\])\b/g) || [];
        return { text: a.textContent, rows, badText, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth };
      }, cfg.session);
      await page.screenshot({ path: path.join(cfg.artifacts, 'list-' + vp.name + '.png'), fullPage: true });
      report.viewports.push(obs);
    }
    report.foreignRequests = foreign;
  } finally {
    await ctx.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

main().then(() => {
  process.stdout.write(JSON.stringify(report) + '\n');
}, (e) => {
  report.fatal = String(e && e.stack ? e.stack : e);
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exitCode = 1;
});
