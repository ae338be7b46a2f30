//! The answering side of the interactive client ([`app`](crate::app)), on plain JSON so it
//! works against any 2026-07-28 server.
//!
//! [`Console`] reads from any `BufRead` and writes to any `Write` (a terminal, or a pipe in
//! tests). It answers one input request at a time:
//!
//! * `elicitation/create`, form mode: one prompt per field of `requestedSchema`, with type
//!   validation and a re-prompt on bad input (strings with `minLength`/`maxLength`/`format`,
//!   numbers and integers with `minimum`/`maximum`, booleans as y/n, single- and multi-select
//!   enums, defaults, optional fields), after choosing accept / decline / cancel;
//! * `elicitation/create`, URL mode: shows the URL and asks accept / decline / cancel;
//! * `sampling/createMessage`: answered by a [`SamplingResponder`] (fixed text, echo, or typed
//!   at the prompt);
//! * `roots/list`: the roots given on the command line.
//!
//! End of input while prompting is treated as `cancel` for elicitations, never as a panic.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::fields::FieldKind;

/// How the client answers `sampling/createMessage`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SamplingResponder {
    /// Always this text.
    Fixed(String),
    /// The text of the request's messages, joined by newlines.
    Echo,
    /// Typed by the person at the prompt (one line).
    Prompt,
}

impl std::str::FromStr for SamplingResponder {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(text) = s.strip_prefix("fixed:") {
            Ok(SamplingResponder::Fixed(text.to_owned()))
        } else if s == "echo" {
            Ok(SamplingResponder::Echo)
        } else if s == "prompt" {
            Ok(SamplingResponder::Prompt)
        } else {
            Err(format!(
                "unknown sampling responder {s:?} (use fixed:TEXT, echo or prompt)"
            ))
        }
    }
}

/// A root offered to servers that ask `roots/list`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootEntry {
    /// A `file://` URI.
    pub uri: String,
    /// A display name (the last path component).
    pub name: String,
}

impl RootEntry {
    /// The root for a local directory (made absolute; not required to exist).
    pub fn from_path(path: &Path) -> RootEntry {
        let abs: PathBuf = std::fs::canonicalize(path).unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(path))
                .unwrap_or_else(|_| path.to_path_buf())
        });
        let name = abs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "/".to_owned());
        RootEntry {
            uri: file_uri(&abs),
            name,
        }
    }
}

/// `file://` URI of an absolute path (`url`'s `Url::from_file_path`: percent-encoded, UTF-8);
/// a relative path is made absolute against the current directory first, and a path that is
/// still not absolute gets its characters encoded after `file://`.
pub fn file_uri(path: &Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    match url::Url::from_file_path(&abs) {
        Ok(u) => u.into(),
        Err(()) => match url::Url::parse("file:///") {
            Ok(mut u) => {
                u.set_path(&abs.to_string_lossy());
                u.into()
            }
            Err(_) => "file:///".to_owned(),
        },
    }
}

/// What the client declares and how it answers.
#[derive(Clone, Debug)]
pub struct AnswerConfig {
    /// Declare the elicitation capability (form and URL modes).
    pub elicitation: bool,
    /// Declare sampling and answer with this responder.
    pub sampling: Option<SamplingResponder>,
    /// Declare roots and answer with these (declared only when non-empty).
    pub roots: Vec<RootEntry>,
}

impl AnswerConfig {
    /// The `io.modelcontextprotocol/clientCapabilities` object this configuration declares.
    pub fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.elicitation {
            caps.insert("elicitation".into(), json!({"form": {}, "url": {}}));
        }
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if !self.roots.is_empty() {
            caps.insert("roots".into(), json!({}));
        }
        Value::Object(caps)
    }
}

/// Reads answers from `input` and shows everything on `output`.
pub struct Console<R, W> {
    input: R,
    output: W,
    config: AnswerConfig,
    echo: bool,
}

/// The prompt reached the end of its input.
#[derive(Debug)]
pub(crate) struct Eof;

impl<R: BufRead, W: Write> Console<R, W> {
    /// A console over `input`/`output` answering as `config` says.
    pub fn new(input: R, output: W, config: AnswerConfig) -> Self {
        Console {
            input,
            output,
            config,
            echo: false,
        }
    }

