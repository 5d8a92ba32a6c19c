/* adaptmon live dashboard — plain JS, no dependencies, served from the binary.
 *
 * Views (hash routes): #/ the session list, #/s/<id> one session.
 * Data: GET /v1/sessions, /v1/sessions/{id}, …/metrics (ETag), …/segments
 * (timeline pages), …/glossary, and the live stream …/events (Server-Sent
 * Events). While the stream is unavailable the page polls …/metrics with
 * If-None-Match every 2 s and fetches the new timeline pages; the header
 * shows which mode is active. */
'use strict';

(function () {
  const POLL_MS = 2000;
  const STREAM_RETRY_MS = 20000;
  const LIST_REFRESH_MS = 5000;
  const SHOW_SEGMENTS = 20;
  const PAGE = 500;
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
    const r = await fetch(path, { headers, cache: 'no-store', signal: o.signal });
    if (r.status === 304) return { status: 304, headers: r.headers, body: null };
    let body = null;
    try { body = await r.json(); } catch (_) { body = null; }
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

  /* ---- session list ----------------------------------------------------- */

  class ListView {
    constructor() { this.stopped = false; this.timer = null; this.limit = 100; }

    start() {
      document.title = 'adaptmon — sessions';
      setMode('list');
      $('sessions-body').replaceChildren();
      $('list-total').textContent = '';
      this.refresh();
      $('list-more').onclick = () => { this.limit += 100; this.refresh(); };
    }

    stop() { this.stopped = true; clearTimeout(this.timer); }

    async refresh() {
      clearTimeout(this.timer);
      try {
        const r = await api('/v1/sessions?limit=' + Math.min(this.limit, 1000));
        if (this.stopped) return;
        const list = r.body.sessions || [];
        const metrics = await Promise.all(list.map((s) =>
          api('/v1/sessions/' + enc(s.id) + '/metrics').then((x) => x.body, () => null)));
        if (this.stopped) return;
        this.render(r.body, list, metrics);
        showError('');
      } catch (e) {
        if (this.stopped) return;
        showError(authHint(e));
      }
      if (!this.stopped) this.timer = setTimeout(() => this.refresh(), LIST_REFRESH_MS);
    }

    render(page, list, metrics) {
      $('list-total').textContent = '(' + page.total + ')';
      $('list-empty').hidden = list.length > 0;
      $('list-more').hidden = page.next === null || page.next === undefined || list.length >= 1000;
      const body = $('sessions-body');
      const rows = [];
      list.forEach((s, i) => {
        const m = metrics[i];
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
          tr.append(el('td', { colspan: 5, class: 'muted', 'data-label': 'Scores' }, m ? 'no segments yet' : 'metrics unavailable'),
            el('td', { 'data-label': 'Last activity' }, when(s.updated_at)));
          rows.push(tr);
          return;
        }
        systems.forEach((name, k) => {
          const t = m.systems[name];
          const tr = el('tr', { class: k === 0 ? 'first' : 'more' });
          if (k === 0) first(tr);
          appendAll(tr,
            el('td', { 'data-label': 'System' }, name, name === m.baseline_system ? el('span', { class: 'tag' }, 'baseline') : null),
            el('td', { class: 'num', 'data-label': 'R0' }, fmt(t.r0 && t.r0.score)),
            el('td', { class: 'num', 'data-label': 'R1' }, fmt(t.r1 && t.r1.score)),
            el('td', { class: 'num', 'data-label': 'R0+1' }, fmt(t.r01 && t.r01.score)),
            el('td', { class: 'num', 'data-label': 'Term acc.' }, fmt(t.terms && t.terms.exact_match)),
            k === 0 ? el('td', { rowspan: span, 'data-label': 'Last activity' }, el('time', { datetime: s.updated_at }, when(s.updated_at))) : null);
          rows.push(tr);
        });
      });
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

  // cum(totals) → running value from the server; seg(scores) → [numerator,
  // denominator] of one segment, summed over the moving window.
  function metricDefs(wo) {
    return [
      { key: 'r0', label: 'R0 — zero-shot recall', cum: (t) => t.r0 && t.r0.score,
        seg: (s) => [s.r0.hits, s.r0.total], count: (t) => t.r0 },
      { key: 'r1', label: 'R1 — one-shot recall', cum: (t) => t.r1 && t.r1.score,
        seg: (s) => [s.r1.hits, s.r1.total], count: (t) => t.r1 },
      { key: 'r01', label: 'R0+1 — recall of both', cum: (t) => t.r01 && t.r01.score,
        seg: (s) => [s.r01.hits, s.r01.total], count: (t) => t.r01 },
      { key: 'term', label: 'Term exact-match accuracy', cum: (t) => t.terms && t.terms.exact_match,
        seg: (s) => [s.terms.exact, s.terms.instances],
        count: (t) => t.terms && { hits: t.terms.exact, total: t.terms.instances } },
      { key: 'wo', label: 'Term window overlap (w=' + wo + ')',
        cum: (t) => { const o = t.terms && t.terms.window_overlap && t.terms.window_overlap[wo]; return o ? o.score : null; },
        seg: (s) => { const o = s.terms.window_overlap && s.terms.window_overlap[wo];
          return o && o.instances ? [(o.score || 0) * o.instances, o.instances] : [0, 0]; },
        count: (t) => { const o = t.terms && t.terms.window_overlap && t.terms.window_overlap[wo]; return o ? { instances: o.instances } : null; } },
      { key: 'oneminusterm', label: '1 − TERm', cum: (t) => t.one_minus_term,
        seg: (s) => (s.ter_ref_len ? [s.ter_ref_len - s.term_edits, s.ter_ref_len] : [0, 0]) },
    ];
  }

  /* ---- one session -------------------------------------------------------- */

  class SessionView {
    constructor(id) {
      this.id = id;
      this.base = '/v1/sessions/' + enc(id);
      this.items = [];       // timeline by seq-1
      this.session = null;
      this.glossary = null;
      this.etag = null;
      this.es = null;
      this.pollTimer = null;
      this.streamTimer = null;
      this.renderTimer = null;
      this.fillBusy = false;
      this.stopped = false;
      this.busy = Promise.resolve();
      this.deleted = false;
    }

    start() {
      document.title = 'adaptmon — ' + this.id;
      $('s-title').textContent = this.id;
      $('seglist').replaceChildren();
      $('charts').replaceChildren();
      $('latest-body').replaceChildren();
      $('legend').replaceChildren();
      setMode('connecting');
      const saved = sessionStorage.getItem('adaptmon.window');
      if (saved !== null) $('window').value = saved;
      $('window').onchange = () => { sessionStorage.setItem('adaptmon.window', $('window').value); this.render(); };
      $('wo-window').onchange = () => this.render();
      this.load();
    }

    stop() {
      this.stopped = true;
      if (this.es) this.es.close();
      this.es = null;
      clearTimeout(this.pollTimer);
      clearTimeout(this.streamTimer);
      clearTimeout(this.renderTimer);
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
        const [s, g] = await Promise.all([
          api(this.base),
          api(this.base + '/glossary').catch(() => null),
        ]);
        if (this.stopped) return;
        this.session = s.body;
        this.glossary = g && g.body ? g.body.entries || [] : [];
        this.renderHeader();
        await this.fetchTimeline(0);
        await this.pollMetrics(true);
        if (this.stopped) return;
        this.render();
        this.startStream();
      } catch (e) {
        if (e && e.status === 404) showError('No session “' + this.id + '” on this server.');
        else showError(authHint(e));
        setMode('idle', 'not loaded');
      }
    }

    renderHeader() {
      const s = this.session;
      $('s-title').textContent = s.name ? s.name + ' ' : s.id;
      if (s.name) $('s-title').append(el('span', { class: 'muted small id' }, s.id));
      $('s-langs').textContent = s.source_lang + ' → ' + s.target_lang;
      $('s-signature').textContent = s.signature;
      const wins = (s.options && s.options.windows) || [2, 3];
      const sel = $('wo-window');
      const cur = sel.value;
      sel.replaceChildren(...wins.map((w) => el('option', { value: w }, 'w = ' + w)));
      if (wins.map(String).includes(cur)) sel.value = cur;
    }

    get baseline() {
      return this.session && this.session.options ? this.session.options.baseline_system : null;
    }

    /* Adds timeline items or stream payloads; returns true when an earlier
     * item changed (a replaced segment: the later totals must be refetched). */
    add(it) {
      const i = it.seq - 1;
      if (i < 0) return false;
      const old = this.items[i];
      if (old && !it.request && old.request) { it.request = old.request; it.created_at = old.created_at; }
      this.items[i] = it;
      return !!old && i < this.items.length - 1 && JSON.stringify(old.scores) !== JSON.stringify(it.scores);
    }

    /* Fetches the timeline after seq `after` to its end. */
    async fetchTimeline(after) {
      let cur = after;
      for (;;) {
        const r = await api(this.base + '/segments?after=' + cur + '&limit=' + PAGE);
        if (this.stopped) return;
        for (const it of r.body.segments || []) this.add(it);
        if (r.body.total !== undefined && this.items.length > r.body.total) this.items.length = r.body.total;
        if (r.body.next === null || r.body.next === undefined || !(r.body.segments || []).length) break;
        cur = r.body.next;
      }
    }

    /* GET …/metrics with If-None-Match; on a change, fetches what is new
     * (or the whole timeline again when the history changed). */
    async pollMetrics(first) {
      const headers = this.etag ? { 'If-None-Match': this.etag } : {};
      const r = await api(this.base + '/metrics', { headers });
      if (this.stopped || r.status === 304) return false;
      this.etag = r.headers.get('ETag');
      this.metrics = r.body;
      const n = r.body.segments;
      if (n > this.items.length) await this.fetchTimeline(this.items.length);
      if (!first && (n < this.items.length || !this.totalsMatch())) {
        this.items = [];
        await this.fetchTimeline(0);
      }
      return true;
    }

    totalsMatch() {
      const last = this.items[this.items.length - 1];
      const m = this.metrics && this.metrics.systems;
      if (!m) return true;
      if (!last) return Object.keys(m).length === 0 || this.metrics.segments === 0;
      for (const [name, t] of Object.entries(m)) {
        const lt = last.totals && last.totals[name];
        if (!lt || lt.r01.hits !== t.r01.hits || lt.r01.total !== t.r01.total || lt.segments !== t.segments) return false;
      }
      return true;
    }

    /* ---- live stream and the polling fallback ---- */

    startStream() {
      if (this.stopped || this.deleted) return;
      clearTimeout(this.streamTimer);
      if (!window.EventSource) { this.startPolling(); return; }
      let url = this.base + '/events';
      const t = token();
      if (t) url += '?access_token=' + enc(t);
      const es = new EventSource(url);
      this.es = es;
      let opened = false;
      es.onopen = () => {
        if (this.stopped || es !== this.es) return;
        opened = true;
        setMode('live');
        this.stopPolling();
        // whatever was posted between the first fetch and the stream's start
        this.serial(() => this.fetchTimeline(this.items.length).then(() => this.scheduleRender()));
      };
      es.addEventListener('segment', (ev) => {
        if (this.stopped || es !== this.es) return;
        let d;
        try { d = JSON.parse(ev.data); } catch (_) { return; }
        this.serial(() => this.onSegment(d));
      });
      es.addEventListener('deleted', () => { if (es === this.es) this.markDeleted(); });
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

    async onSegment(d) {
      const n = this.items.length;
      if (d.seq === n + 1) this.add(d);
      else if (d.seq > n + 1) await this.fetchTimeline(n);          // a gap: fetch what is missing
      else if (this.add(d)) await this.fetchTimeline(d.seq);         // a replaced segment
      this.scheduleRender();
    }

    startPolling() {
      if (this.pollTimer !== null || this.stopped) return;
      const tick = () => {
        this.serial(async () => {
          const changed = await this.pollMetrics(false);
          if (changed) this.scheduleRender();
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

    /* Fills the request texts of the shown segments that came from the
     * stream (its payload has no request). */
    fillRequests(from) {
      if (this.fillBusy) return;
      const missing = [];
      for (let i = from; i < this.items.length; i++) if (this.items[i] && !this.items[i].request) missing.push(i);
      if (!missing.length) return;
      this.fillBusy = true;
      const after = missing[0];
      api(this.base + '/segments?after=' + after + '&limit=' + (this.items.length - after))
        .then((r) => {
          let any = false;
          for (const it of r.body.segments || []) {
            const cur = this.items[it.seq - 1];
            if (cur && !cur.request) { cur.request = it.request; cur.created_at = it.created_at; any = true; }
          }
          if (any && !this.stopped) this.renderSegments();
        })
        .catch(() => {})
        .finally(() => { this.fillBusy = false; });
    }

    /* ---- rendering ---- */

    systems() {
      const names = new Set();
      for (const it of this.items) if (it && it.totals) for (const k of Object.keys(it.totals)) names.add(k);
      if (this.metrics && this.metrics.systems) for (const k of Object.keys(this.metrics.systems)) names.add(k);
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
      if (this.stopped) return;
      const n = this.items.length;
      $('s-segments').textContent = String(n);
      $('s-segments').dataset.seq = String(n);
      const last = this.items[n - 1];
      $('s-updated').textContent = last && last.created_ms ? when(last.created_ms) : (this.session ? when(this.session.updated_at) : '–');
      const names = this.systems();
      this.styles = {};
      names.forEach((nm, k) => { this.styles[nm] = this.style(nm, k); });
      const win = Number($('window').value) || 0;
      const wo = $('wo-window').value || '2';
      const defs = metricDefs(wo);
      const series = this.computeSeries(names, defs, win);
      this.renderLegend(names);
      this.renderLatest(names, defs, series, win);
      this.renderCharts(names, defs, series, win);
      this.renderSegments();
    }

    /* series[metric][system] = array of {x: seq, y: value|null}. */
    computeSeries(names, defs, win) {
      const out = {};
      for (const d of defs) {
        out[d.key] = {};
        for (const nm of names) {
          const pts = [];
          let num = 0, den = 0;
          const ring = [];
          for (let i = 0; i < this.items.length; i++) {
            const it = this.items[i];
            if (!it) continue;
            let y = null;
            if (!win) {
              const t = it.totals && it.totals[nm];
              y = t ? d.cum(t) : null;
            } else {
              const s = it.scores && it.scores.systems && it.scores.systems[nm];
              const v = s ? d.seg(s) : [0, 0];
              ring.push(v);
              num += v[0]; den += v[1];
              if (ring.length > win) { const o = ring.shift(); num -= o[0]; den -= o[1]; }
              y = den > 0 ? (d.key === 'oneminusterm' ? num / den : num / den) : null;
            }
            pts.push({ x: it.seq, y: (y === undefined || y === null || Number.isNaN(y)) ? null : y });
          }
          out[d.key][nm] = pts;
        }
      }
      return out;
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

    renderLegend(names) {
      $('legend').replaceChildren(...names.map((nm) => {
        const st = this.styles[nm];
        const svg = sv('svg', { width: 44, height: 14, viewBox: '0 0 44 14', 'aria-hidden': 'true', class: 'legend-line' },
          sv('line', { x1: 2, y1: 7, x2: 42, y2: 7, stroke: st.color, 'stroke-width': 2.5, 'stroke-dasharray': st.dash || null }),
          this.marker(st.shape, 22, 7, 4.5, st.color));
        return el('li', { 'data-system': nm }, svg,
          el('span', { class: 'sysname' }, nm),
          el('span', { class: 'muted small' }, ' ' + SHAPE_NAMES[st.shape] + (st.baseline ? ' baseline, dashed' : '')));
      }));
    }

    renderLatest(names, defs, series, win) {
      const last = this.items[this.items.length - 1];
      $('latest-caption').textContent = (win ? 'Over the last ' + win + ' segments' : 'Running totals') +
        (last ? ' after segment ' + last.seq + ' (“' + last.id + '”)' : ' — no segments yet');
      const rows = names.map((nm) => {
        const st = this.styles[nm];
        const t = last && last.totals ? last.totals[nm] : null;
        const cells = defs.map((d) => {
          const pts = series[d.key][nm];
          const y = pts.length ? pts[pts.length - 1].y : null;
          let detail = '';
          if (!win && t && d.count) {
            const c = d.count(t);
            if (c && c.total !== undefined) detail = c.hits + '/' + c.total;
            else if (c && c.instances !== undefined) detail = c.instances + ' inst.';
          }
          return el('td', { class: 'num', 'data-label': d.label.split(' — ')[0].replace('Term exact-match accuracy', 'Term exact').replace(/Term window overlap.*/, 'Window overlap') },
            el('span', { class: 'value', 'data-metric': d.key, 'data-system': nm, 'data-value': y === null ? '' : String(y) }, fmt(y)),
            detail ? el('span', { class: 'count muted small' }, ' ' + detail) : null);
        });
        return el('tr', { 'data-system': nm },
          el('th', { scope: 'row', 'data-label': 'System' },
            el('span', { class: 'swatch', 'aria-hidden': 'true', 'data-color': st.color }, SHAPE_NAMES[st.shape]), ' ', nm,
            st.baseline ? el('span', { class: 'tag' }, 'baseline') : null),
          ...cells);
      });
      $('latest-body').replaceChildren(...rows);
      for (const sw of $('latest-body').querySelectorAll('.swatch')) sw.style.color = sw.dataset.color;
    }

    renderCharts(names, defs, series, win) {
      const W = 360, H = 210, L = 38, R = 10, T = 12, B = 30;
      const n = this.items.length;
      const xmax = Math.max(2, n);
      const X = (x) => L + ((x - 1) / (xmax - 1)) * (W - L - R);
      const charts = defs.map((d) => {
        // y range: [0, 1] for fractions; widen when a value leaves it (1 − TERm can be < 0)
        let lo = 0, hi = 1;
        for (const nm of names) for (const p of series[d.key][nm]) if (p.y !== null) { lo = Math.min(lo, p.y); hi = Math.max(hi, p.y); }
        lo = Math.floor(lo * 4) / 4; hi = Math.ceil(hi * 4) / 4;
        const Y = (y) => T + (1 - (y - lo) / (hi - lo)) * (H - T - B);
        const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'data-metric': d.key,
          'aria-label': d.label + (win ? ' over the last ' + win + ' segments' : ' (running)') + ' by segment number' });
        const grid = sv('g', { class: 'grid' });
        for (let v = lo; v <= hi + 1e-9; v += (hi - lo) / 4) {
          grid.append(sv('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v) }),
            sv('text', { x: L - 5, y: Y(v) + 4, 'text-anchor': 'end', class: 'tick' }, document.createTextNode(fmt(v, 2))));
        }
        const step = niceStep(xmax);
        for (let x = 1; x <= xmax; x += step) {
          grid.append(sv('line', { x1: X(x), x2: X(x), y1: H - B, y2: H - B + 4 }),
            sv('text', { x: X(x), y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, document.createTextNode(String(x))));
        }
        grid.append(sv('text', { x: W - R, y: H - 2, 'text-anchor': 'end', class: 'axis' }, document.createTextNode('segment')));
        svg.append(grid);
        names.forEach((nm) => {
          const st = this.styles[nm];
          const pts = series[d.key][nm];
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
        });
        const lastVals = names.map((nm) => {
          const pts = series[d.key][nm];
          const y = pts.length ? pts[pts.length - 1].y : null;
          return el('span', { class: 'lv' }, el('span', { class: 'shape', 'data-color': this.styles[nm].color, 'aria-hidden': 'true' }, SHAPE_NAMES[this.styles[nm].shape]), ' ' + nm + ' ' + fmt(y));
        });
        const fig = el('figure', { class: 'chart-box', 'data-metric': d.key },
          el('figcaption', null, el('span', { class: 'ctitle' }, d.label), el('span', { class: 'lvs small' }, ...lastVals)), svg);
        return fig;
      });
      $('charts').replaceChildren(...charts);
      for (const s of $('charts').querySelectorAll('.shape')) s.style.color = s.dataset.color;
    }

    glossEntry(i) {
      return this.glossary && this.glossary[i] ? this.glossary[i] : null;
    }

    renderSegments() {
      const n = this.items.length;
      const from = Math.max(0, n - SHOW_SEGMENTS);
      this.fillRequests(from);
      const names = this.systems();
      const lis = [];
      for (let i = n - 1; i >= from; i--) {
        const it = this.items[i];
        if (!it) continue;
        lis.push(this.segmentItem(it, names));
      }
      const list = $('seglist');
      list.start = n;
      list.replaceChildren(...lis);
    }

    segmentItem(it, names) {
      const req = it.request || null;
      const words = (it.scores && it.scores.words) || [];
      const counted = words.filter((w) => w.counted !== false);
      const li = el('li', { class: 'seg', 'data-seq': it.seq, value: it.seq });
      li.append(el('div', { class: 'seg-head' },
        el('strong', null, '#' + it.seq), ' ', el('code', null, it.id),
        it.created_at ? el('span', { class: 'muted small' }, ' · ' + when(it.created_at)) : null));
      if (req) {
        if (req.source) li.append(el('p', { class: 'src', lang: this.session && this.session.source_lang }, el('span', { class: 'lbl' }, 'source '), req.source));
        li.append(el('p', { class: 'tgt', lang: this.session && this.session.target_lang }, el('span', { class: 'lbl' }, 'confirmed '), ...highlight(req.translation || '', counted)));
      } else {
        li.append(el('p', { class: 'muted small' }, 'loading text…'));
      }
      const systems = it.scores && it.scores.systems ? it.scores.systems : {};
      for (const nm of names) {
        const s = systems[nm];
        if (!s) continue;
        const st = this.styles[nm] || this.style(nm, 0);
        const box = el('div', { class: 'sys', 'data-system': nm });
        const shape = el('span', { class: 'shape', 'aria-hidden': 'true' }, SHAPE_NAMES[st.shape]);
        shape.style.color = st.color;
        box.append(el('div', { class: 'sys-head' }, shape, ' ', el('strong', null, nm),
          el('span', { class: 'small' }, ' R0 ' + cnt(s.r0) + ' · R1 ' + cnt(s.r1) + ' · terms ' + s.terms.exact + '/' + s.terms.instances +
            (s.one_minus_term !== null && s.one_minus_term !== undefined ? ' · 1−TERm ' + fmt(s.one_minus_term) : ''))));
        const hyp = req && (req.hypotheses ? req.hypotheses[nm] : (nm === 'default' ? req.hypothesis : null));
        if (hyp) box.append(el('p', { class: 'hyp small' }, el('span', { class: 'lbl' }, 'MT '), hyp));
        const ws = el('ul', { class: 'words', 'aria-label': nm + ': counted words' });
        for (const w of counted) {
          const hit = !!(w.hits && w.hits[nm]);
          const shot = w.shot === 0 ? 'shot0' : 'shot1';
          const shotText = w.shot === 0 ? '0-shot' : w.shot + '-shot';
          ws.append(el('li', { class: 'w ' + (hit ? 'hit' : 'miss') + ' ' + shot, 'data-hit': hit ? 'hit' : 'miss', 'data-shot': w.shot,
            title: w.word + ': ' + (hit ? 'in the MT output (hit)' : 'not in the MT output (missed)') + ', ' + shotText },
          el('span', { class: 'mark', 'aria-hidden': 'true' }, hit ? '✓' : '✗'),
          el('span', { class: 'sr' }, hit ? 'hit: ' : 'missed: '),
          w.word,
          el('span', { class: 'shot' }, shotText)));
        }
        if (!counted.length) ws.append(el('li', { class: 'muted small' }, 'no counted words'));
        box.append(ws);
        const terms = this.termItems(s.terms, req);
        if (terms.length) box.append(el('ul', { class: 'terms', 'aria-label': nm + ': terms' }, ...terms));
        li.append(box);
      }
      return li;
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
      for (const dv of t.glossary_deviations || []) {
        const g = this.glossEntry(dv.entry);
        out.push(el('li', { class: 'term deviating', 'data-term': 'deviating' }, el('span', { class: 'mark', 'aria-hidden': 'true' }, '≠'),
          'deviating: ', el('q', null, g ? g.source : 'entry ' + dv.entry), g && g.targets ? ' (established: ' + g.targets.join(' / ') + ')' : ''));
      }
      for (const f of t.forbidden_used || []) {
        const g = this.glossEntry(f.entry);
        out.push(el('li', { class: 'term forbidden', 'data-term': 'forbidden' }, el('span', { class: 'mark', 'aria-hidden': 'true' }, '⚠'),
          'forbidden target used: ', el('q', null, g ? (g.targets || [])[f.alternative] || g.source : 'entry ' + f.entry)));
      }
      return out;
    }
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
