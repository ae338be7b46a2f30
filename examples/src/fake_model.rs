//! A deterministic fake model and user: a [`Host`] that answers every input request of the
//! example tools without a network, so the demo and the tests are reproducible.
//!
//! * `sampling/createMessage` under the key `pick_files`: reads the `- path` lines of the
//!   file list in the message and answers a JSON array of three real files: the best
//!   README, the best top-level source file, the best document (then whatever ranks next).
//! * `summary`: a summary derived from the `=== path ===` sections of the message (the
//!   first meaningful line of each file) and the `Audience:` line.
//! * `critique`: a one-sentence critique derived from the summary in the message.
//! * any other sampling key: `fake model: ` plus the first line of the prompt.
//! * `elicitation/create` (form): every field of `requestedSchema` filled with a fixed answer
//!   (see [`FakeModel::fill_form`]); URL mode: accepted.
//! * `roots/list`: the roots given with [`FakeModel::with_roots`] (one demo root by default).
//!
//! [`FakeModel::with_text`] overrides the answer for one key (e.g. invalid JSON for
//! `pick_files` in tests) and [`FakeModel::with_action`] makes an elicitation key decline or
//! cancel.

use std::collections::BTreeMap;

use mcp_tool_client::{BoxFuture, Host, HostError};
use mcp_tool_runtime::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams,
    ElicitResult, InputRequest, InputResponse, JsonObject, ListRootsResult, Root,
};
use serde_json::{Value, json};

/// The model name reported in every sampling answer.
pub const MODEL_NAME: &str = "fake-model-1";

/// The deterministic fake host. See the module documentation.
#[derive(Clone, Debug)]
pub struct FakeModel {
    capabilities: ClientCapabilities,
    texts: BTreeMap<String, String>,
    actions: BTreeMap<String, ElicitAction>,
    roots: Vec<Root>,
    asked: Vec<String>,
}

impl Default for FakeModel {
    fn default() -> Self {
        FakeModel::new()
    }
}

impl FakeModel {
    /// A fake host declaring elicitation (form and URL), sampling and roots.
    pub fn new() -> FakeModel {
        FakeModel {
            capabilities: ClientCapabilities::all(),
            texts: BTreeMap::new(),
            actions: BTreeMap::new(),
            roots: vec![Root::new(
                "file:///workspace/tinyweather",
                Some("tinyweather"),
            )],
            asked: Vec::new(),
        }
    }

    /// Declares exactly these capabilities instead.
    pub fn with_capabilities(mut self, capabilities: ClientCapabilities) -> FakeModel {
        self.capabilities = capabilities;
        self
    }

    /// Answers the sampling request under `key` with exactly `text`.
    pub fn with_text(mut self, key: impl Into<String>, text: impl Into<String>) -> FakeModel {
        self.texts.insert(key.into(), text.into());
        self
    }

    /// Answers the elicitation under `key` with `action` (decline or cancel).
    pub fn with_action(mut self, key: impl Into<String>, action: ElicitAction) -> FakeModel {
        self.actions.insert(key.into(), action);
        self
    }

    /// Answers `roots/list` with these roots.
    pub fn with_roots(mut self, roots: Vec<Root>) -> FakeModel {
        self.roots = roots;
        self
    }

    /// The keys asked so far, in order.
    pub fn asked(&self) -> &[String] {
        &self.asked
    }

    /// The answer to one input request (pure; does not record the key).
    pub fn answer(&self, key: &str, request: &InputRequest) -> InputResponse {
        match request {
            InputRequest::Sample(params) => {
                let text = match self.texts.get(key) {
                    Some(t) => t.clone(),
                    None => sample_text(key, params),
                };
                CreateMessageResult::text(MODEL_NAME, text).into()
            }
            InputRequest::Elicit(ElicitParams::Form(form)) => match self.actions.get(key) {
                Some(ElicitAction::Decline) => ElicitResult::decline().into(),
                Some(ElicitAction::Cancel) => ElicitResult::cancel().into(),
                _ => ElicitResult::accept(FakeModel::fill_form(key, &form.requested_schema)).into(),
            },
            InputRequest::Elicit(ElicitParams::Url(_)) => match self.actions.get(key) {
                Some(ElicitAction::Decline) => ElicitResult::decline().into(),
                Some(ElicitAction::Cancel) => ElicitResult::cancel().into(),
                _ => ElicitResult::accept_url().into(),
            },
            InputRequest::Roots(_) => ListRootsResult {
                roots: self.roots.clone(),
                extra: JsonObject::new(),
            }
            .into(),
        }
    }