    /// Echoes every line read to the output (useful when the input is a pipe, so that the
    /// transcript shows the answers).
    pub fn with_echo(mut self, echo: bool) -> Self {
        self.echo = echo;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &AnswerConfig {
        &self.config
    }

    /// The output stream (for the caller's own messages).
    pub fn out(&mut self) -> &mut W {
        &mut self.output
    }

    /// Reads one line (without the newline); `None` at end of input.
    pub fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                let line = line.trim_end_matches(['\n', '\r']).to_owned();
                if self.echo {
                    let _ = writeln!(self.output, "{line}");
                }
                Some(line)
            }
        }
    }

    /// Shows `question` and reads one line.
    pub fn ask_line(&mut self, question: &str) -> Option<String> {
        let _ = write!(self.output, "{question}");
        let _ = self.output.flush();
        self.read_line()
    }

    fn say(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.output, "{}", text.as_ref());
    }

    /// Answers the input request `request` (`{"method", "params"}`) stored under `key`.
    /// Returns the response object (ElicitResult, CreateMessageResult or ListRootsResult).
    ///
    /// # Errors
    /// A message when the request is of a kind this client did not declare or is malformed.
    pub fn answer(&mut self, key: &str, request: &Value) -> Result<Value, String> {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let empty = Value::Object(Map::new());
        let params = request.get("params").unwrap_or(&empty);
        match method {
            "elicitation/create" if self.config.elicitation => Ok(self.elicit(key, params)),
            "sampling/createMessage" => match self.config.sampling.clone() {
                Some(responder) => Ok(self.sample(key, params, &responder)),
                None => Err(format!("`{key}`: sampling was not declared")),
            },
            "roots/list" if !self.config.roots.is_empty() => Ok(self.roots(key)),
            other => Err(format!("`{key}`: cannot answer {other:?}")),
        }
    }

    fn elicit(&mut self, key: &str, params: &Value) -> Value {
        let message = params.get("message").and_then(Value::as_str).unwrap_or("");
        let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
        self.say(format!("── elicitation `{key}` ({mode}): {message}"));
        if mode == "url" {
            let url = params.get("url").and_then(Value::as_str).unwrap_or("");
            self.say(format!("   open this URL to continue: {url}"));
        }
        let action = match self.choose_action() {
            Ok(a) => a,
            Err(Eof) => return json!({"action": "cancel"}),
        };
        if action != "accept" {
            return json!({ "action": action });
        }
        if mode == "url" {
            return json!({"action": "accept"});
        }
        let schema = params
            .get("requestedSchema")
            .cloned()
            .unwrap_or(Value::Null);
        match self.fill_form(&schema) {
            Ok(content) => json!({"action": "accept", "content": content}),
            Err(Eof) => json!({"action": "cancel"}),
        }
    }

    fn choose_action(&mut self) -> Result<&'static str, Eof> {
        loop {
            let line = self
                .ask_line("   [a]ccept, [d]ecline or [c]ancel? (a) ")
                .ok_or(Eof)?;
            match line.trim().to_ascii_lowercase().as_str() {
                "" | "a" | "accept" => return Ok("accept"),
                "d" | "decline" => return Ok("decline"),
                "c" | "cancel" => return Ok("cancel"),
                _ => self.say("   please answer a, d or c"),
            }
        }
    }

    fn fill_form(&mut self, schema: &Value) -> Result<Map<String, Value>, Eof> {
        let mut content = Map::new();
        let empty = Map::new();
        let props = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, field) in props {
            let is_required = required.contains(&name.as_str());
            if let Some(v) = self.prompt_field(name, field, is_required, false)? {
                content.insert(name.clone(), v);
            }
        }
        Ok(content)
    }

    /// Prompts for one field until the input is valid. `Ok(None)` = left out (optional).
    /// An empty answer takes the field's `default`, or with `omit_default` leaves an optional
    /// field out (tool arguments: the server applies its own default).
    pub(crate) fn prompt_field(
        &mut self,
        name: &str,
        field: &Value,
        required: bool,
        omit_default: bool,
    ) -> Result<Option<Value>, Eof> {
        let kind = FieldKind::of(field);
        let title = field.get("title").and_then(Value::as_str).unwrap_or(name);
        let mut header = format!("   {title}");
        if let Some(d) = field.get("description").and_then(Value::as_str) {
            header.push_str(&format!(" — {d}"));
        }
        self.say(header);
        if let FieldKind::Enum(options) | FieldKind::MultiEnum(options) = &kind {
            for (i, (value, label)) in options.iter().enumerate() {
                if label == value {
                    self.say(format!("     {}) {value}", i + 1));
                } else {
                    self.say(format!("     {}) {label} [{value}]", i + 1));
                }
            }
        }
        let default = field.get("default");
        let mut hint = kind.hint();
        if let Some(d) = default {
            hint.push_str(&format!(", default {d}"));
        }
        if !required {
            hint.push_str(", optional");
        }
        loop {
            let line = self.ask_line(&format!("   {name} ({hint}): ")).ok_or(Eof)?;
            let line = line.trim();
            if line.is_empty() {
                if omit_default && !required {
                    return Ok(None);
                }
                if let Some(d) = default {
                    return Ok(Some(d.clone()));
                }
                if !required {
                    return Ok(None);
                }
                self.say("   a value is required");
                continue;
            }
            match kind.parse(line, field) {
                Ok(v) => return Ok(Some(v)),
                Err(e) => self.say(format!("   {e}; try again")),
            }
        }
    }

    fn sample(&mut self, key: &str, params: &Value, responder: &SamplingResponder) -> Value {
        let prompt_text = messages_text(params);
        self.say(format!("── sampling `{key}`"));
        if let Some(s) = params.get("systemPrompt").and_then(Value::as_str) {
            self.say(format!("   system: {s}"));
        }
        if let Some(m) = params.get("maxTokens") {
            self.say(format!("   maxTokens: {m}"));
        }
        for line in prompt_text.lines().take(20) {
            self.say(format!("   > {line}"));
        }
        if prompt_text.lines().count() > 20 {
            self.say("   > …");
        }
        let (text, model) = match responder {
            SamplingResponder::Fixed(t) => (t.clone(), "mcp-tool-client/fixed"),
            SamplingResponder::Echo => (prompt_text, "mcp-tool-client/echo"),
            SamplingResponder::Prompt => (
                self.ask_line("   model answer: ").unwrap_or_default(),
                "mcp-tool-client/person",
            ),
        };
        self.say(format!("   answered: {}", one_line(&text, 120)));
        json!({
            "role": "assistant",
            "content": {"type": "text", "text": text},
            "model": model,
            "stopReason": "endTurn"
        })
    }

    fn roots(&mut self, key: &str) -> Value {
        self.say(format!(
            "── roots `{key}`: {} root(s)",
            self.config.roots.len()
        ));
        let roots: Vec<Value> = self
            .config
            .roots
            .iter()
            .map(|r| json!({"uri": r.uri, "name": r.name}))
            .collect();
        json!({ "roots": roots })
    }
}

