//! The example server's schemas, compiled by a strict JSON Schema 2020-12 validator: ajv
//! (`Ajv2020` with `strict: true`, plus `ajv-formats`), the validator the official TypeScript
//! SDK's client runs over every `tools/list`. Every `inputSchema` and `outputSchema` of
//! `tools/list`, the schema the `prompts/list` arguments come from, and every elicitation form
//! the example tools and prompt send (collected by driving them through their rounds) must
//! compile with no warning and no error: in particular no "unknown format" (schemars' `uint8`,
//! `uint32`, … become `minimum`/`maximum` in `mcp_tool_runtime::schema`).
//!
//! ajv is installed by the test, with the machine's `npm`, into `<peers>/node/ajv-<version>/`
//! (`MCP_TOOL_PEERS_CACHE` overrides `<target>/peers`, as for the Python peers), once, and
//! reused; `node` runs `tests/node/ajv_strict.cjs`.

mod python_peer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_tool_client::{CallOutcome, Driver, InProcessTransport};
use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_examples::tools::review::ReviewArgs;
use mcp_tool_runtime::manual::{non_standard_formats, schema_for};
use mcp_tool_runtime::protocol::JsonObject;
use serde_json::{Value, json};

/// The validator's packages, pinned.
const AJV: &str = "ajv@8.20.0";
const AJV_FORMATS: &str = "ajv-formats@3.0.1";
/// How long `npm install` may take (cold cache).
const NPM_TIMEOUT: Duration = Duration::from_secs(300);

/// The prefix holding `node_modules/ajv` and `node_modules/ajv-formats`, installed if needed.
///
/// The tests of this binary run in parallel and all need it: the first installs, the others
/// wait for it (one `OnceLock`); the install goes to a directory beside the prefix and is
/// renamed into place, so a concurrent binary or an interrupted install never sees half of it.
fn ajv_prefix() -> PathBuf {
    static PREFIX: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PREFIX
        .get_or_init(install_ajv)
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn install_ajv() -> Result<PathBuf, String> {
    let dir = python_peer::cache_dir().join("node").join(format!(
        "{}-{}",
        AJV.replace('@', "-"),
        AJV_FORMATS.replace('@', "-")
    ));
    let ready = |d: &Path| {
        d.join("node_modules/ajv/dist/2020.js").is_file()
            && d.join("node_modules/ajv-formats/dist/index.js").is_file()
    };
    if ready(&dir) {
        return Ok(dir);
    }
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).map_err(|e| format!("create {}: {e}", partial.display()))?;
    let out = python_peer::run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&partial)
            .args([AJV, AJV_FORMATS])
            .env("NO_UPDATE_NOTIFIER", "1"),
        NPM_TIMEOUT,
    )
    .map_err(|e| format!("npm is needed to install ajv for this test: {e}"))?;
    if !(out.status.success() && ready(&partial)) {
        return Err(format!(
            "npm install {AJV} {AJV_FORMATS} into {} failed ({}):\n{}\n{}",
            partial.display(),
            out.status,
            python_peer::tail(&out.stdout, 4000),
            python_peer::tail(&out.stderr, 4000)
        ));
    }
    // Another process may have finished first: its copy is as good as ours.
    if std::fs::rename(&partial, &dir).is_err() && !ready(&dir) {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&partial, &dir)
            .map_err(|e| format!("move {} into place: {e}", partial.display()))?;
    }
    let _ = std::fs::remove_dir_all(&partial);
    Ok(dir)
}

/// What ajv said about each schema: `(warnings, errors)` by name.
fn ajv_strict(schemas: &BTreeMap<String, Value>) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let prefix = ajv_prefix();
    let file = tempfile_path();
    std::fs::write(&file, serde_json::to_vec(schemas).expect("serialize")).expect("write");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/ajv_strict.cjs");
    let out = python_peer::run(
        Command::new("node").arg(script).arg(&prefix).arg(&file),
        Duration::from_secs(60),
    )
    .unwrap_or_else(|e| panic!("node runs ajv: {e}"));
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "ajv_strict.cjs failed:\n{}",
        out.stderr
    );
    let report: BTreeMap<String, Value> =
        serde_json::from_str(&out.stdout).expect("one JSON report");
    let list = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|s| s.as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    report
        .into_iter()
        .map(|(name, r)| (name, (list(&r["warnings"]), list(&r["errors"]))))
        .collect()
}

/// A fresh path in the system's temporary directory (tests run in parallel).
fn tempfile_path() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("mcp-tool-{}-schemas-{n}.json", std::process::id()))
}

/// Every form elicitation's `requestedSchema` in the `inputRequests` under `v`, by the key it
/// was asked under (`form <key>`).
fn forms(v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(requests)) = m.get("inputRequests") {
                for (key, request) in requests {
                    if let Some(s) = request["params"].get("requestedSchema") {
                        out.insert(format!("form {key}"), s.clone());
                    }
                }
            }
            m.values().for_each(|x| forms(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| forms(x, out)),
        _ => {}
    }
}

