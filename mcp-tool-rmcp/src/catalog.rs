//! What we mount, as rmcp sees it: our tools, prompts, resources and resource templates
//! converted once to rmcp's model types (both sides are the same JSON), the names and URIs
//! that route a request to us, and the capabilities they add to the team's.

use mcp_tool_runtime::Server;
use rmcp::model::{Prompt, Resource, ResourceTemplate, ServerCapabilities, Tool};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Our server's catalog in rmcp's types.
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// Our capabilities (`tools`, `prompts`, `resources`, `completions` as we declare them).
    capabilities: serde_json::Map<String, Value>,
}

impl Catalog {
    pub(crate) fn of(server: &Server) -> Self {
        let prompts = server.prompts();
        let resources = server.resources();
        let capabilities = match serde_json::to_value(server.capabilities()) {
            Ok(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        Self {
            tools: convert(server.tools().into_iter().map(|t| t.descriptor())),
            prompts: convert(prompts.into_iter().map(|p| p.descriptor())),
            resources: convert(resources.iter().filter_map(|r| r.descriptor())),
            templates: convert(resources.iter().filter_map(|r| r.template_descriptor())),
            capabilities,
        }
    }

    pub(crate) fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    pub(crate) fn has_prompt(&self, name: &str) -> bool {
        self.prompts.iter().any(|p| p.name == name)
    }

    /// Whether a `completion/complete` reference (`{"type": "ref/prompt", "name"}` or
    /// `{"type": "ref/resource", "uri"}`) names one of our prompts or resources.
    pub(crate) fn has_reference(&self, reference: &Value) -> bool {
        let field = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "ref/prompt" => self.has_prompt(field("name")),
            "ref/resource" => {
                let uri = field("uri");
                self.templates.iter().any(|t| t.uri_template == uri)
                    || self.resources.iter().any(|r| r.uri == uri)
            }
            _ => false,
        }
    }

    /// Adds to `caps` what we declare and the team's handler does not (the team's own
    /// declaration of a capability wins).
    pub(crate) fn merge(&self, caps: &mut ServerCapabilities) {
        let Ok(Value::Object(mut theirs)) = serde_json::to_value(&*caps) else {
            return;
        };
        for key in ["tools", "prompts", "resources", "completions"] {
            if let Some(ours) = self.capabilities.get(key)
                && !theirs.contains_key(key)
            {
                theirs.insert(key.to_owned(), ours.clone());
            }
        }
        match serde_json::from_value(Value::Object(theirs)) {
            Ok(merged) => *caps = merged,
            Err(e) => tracing::error!(error = %e, "capabilities not merged"),
        }
    }
}

/// Our descriptors as rmcp's types; one that does not convert is logged and left out.
fn convert<D: Serialize, R: DeserializeOwned>(items: impl Iterator<Item = D>) -> Vec<R> {
    items
        .filter_map(|d| {
            let converted = serde_json::to_value(&d).and_then(serde_json::from_value);
            converted
                .map_err(|e| tracing::error!(error = %e, "descriptor not representable in rmcp; not listed"))
                .ok()
        })
        .collect()
}
