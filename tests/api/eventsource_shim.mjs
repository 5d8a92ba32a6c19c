// eventsource_shim.mjs — a minimal EventSource for Node < 22 (no global
// EventSource), preloaded by tests/api/test_integration_doc.py with
// `node --import` so docs/integration.md's browser code runs unchanged.
// Enough of the WHATWG interface for the doc: onopen, addEventListener,
// onmessage, close(); no reconnection (the test server stays up).
if (typeof globalThis.EventSource === "undefined") {
  globalThis.EventSource = class EventSource {
    constructor(url) {
      this.url = url;
      this.listeners = {};
      this.ctrl = new AbortController();
      this.run().catch(() => {});
    }
    addEventListener(type, fn) {
      (this.listeners[type] ??= []).push(fn);
    }
    dispatch(type, ev) {
      if (type === "message" && this.onmessage) this.onmessage(ev);
      for (const fn of this.listeners[type] ?? []) fn(ev);
    }
    async run() {
      const r = await fetch(this.url, {
        headers: { Accept: "text/event-stream" },
        signal: this.ctrl.signal,
      });
      if (this.onopen) this.onopen({ type: "open" });
      const dec = new TextDecoder();
      let buf = "";
      for await (const chunk of r.body) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let type = "message", data = [], id = null;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue;
            const k = line.indexOf(":");
            const field = k < 0 ? line : line.slice(0, k);
            const value = k < 0 ? "" : line.slice(k + 1).replace(/^ /, "");
            if (field === "event") type = value;
            else if (field === "data") data.push(value);
            else if (field === "id") id = value;
          }
          if (data.length) this.dispatch(type, { type, data: data.join("\n"), lastEventId: id });
        }
      }
    }
    close() {
      this.ctrl.abort();
    }
  };
}
