// Compiles JSON schemas with ajv's JSON Schema 2020-12 validator in strict mode, as the
// official TypeScript SDK's client does with every tools/list (tests/tests/strict_schemas.rs).
//
// Usage: node ajv_strict.cjs <prefix with node_modules/ajv, ajv-formats> <schemas.json>
// where schemas.json is {"<name>": <schema>, …}. Prints one JSON object on stdout:
// {"<name>": {"warnings": [...], "errors": [...]}, …}: what ajv logged (warn/error) and what
// compile threw, per schema. Exits 0 whenever every schema was tried.
"use strict";
const fs = require("fs");
const path = require("path");

const [prefix, file] = process.argv.slice(2);
const modules = path.join(prefix, "node_modules");
const Ajv2020 = require(path.join(modules, "ajv", "dist", "2020")).default;
const addFormats = require(path.join(modules, "ajv-formats")).default;

const schemas = JSON.parse(fs.readFileSync(file, "utf8"));
const report = {};
for (const [name, schema] of Object.entries(schemas)) {
  const warnings = [];
  const errors = [];
  const text = (args) => args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
  const ajv = new Ajv2020({
    strict: true,
    allErrors: true,
    logger: {
      log: () => {},
      warn: (...args) => warnings.push(text(args)),
      error: (...args) => errors.push(text(args)),
    },
  });
  addFormats(ajv);
  try {
    ajv.compile(schema);
  } catch (e) {
    errors.push(String(e && e.message ? e.message : e));
  }
  report[name] = { warnings, errors };
}
process.stdout.write(JSON.stringify(report));
