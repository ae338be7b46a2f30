//! Prompts, resources and completion: `prompts/list`, `prompts/get`, `resources/list`,
//! `resources/templates/list`, `resources/read`, `completion/complete`, and the pagination of
//! every list.
//!
//! `prompts/get` and `resources/read` run through the same multi round-trip engine as
//! `tools/call` ([`super::rounds`]), bound to `prompts/get` + the prompt's name or
//! `resources/read` + the URI.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use super::Era;
use super::{RegisteredResource, Server, to_value};
use crate::code::{Concluded, ReadAt, Target};
use crate::error::ToolError;
use crate::notify::Notifiers;
use crate::principal::Principal;
use crate::prompt::{CompleteContext, Prompt, PromptInfo};
use crate::protocol::errors::{self, invalid_params};
use crate::protocol::{
    CompleteResult, Completion, ErrorObject, GetPromptResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, Listed, ReadResourceResult, ResultType,
};
use crate::resource::{Address, ResourceInfo};

/// Most suggestions in one `completion/complete` result (the spec's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;
/// Longest `argument.value` (and `context.arguments` value) accepted by `completion/complete`.
pub const MAX_COMPLETION_INPUT: usize = 4096;
/// Most `context.arguments` accepted by `completion/complete`.
pub const MAX_COMPLETION_CONTEXT: usize = 64;

impl Server {
    /// The prompts served now, in registration order.
    pub fn prompts(&self) -> Vec<PromptInfo> {
        let catalog = self.catalog();
        catalog
            .prompt_order
            .iter()
            .filter_map(|n| catalog.prompts.get(n).map(|p| p.info.clone()))
            .collect()
    }