/// The text of the user/assistant messages of a sampling request, joined by newlines.
pub fn messages_text(params: &Value) -> String {
    let mut parts = Vec::new();
    for m in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = m.get("content");
        let blocks: Vec<&Value> = match content {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(v) => vec![v],
            None => vec![],
        };
        for b in blocks {
            if let Some(t) = b.get("text").and_then(Value::as_str) {
                parts.push(t.to_owned());
            }
        }
    }
    parts.join("\n")
}

/// The first `max` characters of `s` on one line.
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::check_format;

    fn console(input: &str, config: AnswerConfig) -> Console<&[u8], Vec<u8>> {
        Console::new(input.as_bytes(), Vec::new(), config)
    }

    fn all() -> AnswerConfig {
        AnswerConfig {
            elicitation: true,
            sampling: Some(SamplingResponder::Echo),
            roots: vec![RootEntry {
                uri: "file:///tmp/x".into(),
                name: "x".into(),
            }],
        }
    }

    fn form(schema: Value) -> Value {
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Fill in", "requestedSchema": schema}})
    }

    #[test]
    fn form_with_validation_and_reprompts() {
        let schema = json!({
            "type": "object",
            "properties": {
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "color": {"type": "string", "enum": ["red", "green"]},
                "email": {"type": "string", "format": "email"},
                "name": {"type": "string", "minLength": 2},
                "nick": {"type": "string"},
                "ok": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2}
            },
            "required": ["age", "color", "email", "name", "ok"]
        });
        // Fields are visited in key order: age, color, email, name, nick, ok, tags.
        let input =
            "a\nabc\n200\n42\n7\n2\nnope\nme@example.com\nx\nOcto\n\nmaybe\ny\na,b,c\n1,3\n";
        let mut c = console(input, all());
        let answer = c.answer("k", &form(schema)).unwrap();
        assert_eq!(
            answer,
            json!({"action": "accept", "content": {
                "age": 42, "color": "green", "email": "me@example.com", "name": "Octo",
                "ok": true, "tags": ["a", "c"]
            }})
        );
        let shown = String::from_utf8(c.out().clone()).unwrap();
        assert!(shown.contains("not an integer"));
        assert!(shown.contains("must be at most 150"));
        assert!(shown.contains("not one of the options"));
        assert!(shown.contains("not a valid email"));
        assert!(shown.contains("at least 2 characters"));
        assert!(shown.contains("answer y or n"));
        assert!(shown.contains("choose at most 2"));
    }

    #[test]
    fn decline_cancel_and_eof() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let mut c = console("d\n", all());
        assert_eq!(
            c.answer("k", &form(schema.clone())).unwrap(),
            json!({"action": "decline"})
        );
        let mut c = console("cancel\n", all());
        assert_eq!(
            c.answer("k", &form(schema.clone())).unwrap(),
            json!({"action": "cancel"})
        );
        let mut c = console("a\n", all());
        assert_eq!(
            c.answer("k", &form(schema)).unwrap(),
            json!({"action": "cancel"})
        );
    }

    #[test]
    fn defaults_titled_enums_and_url_mode() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "number", "default": 1.5},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}
        }, "required": ["size", "n"]});
        let mut c = console("\n\nLarge\n", all());
        assert_eq!(
            c.answer("k", &form(schema)).unwrap(),
            json!({"action": "accept", "content": {"n": 1.5, "size": "l"}})
        );
        let url = json!({"method": "elicitation/create", "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/x"}});
        let mut c = console("a\n", all());
        assert_eq!(c.answer("k", &url).unwrap(), json!({"action": "accept"}));
        assert!(
            String::from_utf8(c.out().clone())
                .unwrap()
                .contains("https://example.com/x")
        );
    }

    #[test]
    fn sampling_responders_and_roots() {
        let req = json!({"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
            "maxTokens": 10
        }});
        let mut c = console("", all());
        let a = c.answer("s", &req).unwrap();
        assert_eq!(a["content"]["text"], "hello");
        assert_eq!(a["role"], "assistant");
        let mut cfg = all();
        cfg.sampling = Some("fixed:[\"a\"]".parse().unwrap());
        let mut c = console("", cfg);
        assert_eq!(c.answer("s", &req).unwrap()["content"]["text"], "[\"a\"]");
        let mut cfg = all();
        cfg.sampling = Some(SamplingResponder::Prompt);
        let mut c = console("typed\n", cfg);
        assert_eq!(c.answer("s", &req).unwrap()["content"]["text"], "typed");
        let mut c = console("", all());
        let roots = c.answer("r", &json!({"method": "roots/list"})).unwrap();
        assert_eq!(
            roots,
            json!({"roots": [{"uri": "file:///tmp/x", "name": "x"}]})
        );
    }

    #[test]
    fn undeclared_kinds_are_refused() {
        let cfg = AnswerConfig {
            elicitation: false,
            sampling: None,
            roots: vec![],
        };
        assert_eq!(cfg.capabilities(), json!({}));
        let mut c = console("", cfg);
        assert!(c.answer("r", &json!({"method": "roots/list"})).is_err());
        assert!(
            c.answer("s", &json!({"method": "sampling/createMessage"}))
                .is_err()
        );
        assert!(c.answer("e", &form(json!({}))).is_err());
        assert!(c.answer("x", &json!({"method": "nope"})).is_err());
        assert_eq!(
            all().capabilities(),
            json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
        );
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/ü")),
            "file:///tmp/a%20b/%C3%BC"
        );
        assert!("bogus".parse::<SamplingResponder>().is_err());
    }

    #[test]
    fn formats_never_panic_on_odd_input() {
        for s in [
            "2026-01-0é:00:00Z",
            "éééééééééééé",
            "2026-01-01T10:00:00Z",
            "",
            "@",
            "a:",
        ] {
            let _ = check_format("date-time", s);
            let _ = check_format("date", s);
            let _ = check_format("email", s);
            let _ = check_format("uri", s);
        }
        assert!(check_format("date-time", "2026-01-01T10:00:00Z").is_ok());
        assert!(check_format("date-time", "2026-01-0é:00:00Z").is_err());
        assert!(check_format("date", "2026-02-30").is_ok(), "shape only");
        assert!(check_format("email", "a@b.c").is_ok());
        assert!(check_format("uri", "https://x").is_ok());
    }
}