fn collect_forms(outcome: &CallOutcome, out: &mut BTreeMap<String, Value>) {
    for entry in &outcome.transcript {
        forms(&entry.message, out);
    }
}

/// The example server's schemas by name: `tool <name> input|output`, `prompt <name>
/// arguments`, `form <key>`.
async fn example_schemas() -> BTreeMap<String, Value> {
    let server = mcp_tool_examples::example_server(
        None,
        Repo::embedded_demo().expect("demo repository"),
        Notes::temporary().expect("notes store"),
    )
    .expect("the example server builds");
    let mut driver = Driver::new(InProcessTransport::new(Arc::new(server)), FakeModel::new());
    let mut schemas = BTreeMap::new();

    let listing = driver.list_tools().await.expect("tools/list");
    let tools = listing["tools"].as_array().expect("tools").clone();
    for t in &tools {
        let name = t["name"].as_str().expect("name");
        schemas.insert(format!("tool {name} input"), t["inputSchema"].clone());
        if let Some(o) = t.get("outputSchema") {
            schemas.insert(format!("tool {name} output"), o.clone());
        }
    }

    let prompts = driver
        .request("prompts/list", json!({}))
        .await
        .expect("prompts/list");
    let listed = prompts["prompts"].as_array().expect("prompts");
    assert_eq!(listed.len(), 1, "{prompts:#}");
    assert_eq!(listed[0]["name"], "review_file");
    // the arguments are listed from this schema (one argument per property)
    schemas.insert(
        "prompt review_file arguments".into(),
        Value::Object(schema_for::<ReviewArgs>()),
    );
    assert!(non_standard_formats(&prompts).is_empty(), "{prompts:#}");

    // every form: drive each tool (and the prompt) through its rounds with the fake host
    for t in &tools {
        let name = t["name"].as_str().expect("name");
        let args = match name {
            "prune_branches" => json!({"branches": ["old-feature"]}),
            "add_note" | "delete_notes" | "edit_note" => continue, // below, in order
            _ => Value::Object(FakeModel::fill_form(
                "arguments",
                t["inputSchema"].as_object().unwrap_or(&JsonObject::new()),
            )),
        };
        let outcome = driver.call_tool(name, args).await.expect(name);
        collect_forms(&outcome, &mut schemas);
    }
    for (name, args) in [
        ("add_note", json!({"title": "groceries", "body": "milk"})),
        (
            "edit_note",
            json!({"title": "groceries", "body": "milk and eggs"}),
        ),
        ("delete_notes", json!({"filter": "groceries"})),
    ] {
        let outcome = driver.call_tool(name, args).await.expect(name);
        collect_forms(&outcome, &mut schemas);
    }
    // the prompt's first round is enough: it asks which file (a free-text answer the fake
    // host cannot make up)
    let first = driver
        .request(
            "prompts/get",
            json!({"name": "review_file", "arguments": {"focus": "error handling"}}),
        )
        .await
        .expect("prompts/get");
    forms(&first, &mut schemas);
    schemas
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_schemas_compile_in_ajv_strict_mode_without_a_warning() {
    let schemas = example_schemas().await;
    let names: Vec<&String> = schemas.keys().collect();
    let count = |prefix: &str| names.iter().filter(|n| n.starts_with(prefix)).count();
    assert!(count("tool ") >= 10, "{names:?}");
    assert!(
        count("form ") >= 6,
        "every example form is reached: {names:?}"
    );
    // each kind of schema is really there (a change that stops sending one is seen)
    for needed in [
        "form github_login",
        "form google_login",
        "form microsoft_login",
        "form confirm",
        "form delete_1/",
        "form file",
        "prompt review_file arguments",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(needed)),
            "{needed} missing: {names:?}"
        );
    }

    eprintln!("compiling {} schemas: {names:?}", names.len());
    let report = ajv_strict(&schemas);
    assert_eq!(report.len(), schemas.len(), "every schema was compiled");
    let complaints: Vec<String> = report
        .iter()
        .filter(|(_, (w, e))| !w.is_empty() || !e.is_empty())
        .map(|(name, (w, e))| format!("{name}: warnings {w:?}, errors {e:?}"))
        .collect();
    assert!(
        complaints.is_empty(),
        "ajv (strict) complained:\n{}",
        complaints.join("\n")
    );
}

/// The check has teeth: the same run flags schemars' raw integer format, and the error
/// names it.
#[test]
fn ajv_strict_mode_flags_a_non_standard_format() {
    let mut schemas = BTreeMap::new();
    schemas.insert(
        "raw".to_owned(),
        json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint8"}}}),
    );
    schemas.insert(
        "clean".to_owned(),
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 255}}}),
    );
    let report = ajv_strict(&schemas);
    let (w, e) = &report["raw"];
    let all = format!("{w:?} {e:?}");
    assert!(
        all.contains("unknown format") && all.contains("uint8"),
        "{all}"
    );
    assert_eq!(report["clean"], (vec![], vec![]));
}