    /// Fills a form `requestedSchema` with fixed answers: `name`/`username`/`login` fields get
    /// a username derived from the key (`github_login` → `octocat`, `google_login` →
    /// `octo.google`, `microsoft_login` → `octo.microsoft`), `email` fields an address,
    /// booleans `true`, numbers their `minimum` (or 1), enums their first option, other
    /// strings their `default` or `"yes"`.
    pub fn fill_form(key: &str, schema: &JsonObject) -> JsonObject {
        let mut out = JsonObject::new();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return out;
        };
        let user = match key {
            "github_login" => "octocat".to_owned(),
            k => match k.strip_suffix("_login") {
                Some(provider) => format!("octo.{provider}"),
                None => "octocat".to_owned(),
            },
        };
        for (name, field) in props {
            let ty = field
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("string");
            let value = if let Some(d) = field.get("default") {
                d.clone()
            } else {
                match ty {
                    "boolean" => json!(true),
                    "integer" | "number" => field.get("minimum").cloned().unwrap_or(json!(1)),
                    "array" => json!([]),
                    _ => {
                        if let Some(first) = field
                            .get("enum")
                            .and_then(Value::as_array)
                            .and_then(|a| a.first())
                        {
                            first.clone()
                        } else if let Some(first) = field
                            .get("oneOf")
                            .and_then(Value::as_array)
                            .and_then(|a| a.first())
                            .and_then(|o| o.get("const"))
                        {
                            first.clone()
                        } else if name.contains("email") {
                            json!(format!("{user}@example.com"))
                        } else if ["name", "username", "login", "user"].contains(&name.as_str()) {
                            json!(user)
                        } else {
                            json!("yes")
                        }
                    }
                }
            };
            out.insert(name.clone(), value);
        }
        out
    }
}

impl Host for FakeModel {
    fn capabilities(&self) -> ClientCapabilities {
        self.capabilities.clone()
    }

    fn respond<'a>(
        &'a mut self,
        key: &'a str,
        req: &'a InputRequest,
    ) -> BoxFuture<'a, Result<InputResponse, HostError>> {
        self.asked.push(key.to_owned());
        let answer = if req.allowed_by(&self.capabilities) {
            Ok(self.answer(key, req))
        } else {
            Err(HostError::Unsupported {
                key: key.to_owned(),
                method: req.method().to_owned(),
            })
        };
        Box::pin(std::future::ready(answer))
    }
}

