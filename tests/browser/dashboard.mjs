// Drives the adaptmon dashboard in the system Chromium (playwright-core, no
// browser download) and reports what the page shows; tests/browser/
// test_dashboard.py makes the assertions.
//
//   node dashboard.mjs CONFIG.json
//
// CONFIG: {base, session, token, readToken, chromium, artifacts, viewports:
//   [{name, width, height, posts: [segment request, …]}], windowCheck}
//   or {base, token, chromium, artifacts, shots, scenarios: [{name, session,
//   seq (segments the page must show; -1: an error is expected), width,
//   height, hover, hide, word, window, exportFormat (click that export link,
//   report the download), replace ({seq, id, body, live}: scroll the older
//   cards in, PUT segment id, report its card)}], list: {widths, filter}}:
//   opens each
//   session once per scenario and reports what it shows, the bytes it
//   loaded and how long it took to show them.
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
    translators: {},
    curves: {},
    segCards: document.querySelectorAll('#seglist > li.seg').length,
    firstCardSeq: q('#seglist > li.seg') ? Number(q('#seglist > li.seg').dataset.seq) : null,
    // the translator each card names: [[seq, translator or null]]
    cardTranslators: [...document.querySelectorAll('#seglist > li.seg')].map((li) => {
      const t = li.querySelector('.seg-head [data-translator]');
      return [Number(li.dataset.seq), t ? t.dataset.translator : null];
    }),
    words: [],
    terms: [],
    signature: q('#s-signature') ? q('#s-signature').textContent : null,
    error: q('#error') && !q('#error').hidden ? q('#error').textContent : null,
    badText: (document.body.innerText.match(/\b(null|undefined|NaN|\[object \w+\])\b/g) || []),
  };
  for (const v of document.querySelectorAll('#latest-body .value')) {
    (out.values[v.dataset.metric] ||= {})[v.dataset.system] = { value: v.dataset.value, text: v.textContent };
  }
  for (const v of document.querySelectorAll('#by-translator-body .value')) {
    ((out.translators[v.dataset.translator] ||= {})[v.dataset.system] ||= {})[v.dataset.metric] = v.dataset.value;
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

// Reads what a chart shows: tick labels and the y-domain (evaluated in the page).
function chartInfo() {
  const out = {};
  for (const svg of document.querySelectorAll('svg.chart')) {
    const ticks = [...svg.querySelectorAll('.grid text.ytick')].map((t) => t.textContent);
    const ys = ticks.filter((t) => /^-?\d/.test(t)).map(Number);
    out[svg.dataset.metric] = {
      ymax: Math.max(...ys), ymin: Math.min(...ys),
      series: [...svg.querySelectorAll('g.series')].map((g) => g.dataset.system),
      glossMarks: svg.querySelectorAll('.gloss-mark').length,
      glossAt: [...svg.querySelectorAll('.gloss-mark')].map((g) => ({
        seq: Number(g.dataset.seq), x: Number(g.querySelector('line').getAttribute('x1')), text: g.textContent })),
      // x of each segment-number tick label (to place a segment number)
      xticks: Object.fromEntries([...svg.querySelectorAll('.grid text.tick:not(.ytick)')]
        .filter((t) => /^\d+$/.test(t.textContent)).map((t) => [t.textContent, Number(t.getAttribute('x'))])),
    };
  }
  return out;
}

// The latest-totals table's layout (evaluated in the page): how many lines
// each Δ and significance mark takes, how far the colour dot sits from the
// first line of its system's name, and where the answer (the first other
// system's Δ) is against the baseline's row and the settings signature.
function layoutInfo() {
  const lines = (node) => {
    const r = document.createRange();
    r.selectNodeContents(node);
    return new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size;
  };
  const out = { marks: [], swatches: [], innerHeight: window.innerHeight };
  for (const d of document.querySelectorAll('#latest-body .delta, #latest-body .sig')) {
    out.marks.push({ system: d.closest('tr').dataset.system, metric: d.dataset.metric, kind: d.classList.contains('sig') ? 'sig' : 'delta',
      text: d.textContent, lines: lines(d) });
  }
  for (const th of document.querySelectorAll('#latest-body th')) {
    const sw = th.querySelector('.swatch');
    if (!sw) continue;
    // the first non-blank text after the dot: the system's name
    const tw = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    let name = null;
    for (let n = tw.nextNode(); n; n = tw.nextNode()) if (!sw.contains(n) && n.textContent.trim()) { name = n; break; }
    const r = document.createRange();
    if (name) r.selectNodeContents(name);
    const first = name ? r.getClientRects()[0] : null;
    out.swatches.push({ system: th.closest('tr').dataset.system, dy: first ? Math.abs(sw.getBoundingClientRect().top - first.top) : null,
      lineHeight: parseFloat(getComputedStyle(th).lineHeight) || null });
  }
  const top = (e) => (e ? e.getBoundingClientRect().top + window.scrollY : null);
  const rows = [...document.querySelectorAll('#latest-body tr')];
  const other = rows.find((tr) => !tr.classList.contains('base') && tr.querySelector('.delta'));
  out.answerTop = top(other ? other.querySelector('.delta') : null);
  out.baseTop = top(document.querySelector('#latest-body tr.base'));
  out.signatureTop = top(document.querySelector('#s-signature'));
  return out;
}

// The significance marks beside the Δs (evaluated in the page).
function sigMarks() {
  return [...document.querySelectorAll('#latest-body .sig')].map((e) => ({
    system: e.closest('tr').dataset.system, metric: e.dataset.metric, sig: e.dataset.sig, text: e.textContent, title: e.title }));
}

function bytesLoaded() {
  let total = 0;
  const byUrl = {};
  for (const e of performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))) {
    const b = e.transferSize || e.encodedBodySize || 0;
    total += b;
    const k = e.name.replace(/^https?:\/\/[^/]+/, '').replace(/\?.*$/, '');
    byUrl[k] = (byUrl[k] || 0) + b;
  }
  return { total, byUrl };
}