    /// The resources and resource templates served now, in registration order.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.catalog()
            .resources
            .iter()
            .map(|r| r.info.clone())
            .collect()
    }

    /// Whether `resources/read` of `uri` reaches one of the registered resources (its URI,
    /// or a template it matches).
    pub fn serves_resource(&self, uri: &str) -> bool {
        self.find_resource(uri).is_some()
    }

    /// One page of `items` for `cursor` (a list of `kind`, read from the catalog of
    /// `generation`): the page and the next cursor. Cursors are opaque to clients (base64url
    /// of the list kind, the catalog's generation and an offset) and checked: anything else
    /// is -32602, and so is a cursor made before the catalog changed (its offset would skip
    /// or repeat items), saying to list again from the start.
    pub(super) fn page<T: Clone>(
        &self,
        kind: &str,
        generation: u64,
        items: &[T],
        params: &JsonObject,
    ) -> Result<(Vec<T>, Option<String>), ErrorObject> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => match decode_cursor(kind, c) {
                Some((g, offset)) if g == generation && offset < items.len() => offset,
                Some((g, _)) if g != generation => {
                    // the catalog changed after this cursor was made
                    return Err(invalid_params(
                        "Invalid cursor: the list changed since this cursor was made; list again from the start",
                    ));
                }
                _ => return Err(invalid_params("Invalid cursor")),
            },
            Some(_) => return Err(invalid_params("Invalid cursor")),
        };
        let end = start.saturating_add(self.inner.page_size).min(items.len());
        let next = (end < items.len()).then(|| encode_cursor(kind, generation, end));
        Ok((items[start..end].to_vec(), next))
    }

    /// The [`page`](Self::page) of `items` for the params' cursor as an `R` result, with the
    /// list `ttlMs`, the cache scope and the server's `_meta`.
    pub(super) fn list<R: Listed + Serialize>(
        &self,
        kind: &str,
        generation: u64,
        items: &[R::Item],
        params: &JsonObject,
    ) -> Result<Value, ErrorObject>
    where
        R::Item: Clone,
    {
        let (items, next_cursor) = self.page(kind, generation, items, params)?;
        Ok(to_value(&R::listed(
            items,
            next_cursor,
            self.inner.list_ttl_ms,
            self.inner.cache_scope,
            self.server_meta(),
        )))
    }

    pub(crate) fn list_prompts(&self, params: &JsonObject) -> Result<Value, ErrorObject> {
        let catalog = self.catalog();
        let all: Vec<_> = catalog
            .prompt_order
            .iter()
            .filter_map(|n| catalog.prompts.get(n))
            .map(|p| p.info.descriptor())
            .collect();
        self.list::<ListPromptsResult>("prompts", catalog.generation, &all, params)
    }

    pub(crate) fn list_resources(&self, params: &JsonObject) -> Result<Value, ErrorObject> {
        let catalog = self.catalog();
        let all: Vec<_> = catalog
            .resources
            .iter()
            .filter_map(|r| r.info.descriptor())
            .collect();
        self.list::<ListResourcesResult>("resources", catalog.generation, &all, params)
    }

    pub(crate) fn list_resource_templates(
        &self,
        params: &JsonObject,
    ) -> Result<Value, ErrorObject> {
        let catalog = self.catalog();
        let all: Vec<_> = catalog
            .resources
            .iter()
            .filter_map(|r| r.info.template_descriptor())
            .collect();
        self.list::<ListResourceTemplatesResult>("templates", catalog.generation, &all, params)
    }

    pub(crate) async fn get_prompt(
        &self,
        params: &JsonObject,
        era: Era<'_>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Value, ErrorObject> {
        let name = string_member(params, "name", "prompts/get: `name`")?;
        let catalog = self.catalog();
        let Some(reg) = catalog.prompts.get(name) else {
            return Err(invalid_params(format!("Unknown prompt: {name}")));
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(Value::Object(a)) => {
                if let Some((k, _)) = a.iter().find(|(_, v)| !v.is_string()) {
                    return Err(invalid_params(format!(
                        "prompts/get: argument `{k}` must be a string"
                    )));
                }
                Value::Object(a.clone())
            }
            Some(_) => return Err(invalid_params("prompts/get: `arguments` must be an object")),
        };
        // A missing required argument is -32602 before any code runs.
        for a in &reg.info.arguments {
            if a.required == Some(true) && args.get(&a.name).is_none() {
                return Err(invalid_params(format!(
                    "prompts/get: missing required argument `{}` of prompt `{name}`",
                    a.name
                )));
            }
        }
        let target = Target {
            method: "prompts/get",
            name,
            noun: "prompt",
            rounds: &reg.info.rounds,
        };
        let prompt: &dyn Prompt = &*reg.prompt;
        let args = raw_input(&args)?;
        match self
            .execute(&target, &prompt, &args, era, principal, notifiers)
            .await?
        {
            Concluded::Complete { value, .. } => Ok(self.prompt_result(value)),
            Concluded::InputRequired(s) | Concluded::Detached(s) => Ok(self.suspended(&s)),
            Concluded::Failed(e) => Err(map_error("prompt", name, e)),
        }
    }

    fn prompt_result(&self, mut result: GetPromptResult) -> Value {
        result.result_type = ResultType::Complete;
        result
            .meta
            .get_or_insert_with(JsonObject::new)
            .extend(self.server_meta());
        to_value(&result)
    }

    /// The resource for `uri` and the template variables it gives: a fixed URI first, then
    /// the templates in registration order.
    pub(super) fn find_resource(&self, uri: &str) -> Option<(Arc<RegisteredResource>, JsonObject)> {
        let catalog = self.catalog();
        if let Some(r) = catalog
            .resources
            .iter()
            .find(|r| matches!(&r.info.address, Address::Uri(u) if u == uri))
        {
            return Some((r.clone(), JsonObject::new()));
        }
        catalog
            .resources
            .iter()
            .find_map(|r| match &r.info.address {
                Address::Template(t) => t.matches(uri).map(|vars| {
                    let vars = vars
                        .into_iter()
                        .map(|(k, v)| (k, Value::String(v)))
                        .collect();
                    (r.clone(), vars)
                }),
                Address::Uri(_) => None,
            })
    }

    pub(crate) async fn read_resource(
        &self,
        params: &JsonObject,
        era: Era<'_>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Value, ErrorObject> {
        let uri = string_member(params, "uri", "resources/read: `uri`")?;
        let Some((reg, vars)) = self.find_resource(uri) else {
            return Err(errors::resource_not_found(uri));
        };
        let target = Target {
            method: "resources/read",
            name: uri,
            noun: "resource",
            rounds: &reg.info.rounds,
        };
        let code = ReadAt {
            resource: &*reg.resource,
            uri,
        };
        let vars = raw_input(&Value::Object(vars))?;
        match self
            .execute(&target, &code, &vars, era, principal, notifiers)
            .await?
        {
            Concluded::Complete { value, resumed } => {
                let ttl_ms = match (resumed, reg.info.cache_ttl) {
                    // a result that depended on answers must not be cached
                    (true, _) => 0,
                    (false, Some(d)) => crate::tasks::millis(d),
                    (false, None) => self.inner.read_ttl_ms,
                };
                Ok(to_value(&ReadResourceResult {
                    result_type: ResultType::Complete,
                    contents: value,
                    ttl_ms,
                    cache_scope: reg.info.cache_scope.unwrap_or(self.inner.cache_scope),
                    meta: Some(self.server_meta()),
                }))
            }
            Concluded::InputRequired(s) | Concluded::Detached(s) => Ok(self.suspended(&s)),
            Concluded::Failed(e) => Err(map_error("resource", uri, e)),
        }
    }

    pub(crate) async fn complete_argument(
        &self,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<Value, ErrorObject> {
        let Some(Value::Object(reference)) = params.get("ref") else {
            return Err(invalid_params(
                "completion/complete: `ref` must be an object",
            ));
        };
        let Some(Value::Object(argument)) = params.get("argument") else {
            return Err(invalid_params(
                "completion/complete: `argument` must be an object",
            ));
        };
        let (Some(Value::String(arg)), Some(Value::String(value))) =
            (argument.get("name"), argument.get("value"))
        else {
            return Err(invalid_params(
                "completion/complete: `argument` needs string `name` and `value`",
            ));
        };
        if value.len() > MAX_COMPLETION_INPUT {
            return Err(invalid_params(
                "completion/complete: `argument.value` is too long",
            ));
        }
        let mut context = BTreeMap::new();
        if let Some(ctx) = params.get("context") {
            let args = match ctx {
                Value::Object(c) => c.get("arguments"),
                Value::Null => None,
                _ => {
                    return Err(invalid_params(
                        "completion/complete: `context` must be an object",
                    ));
                }
            };
            match args {
                None | Some(Value::Null) => {}
                Some(Value::Object(a)) if a.len() <= MAX_COMPLETION_CONTEXT => {
                    for (k, v) in a {
                        match v {
                            Value::String(s) if s.len() <= MAX_COMPLETION_INPUT => {
                                context.insert(k.clone(), s.clone());
                            }
                            _ => {
                                return Err(invalid_params(format!(
                                    "completion/complete: `context.arguments.{k}` must be a string of at most {MAX_COMPLETION_INPUT} bytes"
                                )));
                            }
                        }
                    }
                }
                Some(_) => {
                    return Err(invalid_params(format!(
                        "completion/complete: `context.arguments` must be an object of at most {MAX_COMPLETION_CONTEXT} strings"
                    )));
                }
            }
        }
        let completer = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = string_member(reference, "name", "completion/complete: `ref.name`")?;
                let catalog = self.catalog();
                let Some(p) = catalog.prompts.get(name) else {
                    return Err(invalid_params(format!("Unknown prompt: {name}")));
                };
                if !p.info.arguments.iter().any(|a| &a.name == arg) {
                    return Err(invalid_params(format!(
                        "prompt `{name}` has no argument `{arg}`"
                    )));
                }
                p.info.completions.get(arg).cloned()
            }
            Some("ref/resource") => {
                let uri = string_member(reference, "uri", "completion/complete: `ref.uri`")?;
                let catalog = self.catalog();
                let found = catalog
                    .resources
                    .iter()
                    .find(|r| super::live::address_label(&r.info.address) == uri);
                let Some(r) = found else {
                    return Err(errors::resource_not_found(uri));
                };
                let vars = match &r.info.address {
                    Address::Template(t) => t.variables(),
                    Address::Uri(_) => Vec::new(),
                };
                if !vars.contains(&arg.as_str()) {
                    return Err(invalid_params(format!(
                        "resource template `{uri}` has no variable `{arg}`"
                    )));
                }
                r.info.completions.get(arg).cloned()
            }
            _ => {
                return Err(invalid_params(
                    "completion/complete: `ref.type` must be \"ref/prompt\" or \"ref/resource\"",
                ));
            }
        };
        let mut values = match completer {
            None => Vec::new(),
            Some(c) => {
                let cx =
                    CompleteContext::new(arg.clone(), value.clone(), context, principal.clone())
                        .with_state_map(self.inner.engine.state.clone());
                c(cx).await.map_err(|e| map_error("completer of", arg, e))?
            }
        };
        let total = values.len();
        values.truncate(MAX_COMPLETION_VALUES);
        Ok(to_value(&CompleteResult {
            result_type: ResultType::Complete,
            completion: Completion {
                values,
                total: Some(total as u64),
                has_more: Some(total > MAX_COMPLETION_VALUES),
            },
            meta: Some(self.server_meta()),
        }))
    }

    /// Whether any prompt argument or template variable has a completer (or may have one:
    /// a dynamic server may add one at run time).
    pub(super) fn has_completions(&self) -> bool {
        let catalog = self.catalog();
        self.is_dynamic()
            || catalog
                .prompts
                .values()
                .any(|p| !p.info.completions.is_empty())
            || catalog
                .resources
                .iter()
                .any(|r| !r.info.completions.is_empty())
    }
}

