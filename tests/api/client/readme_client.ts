// readme_client.ts — a client typed by the types openapi-typescript generates
// from openapi.yaml (./api.d.ts, written next to a copy of this file by
// tests/api/test_api.py), sending the README's request bodies. It must
// compile under `tsc --strict`; run with node, it talks to the server at
// argv[2] and exits 1 when an answer is not what the README says.
import type { components, paths } from "./api";

type Schemas = components["schemas"];
type SessionCreate = Schemas["SessionCreate"];
type Session = Schemas["Session"];
type SegmentRequest = Schemas["SegmentRequest"];
type SegmentResult = Schemas["SegmentResult"];
type Metrics =
  paths["/v1/sessions/{id}/metrics"]["get"]["responses"]["200"]["content"]["application/json"];
type GlossaryStored =
  paths["/v1/sessions/{id}/glossary"]["put"]["responses"]["200"]["content"]["application/json"];

declare const process: { argv: string[]; exitCode?: number };

const base: string = process.argv[2] ?? "http://127.0.0.1:8080";

async function call<T>(method: string, path: string, body?: unknown, type = "application/json"):
  Promise<{ status: number; json: T }> {
  const init: RequestInit = { method, headers: body === undefined ? {} : { "Content-Type": type } };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const r = await fetch(base + path, init);
  const text = await r.text();
  return { status: r.status, json: (text ? JSON.parse(text) : null) as T };
}

function expect(cond: boolean, what: string): void {
  if (!cond) throw new Error(what);
}

async function main(): Promise<void> {
  // README: create a session and post the example of Simianer et al.
  const create: SessionCreate = { id: "demo", source_lang: "de", target_lang: "en",
    metadata: { project: "readme", client: { name: "cat-tool", version: 3 } } };
  const s = await call<Session>("POST", "/v1/sessions", create);
  expect(s.status === 201 && s.json.id === "demo", `create: ${s.status}`);
  const segments: SegmentRequest[] = [
    { id: "1", source: "Der Terrier beißt die Frau", hypothesis: "The dog bites the lady",
      translation: "The terrier bites the woman" },
    { id: "2", source: "Der Mann beißt den Terrier", hypothesis: "The terrier bites the man",
      translation: "The man bites the terrier" },
  ];
  for (const seg of segments) {
    const r = await call<SegmentResult>("POST", "/v1/sessions/demo/segments", seg);
    expect(r.status === 201 && r.json.id === seg.id, `segment ${seg.id}: ${r.status}`);
  }
  const m = await call<Metrics>("GET", "/v1/sessions/demo/metrics");
  const t = m.json.systems["default"];
  expect(m.status === 200 && t !== undefined, `metrics: ${m.status}`);
  const counts = [t?.r0?.hits, t?.r0?.total, t?.r1?.hits, t?.r1?.total, t?.r01?.hits, t?.r01?.total];
  expect(counts.join(",") === "2,4,2,2,4,6", `R0 2/4, R1 2/2, R0+1 4/6; got ${counts.join(",")}`);

  // README: a glossary makes term scores appear
  const g = await call<GlossaryStored>("PUT", "/v1/sessions/demo/glossary",
    "source,target\nterrier,terrier\n", "text/csv");
  expect(g.status === 200 && g.json.entries === 1, `glossary: ${g.status}`);

  // README: baseline and adaptive, compared on the same segments
  const cmp: SessionCreate = { id: "compare", source_lang: "de", target_lang: "en",
    systems: ["baseline", "adaptive"], options: { baseline_system: "baseline" } };
  expect((await call<Session>("POST", "/v1/sessions", cmp)).status === 201, "create compare");
  const two: SegmentRequest = { id: "1", hypotheses: { baseline: "The dog bites the lady",
    adaptive: "The terrier bites the woman" }, translation: "The terrier bites the woman" };
  expect((await call<SegmentResult>("POST", "/v1/sessions/compare/segments", two)).status === 201,
    "post two systems");
  const mc = await call<Metrics>("GET", "/v1/sessions/compare/metrics");
  const rel = mc.json.relative_to_baseline?.["adaptive"];
  expect(mc.json.baseline_system === "baseline" && rel?.segments === 1, "relative_to_baseline");
  // README: language codes as CAT tools write them
  const memoq: SessionCreate = { id: "memoq", source_lang: "eng", target_lang: "fre-FR" };
  const q = await call<Session>("POST", "/v1/sessions", memoq);
  expect(q.status === 201 && q.json.target_lang === "fr-FR" && q.json.warnings.length === 0,
    `language codes: ${q.status} ${q.json.target_lang}`);
}

main().then(
  () => console.log("readme client: ok"),
  (e: unknown) => {
    console.log("readme client: FAILED " + String(e));
    process.exitCode = 1;
  },
);
