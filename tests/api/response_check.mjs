// response_check.mjs — validates recorded HTTP exchanges against openapi.yaml.
//
// usage: node tests/api/response_check.mjs openapi.yaml REC.jsonl|DIR …
//
// Each input line is one exchange recorded by tests/api/harness.py
// (APITEST_RECORD_DIR): {method, path, status, headers: [[name, value]…],
// body | body_b64, truncated}. For each one:
//   * the operation is found from the path template and the method (HEAD is
//     GET without a body). A path no template matches must be answered 404
//     with components.responses.NotFound; a method the path item lacks must
//     be answered 405 with components.responses.MethodNotAllowed (OPTIONS:
//     204 with components.responses.Options);
//   * the status must be documented (exactly, as NXX, or `default`);
//   * the Content-Type must be one of the response's `content` media types
//     (an empty body without Content-Type is fine only where no content is
//     documented, or for 204/304/HEAD);
//   * a JSON body (application/json, application/problem+json) must satisfy
//     the media type's schema (Ajv, JSON Schema 2020-12 = OpenAPI 3.1, with
//     formats);
//   * every header must be documented: in the response's `headers`, in the
//     document's `x-every-response.headers` (headers on every answer), or be
//     one of HTTP's framing headers (Content-Type, Content-Length, Date,
//     Connection, Keep-Alive, Transfer-Encoding); headers marked `required`
//     must be present.
// Prints the distinct failures (with counts and one example each) and a last
// line "response check: N responses, F failures"; exit status 1 when F > 0.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const FRAMING = new Set(["content-type", "content-length", "date", "connection", "keep-alive",
  "transfer-encoding"]);
const JSON_TYPES = new Set(["application/json", "application/problem+json"]);
const BASE = "https://adaptmon.dev/openapi.yaml";