async function scenarios(ctx, page) {
  report.scenarios = [];
  const shots = cfg.shots || cfg.artifacts;
  fs.mkdirSync(shots, { recursive: true });
  for (const sc of cfg.scenarios) {
    try {
      await scenario(page, sc, shots);
    } catch (e) {
      let seen = null;
      try { seen = await page.evaluate(observe); } catch (_) { /* page gone */ }
      throw new Error('scenario ' + sc.name + ': ' + e.message.split('\n')[0] + '; page shows ' + JSON.stringify(seen && { seq: seen.seq, error: seen.error, firstCardSeq: seen.firstCardSeq, segCards: seen.segCards }));
    }
  }
  await lists(page, shots);
}

async function scenario(page, sc, shots) {
  {
    const errors = [];
    const consoleErr = [];
    const onErr = (e) => errors.push(String(e));
    const onCon = (m) => { if (m.type() === 'error') consoleErr.push(m.text()); };
    page.on('pageerror', onErr);
    page.on('console', onCon);
    await page.setViewportSize({ width: sc.width, height: sc.height });
    // a fresh document each time (performance entries start empty)
    await page.goto('about:blank');
    // every URL the page asks for (a token must be in none but the stream's)
    const urls = [];
    const onReq = (q) => urls.push(q.url());
    page.on('request', onReq);
    // ciFail: the bootstrap answers 503 (a busy server), as a slow or
    // refused request would
    const ciRoute = (u) => /\/metrics\?(.*&)?ci=/.test(u.pathname + u.search);
    const ci503 = (rt) => rt.fulfill({ status: 503, contentType: 'application/problem+json', headers: { 'Retry-After': '1' },
      body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'busy (test)' }) });
    if (sc.ciFail) await page.route(ciRoute, ci503);
    const t0 = Date.now();
    await page.goto(cfg.base + '/#/s/' + encodeURIComponent(sc.session));
    if (sc.seq >= 0) {
      await page.waitForFunction((n) => {
        const e = document.querySelector('#s-segments');
        const first = document.querySelector('#seglist > li.seg');
        return e && e.dataset.seq === String(n) && (n === 0 || (first && Number(first.dataset.seq) === n)) &&
          document.querySelectorAll('svg.chart').length > 0;
      }, sc.seq, { timeout: WAIT_MS, polling: 20 });
    } else {
      await page.waitForFunction(() => !document.querySelector('#error').hidden, null, { timeout: WAIT_MS, polling: 20 });
    }
    const ms = Date.now() - t0;
    const r = { name: sc.name, session: sc.session, width: sc.width, renderMs: ms, errors, console: consoleErr };
    r.bytes = await page.evaluate(bytesLoaded);
    r.seen = await page.evaluate(observe);
    r.charts = await page.evaluate(chartInfo);
    r.legend = await page.evaluate(() => [...document.querySelectorAll('#legend li')].map((li) => li.dataset.system));
    r.segCounts = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#latest-body .segcount')].map((e) => [e.dataset.system, e.textContent])));
    r.ctx = await page.evaluate(() => [...document.querySelectorAll('#latest-body .ctxval')].map((e) => ({ metric: e.dataset.metric, system: e.dataset.system, text: e.textContent })));
    r.deltas = await page.evaluate(() => [...document.querySelectorAll('#latest-body tr')].map((tr) => ({ system: tr.dataset.system, metrics: [...tr.querySelectorAll('.delta')].map((d) => d.dataset.metric + ' ' + d.textContent) })));
    r.glossary = await page.evaluate(() => (document.querySelector('#s-glossary') || {}).textContent || null);
    r.exports = await page.evaluate(() => [...document.querySelectorAll('#s-export a')].map((a) => a.getAttribute('href')));
    r.devPerSystem = await page.evaluate(() => document.querySelectorAll('.sys .term.deviating').length);
    r.devPerSegment = await page.evaluate(() => [...document.querySelectorAll('#seglist > li.seg')].map((li) => li.querySelectorAll(':scope > .seg-terms .term.deviating').length));
    r.layout = await page.evaluate(layoutInfo);
    r.termScope = await page.evaluate(() => { const e = document.querySelector('#term-scope'); return e && !e.hidden ? e.textContent : null; });
    // what could overflow with long unspaced (CJK) text or a long signature:
    // the signature's box against its column, and the segment cards (and the
    // latest-totals table) whose content is wider than their box
    r.overflow = await page.evaluate(() => {
      const sig = document.querySelector('#s-signature');
      const col = sig && sig.closest('dd');
      const wide = (e) => e.scrollWidth > e.clientWidth + 1;
      return {
        signature: sig ? { right: sig.getBoundingClientRect().right, colRight: col.getBoundingClientRect().right, wide: wide(sig) } : null,
        // signature fields broken across lines (inside "ja-mecab" or "wo:2,3")
        // (measured on the text, whatever elements hold it)
        sigSplit: (() => {
          if (!sig) return [];
          const nodes = []; const tw = document.createTreeWalker(sig, NodeFilter.SHOW_TEXT);
          for (let n = tw.nextNode(), at = 0; n; at += n.data.length, n = tw.nextNode()) nodes.push([n, at]);
          if (!nodes.length) return [];
          const pos = (i) => { let k = nodes.length - 1; while (k > 0 && nodes[k][1] > i) k--; return [nodes[k][0], i - nodes[k][1]]; };
          const out = []; let start = 0;
          for (const f of sig.textContent.split('|')) {
            const r = document.createRange(); r.setStart(...pos(start)); r.setEnd(...pos(start + f.length));
            if (new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size > 1) out.push(f);
            start += f.length + 1;
          }
          return out;
        })(),
        cards: [...document.querySelectorAll('#seglist > li.seg')].filter(wide).map((li) => Number(li.dataset.seq)),
        // the lang each piece of the newest card's target text carries
        langs: (() => { const li = document.querySelector('#seglist > li.seg'); const l = (q) => { const e = li && li.querySelector(q); return e ? e.closest('[lang]').getAttribute('lang') : null; };
          return li ? { confirmed: l('.tgt'), mt: l('.hyp'), word: l('.w span[lang]') } : null; })(),
        table: (() => { const t = document.querySelector('#latest-body'); const w = t && t.closest('.table-wrap, section'); return w ? wide(w) : null; })(),
      };
    });
    if (sc.sig) {
      // the significance marks, once the test's answer (or its failure) is shown
      // a mark shows within moments ('… testing' while the request runs);
      // a page without marks is reported at once, not after a minute
      let settled = true;
      try {
        await page.waitForFunction(() => document.querySelectorAll('#latest-body .sig').length > 0, null, { timeout: cfg.waitMs ? WAIT_MS : 5000, polling: 50 });
        await page.waitForFunction(() => [...document.querySelectorAll('#latest-body .sig')].every((e) => e.dataset.sig !== 'pending'),
          null, { timeout: Math.max(WAIT_MS, 60000), polling: 50 });
      } catch (_) {
        settled = false;
      }
      r.sig = { settled, marks: await page.evaluate(sigMarks), layout: await page.evaluate(layoutInfo),
        caption: await page.evaluate(() => document.querySelector('#latest-caption').textContent) };
    } else {
      await page.waitForTimeout(300);
      r.sigAfter = await page.evaluate(sigMarks);
    }
    if (sc.ciFail) await page.unroute(ciRoute, ci503);
    if (sc.rescoreClick) {
      // the page's own rescore button (with the page's token)
      await page.evaluate(() => { window.__dashMarker = 'no-reload'; });
      const btn = page.locator('#term-scope #rescore');
      r.rescoreButton = await btn.count();
      if (r.rescoreButton) {
        await btn.click();
        let done = true;
        try {
          // success ends with the "Rescored …" message shown (the page keeps
          // it); the box can be hidden for a moment before that, when a
          // refresh that sees the rescored session lands before the POST's
          // answer (a loaded machine: two suites at once under JOBS=2)
          await page.waitForFunction((want) => { const e = document.querySelector('#term-scope'); return e && (want === 'fail' ? /write token/.test(e.textContent) : !e.hidden && /Rescored/.test(e.textContent)) &&
            (want === 'fail' || !document.querySelector('#term-scope .scope-text')); }, sc.rescoreClick, { timeout: WAIT_MS, polling: 50 });
        } catch (_) {
          done = false;
        }
        r.afterRescore = { done, scope: await page.evaluate(() => { const e = document.querySelector('#term-scope'); return e && !e.hidden ? e.textContent : null; }),
          buttons: await page.locator('#term-scope #rescore').count(), seen: await page.evaluate(observe),
          authOpen: await page.evaluate(() => document.querySelector('#auth').open) };
      }
    }
    await page.screenshot({ path: path.join(shots, sc.name + '.png'), fullPage: false });
    if (sc.hover) {
      await page.locator('svg.chart[data-metric="r1"]').scrollIntoViewIfNeeded();
      const box = await page.locator('svg.chart[data-metric="r1"] rect.hover').boundingBox();
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
      await page.waitForFunction(() => { const t = document.querySelector('figure[data-metric="r1"] .tip'); return t && !t.hidden; }, null, { timeout: WAIT_MS });
      r.tip = await page.evaluate(() => document.querySelector('figure[data-metric="r1"] .tip').textContent);
      await page.locator('figure[data-metric="r1"]').screenshot({ path: path.join(shots, sc.name + '-hover.png') });
      await page.mouse.move(0, 0);
    }
    if (sc.hide) {
      await page.click('#legend li[data-system="' + sc.hide + '"] button');
      await page.waitForFunction((nm) => !document.querySelector('svg.chart[data-metric="r0"] g.series[data-system="' + nm + '"]'), sc.hide, { timeout: WAIT_MS });
      r.afterHide = await page.evaluate(chartInfo);
      await page.click('#legend li[data-system="' + sc.hide + '"] button');
    }
    if (sc.word) {
      const chip = page.locator('#seglist > li.seg').first().locator('.w[data-word]').first();
      r.wordAsked = await chip.getAttribute('data-word');
      await chip.click();
      await page.waitForFunction(() => { const b = document.querySelector('#word-history'); return b && !b.hidden && /occurrence/.test(b.textContent); }, null, { timeout: WAIT_MS });
      r.wordHistory = await page.evaluate(() => ({ text: document.querySelector('#word-history .wh-head').textContent, rows: document.querySelectorAll('#word-history tr').length }));
      await page.locator('#seglist > li.seg').first().screenshot({ path: path.join(shots, sc.name + '-word.png') });
      // again after a re-render replaced the segment cards
      await page.selectOption('#window', '10');
      await page.waitForFunction(() => document.querySelector('#latest-caption').textContent.includes('last 10'), null, { timeout: WAIT_MS });
      await page.locator('#seglist > li.seg').first().locator('.w[data-word]').first().click();
      await page.waitForFunction(() => { const b = document.querySelector('#word-history'); return b && !b.hidden && /occurrence/.test(b.textContent); }, null, { timeout: WAIT_MS });
      r.wordHistoryAgain = true;
      await page.selectOption('#window', '0');
    }
    if (sc.scroll) {
      const before = await page.evaluate(() => document.querySelectorAll('#seglist > li.seg').length);
      await page.locator('#older').scrollIntoViewIfNeeded();
      await page.waitForFunction((b) => document.querySelectorAll('#seglist > li.seg').length > b, before, { timeout: WAIT_MS });
      r.scrolled = { before, after: await page.evaluate(() => document.querySelectorAll('#seglist > li.seg').length),
        lastSeq: await page.evaluate(() => { const l = [...document.querySelectorAll('#seglist > li.seg')]; return Number(l[l.length - 1].dataset.seq); }) };
    }
    if (sc.window) {
      await page.selectOption('#window', String(sc.window));
      await page.waitForFunction((w) => document.querySelector('#latest-caption').textContent.includes('last ' + w), sc.window, { timeout: WAIT_MS });
      await page.waitForTimeout(100);
      r.windowed = { charts: await page.evaluate(chartInfo), seen: await page.evaluate(observe) };
      await page.screenshot({ path: path.join(shots, sc.name + '-window' + sc.window + '.png'), fullPage: false });
      await page.selectOption('#window', '0');
    }
    if (sc.glossaryPut) {
      // a new glossary version while the page watches, then one more segment
      const h = { 'Content-Type': 'text/csv' };
      const put = await fetch(cfg.base + '/v1/sessions/' + encodeURIComponent(sc.session) + '/glossary', { method: 'PUT', headers: h, body: sc.glossaryPut });
      if (put.status !== 200) throw new Error('PUT glossary: ' + put.status);
      const res = await fetch(cfg.base + '/v1/sessions/' + encodeURIComponent(sc.session) + '/segments',
        { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(sc.post) });
      const seg = await res.json();
      await page.waitForFunction((n) => document.querySelector('#s-segments').dataset.seq === String(n) &&
        document.querySelectorAll('svg.chart .gloss-mark').length > 0, seg.seq, { timeout: WAIT_MS, polling: 50 });
      r.afterGlossary = { charts: await page.evaluate(chartInfo), glossary: await page.evaluate(() => document.querySelector('#s-glossary').textContent),
        markSeq: await page.evaluate(() => Number(document.querySelector('svg.chart .gloss-mark').dataset.seq)) };
      await page.locator('#charts').screenshot({ path: path.join(shots, sc.name + '-glossary-change.png') });
    }
    if (sc.exportFormat) {
      // the export link with a token: fetch() + Authorization, a Blob download
      r.exported = { hrefs: await page.evaluate(() => [...document.querySelectorAll('#s-export a')].map((a) => a.href)) };
      try {
        const [d] = await Promise.all([page.waitForEvent('download', { timeout: WAIT_MS }),
          page.click('#s-export a[data-format="' + sc.exportFormat + '"]', { timeout: WAIT_MS })]);
        Object.assign(r.exported, { url: d.url(), name: d.suggestedFilename(), text: fs.readFileSync(await d.path(), 'utf8') });
      } catch (e) {
        r.exported.error = e.message.split('\n')[0]; // the test reports it
      }
      r.exported.location = await page.evaluate(() => location.href);
    }
    if (sc.replace) {
      // older cards paged in, then a PUT replaces one of them: its card
      // changes in place (the stream's event), without a reload
      await page.locator('#older').scrollIntoViewIfNeeded();
      await page.waitForFunction((q) => document.querySelector('#seglist > li.seg[data-seq="' + q + '"]'), sc.replace.seq, { timeout: WAIT_MS });
      await page.evaluate(() => { window.__dashMarker = 'no-reload'; });
      if (sc.replace.live) await page.waitForFunction(() => document.querySelector('#mode').dataset.mode === 'live', null, { timeout: WAIT_MS });
      const before = await page.evaluate((q) => document.querySelector('#seglist > li.seg[data-seq="' + q + '"]').textContent, sc.replace.seq);
      const put = await fetch(cfg.base + '/v1/sessions/' + encodeURIComponent(sc.session) + '/segments/' + encodeURIComponent(sc.replace.id),
        { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(sc.replace.body) });
      if (put.status !== 200) throw new Error('PUT segment: ' + put.status);
      let shown = true;
      try {
        await page.waitForFunction(([q, text]) => {
          const li = document.querySelector('#seglist > li.seg[data-seq="' + q + '"]');
          return li && li.querySelector('.tgt') && li.querySelector('.tgt').textContent.includes(text);
        }, [sc.replace.seq, sc.replace.body.translation], { timeout: WAIT_MS, polling: 50 });
      } catch (_) {
        shown = false;
      }
      r.replaced = await page.evaluate((q) => {
        const li = document.querySelector('#seglist > li.seg[data-seq="' + q + '"]');
        return { text: li ? li.textContent : null, heads: li ? [...li.querySelectorAll('.sys-head')].map((h) => h.textContent) : [],
          cards: document.querySelectorAll('#seglist > li.seg').length, marker: window.__dashMarker || null };
      }, sc.replace.seq);
      r.replaced.shown = shown;
      r.replaced.before = before;
      r.replaced.mode = await page.evaluate(() => document.querySelector('#mode').dataset.mode);
    }
    if (sc.segdelete) {
      // older cards paged in, then DELETEs of an older and of the newest
      // segment: their cards go and the count drops, without a reload
      const d = sc.segdelete;
      await page.locator('#older').scrollIntoViewIfNeeded();
      await page.waitForFunction((q) => document.querySelector('#seglist > li.seg[data-seq="' + q + '"]'), d.seqs[0], { timeout: WAIT_MS });
      await page.evaluate(() => { window.__dashMarker = 'no-reload'; });
      if (d.live) await page.waitForFunction(() => document.querySelector('#mode').dataset.mode === 'live', null, { timeout: WAIT_MS });
      for (const id of d.ids) {
        const del = await fetch(cfg.base + '/v1/sessions/' + encodeURIComponent(sc.session) + '/segments/' + encodeURIComponent(id), { method: 'DELETE' });
        if (del.status !== 204) throw new Error('DELETE segment: ' + del.status);
      }
      let shown = true;
      try {
        await page.waitForFunction(([gone, n]) => !gone.some((q) => document.querySelector('#seglist > li.seg[data-seq="' + q + '"]')) &&
          document.querySelector('#s-segments').textContent === String(n), [d.seqs, d.count], { timeout: WAIT_MS, polling: 50 });
      } catch (_) {
        shown = false;
      }
      r.segdeleted = await page.evaluate(() => ({ seqs: [...document.querySelectorAll('#seglist > li.seg')].map((li) => Number(li.dataset.seq)),
        count: document.querySelector('#s-segments').textContent, caption: document.querySelector('#latest-caption').textContent,
        marker: window.__dashMarker || null }));
      r.segdeleted.shown = shown;
    }
    if (sc.rescore) {
      // a glossary PUT then POST …/rescore while the page is open: the
      // 'rescore' event (state committed) makes the page show the new
      // term scores without a reload
      await page.evaluate(() => { window.__dashMarker = 'no-reload'; });
      await page.waitForFunction(() => document.querySelector('#mode').dataset.mode === 'live', null, { timeout: WAIT_MS });
      const sess = cfg.base + '/v1/sessions/' + encodeURIComponent(sc.session);
      const put = await fetch(sess + '/glossary', { method: 'PUT', headers: { 'Content-Type': 'text/csv' }, body: sc.rescore.glossary });
      if (put.status !== 200) throw new Error('PUT glossary: ' + put.status);
      const rs = await fetch(sess + '/rescore', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
      if (rs.status !== 200) throw new Error('POST rescore: ' + rs.status + ' ' + (await rs.text()));
      let shown = true;
      try {
        await page.waitForFunction((sys) => {
          const v = document.querySelector('#latest-body .value[data-metric="term"][data-system="' + sys + '"]');
          return v && v.dataset.value !== '';
        }, sc.rescore.system, { timeout: WAIT_MS, polling: 50 });
      } catch (_) {
        shown = false;
      }
      r.rescored = { shown, seen: await page.evaluate(observe) };
    }
    r.urls = urls;
    page.off('request', onReq);
    if (sc.full) await page.screenshot({ path: path.join(cfg.artifacts, sc.name + '-full.png'), fullPage: true });
    page.off('pageerror', onErr);
    page.off('console', onCon);
    report.scenarios.push(r);
  }
}