/// The text of every message of a sampling request, joined by newlines.
pub fn prompt_text(params: &CreateMessageParams) -> String {
    params
        .messages
        .iter()
        .flat_map(|m| m.content.as_slice().iter().filter_map(|c| c.as_text()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn sample_text(key: &str, params: &CreateMessageParams) -> String {
    let prompt = prompt_text(params);
    match key {
        "pick_files" => pick_files_answer(&prompt),
        "summary" => summary_answer(&prompt),
        "critique" => critique_answer(&prompt),
        _ => format!("fake model: {}", prompt.lines().next().unwrap_or("").trim()),
    }
}

/// The fake answer to `pick_files`: a JSON array of (at most) three paths taken from the
/// `- path` lines of `prompt`.
pub fn pick_files_answer(prompt: &str) -> String {
    let files: Vec<&str> = prompt
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let rank = |p: &str| -> (u8, usize, String) { (class(p), p.len(), p.to_owned()) };
    let best = |c: u8| {
        files
            .iter()
            .filter(|p| class(p) == c)
            .min_by_key(|p| rank(p))
            .copied()
    };
    let mut chosen: Vec<&str> = [0, 1, 2].into_iter().filter_map(best).collect();
    let mut rest: Vec<&str> = files
        .iter()
        .copied()
        .filter(|p| !chosen.contains(p))
        .collect();
    rest.sort_by_key(|p| rank(p));
    chosen.extend(rest);
    chosen.truncate(3);
    serde_json::to_string(&chosen).unwrap_or_else(|_| "[]".to_owned())
}

/// 0 README, 1 source file outside tests, 2 document, 3 other, 4 tests.
fn class(path: &str) -> u8 {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = path.to_ascii_lowercase();
    if name.to_ascii_lowercase().starts_with("readme") {
        0
    } else if lower.starts_with("tests/") || lower.contains("/tests/") || name.starts_with("test_")
    {
        4
    } else if [
        ".rs", ".py", ".go", ".js", ".ts", ".java", ".c", ".cpp", ".rb",
    ]
    .iter()
    .any(|e| lower.ends_with(e))
    {
        1
    } else if [".md", ".txt", ".rst"].iter().any(|e| lower.ends_with(e)) {
        2
    } else {
        3
    }
}

/// The fake summary: one clause per `=== path ===` section of `prompt` (its first meaningful
/// line), addressed to the `Audience:` line's value.
pub fn summary_answer(prompt: &str) -> String {
    let audience = prompt
        .lines()
        .find_map(|l| l.strip_prefix("Audience:"))
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .unwrap_or("reader");
    let mut sections: Vec<(String, Option<String>, usize)> = Vec::new();
    for line in prompt.lines() {
        if let Some(path) = line
            .strip_prefix("=== ")
            .and_then(|l| l.strip_suffix(" ==="))
        {
            sections.push((path.to_owned(), None, 0));
        } else if let Some((_, gist, lines)) = sections.last_mut() {
            *lines += 1;
            if gist.is_none() {
                let cleaned = line
                    .trim()
                    .trim_start_matches(['#', '/', '*', '"', '\'', '[', '-', ' '])
                    .trim_end_matches(['"', '\'', ']'])
                    .trim();
                if !cleaned.is_empty() {
                    *gist = Some(mcp_tool_cli::interactive::one_line(cleaned, 80));
                }
            }
        }
    }
    if sections.is_empty() {
        return format!("For a {audience}: the repository content was empty.");
    }
    let total: usize = sections.iter().map(|s| s.2).sum();
    let clauses: Vec<String> = sections
        .iter()
        .map(|(p, g, _)| format!("{p} ({})", g.as_deref().unwrap_or("empty")))
        .collect();
    format!(
        "For a {audience}: this repository is described by {} ({} files, {total} lines read).",
        clauses.join("; "),
        sections.len()
    )
}

/// The fake critique of the summary found after the `Summary:` line of `prompt`.
pub fn critique_answer(prompt: &str) -> String {
    let summary = prompt
        .split_once("Summary:")
        .map(|(_, s)| s.trim())
        .unwrap_or("");
    let words = summary.split_whitespace().count();
    let mentions_tests = summary.to_ascii_lowercase().contains("test");
    format!(
        "The summary is {words} words long and {} the tests; it could say how to run the project.",
        if mentions_tests {
            "mentions"
        } else {
            "does not mention"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tool_runtime::protocol::{ElicitFormParams, SamplingMessage};

    fn sample(text: &str) -> InputRequest {
        InputRequest::Sample(CreateMessageParams {
            messages: vec![SamplingMessage::user(text)],
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens: 400,
            stop_sequences: None,
            metadata: None,
            extra: JsonObject::new(),
        })
    }

    fn text_of(r: &InputResponse) -> String {
        match r {
            InputResponse::Sample(m) => m.content.as_slice()[0].as_text().unwrap().to_owned(),
            other => panic!("not a sampling answer: {other:?}"),
        }
    }

    #[test]
    fn picks_a_readme_a_source_file_and_a_document() {
        let prompt = "Choose three representative files and return a JSON array.\n\n- README.md\n- docs/intro.md\n- forecast.py\n- pyproject.toml\n- server.py\n- tests/test_forecast.py\n";
        assert_eq!(
            pick_files_answer(prompt),
            r#"["README.md","server.py","docs/intro.md"]"#
        );
        assert_eq!(
            pick_files_answer("- a.toml\n- b.txt"),
            r#"["b.txt","a.toml"]"#
        );
        assert_eq!(pick_files_answer("nothing"), "[]");
    }

    #[test]
    fn summary_and_critique_are_derived_from_the_prompt() {
        let prompt = "Summarize.\nAudience: developer\n\n=== README.md ===\n# tinyweather\n\nA tiny service.\n=== server.py ===\n\"\"\"HTTP entry point.\"\"\"\n";
        let s = summary_answer(prompt);
        assert_eq!(
            s,
            "For a developer: this repository is described by README.md (tinyweather); server.py (HTTP entry point.) (2 files, 4 lines read)."
        );
        assert_eq!(summary_answer(prompt), s, "deterministic");
        let c = critique_answer(&format!("Critique.\n\nSummary:\n{s}"));
        assert!(
            c.starts_with("The summary is 19 words long and does not mention the tests"),
            "{c}"
        );
    }

    #[test]
    fn answers_by_key_with_overrides() {
        let fake = FakeModel::new().with_text("pick_files", "not json");
        assert_eq!(
            text_of(&fake.answer("pick_files", &sample("- a.py"))),
            "not json"
        );
        assert_eq!(
            text_of(&FakeModel::new().answer("pick_files", &sample("- a.py"))),
            r#"["a.py"]"#
        );
        assert_eq!(
            text_of(&FakeModel::new().answer("other", &sample("Hello\nthere"))),
            "fake model: Hello"
        );
    }

    #[test]
    fn fills_forms_and_honours_actions() {
        let schema: JsonObject = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "format": "email"},
                "ok": {"type": "boolean"},
                "n": {"type": "integer", "minimum": 3},
                "color": {"type": "string", "enum": ["red", "blue"]}
            }
        }))
        .unwrap();
        assert_eq!(
            Value::Object(FakeModel::fill_form("google_login", &schema)),
            json!({"name": "octo.google", "email": "octo.google@example.com", "ok": true, "n": 3, "color": "red"})
        );
        let req = InputRequest::Elicit(ElicitParams::Form(ElicitFormParams {
            message: "Please provide your GitHub username".into(),
            requested_schema: schema.into(),
            extra: JsonObject::new(),
        }));
        let fake = FakeModel::new().with_action("github_login", ElicitAction::Decline);
        assert_eq!(
            fake.answer("github_login", &req),
            InputResponse::Elicit(ElicitResult::decline())
        );
        match FakeModel::new().answer("github_login", &req) {
            InputResponse::Elicit(r) => {
                assert_eq!(r.content.unwrap()["name"], "octocat")
            }
            other => panic!("{other:?}"),
        }
    }
}