/// The string member `key` of `object`; missing or not a string: -32602, `{what} must be a
/// string`.
pub(super) fn string_member<'a>(
    object: &'a JsonObject,
    key: &str,
    what: &str,
) -> Result<&'a str, ErrorObject> {
    match object.get(key) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(invalid_params(format!("{what} must be a string"))),
    }
}

/// A prompt's or resource's error as a JSON-RPC error (they have no `isError` result).
fn map_error(noun: &str, name: &str, e: ToolError) -> ErrorObject {
    match e {
        ToolError::InvalidArguments { field, message } => invalid_params(if field.is_empty() {
            format!("Invalid arguments of {noun} `{name}`: {message}")
        } else {
            format!("Invalid arguments of {noun} `{name}`: `{field}`: {message}")
        }),
        ToolError::InvalidInput { key, reason } => {
            tracing::warn!(
                request = name,
                key = %errors::for_log(&key),
                reason = %errors::redact(&reason),
                "invalid input response"
            );
            invalid_params(format!("Invalid input response `{key}`: {reason}"))
        }
        ToolError::InvalidState => errors::invalid_state(&format_args!(
            "{noun} `{name}` could not deserialize its state"
        )),
        ToolError::Declined { key } | ToolError::Cancelled { key } => errors::internal(format!(
            "The {noun} `{name}` could not be produced: the user did not provide the requested input (`{key}`)"
        )),
        ToolError::Failed(msg) => {
            errors::internal(format!("The {noun} `{name}` could not be produced: {msg}"))
        }
        ToolError::Internal(msg) => {
            tracing::error!(
                request = name,
                error = %errors::for_log_cut(&msg, errors::MAX_LOGGED_DETAIL),
                "internal error"
            );
            errors::internal(format!("Internal error in {noun} `{name}`"))
        }
    }
}