// JSON pointer helpers
const esc = (s) => String(s).replace(/~/g, "~0").replace(/\//g, "~1");
function at(doc, ptr) {
  let v = doc;
  for (const part of ptr.split("/").slice(1)) {
    if (v === undefined || v === null) return undefined;
    v = v[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return v;
}
// Follows $ref chains (local refs only); returns [object, pointer].
function deref(doc, obj, ptr) {
  for (let i = 0; obj && typeof obj === "object" && typeof obj.$ref === "string" && i < 16; i++) {
    if (!obj.$ref.startsWith("#")) throw new Error("non-local $ref " + obj.$ref);
    ptr = obj.$ref.slice(1);
    obj = at(doc, ptr);
  }
  return [obj, ptr];
}

function loadRecords(args) {
  const recs = [];
  for (const a of args) {
    const files = fs.statSync(a).isDirectory()
      ? fs.readdirSync(a).filter((f) => f.endsWith(".jsonl")).map((f) => path.join(a, f))
      : [a];
    for (const f of files) {
      for (const line of fs.readFileSync(f, "utf8").split("\n")) {
        if (line.trim()) recs.push(JSON.parse(line));
      }
    }
  }
  return recs;
}

export function makeChecker(doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(doc, BASE);
  const compiled = new Map();
  const validator = (ptr) => {
    if (!compiled.has(ptr)) compiled.set(ptr, ajv.compile({ $ref: BASE + "#" + ptr }));
    return compiled.get(ptr);
  };
  // path templates, the most specific (fewest parameters) first
  const templates = Object.keys(doc.paths || {}).map((p) => ({
    p,
    re: new RegExp("^" + p.split(/\{[^}]+\}/).map((s) => s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
      .join("[^/]+") + "$"),
    params: (p.match(/\{/g) || []).length,
  })).sort((a, b) => a.params - b.params);
  const conv = doc["x-every-response"] || {};
  const every = new Set(Object.keys(conv.headers || {}).map((h) => h.toLowerCase()));

  // Returns a list of failure messages for one record.
  return function check(rec) {
    const fails = [];
    const method = rec.method.toUpperCase();
    const rawPath = rec.path.split("?")[0];
    const t = templates.find((x) => x.re.test(rawPath));
    let respObj, respPtr, where;
    if (!t) {
      where = `${method} (no path) ${rec.status}`;
      if (rec.status !== 404) return [`${where}: a path outside the document must be 404`];
      [respObj, respPtr] = deref(doc, conv["unlisted-path"], "/x-every-response/unlisted-path");
      if (!respObj) return [`${where}: x-every-response.unlisted-path is missing`];
    } else {
      const item = doc.paths[t.p];
      const opName = method === "HEAD" ? "get" : method.toLowerCase();
      const op = ["get", "put", "post", "delete", "patch"].includes(opName) ? item[opName] : undefined;
      if (!op) {
        where = `${method} ${t.p} ${rec.status}`;
        const want = method === "OPTIONS" ? 204 : 405;
        if (rec.status !== want)
          return [`${where}: a method the path does not document must be answered ${want}`];
        const name = method === "OPTIONS" ? "options" : "unlisted-method";
        [respObj, respPtr] = deref(doc, conv[name], "/x-every-response/" + name);
        if (!respObj) return [`${where}: x-every-response.${name} is missing`];
      } else {
        where = `${method} ${t.p} ${rec.status}`;
        const opPtr = `/paths/${esc(t.p)}/${opName}`;
        const rs = op.responses || {};
        const key = [String(rec.status), `${String(rec.status)[0]}XX`, "default"]
          .find((k) => Object.prototype.hasOwnProperty.call(rs, k));
        if (!key) return [`${where}: undocumented status`];
        [respObj, respPtr] = deref(doc, rs[key], `${opPtr}/responses/${esc(key)}`);
      }
    }
    // headers
    const hdrs = new Map();
    for (const [k, v] of rec.headers) hdrs.set(k.toLowerCase(), v);
    const documented = new Map();
    for (const [k, h] of Object.entries(respObj.headers || {})) documented.set(k.toLowerCase(), deref(doc, h, "")[0]);
    for (const k of hdrs.keys()) {
      if (!FRAMING.has(k) && !every.has(k) && !documented.has(k)) fails.push(`${where}: undocumented header ${k}`);
    }
    for (const [k, h] of documented) {
      if (h && h.required && !hdrs.has(k)) fails.push(`${where}: required header ${k} missing`);
    }
    // content
    const body = rec.body_b64 !== undefined ? Buffer.from(rec.body_b64, "base64") : Buffer.from(rec.body || "", "utf8");
    const ct = (hdrs.get("content-type") || "").split(";")[0].trim().toLowerCase();
    const content = respObj.content || {};
    if (!ct) {
      const bodyless = method === "HEAD" || rec.status === 204 || rec.status === 304;
      if (body.length > 0) fails.push(`${where}: a body without Content-Type`);
      else if (!bodyless && Object.keys(content).length) fails.push(`${where}: no content, but the document describes some`);
      return fails;
    }
    if (!Object.prototype.hasOwnProperty.call(content, ct)) {
      fails.push(`${where}: undocumented content type ${ct}`);
      return fails;
    }
    if (method === "HEAD" || rec.truncated || !JSON_TYPES.has(ct)) return fails;
    let value;
    try {
      value = JSON.parse(body.toString("utf8"));
    } catch (e) {
      fails.push(`${where}: ${ct} body is not JSON`);
      return fails;
    }
    const mt = content[ct];
    if (!mt.schema) return fails;
    const v = validator(`${respPtr}/content/${esc(ct)}/schema`);
    if (!v(value)) {
      for (const e of v.errors || [])
        fails.push(`${where}: schema: ${e.instancePath || "/"} ${e.message}` +
          (e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})` : ""));
    }
    return fails;
  };
}

function main() {
  const [spec, ...inputs] = process.argv.slice(2);
  if (!spec || !inputs.length) {
    console.error("usage: response_check.mjs openapi.yaml REC.jsonl|DIR …");
    return 2;
  }
  const doc = YAML.parse(fs.readFileSync(spec, "utf8"));
  const check = makeChecker(doc);
  const recs = loadRecords(inputs);
  const distinct = new Map();
  let failures = 0;
  for (const r of recs) {
    for (const m of check(r)) {
      failures++;
      const d = distinct.get(m) || { n: 0, example: r };
      d.n++;
      distinct.set(m, d);
    }
  }
  for (const [m, d] of distinct) {
    const ex = d.example;
    const body = ex.body !== undefined ? ex.body.slice(0, 300) : "(binary)";
    console.log(`FAIL ${m} (x${d.n}); e.g. ${ex.method} ${ex.path}: ${body}`);
  }
  console.log(`response check: ${recs.length} responses, ${failures} failures`);
  return failures || !recs.length ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1].endsWith("response_check.mjs")) {
  process.exitCode = main();
}
