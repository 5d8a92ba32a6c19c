// openapi_check.mjs — validates an OpenAPI document with @apidevtools/swagger-parser
// (schema validation of the OpenAPI 3.1 document, then $ref resolution) and prints
// one JSON line on stdout: {"valid": true, "openapi": "3.1.0", "operations": [[METHOD, PATH], …]}
// or {"valid": false, "error": "…"} (exit status 1). Called by tests/api/test_api.py.
//
// usage: node tests/api/openapi_check.mjs path/to/openapi.yaml
import SwaggerParser from "@apidevtools/swagger-parser";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

async function main() {
  const file = process.argv[2];
  if (!file) {
    console.log(JSON.stringify({ valid: false, error: "usage: openapi_check.mjs FILE" }));
    return 2;
  }
  let api;
  try {
    // validate() checks the document against the OpenAPI 3.1 schema and
    // resolves every $ref (a dangling $ref is an error).
    api = await SwaggerParser.validate(file);
  } catch (e) {
    console.log(JSON.stringify({ valid: false, error: String(e && e.message ? e.message : e) }));
    return 1;
  }
  const ops = [];
  for (const [path, item] of Object.entries(api.paths || {})) {
    for (const m of METHODS) {
      if (item && Object.prototype.hasOwnProperty.call(item, m)) ops.push([m.toUpperCase(), path]);
    }
  }
  console.log(JSON.stringify({ valid: true, openapi: api.openapi, operations: ops }));
  return 0;
}

main().then(
  (rc) => process.exit(rc),
  (e) => {
    console.log(JSON.stringify({ valid: false, error: String(e) }));
    process.exit(1);
  }
);