fn encode_cursor(kind: &str, generation: u64, offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("mcp-tool/{kind}/{generation}/{offset}"))
}

/// The catalog generation and (non-zero) offset of a cursor of `kind`.
fn decode_cursor(kind: &str, cursor: &str) -> Option<(u64, usize)> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (generation, offset) = text
        .strip_prefix("mcp-tool/")?
        .strip_prefix(kind)?
        .strip_prefix('/')?
        .split_once('/')?;
    let generation: u64 = generation.parse().ok()?;
    let offset: usize = offset.parse().ok()?;
    (offset > 0).then_some((generation, offset))
}

/// A prompt's arguments or a template's variables (read as a tree) as the JSON text the
/// code takes.
fn raw_input(v: &Value) -> Result<Box<serde_json::value::RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(v)
        .map_err(|e| errors::internal(format!("arguments do not serialize: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_are_checked() {
        let c = encode_cursor("prompts", 3, 5);
        assert_eq!(decode_cursor("prompts", &c), Some((3, 5)));
        assert_eq!(decode_cursor("resources", &c), None);
        assert_eq!(decode_cursor("prompts", "not base64!"), None);
        assert_eq!(
            decode_cursor("prompts", &encode_cursor("prompts", 0, 0)),
            None
        );
        // a cursor of the format before generations is refused, not misread
        let old = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("mcp-tool/prompts/5");
        assert_eq!(decode_cursor("prompts", &old), None);
        let junk = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("mcp-tool/prompts/1/x");
        assert_eq!(decode_cursor("prompts", &junk), None);
    }

    #[test]
    fn a_string_member_is_read_and_anything_else_refused() {
        let params = JsonObject::from_iter([("s".into(), "a".into()), ("n".into(), 1.into())]);
        assert_eq!(string_member(&params, "s", "m: `s`"), Ok("a"));
        for key in ["n", "missing"] {
            let refused = Err(invalid_params("m: `k` must be a string"));
            assert_eq!(string_member(&params, key, "m: `k`"), refused);
        }
    }
}
