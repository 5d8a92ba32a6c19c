/* adaptmon live dashboard — plain JS, no dependencies, served from the binary.
 *
 * Views (hash routes): #/ the session list, #/s/<id> one session.
 * Data: GET /v1/sessions, /v1/sessions/{id}, …/metrics (ETag), …/curve
 * (the curves computed and downsampled by the server), …/segments (only the
 * newest page, older pages as the user scrolls), …/glossary (when there is
 * one), …/vocabulary/{word}, and the live stream …/events (Server-Sent
 * Events). The page never downloads the whole timeline: the first view of
 * any session stays small. A stream event (or, while the stream is
 * unavailable, a poll of …/metrics with If-None-Match every 2 s) refetches
 * the totals, the curves and the newest segments; the header shows which
 * mode is active. A stream event for a segment in an older page already
 * shown (a PUT replaced it, or one before it) refetches those older cards.
 * The curves mark where the glossary version changed (…/curve's
 * glossary_changes, so also changes made before the page opened). With a
 * token, the export links download with fetch() and the Authorization
 * header (no token in any URL but the stream's: EventSource sends no
 * headers). */
'use strict';

(function () {
  const POLL_MS = 2000;
  const STREAM_RETRY_MS = 20000;
  const LIST_REFRESH_MS = 5000;
  const SHOW_SEGMENTS = 20;
  const CURVE_POINTS = 240;
  // Okabe–Ito palette (colour-blind safe); never used alone: each system also
  // has its own marker shape and dash pattern, and values are printed.
  const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];
  const SHAPES = ['circle', 'square', 'triangle', 'diamond', 'cross', 'triangle-down', 'plus', 'star'];
  const SHAPE_NAMES = { circle: '●', square: '■', triangle: '▲', diamond: '◆', cross: '✕', 'triangle-down': '▼', plus: '+', star: '★' };
  const DASH_OTHER = ['', '1 0', '10 3 2 3', '2 3', '12 4', '4 2 1 2', '', ''];
  const SVGNS = 'http://www.w3.org/2000/svg';

  const $ = (id) => document.getElementById(id);
  const enc = encodeURIComponent;

  /* ---- small helpers ---------------------------------------------------- */

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    return e;
  }

  function sv(tag, attrs, ...kids) {
    const e = document.createElementNS(SVGNS, tag);
    if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, String(v));
    for (const k of kids) if (k) e.append(k);
    return e;
  }

  function fmt(x, digits) {
    if (x === null || x === undefined || Number.isNaN(x)) return '–';
    return x.toFixed(digits === undefined ? 3 : digits);
  }

  /* "1 entry", "2 entries": n with the noun that agrees with it. */
  function plural(n, one, many) {
    return n + ' ' + (n === 1 ? one : many);
  }

  function when(iso) {
    if (!iso) return '–';
    const d = new Date(typeof iso === 'number' ? iso : iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    const secs = Math.round((Date.now() - d.getTime()) / 1000);
    let rel;
    if (secs < 5) rel = 'just now';
    else if (secs < 90) rel = secs + ' s ago';
    else if (secs < 5400) rel = Math.round(secs / 60) + ' min ago';
    else if (secs < 36 * 3600) rel = Math.round(secs / 3600) + ' h ago';
    else rel = Math.round(secs / 86400) + ' d ago';
    return rel;
  }

  function showError(msg) {
    const e = $('error');
    if (!msg) { e.hidden = true; e.textContent = ''; return; }
    e.hidden = false;
    e.textContent = msg;
  }

  /* ---- token and fetch -------------------------------------------------- */

  function token() {
    try { return localStorage.getItem('adaptmon.token') || ''; } catch (_) { return ''; }
  }

  function setToken(t) {
    try {
      if (t) localStorage.setItem('adaptmon.token', t);
      else localStorage.removeItem('adaptmon.token');
    } catch (_) { /* storage disabled: the token lives for this page only */ }
  }

  class ApiError extends Error {
    constructor(status, body, msg) { super(msg); this.status = status; this.body = body; }
  }

  async function api(path, opts) {
    const o = opts || {};
    const headers = Object.assign({ Accept: 'application/json' }, o.headers || {});
    const t = token();
    if (t) headers.Authorization = 'Bearer ' + t;
    let r = null;
    let body = null;
    // a streamed answer (the segment list) ends early when the session is
    // rewritten between two of its pages: ask again, a few times
    for (let attempt = 0; ; attempt++) {
      r = await fetch(path, { method: o.method || 'GET', headers, cache: 'no-store', signal: o.signal });
      if (r.status === 304) return { status: 304, headers: r.headers, body: null };
      let cut = false;
      try { body = await r.json(); } catch (_) { body = null; cut = r.ok && r.status !== 204; }
      if (!cut || attempt >= 3 || (o.method && o.method !== 'GET')) break; // never repeat a write
      await new Promise((res) => setTimeout(res, 100));
    }
    if (!r.ok) {
      const detail = body && (body.detail || body.title) ? (body.title + ': ' + body.detail) : r.statusText;
      throw new ApiError(r.status, body, 'HTTP ' + r.status + ' — ' + detail);
    }
    return { status: r.status, headers: r.headers, body };
  }

  function authHint(err) {
    if (err && (err.status === 401 || err.status === 403)) {
      $('auth').open = true;
      return err.message + ' — enter a token (the read-only token is enough) under “Token”.';
    }
    return err && err.message ? err.message : String(err);
  }

  /* ---- mode indicator --------------------------------------------------- */

  function setMode(mode, text) {
    const m = $('mode');
    m.dataset.mode = mode;
    const labels = {
      idle: 'idle',
      live: '● live: event stream',
      polling: '◌ polling every 2 s (event stream unavailable)',
      connecting: '… connecting',
      reconnecting: '↻ stream reconnecting; polling meanwhile',
      deleted: '✕ session deleted',
      list: '◌ refreshing every 5 s',
    };
    m.textContent = text || labels[mode] || mode;
  }

  /* ---- app state -------------------------------------------------------- */

  let view = null; // the active view's controller (has stop())
  let whBox = null; // the word-history box: moved into the segment asked about

  function wordBox() {
    if (!whBox) whBox = $('word-history');
    return whBox;
  }

  function route() {
    if (view) view.stop();
    view = null;
    showError('');
    const h = location.hash || '#/';
    const m = /^#\/s\/(.+)$/.exec(h);
    if (m) {
      $('list-view').hidden = true;
      $('session-view').hidden = false;
      view = new SessionView(decodeURIComponent(m[1]));
    } else {
      $('session-view').hidden = true;
      $('list-view').hidden = false;
      view = new ListView();
    }
    view.start();
  }

  /* Downloads url as a file named name through fetch() with the
   * Authorization header, so the token is never in a URL (history, logs). */
  async function download(url, name) {
    const r = await fetch(url, { headers: { Authorization: 'Bearer ' + token() }, cache: 'no-store' });
    if (!r.ok) {
      let body = null;
      try { body = await r.json(); } catch (_) { body = null; }
      throw new ApiError(r.status, body, 'HTTP ' + r.status + ' — ' + (body && body.title ? body.title + ': ' + body.detail : r.statusText));
    }
    const href = URL.createObjectURL(await r.blob());
    const a = el('a', { href, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(href), 60000);
  }

  /* url with ?access_token= (only for the event stream: EventSource cannot
   * send an Authorization header). */
  function withToken(url) {
    const t = token();
    return t ? url + (url.includes('?') ? '&' : '?') + 'access_token=' + enc(t) : url;
  }

  /* ---- session list ----------------------------------------------------- */

  // A sparkline of one series (values in [0, 1] or null), as a small SVG.
  function sparkline(values, color, dash, label) {
    const W = 90, H = 22;
    const n = values.length;
    let d = '';
    let pen = false;
    values.forEach((v, i) => {
      if (v === null || v === undefined) { pen = false; return; }
      const x = n > 1 ? (i / (n - 1)) * (W - 4) + 2 : W / 2;
      const y = H - 2 - Math.max(0, Math.min(1, v)) * (H - 4);
      d += (pen ? 'L' : 'M') + x.toFixed(1) + ',' + y.toFixed(1);
      pen = true;
    });
    const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'spark', role: 'img', 'aria-label': label },
      sv('line', { x1: 2, x2: W - 2, y1: H - 2, y2: H - 2, class: 'spark-base' }));
    if (d) svg.append(sv('path', { d, fill: 'none', stroke: color, 'stroke-width': 1.6, 'stroke-dasharray': dash || null }));
    return svg;
  }

  class ListView {
    constructor() { this.stopped = false; this.timer = null; this.limit = 100; this.sparks = new Map(); }

    start() {
      document.title = 'adaptmon — sessions';
      setMode('list');
      $('sessions-body').replaceChildren();
      $('list-total').textContent = '';
      this.refresh();
      $('list-more').onclick = () => { this.limit += 100; this.refresh(); };
      const f = $('list-filter');
      f.value = sessionStorage.getItem('adaptmon.filter') || '';
      f.oninput = () => { sessionStorage.setItem('adaptmon.filter', f.value); if (this.last) this.render(...this.last); };
    }

    stop() { this.stopped = true; clearTimeout(this.timer); }

    /* R1 per system over the session (40 points), refetched only when the
     * session's version changed. */
    async spark(s, m) {
      const key = s.id;
      const have = this.sparks.get(key);
      if (have && m && have.version === m.version) return have;
      const r = await api('/v1/sessions/' + enc(s.id) + '/curve?points=40').then((x) => x.body, () => null);
      const out = { version: m ? m.version : -1, curve: r };
      this.sparks.set(key, out);
      return out;
    }

    async refresh() {
      clearTimeout(this.timer);
      try {
        const r = await api('/v1/sessions?limit=' + Math.min(this.limit, 1000));
        if (this.stopped) return;
        const list = (r.body.sessions || []).slice();
        // the most recently active first
        list.sort((a, b) => String(b.updated_at || '').localeCompare(String(a.updated_at || '')) || a.id.localeCompare(b.id));
        const metrics = await Promise.all(list.map((s) =>
          api('/v1/sessions/' + enc(s.id) + '/metrics').then((x) => x.body, () => null)));
        const sparks = await Promise.all(list.map((s, i) => (metrics[i] && metrics[i].segments ? this.spark(s, metrics[i]) : null)));
        if (this.stopped) return;
        this.last = [r.body, list, metrics, sparks];
        this.render(...this.last);
        showError('');
      } catch (e) {
        if (this.stopped) return;
        showError(authHint(e));
      }
      if (!this.stopped) this.timer = setTimeout(() => this.refresh(), LIST_REFRESH_MS);
    }

    render(page, all, allMetrics, allSparks) {
      const q = $('list-filter').value.trim().toLowerCase();
      const idx = [];
      all.forEach((s, i) => {
        const hay = [s.id, s.name || '', s.source_lang, s.target_lang].join(' ').toLowerCase();
        if (!q || hay.includes(q)) idx.push(i);
      });
      $('list-total').textContent = '(' + (q ? idx.length + ' of ' : '') + page.total + ')';
      $('list-empty').hidden = all.length > 0;
      $('list-nomatch').hidden = !(all.length > 0 && idx.length === 0);
      $('list-more').hidden = page.next === null || page.next === undefined || all.length >= 1000;
      const body = $('sessions-body');
      const rows = [];
      for (const i of idx) {
        const s = all[i];
        const m = allMetrics[i];
        const sp = allSparks[i] && allSparks[i].curve;
        const href = '#/s/' + enc(s.id);
        const systems = m && m.systems ? orderSystems(Object.keys(m.systems), m.baseline_system) : [];
        const span = Math.max(1, systems.length);
        const first = (tr) => {
          tr.append(
            el('th', { scope: 'row', rowspan: span, 'data-label': 'Session' },
              el('a', { href, class: 'session-link', 'data-session': s.id }, s.name || s.id),
              s.name ? el('span', { class: 'muted small id' }, ' ' + s.id) : null),
            el('td', { rowspan: span, 'data-label': 'Languages' }, s.source_lang + ' → ' + s.target_lang),
            el('td', { rowspan: span, class: 'num', 'data-label': 'Segments' }, String(s.segments)));
        };
        if (!systems.length) {
          const tr = el('tr', { class: 'first' });
          first(tr);
          tr.append(el('td', { colspan: 6, class: 'muted', 'data-label': 'Scores' }, m ? 'no segments yet' : 'metrics unavailable'),
            el('td', { 'data-label': 'Last activity' }, el('time', { datetime: s.updated_at }, when(s.updated_at))));
          rows.push(tr);
          continue;
        }
        systems.forEach((name, k) => {
          const t = m.systems[name];
          const tr = el('tr', { class: k === 0 ? 'first' : 'more' });
          if (k === 0) first(tr);
          const isBase = name === m.baseline_system;
          const r1 = sp && sp.systems && sp.systems[name] ? sp.systems[name].r1 : [];
          appendAll(tr,
            el('td', { 'data-label': 'System' }, name, isBase ? el('span', { class: 'tag' }, 'baseline') : null),
            el('td', { class: 'num', 'data-label': 'R0' }, fmt(t.r0 && t.r0.score)),
            el('td', { class: 'num', 'data-label': 'R1' }, fmt(t.r1 && t.r1.score)),
            el('td', { class: 'num', 'data-label': 'R0+1' }, fmt(t.r01 && t.r01.score)),
            el('td', { class: 'num', 'data-label': 'Term acc.' }, fmt(t.terms && t.terms.exact_match)),
            el('td', { class: 'spark-cell', 'data-label': 'R1 curve' },
              sparkline(r1, PALETTE[k % PALETTE.length], isBase ? '4 3' : null, 'R1 of ' + name + ' over the session')),
            k === 0 ? el('td', { rowspan: span, 'data-label': 'Last activity' }, el('time', { datetime: s.updated_at }, when(s.updated_at))) : null);
          rows.push(tr);
        });
      }
      body.replaceChildren(...rows);
    }
  }

  function appendAll(parent, ...kids) {
    for (const k of kids) if (k !== null && k !== undefined) parent.append(k);
  }

  function orderSystems(names, baseline) {
    const rest = names.filter((n) => n !== baseline).sort();
    return names.includes(baseline) ? [baseline].concat(rest) : rest;
  }

  /* ---- metric definitions ------------------------------------------------ */

  // key: the chart/table key; ck: the series in GET …/curve; cum(totals):
  // the running value from …/metrics; rel: the key in relative_to_baseline;
  // bounded: values live in [0, 1] (the axis never leaves it).
  function metricDefs(wo) {
    return [
      { key: 'r0', ck: 'r0', label: 'R0 — zero-shot recall', short: 'R0', cum: (t) => t.r0 && t.r0.score, count: (t) => t.r0, rel: 'r0', bounded: true },
      { key: 'r1', ck: 'r1', label: 'R1 — one-shot recall', short: 'R1', cum: (t) => t.r1 && t.r1.score, count: (t) => t.r1, rel: 'r1', bounded: true },
      { key: 'r01', ck: 'r01', label: 'R0+1 — recall of both', short: 'R0+1', cum: (t) => t.r01 && t.r01.score, count: (t) => t.r01, rel: 'r01', bounded: true },
      { key: 'term', ck: 'term_exact_match', label: 'Term exact-match accuracy', short: 'Term exact', cum: (t) => t.terms && t.terms.exact_match,
        count: (t) => t.terms && { hits: t.terms.exact, total: t.terms.instances }, rel: 'term_exact_match', bounded: true },
      { key: 'wo', ck: 'window_overlap', label: 'Term window overlap (w=' + wo + ')', short: 'Window overlap', bounded: true,
        cum: (t) => { const o = t.terms && t.terms.window_overlap && t.terms.window_overlap[wo]; return o ? o.score : null; },
        count: (t) => { const o = t.terms && t.terms.window_overlap && t.terms.window_overlap[wo]; return o ? { instances: o.instances } : null; } },
      { key: 'oneminusterm', ck: 'one_minus_term', label: '1 − TERm', short: '1 − TERm', cum: (t) => t.one_minus_term, rel: 'one_minus_term', bounded: false },
    ];
  }

  // context metrics (running only, from …/metrics): corpus BLEU, chrF, TER
  const CONTEXT = [
    { key: 'bleu', label: 'BLEU', rel: 'bleu', lowerBetter: false },
    { key: 'chrf', label: 'chrF', rel: 'chrf', lowerBetter: false },
    { key: 'ter', label: 'TER', rel: 'ter', lowerBetter: true },
  ];

  // the metric names of …/metrics?ci=LEVEL (confidence.systems[i][name])
  // for the keys of the table's Δ columns
  const CI_NAMES = { r0: 'R0', r1: 'R1', r01: 'R0+1', term: 'term-EM', oneminusterm: '1-TERm', bleu: 'BLEU', chrf: 'chrF2', ter: 'TER' };
  const CI_LEVEL = 0.95;
  const CI_TIMEOUT_MS = 60000;  // a session of thousands of segments takes seconds
  const CI_MIN_GAP_MS = 15000;  // a live session is not re-bootstrapped on every segment

  function clamp01(y) {
    return y === null || y === undefined || Number.isNaN(y) ? null : Math.max(0, Math.min(1, y));
  }

  function relText(r, lowerBetter) {
    if (r === null || r === undefined || Number.isNaN(r)) return null;
    const pct = r * 100;
    const better = lowerBetter ? pct < 0 : pct > 0;
    return { text: 'Δ\u00a0' + (pct >= 0 ? '+' : '−') + Math.abs(pct).toFixed(1) + '%', cls: pct === 0 ? 'same' : better ? 'up' : 'down' };
  }

  /* ---- one session -------------------------------------------------------- */

  class SessionView {
    constructor(id) {
      this.id = id;
      this.base = '/v1/sessions/' + enc(id);
      this.session = null;
      this.glossary = null;
      this.metrics = null;
      this.curve = null;
      this.recent = [];     // the newest segments (full items), newest last
      this.older = [];      // older pages loaded by scrolling, newest first
      this.olderBusy = false;
      this.glossMarks = []; // {seq, version} where the glossary changed while watching
      this.staleFrom = null; // older cards from this seq on changed (stream event)
      this.hidden = new Set();
      this.etag = null;
      this.curveKey = null;
      this.es = null;
      this.pollTimer = null;
      this.streamTimer = null;
      this.renderTimer = null;
      this.refreshTimer = null;
      this.stopped = false;
      this.busy = Promise.resolve();
      this.deleted = false;
      this.ci = null;        // {state: pending|done|failed, version, body, error}: the Δ's test
      this.ciBusy = false;
      this.ciAt = 0;         // when the last …/metrics?ci= was asked
      this.ciTimer = null;
      this.ciCtl = null;
      this.firstSeg = null;  // {key, seq, version}: the oldest segment's glossary version
      this.rescoreMsg = '';  // what the last rescore from this page said
      this.rescoreBusy = false;
      this.readOnlyToken = null; // a token the server refused a rescore with
      this.lastLatest = null;
    }

    start() {
      document.title = 'adaptmon — ' + this.id;
      $('s-title').textContent = this.id;
      $('seglist').replaceChildren();
      $('charts').replaceChildren();
      $('latest-body').replaceChildren();
      $('legend').replaceChildren();
      $('older').hidden = true;
      wordBox().hidden = true;
      setMode('connecting');
      const saved = sessionStorage.getItem('adaptmon.window');
      if (saved !== null) $('window').value = saved;
      $('window').onchange = () => { sessionStorage.setItem('adaptmon.window', $('window').value); this.kick(); };
      $('wo-window').onchange = () => this.kick();
      $('older').onclick = () => this.loadOlder();
      if (window.IntersectionObserver) {
        this.io = new IntersectionObserver((ents) => { if (ents.some((e) => e.isIntersecting)) this.loadOlder(); });
        this.io.observe($('older'));
      }
      this.load();
    }

    stop() {
      this.stopped = true;
      if (this.es) this.es.close();
      this.es = null;
      if (this.io) this.io.disconnect();
      clearTimeout(this.pollTimer);
      clearTimeout(this.streamTimer);
      clearTimeout(this.renderTimer);
      clearTimeout(this.refreshTimer);
      clearTimeout(this.ciTimer);
      if (this.ciCtl) this.ciCtl.abort();
    }

    /* Serializes the updates (stream events, polls, catch-ups). */
    serial(fn) {
      this.busy = this.busy.then(() => (this.stopped ? null : fn())).catch((e) => this.fail(e));
      return this.busy;
    }

    fail(e) {
      if (this.stopped) return;
      if (e && e.status === 404 && this.session) { this.markDeleted(); return; }
      showError(authHint(e));
    }

    async load() {
      try {
        const s = await api(this.base);
        if (this.stopped) return;
        this.session = s.body;
        this.renderHeader();
        // the glossary, the totals, the curves and the newest segments at once
        await Promise.all([this.loadGlossary(), this.refresh(true)]);
        if (this.stopped) return;
        this.render();
        this.startStream();
      } catch (e) {
        if (e && e.status === 404) showError('No session “' + this.id + '” on this server.');
        else showError(authHint(e));
        setMode('idle', 'not loaded');
      }
    }

    /* The glossary entries (for term texts), only when there is one. */
    async loadGlossary() {
      const g = this.session.glossary;
      if (!g || !g.entries) { this.glossary = []; return; }
      const r = await api(this.base + '/glossary').catch(() => null);
      this.glossary = r && r.body ? r.body.entries || [] : [];
    }

    renderHeader() {
      const s = this.session;
      $('s-title').textContent = s.name ? s.name + ' ' : s.id;
      if (s.name) $('s-title').append(el('span', { class: 'muted small id' }, s.id));
      $('s-langs').textContent = s.source_lang + ' → ' + s.target_lang;
      // one box per field, so a line breaks between fields ("…|ter:norm,asian|")
      // rather than inside one at its hyphen or comma ("ja-" / "mecab")
      $('s-signature').replaceChildren(...String(s.signature || '').split('|').map((f, i, all) =>
        el('span', { class: 'sigfield' }, i < all.length - 1 ? f + '|' : f)));
      const g = s.glossary || { entries: 0, version: 0 };
      $('s-glossary').textContent = g.entries ? plural(g.entries, 'entry', 'entries') + ' · version ' + g.version : 'none';
      $('s-glossary').dataset.version = String(g.version || 0);
      const wins = (s.options && s.options.windows) || [2, 3];
      const sel = $('wo-window');
      const cur = sel.value;
      sel.replaceChildren(...wins.map((w) => el('option', { value: w }, 'w = ' + w)));
      if (wins.map(String).includes(cur)) sel.value = cur;
      const links = ['csv', 'json', 'tmx'].map((f) => {
        const a = el('a', { href: this.base + '/export?format=' + f, download: this.id + '.' + f, class: 'export', 'data-format': f }, f.toUpperCase());
        a.onclick = (ev) => {
          if (!token()) return; // a plain link: the browser downloads it
          ev.preventDefault();
          download(a.getAttribute('href'), a.getAttribute('download')).catch((e) => showError(authHint(e)));
        };
        return a;
      });
      $('s-export').replaceChildren(...links.flatMap((a, i) => (i ? [' · ', a] : [a])));
    }

    get baseline() {
      return this.session && this.session.options ? this.session.options.baseline_system : null;
    }

    get win() { return Number($('window').value) || 0; }

    /* Refetches what changed: the totals (ETag), the curves, the newest
     * segments, and the session when its glossary may have changed. */
    async refresh(first) {
      const headers = this.etag ? { 'If-None-Match': this.etag } : {};
      const wo = $('wo-window').value || '2';
      const key = this.win + '/' + wo;
      const curveReq = () => api(this.base + '/curve?points=' + CURVE_POINTS + '&window=' + this.win + '&wo=' + enc(wo));
      // seqs increase with gaps where segments were deleted: pages, x axes and
      // captions go by the highest seq (last_seq), counts by segments
      const top = (o) => (o && o.last_seq !== undefined ? o.last_seq : o ? o.segments : 0);
      const segsReq = (n) => (n ? api(this.base + '/segments?after=' + Math.max(0, n - SHOW_SEGMENTS) + '&limit=' + SHOW_SEGMENTS) : Promise.resolve(null));
      let r, cv, segs, sess;
      if (first) {
        // the first view: everything in parallel, sized by the session's count
        [r, cv, segs] = await Promise.all([api(this.base + '/metrics'), curveReq(), segsReq(top(this.session))]);
        if (this.stopped) return false;
        if (top(r.body) !== top(this.session) || r.body.segments !== this.session.segments ||
            top(cv.body) !== top(r.body)) {
          [cv, segs] = await Promise.all([curveReq(), segsReq(top(r.body))]); // changed meanwhile
        }
      } else {
        const olderChanged = await this.refreshOlder();
        r = await api(this.base + '/metrics', { headers });
        if (this.stopped) return false;
        if (r.status === 304 && key === this.curveKey) return olderChanged;
      }
      const changed = r.status !== 304;
      const prevN = this.metrics ? top(this.metrics) : 0;
      if (changed) {
        this.etag = r.headers.get('ETag');
        this.metrics = r.body;
      }
      const n = top(this.metrics);
      if (!first) [cv, segs, sess] = await Promise.all([curveReq(), changed ? segsReq(n) : null, changed ? api(this.base) : null]);
      if (this.stopped) return false;
      this.curve = cv.body;
      this.curveKey = key;
      await this.loadFirstVersion();
      if (this.stopped) return false;
      if (changed) {
        const items = segs && segs.body ? segs.body.segments || [] : [];
        // older pages already shown stay; a shrinking session starts over
        if (!this.recent.length || n < this.recent[this.recent.length - 1].seq) this.older = [];
        this.recent = items;
        if (sess && sess.body) {
          const oldV = this.session.glossary ? this.session.glossary.version : 0;
          this.session = sess.body;
          const newV = this.session.glossary ? this.session.glossary.version : 0;
          if (newV !== oldV) {
            // the new glossary scores the segments after those shown so far
            this.glossMarks.push({ seq: Math.max(1, prevN), version: newV });
            await this.loadGlossary();
          }
          this.renderHeader();
        }
      }
      return true;
    }

    /* Segment seq changed (a stream event): older cards from there on are
     * refetched by the next refresh (the newest are refetched anyway). */
    noteChanged(seq) {
      if (!(seq > 0) || !this.older.some((it) => it.seq >= seq)) return; // a new segment
      this.staleFrom = this.staleFrom === null ? seq : Math.min(this.staleFrom, seq);
    }

    /* Refetches the older cards shown from this.staleFrom on; true when
     * some were. */
    async refreshOlder() {
      const from = this.staleFrom;
      this.staleFrom = null;
      const shown = from === null ? [] : this.older.filter((it) => it.seq >= from);
      if (!shown.length) return false;
      const hi = Math.max(...shown.map((it) => it.seq));
      const fresh = new Map();
      const lo = Math.min(...shown.map((it) => it.seq));
      // pages are seq ranges (fewer rows where segments were deleted)
      for (let after = lo - 1; after < hi;) {
        const lim = Math.min(1000, hi - after);
        const r = await api(this.base + '/segments?after=' + after + '&limit=' + lim);
        if (this.stopped) return false;
        for (const it of (r.body && r.body.segments) || []) fresh.set(it.seq, it);
        after += lim;
      }
      // a card in the refetched range that is not there any more was deleted
      this.older = this.older.filter((it) => it.seq < lo || it.seq > hi || fresh.has(it.seq))
        .map((it) => fresh.get(it.seq) || it);
      return true;
    }

    /* A refresh soon (coalesced), then a render. */
    kick() {
      if (this.refreshTimer) return;
      this.refreshTimer = setTimeout(() => {
        this.refreshTimer = null;
        this.serial(async () => { if (await this.refresh(false)) this.scheduleRender(); });
      }, 20);
    }

    /* ---- live stream and the polling fallback ---- */

    startStream() {
      if (this.stopped || this.deleted) return;
      clearTimeout(this.streamTimer);
      if (!window.EventSource) { this.startPolling(); return; }
      const es = new EventSource(withToken(this.base + '/events'));
      this.es = es;
      let opened = false;
      es.onopen = () => {
        if (this.stopped || es !== this.es) return;
        opened = true;
        setMode('live');
        this.stopPolling();
        this.kick(); // whatever was posted between the first fetch and the stream's start
      };
      es.addEventListener('segment', (ev) => {
        if (this.stopped || es !== this.es) return;
        this.noteChanged(Number(ev.lastEventId));
        this.kick();
      });
      // a deleted segment: its card goes (the later ones come as 'segment')
      es.addEventListener('segment-deleted', (ev) => {
        if (this.stopped || es !== this.es) return;
        let d = null;
        try { d = JSON.parse(ev.data); } catch (e) { return; }
        if (d && d.seq > 0) this.noteChanged(d.seq);
        this.kick();
      });
      es.addEventListener('deleted', () => { if (es === this.es) this.markDeleted(); });
      // a committed rescore replaced every segment's result: refetch all
      // cards, the totals and the curves
      es.addEventListener('rescore', (ev) => {
        if (this.stopped || es !== this.es) return;
        let d = null;
        try { d = JSON.parse(ev.data); } catch (e) { return; }
        if (!d || d.state !== 'committed') return;
        this.noteChanged(1);
        this.kick();
      });
      es.onerror = () => {
        if (this.stopped || es !== this.es) return;
        if (es.readyState === EventSource.CLOSED || !opened) {
          // no stream on this server (refused, or never opened): poll, and
          // try the stream again later
          es.close();
          this.es = null;
          setMode('polling');
          this.startPolling();
          this.streamTimer = setTimeout(() => this.startStream(), STREAM_RETRY_MS);
        } else {
          setMode('reconnecting');
          this.startPolling();
        }
      };
    }

    startPolling() {
      if (this.pollTimer !== null || this.stopped) return;
      const tick = () => {
        this.serial(async () => {
          if (await this.refresh(false)) this.scheduleRender();
        }).finally(() => {
          if (this.pollTimer !== null && !this.stopped && !this.deleted) this.pollTimer = setTimeout(tick, POLL_MS);
        });
      };
      this.pollTimer = setTimeout(tick, 0);
    }

    stopPolling() {
      clearTimeout(this.pollTimer);
      this.pollTimer = null;
    }

    markDeleted() {
      this.deleted = true;
      this.stopPolling();
      if (this.es) this.es.close();
      this.es = null;
      clearTimeout(this.streamTimer);
      setMode('deleted');
      showError('This session was deleted.');
    }

    scheduleRender() {
      if (this.renderTimer) return;
      this.renderTimer = setTimeout(() => { this.renderTimer = null; if (!this.stopped) this.render(); }, 30);
    }

    /* One more page of older segments (as the user scrolls down). */
    async loadOlder() {
      if (this.olderBusy || this.stopped) return;
      const shown = this.older.length ? this.older[this.older.length - 1] : this.recent[0];
      if (!shown || shown.seq <= 1) return;
      this.olderBusy = true;
      try {
        const after = Math.max(0, shown.seq - 1 - SHOW_SEGMENTS);
        const r = await api(this.base + '/segments?after=' + after + '&limit=' + (shown.seq - 1 - after));
        if (this.stopped) return;
        const items = (r.body.segments || []).slice().reverse();
        this.older.push(...items);
        const names = this.systems();
        $('seglist').append(...items.map((it) => this.segmentItem(it, names)));
        this.updateOlderButton();
      } catch (e) {
        this.fail(e);
      } finally {
        this.olderBusy = false;
      }
    }

    updateOlderButton() {
      const oldest = this.older.length ? this.older[this.older.length - 1] : this.recent[0];
      $('older').hidden = !oldest || oldest.seq <= 1;
    }

    /* ---- rendering ---- */

    systems() {
      const names = new Set();
      if (this.metrics && this.metrics.systems) for (const k of Object.keys(this.metrics.systems)) names.add(k);
      if (this.curve && this.curve.systems) for (const k of Object.keys(this.curve.systems)) names.add(k);
      return orderSystems([...names], this.baseline);
    }

    style(name, k) {
      const isBase = name === this.baseline;
      return {
        color: PALETTE[k % PALETTE.length],
        shape: SHAPES[k % SHAPES.length],
        dash: isBase ? '7 5' : DASH_OTHER[k % DASH_OTHER.length],
        baseline: isBase,
      };
    }

    render() {
      if (this.stopped || !this.metrics) return;
      const n = this.metrics.segments;
      $('s-segments').textContent = String(n);
      // the highest seq (above the count once segments were deleted)
      $('s-segments').dataset.seq = String(this.metrics.last_seq !== undefined ? this.metrics.last_seq : n);
      const last = this.recent[this.recent.length - 1];
      $('s-updated').textContent = last && last.created_ms ? when(last.created_ms) : (this.session ? when(this.session.updated_at) : '–');
      const names = this.systems();
      this.styles = {};
      names.forEach((nm, k) => { this.styles[nm] = this.style(nm, k); });
      const win = this.curve ? this.curve.window : 0;
      const wo = this.curve ? String(this.curve.window_overlap_width) : ($('wo-window').value || '2');
      const defs = metricDefs(wo);
      this.renderLegend(names);
      this.lastLatest = [names, defs, win];
      this.renderLatest(names, defs, win);
      this.renderTermScope();
      this.renderTranslators(names, defs);
      this.renderCharts(names, defs, win);
      this.renderSegments(names);
      this.scheduleCi();
    }

    /* ---- is the Δ real? (paired bootstrap, on demand) ---- */

    /* A difference to test: a baseline with segments and another system. */
    wantsCi() {
      const m = this.metrics;
      if (!m || !m.segments || !m.systems || !this.baseline || !m.systems[this.baseline]) return false;
      return Object.keys(m.systems).length > 1;
    }

    /* Asks GET …/metrics?ci=LEVEL once the view is drawn, never on the
     * first view's path: the bootstrap takes seconds for thousands of
     * segments (2 s for 3,050 × 2 systems). One request at a time, at most
     * one per CI_MIN_GAP_MS while segments arrive, none again for a version
     * that failed (a 503 is not retried until the session changes); the
     * previous marks stay meanwhile, their hover line says what they cover. */
    scheduleCi() {
      if (this.stopped || !this.wantsCi() || this.ciBusy || this.ciTimer) return;
      if (this.ci && this.ci.version === this.metrics.version) return;
      const wait = Math.max(50, this.ciAt + CI_MIN_GAP_MS - Date.now());
      this.ciTimer = setTimeout(() => { this.ciTimer = null; this.loadCi(); }, wait);
    }

    async loadCi() {
      if (this.stopped || !this.wantsCi()) return;
      const v = this.metrics.version;
      this.ciBusy = true;
      this.ciAt = Date.now();
      if (!this.ci) { this.ci = { state: 'pending' }; this.renderLatestAgain(); }
      const ctl = new AbortController();
      this.ciCtl = ctl;
      const timer = setTimeout(() => ctl.abort(), CI_TIMEOUT_MS);
      try {
        const r = await api(this.base + '/metrics?ci=' + CI_LEVEL, { signal: ctl.signal });
        if (this.stopped) return;
        const c = r.body && r.body.confidence;
        this.ci = c ? { state: 'done', version: r.body.version, body: c }
          : { state: 'failed', version: v, error: 'the answer has no confidence intervals' };
      } catch (e) {
        if (this.stopped) return;
        this.ci = { state: 'failed', version: v,
          error: e && e.name === 'AbortError' ? 'no answer within ' + CI_TIMEOUT_MS / 1000 + ' s' : (e && e.message) || String(e) };
      } finally {
        clearTimeout(timer);
        this.ciBusy = false;
        this.ciCtl = null;
      }
      this.renderLatestAgain();
      this.scheduleCi(); // the session moved on meanwhile
    }

    renderLatestAgain() {
      if (!this.stopped && this.lastLatest && this.metrics) this.renderLatest(...this.lastLatest);
    }

    /* The mark beside system nm's Δ (relative difference r) on metric key:
     * significant or not yet (the bootstrap's p-value against the
     * baseline), with a hover line. No difference is never significant:
     * sacreBLEU's rule gives identical totals p = 1/(n+1). */
    sigMark(nm, key, r) {
      const name = CI_NAMES[key];
      const c = this.ci;
      if (!name || !c) return null;
      let cls, text, title;
      if (r === 0) {
        cls = 'same'; text = '= no difference';
        title = 'The same score as the baseline on the paired segments: there is no difference to test.';
      } else if (c.state === 'pending') {
        cls = 'pending'; text = '… testing';
        title = 'Testing whether this difference is real (paired bootstrap, computed after the page is drawn); the Δ itself is exact.';
      } else if (c.state === 'failed') {
        cls = 'none'; text = 'not computed';
        title = 'The significance test was not computed (' + c.error + '); the Δ itself is exact.';
      } else {
        const row = (c.body.systems || []).find((x) => x.system === nm);
        const m = row ? row[name] : null;
        if (!m || typeof m.p_value !== 'number') {
          cls = 'none'; text = 'not computed';
          title = 'No paired bootstrap value of ' + name + ' for ' + nm + ' (undefined on these segments); the Δ itself is exact.';
        } else {
          const alpha = Number((1 - c.body.confidence).toFixed(6));
          const sig = m.p_value < alpha;
          const digits = key === 'bleu' || key === 'chrf' || key === 'ter' ? 1 : 3;
          cls = sig ? 'yes' : 'not';
          text = sig ? '✓ significant' : '○ not yet';
          title = (sig ? 'Significant' : 'Not significant yet') + ': paired bootstrap over ' +
            plural(c.body.segments, 'segment', 'segments') + ' (' + c.body.n + ' resamples), p = ' + pval(m.p_value) +
            (sig ? ' < ' : ' ≥ ') + alpha + (sig ? ', unlikely to be chance' : ', could still be chance') + '; ' + nm + ' ' +
            Math.round(c.body.confidence * 100) + '% interval ' + fmt(m.lo, digits) + '–' + fmt(m.hi, digits) +
            (c.version !== this.metrics.version ? ' (as of ' + plural(c.body.segments, 'segment', 'segments') + '; updating)' : '') + '.';
        }
      }
      return el('span', { class: 'sig ' + cls, 'data-metric': key, 'data-sig': cls, title }, text);
    }

    /* ---- which segments the term totals cover ---- */

    /* The oldest segment's glossary version, needed only when the curve
     * lists glossary changes (the versions after it follow from them): one
     * segment, fetched again only when the changes or the count changed. */
    async loadFirstVersion() {
      const ch = (this.curve && this.curve.glossary_changes) || [];
      if (!ch.length || !this.metrics) { this.firstSeg = null; return; }
      const key = JSON.stringify(ch) + '/' + this.metrics.segments;
      if (this.firstSeg && this.firstSeg.key === key) return;
      const r = await api(this.base + '/segments?after=0&limit=1');
      const it = r.body && r.body.segments ? r.body.segments[0] : null;
      this.firstSeg = it ? { key, seq: it.seq, version: it.glossary_version || 0 } : null;
    }

    /* The glossary version each stored segment was scored with, as seq
     * ranges [{from, to, version}]; null while unknown. */
    glossaryRanges() {
      const m = this.metrics;
      if (!m || !m.segments) return [];
      const last = m.last_seq !== undefined ? m.last_seq : m.segments;
      const ch = ((this.curve && this.curve.glossary_changes) || []).slice().sort((a, b) => a.seq - b.seq);
      let cur;
      if (ch.length) {
        if (!this.firstSeg) return null;
        cur = { from: this.firstSeg.seq, version: this.firstSeg.version };
      } else {
        const newest = this.recent[this.recent.length - 1];
        if (!newest || typeof newest.glossary_version !== 'number') return null;
        cur = { from: 1, version: newest.glossary_version };
      }
      const out = [];
      for (const c of ch) {
        if (c.seq > cur.from) out.push({ from: cur.from, to: c.seq - 1, version: cur.version });
        cur = { from: c.seq, version: c.version };
      }
      if (cur.from <= last) out.push({ from: cur.from, to: last, version: cur.version });
      return out;
    }

    /* Under the totals: which segments the term totals cover when not all
     * were scored with the current glossary, and the rescore that makes
     * them (POST …/rescore, with the stored token; a read-only token gets
     * 403 and the page says the write token is needed). */
    renderTermScope() {
      const box = $('term-scope');
      const g = this.session && this.session.glossary;
      const now = g && g.entries ? g.version : 0;
      const ranges = this.glossaryRanges();
      const stale = !!ranges && ranges.some((r) => r.version !== now) && ranges.some((r) => r.version || now);
      if (!stale && !this.rescoreMsg) { box.hidden = true; box.replaceChildren(); return; }
      const span = (r) => (r.from === r.to ? String(r.from) : r.from + '–' + r.to);
      const kids = [];
      if (stale) {
        const withG = ranges.filter((r) => r.version > 0);
        const without = ranges.filter((r) => r.version === 0);
        let text;
        if (!withG.length) {
          text = 'Term totals: no segment was scored with a glossary (glossary v' + now + ' arrived after them).';
        } else {
          const vs = [...new Set(withG.map((r) => r.version))];
          const one = withG.length === 1 && withG[0].from === withG[0].to;
          text = 'Term totals cover ' + (one ? 'segment' : 'segments') + ' ' +
            (vs.length === 1 ? withG.map(span).join(', ') + ', since glossary v' + vs[0]
              : withG.map((r) => span(r) + ' (glossary v' + r.version + ')').join(', '));
          if (without.length) text += '; ' + without.map(span).join(', ') + ' scored without a glossary';
          text += '.';
        }
        kids.push(el('span', { class: 'scope-text' }, text));
        if (now && this.readOnlyToken !== token()) {
          const btn = el('button', { type: 'button', id: 'rescore', disabled: this.rescoreBusy ? true : null,
            title: 'POST …/rescore: every segment scored again with glossary v' + now + ' (needs the write token when the server uses tokens)' },
          this.rescoreBusy ? 'Rescoring…' : 'Rescore all with glossary v' + now);
          btn.onclick = () => this.rescore();
          kids.push(' ', btn);
        }
      }
      if (this.rescoreMsg) kids.push(' ', el('span', { class: 'rescore-msg', role: 'status' }, this.rescoreMsg));
      box.replaceChildren(...kids);
      box.hidden = false;
    }

    async rescore() {
      if (this.rescoreBusy) return;
      this.rescoreBusy = true;
      this.rescoreMsg = '';
      this.renderTermScope();
      try {
        const r = await api(this.base + '/rescore', { method: 'POST' });
        if (this.stopped) return;
        this.rescoreMsg = 'Rescored ' + plural(r.body.segments, 'segment', 'segments') + ' with glossary v' + r.body.glossary_version + '.';
        this.kick();
      } catch (e) {
        if (this.stopped) return;
        if (e && (e.status === 401 || e.status === 403)) {
          this.readOnlyToken = token();
          $('auth').open = true;
          this.rescoreMsg = 'Rescoring changes the session: it needs the write token (' + e.message + '). Enter it under “Token”.';
        } else {
          this.rescoreMsg = 'Rescore failed: ' + ((e && e.message) || String(e));
        }
      } finally {
        this.rescoreBusy = false;
      }
      this.renderTermScope();
    }

    /* Where the glossary version changed, as {seq, version}: a mark after
     * the last segment scored with the previous version. From the curve's
     * glossary_changes, plus the changes seen live that no segment was
     * scored with yet. */
    glossaryMarks() {
      const marks = ((this.curve && this.curve.glossary_changes) || []).map((c) => ({ seq: c.seq - 1, version: c.version }));
      const top = marks.reduce((m, c) => Math.max(m, c.version), -1);
      return marks.concat(this.glossMarks.filter((gm) => gm.version > top));
    }

    /* The curve's points of one metric and system: [{x, y}] (y may be null). */
    points(d, nm) {
      const c = this.curve;
      const ys = c && c.systems && c.systems[nm] ? c.systems[nm][d.ck] || [] : [];
      return (c ? c.x : []).map((x, i) => {
        const y = ys[i] === undefined ? null : ys[i];
        return { x, y: d.bounded ? clamp01(y) : (y === null ? null : Math.min(1, y)) };
      });
    }

    marker(shape, x, y, r, color, extra) {
      const a = Object.assign({ fill: color, stroke: '#fff', 'stroke-width': 1, class: 'marker' }, extra || {});
      switch (shape) {
        case 'square': return sv('rect', Object.assign({ x: x - r, y: y - r, width: 2 * r, height: 2 * r }, a));
        case 'triangle': return sv('path', Object.assign({ d: `M${x},${y - r * 1.2}L${x + r * 1.1},${y + r * 0.9}L${x - r * 1.1},${y + r * 0.9}Z` }, a));
        case 'triangle-down': return sv('path', Object.assign({ d: `M${x},${y + r * 1.2}L${x + r * 1.1},${y - r * 0.9}L${x - r * 1.1},${y - r * 0.9}Z` }, a));
        case 'diamond': return sv('path', Object.assign({ d: `M${x},${y - r * 1.3}L${x + r * 1.3},${y}L${x},${y + r * 1.3}L${x - r * 1.3},${y}Z` }, a));
        case 'cross': case 'plus': {
          const d = shape === 'cross'
            ? `M${x - r},${y - r}L${x + r},${y + r}M${x - r},${y + r}L${x + r},${y - r}`
            : `M${x - r * 1.2},${y}L${x + r * 1.2},${y}M${x},${y - r * 1.2}L${x},${y + r * 1.2}`;
          return sv('path', Object.assign({}, a, { d, fill: 'none', stroke: color, 'stroke-width': 2.2 }));
        }
        case 'star': return sv('path', Object.assign({ d: `M${x},${y - r * 1.3}L${x + r * 0.4},${y - r * 0.4}L${x + r * 1.3},${y - r * 0.3}L${x + r * 0.6},${y + r * 0.3}L${x + r * 0.8},${y + r * 1.2}L${x},${y + r * 0.7}L${x - r * 0.8},${y + r * 1.2}L${x - r * 0.6},${y + r * 0.3}L${x - r * 1.3},${y - r * 0.3}L${x - r * 0.4},${y - r * 0.4}Z` }, a));
        default: return sv('circle', Object.assign({ cx: x, cy: y, r }, a));
      }
    }

    /* One entry per system; a click hides or shows its curves. */
    renderLegend(names) {
      $('legend').replaceChildren(...names.map((nm) => {
        const st = this.styles[nm];
        const svg = sv('svg', { width: 44, height: 14, viewBox: '0 0 44 14', 'aria-hidden': 'true', class: 'legend-line' },
          sv('line', { x1: 2, y1: 7, x2: 42, y2: 7, stroke: st.color, 'stroke-width': 2.5, 'stroke-dasharray': st.dash || null }),
          this.marker(st.shape, 22, 7, 4.5, st.color));
        const t = this.metrics && this.metrics.systems ? this.metrics.systems[nm] : null;
        const btn = el('button', { type: 'button', class: 'legend-btn', 'aria-pressed': this.hidden.has(nm) ? 'false' : 'true',
          title: (this.hidden.has(nm) ? 'Show ' : 'Hide ') + nm + ' in the curves' }, svg,
        el('span', { class: 'sysname' }, nm),
        el('span', { class: 'muted small' }, ' ' + SHAPE_NAMES[st.shape] + (st.baseline ? ' baseline, dashed' : '') +
          (t ? ' · ' + t.segments + ' seg.' : '')));
        btn.onclick = () => {
          if (this.hidden.has(nm)) this.hidden.delete(nm); else this.hidden.add(nm);
          this.render();
        };
        return el('li', { 'data-system': nm, class: this.hidden.has(nm) ? 'off' : null }, btn);
      }));
    }

    renderLatest(names, defs, win) {
      const last = this.recent[this.recent.length - 1];
      // the totals are those after the last stored segment (seqs have gaps)
      const n = last ? last.seq : this.metrics.segments;
      $('latest-caption').textContent = (win ? 'Over the last ' + win + ' segments' : 'Running totals') +
        (n ? ' after segment ' + n + (last && last.seq === n ? ' (“' + last.id + '”)' : '') : ' — no segments yet') +
        (this.baseline ? '; Δ: relative to the baseline “' + this.baseline + '”, over the segments both systems scored' +
          (!win && this.wantsCi() ? '; ✓ significant / ○ not yet: paired bootstrap test at p < ' + Number((1 - CI_LEVEL).toFixed(6)) + ' (point at a mark)' : '') : '');
      const rel = (this.metrics && this.metrics.relative_to_baseline) || {};
      const rows = names.map((nm) => {
        const st = this.styles[nm];
        const t = this.metrics.systems ? this.metrics.systems[nm] : null;
        const cells = defs.map((d) => {
          let y;
          if (win) { const pts = this.points(d, nm); y = pts.length ? pts[pts.length - 1].y : null; } else y = t ? d.cum(t) : null;
          if (y === undefined || Number.isNaN(y)) y = null;
          let detail = '';
          if (!win && t && d.count) {
            const c = d.count(t);
            if (c && c.total !== undefined) detail = c.hits + '/' + c.total;
            else if (c && c.instances !== undefined) detail = c.instances + ' inst.';
          }
          const delta = !win && d.rel && rel[nm] ? relText(rel[nm][d.rel], false) : null;
          return el('td', { class: 'num', 'data-label': d.short },
            el('span', { class: 'value', 'data-metric': d.key, 'data-system': nm, 'data-value': y === null ? '' : String(y) }, fmt(y)),
            detail ? el('span', { class: 'count muted small' }, ' ' + detail) : null,
            delta ? el('span', { class: 'delta ' + delta.cls, 'data-metric': d.key }, delta.text) : null,
            delta ? this.sigMark(nm, d.key, rel[nm][d.rel]) : null);
        });
        const ctx = CONTEXT.map((c) => {
          const y = t && typeof t[c.key] === 'number' ? t[c.key] : null;
          const delta = rel[nm] ? relText(rel[nm][c.rel], c.lowerBetter) : null;
          return el('td', { class: 'num ctx', 'data-label': c.label },
            el('span', { class: 'ctxval', 'data-metric': c.key, 'data-system': nm }, fmt(y, 1)),
            delta ? el('span', { class: 'delta ' + delta.cls, 'data-metric': c.key }, delta.text) : null,
            delta ? this.sigMark(nm, c.key, rel[nm][c.rel]) : null);
        });
        return el('tr', { 'data-system': nm, class: st.baseline ? 'base' : null },
          el('th', { scope: 'row', 'data-label': 'System' },
            el('span', { class: 'swatch', 'aria-hidden': 'true', 'data-color': st.color }, SHAPE_NAMES[st.shape]), '\u00a0',
            el('span', { class: 'rowname' }, nm),
            st.baseline ? el('span', { class: 'tag' }, 'baseline') : null),
          ...cells, ...ctx,
          el('td', { class: 'num', 'data-label': 'Segments' }, el('span', { class: 'segcount', 'data-system': nm }, t ? String(t.segments) : '0')));
      });
      $('latest-body').replaceChildren(...rows);
      for (const sw of $('latest-body').querySelectorAll('.swatch')) sw.style.color = sw.dataset.color;
    }

    /* The by_translator totals of …/metrics: one row per translator and
     * system (hidden when no segment named a translator). */
    renderTranslators(names, defs) {
      const by = (this.metrics && this.metrics.by_translator) || {};
      const who = Object.keys(by).sort();
      $('translators').hidden = who.length === 0;
      const cols = defs.filter((d) => d.key !== 'wo' && d.key !== 'oneminusterm');
      const rows = [];
      for (const w of who) {
        const systems = names.filter((nm) => by[w][nm]).concat(Object.keys(by[w]).filter((nm) => !names.includes(nm)).sort());
        systems.forEach((nm, i) => {
          const t = by[w][nm];
          const cells = cols.map((d) => {
            let y = d.cum(t);
            if (y === undefined || Number.isNaN(y)) y = null;
            const c = d.count ? d.count(t) : null;
            return el('td', { class: 'num', 'data-label': d.short },
              el('span', { class: 'value', 'data-metric': d.key, 'data-translator': w, 'data-system': nm, 'data-value': y === null ? '' : String(y) }, fmt(y)),
              c && c.total !== undefined ? el('span', { class: 'count muted small' }, ' ' + c.hits + '/' + c.total) : null);
          });
          const ctx = CONTEXT.map((c) => el('td', { class: 'num ctx', 'data-label': c.label },
            el('span', { class: 'ctxval', 'data-metric': c.key }, fmt(typeof t[c.key] === 'number' ? t[c.key] : null, 1))));
          rows.push(el('tr', { 'data-translator': w, 'data-system': nm },
            el('th', { scope: 'row', 'data-label': 'Translator' }, i === 0 ? w : ''),
            el('td', { 'data-label': 'System' }, nm),
            ...cells, ...ctx,
            el('td', { class: 'num', 'data-label': 'Segments' }, el('span', { class: 'segcount' }, String(t.segments)))));
        });
      }
      $('by-translator-body').replaceChildren(...rows);
    }

    renderCharts(names, defs, win) {
      const W = 360, H = 210, L = 38, R = 10, T = 12, B = 30;
      const n = this.metrics.last_seq !== undefined ? this.metrics.last_seq : this.metrics.segments;
      const xmax = Math.max(2, n); // the x axis is seq
      const X = (x) => L + ((x - 1) / (xmax - 1)) * (W - L - R);
      const shown = names.filter((nm) => !this.hidden.has(nm));
      const charts = defs.map((d) => {
        const series = {};
        for (const nm of names) series[nm] = this.points(d, nm);
        // y range: [0, 1] for bounded metrics; 1 − TERm can go below 0
        let lo = 0;
        const hi = 1;
        if (!d.bounded) for (const nm of shown) for (const p of series[nm]) if (p.y !== null) lo = Math.min(lo, p.y);
        lo = Math.floor(lo * 4) / 4;
        const Y = (y) => T + (1 - (y - lo) / (hi - lo)) * (H - T - B);
        const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'data-metric': d.key,
          'data-ymin': lo, 'data-ymax': hi,
          'aria-label': d.label + (win ? ' over the last ' + win + ' segments' : ' (running)') + ' by segment number' });
        const grid = sv('g', { class: 'grid' });
        for (let v = lo; v <= hi + 1e-9; v += (hi - lo) / 4) {
          grid.append(sv('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v) }),
            sv('text', { x: L - 5, y: Y(v) + 4, 'text-anchor': 'end', class: 'tick ytick' }, document.createTextNode(fmt(v, 2))));
        }
        const step = niceStep(xmax);
        for (let x = 1; x <= xmax; x += step) {
          grid.append(sv('line', { x1: X(x), x2: X(x), y1: H - B, y2: H - B + 4 }),
            sv('text', { x: X(x), y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, document.createTextNode(String(x))));
        }
        grid.append(sv('text', { x: W - R, y: H - 2, 'text-anchor': 'end', class: 'axis' }, document.createTextNode('segment')));
        svg.append(grid);
        // where the glossary changed
        for (const gm of this.glossaryMarks()) {
          if (gm.seq < 1 || gm.seq > xmax) continue;
          svg.append(sv('g', { class: 'gloss-mark', 'data-seq': gm.seq },
            sv('line', { x1: X(gm.seq), x2: X(gm.seq), y1: T, y2: H - B }),
            sv('text', X(gm.seq) > W * 0.6 ? { x: X(gm.seq) - 3, y: H - B - 5, 'text-anchor': 'end', class: 'tick gtick' }
              : { x: X(gm.seq) + 3, y: H - B - 5, class: 'tick gtick' }, document.createTextNode('glossary v' + gm.version))));
        }
        for (const nm of shown) {
          const st = this.styles[nm];
          const pts = series[nm];
          const defined = pts.filter((p) => p.y !== null);
          let path = '';
          let pen = false;
          for (const p of pts) {
            if (p.y === null) { pen = false; continue; }
            path += (pen ? 'L' : 'M') + X(p.x).toFixed(1) + ',' + Y(p.y).toFixed(1);
            pen = true;
          }
          const g = sv('g', { class: 'series', 'data-system': nm, 'data-points': defined.length,
            'data-last': defined.length ? String(defined[defined.length - 1].y) : '' });
          if (path) g.append(sv('path', { d: path, fill: 'none', stroke: st.color, 'stroke-width': 2.2,
            'stroke-dasharray': st.dash || null, 'stroke-linejoin': 'round', class: 'line' }));
          // markers on every point while they are few, else on the last one
          const marks = defined.length <= 40 ? defined : defined.slice(-1);
          for (const p of marks) {
            const m = this.marker(st.shape, X(p.x), Y(p.y), defined.length <= 40 ? 3.4 : 4.5, st.color);
            m.append(sv('title', null, document.createTextNode(nm + ' @ ' + p.x + ': ' + fmt(p.y))));
            g.append(m);
          }
          svg.append(g);
        }
        // hover: the nearest sampled segment, its values for every system
        const cursor = sv('line', { class: 'cursor', y1: T, y2: H - B, x1: -10, x2: -10 });
        const overlay = sv('rect', { class: 'hover', x: L, y: T, width: W - L - R, height: H - T - B });
        svg.append(cursor, overlay);
        const tip = el('div', { class: 'tip', role: 'status', hidden: true });
        const xs = this.curve ? this.curve.x : [];
        const move = (ev) => {
          if (!xs.length) return;
          const box = svg.getBoundingClientRect();
          const vx = ((ev.clientX - box.left) / box.width) * W;
          const want = 1 + ((vx - L) / (W - L - R)) * (xmax - 1);
          let i = 0;
          for (let k = 1; k < xs.length; k++) if (Math.abs(xs[k] - want) < Math.abs(xs[i] - want)) i = k;
          cursor.setAttribute('x1', X(xs[i]));
          cursor.setAttribute('x2', X(xs[i]));
          tip.replaceChildren(el('strong', null, 'segment ' + xs[i]),
            ...shown.map((nm) => el('div', null, el('span', { class: 'shape', 'data-color': this.styles[nm].color }, SHAPE_NAMES[this.styles[nm].shape]),
              ' ' + nm + ' ' + fmt(series[nm][i] ? series[nm][i].y : null))));
          for (const s of tip.querySelectorAll('.shape')) s.style.color = s.dataset.color;
          tip.hidden = false;
          const left = ((X(xs[i]) / W) * box.width);
          tip.style.left = Math.min(Math.max(0, left + 8), Math.max(0, box.width - 150)) + 'px';
        };
        overlay.addEventListener('pointermove', move);
        overlay.addEventListener('pointerdown', move);
        overlay.addEventListener('pointerleave', () => { tip.hidden = true; cursor.setAttribute('x1', -10); cursor.setAttribute('x2', -10); });
        const lastVals = shown.map((nm) => {
          const pts = series[nm];
          const y = pts.length ? pts[pts.length - 1].y : null;
          return el('span', { class: 'lv' }, el('span', { class: 'shape', 'data-color': this.styles[nm].color, 'aria-hidden': 'true' }, SHAPE_NAMES[this.styles[nm].shape]), ' ' + nm + ' ' + fmt(y));
        });
        const fig = el('figure', { class: 'chart-box', 'data-metric': d.key },
          el('figcaption', null, el('span', { class: 'ctitle' }, d.label), el('span', { class: 'lvs small' }, ...lastVals)),
          el('div', { class: 'plot' }, svg, tip));
        return fig;
      });
      $('charts').replaceChildren(...charts);
      if (!n) $('charts').append(el('p', { class: 'muted' }, 'No segments yet: the curves start with the first confirmed segment.'));
      for (const s of $('charts').querySelectorAll('.shape')) s.style.color = s.dataset.color;
    }

    glossEntry(i) {
      return this.glossary && this.glossary[i] ? this.glossary[i] : null;
    }

    renderSegments(names) {
      const lis = [];
      for (let i = this.recent.length - 1; i >= 0; i--) lis.push(this.segmentItem(this.recent[i], names));
      const newestShown = this.recent.length ? this.recent[0].seq : 0;
      for (const it of this.older) if (it.seq < newestShown) lis.push(this.segmentItem(it, names));
      const list = $('seglist');
      list.start = this.metrics.last_seq !== undefined ? this.metrics.last_seq : this.metrics.segments;
      list.replaceChildren(...lis);
      if (!lis.length) list.append(el('li', { class: 'muted' }, 'No segments yet.'));
      this.updateOlderButton();
    }

    segmentItem(it, names) {
      const req = it.request || null;
      const words = (it.scores && it.scores.words) || [];
      const counted = words.filter((w) => w.counted !== false);
      const li = el('li', { class: 'seg', 'data-seq': it.seq, value: it.seq });
      li.append(el('div', { class: 'seg-head' },
        el('strong', null, '#' + it.seq), ' ', el('code', null, it.id),
        req && req.translator ? el('span', { class: 'small seg-translator', 'data-translator': req.translator }, ' · translator ',
          el('strong', null, req.translator)) : null,
        it.created_at || it.created_ms ? el('span', { class: 'muted small' }, ' · ' + when(it.created_at || it.created_ms)) : null));
      if (req) {
        if (req.source) li.append(el('p', { class: 'src', lang: this.session && this.session.source_lang }, el('span', { class: 'lbl' }, 'source '), req.source));
        li.append(el('p', { class: 'tgt', lang: this.session && this.session.target_lang }, el('span', { class: 'lbl' }, 'confirmed '), ...highlight(req.translation || '', counted)));
      }
      const systems = it.scores && it.scores.systems ? it.scores.systems : {};
      // deviations from the established translation are a property of the
      // confirmed text: shown once per segment
      const devs = new Map();
      for (const nm of names) {
        const t = systems[nm] && systems[nm].terms;
        for (const dv of (t && t.glossary_deviations) || []) if (!devs.has(dv.entry)) devs.set(dv.entry, dv);
      }
      if (devs.size) {
        li.append(el('ul', { class: 'terms seg-terms', 'aria-label': 'confirmed translation: terms' }, ...[...devs.values()].map((dv) => {
          const g = this.glossEntry(dv.entry);
          return el('li', { class: 'term deviating', 'data-term': 'deviating' }, el('span', { class: 'mark', 'aria-hidden': 'true' }, '≠'),
            'deviating: ', el('q', null, g ? g.source : 'entry ' + dv.entry), g && g.targets ? ' (established: ' + g.targets.join(' / ') + ')' : '');
        })));
      }
      for (const nm of names) {
        const s = systems[nm];
        if (!s) continue;
        const st = this.styles[nm] || this.style(nm, 0);
        const box = el('div', { class: 'sys', 'data-system': nm });
        const shape = el('span', { class: 'shape', 'aria-hidden': 'true' }, SHAPE_NAMES[st.shape]);
        shape.style.color = st.color;
        const tm = s.terms || null; // absent when the session has no glossary
        box.append(el('div', { class: 'sys-head' }, shape, ' ', el('strong', null, nm),
          el('span', { class: 'small' }, ' R0 ' + cnt(s.r0) + ' · R1 ' + cnt(s.r1) +
            (tm ? ' · terms ' + tm.exact + '/' + tm.instances : '') +
            (s.one_minus_term !== null && s.one_minus_term !== undefined ? ' · 1−TERm ' + fmt(s.one_minus_term) : ''))));
        const hyp = req && (req.hypotheses ? req.hypotheses[nm] : (nm === 'default' ? req.hypothesis : null));
        // lang: the browser picks the target language's glyphs (a zh and a ja
        // font draw the same Han character differently)
        const tl = this.session && this.session.target_lang;
        if (hyp) box.append(el('p', { class: 'hyp small', lang: tl }, el('span', { class: 'lbl' }, 'MT '), hyp));
        const ws = el('ul', { class: 'words', 'aria-label': nm + ': counted words (select one for its history)' });
        for (const w of counted) {
          const hit = !!(w.hits && w.hits[nm]);
          const shot = w.shot === 0 ? 'shot0' : 'shot1';
          const shotText = w.shot === 0 ? '0-shot' : w.shot + '-shot';
          const chip = el('li', { class: 'w ' + (hit ? 'hit' : 'miss') + ' ' + shot, 'data-hit': hit ? 'hit' : 'miss', 'data-shot': w.shot,
            'data-word': w.word, tabindex: 0, role: 'button',
            title: w.word + ': ' + (hit ? 'in the MT output (hit)' : 'not in the MT output (missed)') + ', ' + shotText + ' — select for its history' },
          el('span', { class: 'mark', 'aria-hidden': 'true' }, hit ? '✓' : '✗'),
          el('span', { class: 'sr' }, hit ? 'hit: ' : 'missed: '),
          el('span', { lang: tl }, w.word),
          el('span', { class: 'shot' }, shotText));
          chip.onclick = () => this.wordHistory(w.word, li);
          chip.onkeydown = (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); this.wordHistory(w.word, li); } };
          ws.append(chip);
        }
        if (!counted.length) ws.append(el('li', { class: 'muted small' }, 'no counted words'));
        box.append(ws);
        const terms = tm ? this.termItems(tm, req) : [];
        if (terms.length) box.append(el('ul', { class: 'terms', 'aria-label': nm + ': terms' }, ...terms));
        li.append(box);
      }
      return li;
    }

    /* GET …/vocabulary/{word}: every segment with the word, shot and hits. */
    async wordHistory(word, li) {
      const box = wordBox(); // still ours after a re-render detached it
      li.append(box);
      box.hidden = false;
      box.replaceChildren(el('p', { class: 'muted small' }, 'loading the history of “' + word + '”…'));
      try {
        const r = await api(this.base + '/vocabulary/' + enc(word));
        const h = r.body;
        const names = this.systems();
        const rows = (h.history || []).map((e) => el('tr', null,
          el('td', { 'data-label': 'Segment' }, '#' + e.seq + ' ', el('code', null, e.id)),
          el('td', { 'data-label': 'Shot' }, e.shot === undefined ? '–' : e.shot + '-shot'),
          el('td', { 'data-label': 'Systems' }, names.map((nm) => (e.hits && e.hits[nm] ? '✓ ' : '✗ ') + nm).join(' · '))));
        const close = el('button', { type: 'button', class: 'close' }, 'Close');
        close.onclick = () => { box.hidden = true; };
        box.replaceChildren(el('div', { class: 'wh-head' }, el('strong', null, '“' + h.word + '”'),
          el('span', { class: 'muted small' }, ' ' + h.occurrences + ' occurrence' + (h.occurrences === 1 ? '' : 's') + ' in confirmed translations'), close),
        el('table', { class: 'wh' }, el('tbody', null, ...rows)));
      } catch (e) {
        box.replaceChildren(el('p', { class: 'muted small' }, 'No history for “' + word + '”: ' + (e.message || e)));
      }
    }

    termItems(t, req) {
      const out = [];
      const tr = req && req.translation ? new TextEncoder().encode(req.translation) : null;
      const dec = new TextDecoder();
      const refText = (inst) => {
        if (tr && inst.reference && inst.reference.byte_end <= tr.length) return dec.decode(tr.slice(inst.reference.byte_start, inst.reference.byte_end));
        const g = this.glossEntry(inst.entry);
        return g ? (g.targets || [g.target]).join(' / ') : 'entry ' + inst.entry;
      };
      for (const inst of t.instances_found || []) {
        const ok = inst.match !== 'none';
        out.push(el('li', { class: 'term ' + (ok ? 'found' : 'missed'), 'data-term': ok ? 'found' : 'missed' },
          el('span', { class: 'mark', 'aria-hidden': 'true' }, ok ? '✓' : '✗'),
          (ok ? 'found' : 'missed') + (inst.match === 'stem' ? ' (stem)' : '') + ': ', el('q', null, refText(inst))));
      }
      for (const f of t.forbidden_used || []) {
        const g = this.glossEntry(f.entry);
        out.push(el('li', { class: 'term forbidden', 'data-term': 'forbidden' }, el('span', { class: 'mark', 'aria-hidden': 'true' }, '⚠'),
          'forbidden target used: ', el('q', null, g ? (g.targets || [])[f.alternative] || g.source : 'entry ' + f.entry)));
      }
      return out;
    }
  }

  /* A p-value by its own rule: two significant digits, never rounded to 0. */
  function pval(p) {
    return p < 0.001 ? p.toExponential(1) : String(Number(p.toPrecision(2)));
  }

  function cnt(c) {
    return c ? c.hits + '/' + c.total : '–';
  }

  function niceStep(n) {
    const raw = n / 6;
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(1, raw))));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return Math.max(1, m * p);
    return Math.max(1, 10 * p);
  }

  /* The confirmed translation with its counted words underlined (solid:
   * 0-shot, dashed: 1-shot). Words are matched case-insensitively after
   * NFKC, as the server compares them. */
  function highlight(text, words) {
    const shots = new Map();
    for (const w of words) {
      const k = w.word.normalize('NFKC').toLowerCase();
      if (!shots.has(k)) shots.set(k, w.shot);
    }
    const out = [];
    const re = /[\p{L}\p{N}\p{M}]+(?:['’-][\p{L}\p{N}\p{M}]+)*/gu;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      const k = m[0].normalize('NFKC').toLowerCase();
      let shot = shots.get(k);
      if (shot === undefined) {
        // elided forms (l'épidémie → épidémie) as tokenizers split them
        const parts = m[0].split(/['’]/);
        if (parts.length > 1) shot = shots.get(parts[parts.length - 1].normalize('NFKC').toLowerCase());
      }
      if (shot === undefined) continue;
      if (m.index > last) out.push(text.slice(last, m.index));
      out.push(el('span', { class: 'cw ' + (shot === 0 ? 'shot0' : 'shot1'), title: shot === 0 ? '0-shot' : shot + '-shot' }, m[0]));
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  /* ---- start -------------------------------------------------------------- */

  function init() {
    const input = $('token');
    input.value = token();
    $('token-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      setToken(input.value.trim());
      route();
    });
    $('token-clear').addEventListener('click', () => {
      input.value = '';
      setToken('');
      route();
    });
    window.addEventListener('hashchange', route);
    route();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
