//! The Skills extension's methods: `skills/list`, `skills/get` and
//! `resources/directory/read`, answered from the catalog made at `build()`, and the
//! extension's entry in `capabilities.extensions`.

use serde_json::{Value, json};

use super::{Server, to_value};
use crate::protocol::errors::{self, invalid_params};
use crate::protocol::{
    ErrorObject, GetSkillResult, JsonObject, ListSkillsResult, ReadDirectoryResult, ResultType,
    SKILLS_EXTENSION, SkillEntry,
};

/// Longest URI accepted by `skills/get` and `resources/directory/read`.
const MAX_URI_BYTES: usize = 4096;

impl Server {
    /// The entries of the skills this server serves (empty without skills).
    pub fn skills(&self) -> &[SkillEntry] {
        self.inner.skills.as_ref().map_or(&[], |c| &c.entries)
    }

    /// `capabilities.extensions`: Tasks and Skills (with `directoryRead`) when on.
    pub(super) fn extensions(&self) -> Option<JsonObject> {
        let mut ext = JsonObject::new();
        if self.tasks_enabled() {
            ext.insert(crate::tasks::EXTENSION.into(), json!({}));
        }
        if self.inner.skills.is_some() {
            ext.insert(SKILLS_EXTENSION.into(), json!({"directoryRead": true}));
        }
        (!ext.is_empty()).then_some(ext)
    }

    pub(super) fn skills_method(
        &self,
        method: &str,
        params: &JsonObject,
    ) -> Result<Value, ErrorObject> {
        let Some(catalog) = &self.inner.skills else {
            return Err(errors::method_not_found(method));
        };
        match method {
            "skills/list" => self.list::<ListSkillsResult>("skills", 0, &catalog.entries, params),
            "skills/get" => {
                let uri = uri_param(method, params)?;
                let Some(&i) = catalog.by_uri.get(uri) else {
                    return Err(invalid_params(format!("No skill is served at {uri}"))
                        .with_data(serde_json::json!({ "uri": uri })));
                };
                Ok(to_value(&GetSkillResult {
                    result_type: ResultType::Complete,
                    skill: catalog.entries[i].clone(),
                    ttl_ms: self.inner.read_ttl_ms,
                    cache_scope: self.inner.cache_scope,
                    meta: Some(self.server_meta()),
                }))
            }
            _ => {
                let uri = uri_param(method, params)?;
                let Some(children) = catalog.dirs.get(uri) else {
                    return Err(invalid_params(format!("{uri} is not a directory resource"))
                        .with_data(serde_json::json!({ "uri": uri })));
                };
                // The cursor names the directory, so one cannot be replayed on another.
                let kind = format!("directory:{uri}");
                let (resources, next_cursor) = self.page(&kind, 0, children, params)?;
                Ok(to_value(&ReadDirectoryResult {
                    result_type: ResultType::Complete,
                    resources,
                    next_cursor,
                    meta: Some(self.server_meta()),
                }))
            }
        }
    }
}

/// The string `uri` of `params` (-32602 when missing, not a string or too long). It is
/// only ever compared with the catalog's URIs: nothing is read from it.
fn uri_param<'a>(method: &str, params: &'a JsonObject) -> Result<&'a str, ErrorObject> {
    match params.get("uri") {
        Some(Value::String(u)) if u.len() <= MAX_URI_BYTES => Ok(u),
        Some(Value::String(_)) => Err(invalid_params(format!(
            "{method}: `uri` is longer than {MAX_URI_BYTES} bytes"
        ))),
        _ => Err(invalid_params(format!("{method}: `uri` must be a string"))),
    }
}
