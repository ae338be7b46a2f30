//! The `Mcp-*` header checks of a request against its body (-32020 on any mismatch):
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`. The refusal's message
//! quotes the client's values through [`for_log`] (escaped, cut), so that it is fit for the
//! log as it is for the client.

use axum::http::{HeaderMap, HeaderName};
use serde_json::Value;

use crate::protocol::errors::for_log;
use crate::protocol::headers::{HeaderParam, check_param_headers};
use crate::protocol::headers::{
    METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, decode_header_value, name_field,
};
use crate::protocol::text::{self, ParamsIn};

/// `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` as header names, made once (a lookup
/// by `&str` parses and lowercases the name on every request).
pub(super) static VERSION_NAME: HeaderName = HeaderName::from_static(PROTOCOL_VERSION_HEADER);
pub(super) static METHOD_NAME: HeaderName = HeaderName::from_static(METHOD_HEADER);
pub(super) static NAME_NAME: HeaderName = HeaderName::from_static(NAME_HEADER);

/// The value of a header as a string; `Err` when absent or not visible ASCII.
pub(super) fn header_str<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
    display: &str,
) -> Result<&'h str, String> {
    header_opt(headers, name, display)?.ok_or_else(|| missing_header(display))
}

/// The refusal of a request without the required header `display`.
fn missing_header(display: &str) -> String {
    format!("Header mismatch: missing required header {display}")
}

/// The value of a header as a string, if it is there (one lookup); `Err` when it is there
/// more than once or not visible ASCII.
fn header_opt<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
    display: &str,
) -> Result<Option<&'h str>, String> {
    let mut values = headers.get_all(name).iter();
    let Some(v) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("Header mismatch: more than one {display} header"));
    }
    v.to_str()
        .map(Some)
        .map_err(|_| format!("Header mismatch: {display} contains invalid characters"))
}

pub(super) fn check_headers(
    headers: &HeaderMap,
    params: Option<&ParamsIn<'_>>,
    method: &str,
    tool_params: &dyn Fn(&str) -> Option<Vec<HeaderParam>>,
) -> Result<(), String> {
    // MCP-Protocol-Version: required; must equal _meta's version when the body has one
    // (a missing or non-string body version is the server's -32602).
    let version = header_str(headers, &VERSION_NAME, "MCP-Protocol-Version")?;
    let body_version = params
        .and_then(|p| p.meta.object()?.version)
        .and_then(text::string);
    if let Some(bv) = body_version
        && bv != version
    {
        return Err(format!(
            "Header mismatch: MCP-Protocol-Version header value '{}' does not match body value '{}'",
            for_log(version),
            for_log(&bv)
        ));
    }

    // Mcp-Method: required, equal to the method.
    let hm = header_str(headers, &METHOD_NAME, "Mcp-Method")?;
    if hm != method {
        return Err(format!(
            "Header mismatch: Mcp-Method header value '{}' does not match body value '{}'",
            for_log(hm),
            for_log(method)
        ));
    }

    // Mcp-Name for tools/call, prompts/get (params.name) and resources/read (params.uri).
    if let Some(field) = name_field(method) {
        let body_name = params.and_then(|p| p.named(field));
        let raw = match header_opt(headers, &NAME_NAME, "Mcp-Name")? {
            Some(raw) => raw,
            // Nothing to mirror; the server reports the missing parameter (-32602).
            None if body_name.is_none() => return Ok(()),
            None => return Err(missing_header("Mcp-Name")),
        };
        let decoded =
            decode_header_value(raw).map_err(|e| format!("Header mismatch: Mcp-Name: {e}"))?;
        match body_name.and_then(text::string) {
            Some(b) if b == decoded => {}
            Some(b) => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header value '{}' does not match body value '{}'",
                    for_log(&decoded),
                    for_log(&b)
                ));
            }
            None => {
                return Err(format!(
                    "Header mismatch: Mcp-Name header present but params.{field} is not a string"
                ));
            }
        }
    }

    // Mcp-Param-{Name} for tools whose inputSchema annotates parameters with x-mcp-header.
    if method == "tools/call" {
        let tool = params.and_then(ParamsIn::name);
        // a tool without `x-mcp-header` parameters has nothing to compare
        if let Some(list) = tool.as_deref().and_then(tool_params)
            && !list.is_empty()
        {
            // only a tool with header parameters reads its arguments here
            let arguments = params
                .and_then(|p| p.arguments)
                .and_then(|a| text::tree(a).ok())
                .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
            check_param_headers(&list, &arguments, |name| {
                let mut all = headers.get_all(name).iter();
                let v = all.next()?;
                if all.next().is_some() {
                    return Some(Err(()));
                }
                Some(v.to_str().map(str::to_owned).map_err(|_| ()))
            })?;
        }
    }
    Ok(())
}