async function lists(page, shots) {
  if (cfg.list) {
    report.lists = [];
    for (const w of cfg.list.widths) {
      const errors = [];
      const onErr = (e) => errors.push(String(e));
      page.on('pageerror', onErr);
      await page.setViewportSize({ width: w[0], height: w[1] });
      await page.goto('about:blank');
      await page.evaluate(() => { try { sessionStorage.clear(); } catch (_) { /* none */ } });
      await page.goto(cfg.base + '/#/');
      await page.waitForFunction(() => document.querySelectorAll('a.session-link').length > 0 && document.querySelectorAll('svg.spark').length > 0, null, { timeout: WAIT_MS });
      const lst = { width: w[0], errors };
      lst.order = await page.evaluate(() => [...document.querySelectorAll('a.session-link')].map((a) => a.dataset.session));
      lst.sparks = await page.evaluate(() => [...document.querySelectorAll('svg.spark path')].length);
      lst.scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      lst.badText = await page.evaluate(() => document.body.innerText.match(/\b(null|undefined|NaN|\[object \w+\])\b/g) || []);
      await page.screenshot({ path: path.join(shots, 'list-' + w[0] + 'x' + w[1] + '.png'), fullPage: false });
      await page.fill('#list-filter', cfg.list.filter);
      await page.waitForFunction((f) => [...document.querySelectorAll('a.session-link')].every((a) => a.dataset.session.includes(f)), cfg.list.filter, { timeout: WAIT_MS });
      lst.filtered = await page.evaluate(() => [...document.querySelectorAll('a.session-link')].map((a) => a.dataset.session));
      await page.fill('#list-filter', '');
      page.off('pageerror', onErr);
      report.lists.push(lst);
    }
  }
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
    await page.route((url) => !url.href.startsWith(cfg.base) && url.href !== 'about:blank', (r) => { foreign.push(r.request().url()); r.abort(); });

    if (cfg.scenarios) {
      if (cfg.token) {
        // the origin's storage, set from a document that runs no script: the
        // app (index.html) would ask the API without the token, and its 401
        // answers can arrive after the first scenario started listening
        await page.goto(cfg.base + '/dashboard/favicon.svg');
        await page.evaluate((t) => localStorage.setItem('adaptmon.token', t), cfg.token);
      }
      await scenarios(ctx, page);
      report.foreignRequests = foreign;
      return;
    }

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
