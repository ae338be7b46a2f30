//! Metadata helpers of the generated `Tool::info` / `validate` / `required_state`: the
//! layout fingerprint, capabilities and round limits summed over the flows a tool calls.

use super::*;
use crate::protocol::ToolAnnotations;

/// `inputSchema` of a tool without arguments.
pub fn empty_input_schema() -> JsonObject {
    JsonObject::from_iter([("type".into(), Value::String("object".into()))])
}

/// Tool annotations from the attribute's hints (`None` when none is given).
pub fn annotations(
    title: Option<&str>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
) -> Option<ToolAnnotations> {
    if title.is_none()
        && read_only.is_none()
        && destructive.is_none()
        && idempotent.is_none()
        && open_world.is_none()
    {
        return None;
    }
    Some(ToolAnnotations {
        title: title.map(str::to_owned),
        read_only_hint: read_only,
        destructive_hint: destructive,
        idempotent_hint: idempotent,
        open_world_hint: open_world,
        extra: JsonObject::new(),
    })
}

/// FNV-1a (64 bit), the layout fingerprint's hash (the macro computes the same).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The layout of a body that calls `flows`: its own fingerprint when it calls none, else a
/// fingerprint over its own and theirs (a new version of a flow changes every caller's).
pub fn layout_with(own: &str, flows: &[FlowInfo]) -> String {
    if flows.is_empty() {
        return own.to_owned();
    }
    let mut text = String::from(own);
    for f in flows {
        text.push('|');
        text.push_str(f.name);
        text.push('=');
        text.push_str(&f.layout);
    }
    use base64::Engine as _;
    // the macro's encoding: the hash's 8 big-endian bytes in unpadded base64url
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(fnv1a64(text.as_bytes()).to_be_bytes())
}

/// The capabilities of a body: its own and its flows'.
pub fn flow_capabilities(own: RequiredCapabilities, flows: &[FlowInfo]) -> RequiredCapabilities {
    flows.iter().fold(own, |c, f| c.union(f.capabilities))
}

/// The default `max_rounds` of a tool: its suspension points and its flows', or 100 when one
/// of them is in a loop (or a flow is recursive).
pub fn default_max_rounds(points: u32, loops: bool, flows: &[FlowInfo]) -> u32 {
    if flow_loops(loops, flows) {
        return 100;
    }
    flow_rounds(points, flows).max(1)
}

/// The rounds a flow may take (for [`FlowInfo::rounds`]).
pub fn flow_rounds(points: u32, flows: &[FlowInfo]) -> u32 {
    flows.iter().fold(points, |n, f| n.saturating_add(f.rounds))
}

/// Whether a flow may loop (for [`FlowInfo::loops`]).
pub fn flow_loops(loops: bool, flows: &[FlowInfo]) -> bool {
    loops || flows.iter().any(|f| f.loops)
}

/// The state types of a body: its own parameters' (each `FromContext::keys`) and its flows',
/// without repeats.
pub fn state_keys(own: Vec<Vec<StateKey>>, flows: &[FlowInfo]) -> Vec<StateKey> {
    let mut out: Vec<StateKey> = Vec::new();
    for k in own
        .into_iter()
        .flatten()
        .chain(flows.iter().flat_map(|f| f.state.iter().copied()))
    {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// The registration checks of a body: its own (the first that fails), then its flows'.
pub fn validate_with<const N: usize>(
    own: [Result<(), RegistrationError>; N],
    flows: &[FlowInfo],
) -> Result<(), RegistrationError> {
    own.into_iter().try_for_each(|r| r)?;
    flows.iter().try_for_each(|f| f.validation.clone())
}

/// The capabilities a body needs itself (`Meta::capabilities`, a flow's own).
pub const fn caps(elicitation: bool, sampling: bool, roots: bool) -> RequiredCapabilities {
    RequiredCapabilities {
        elicitation,
        sampling,
        roots,
    }
}

/// `Flow::info` of a flow described by `m` (its name, own capabilities, points, loops and
/// layout), with its own state types and registration checks, calling `flows`.
pub fn flow_info<const N: usize>(
    m: &Meta,
    state: Vec<Vec<StateKey>>,
    checks: [Result<(), RegistrationError>; N],
    flows: &[FlowInfo],
) -> FlowInfo {
    FlowInfo {
        name: m.name,
        capabilities: flow_capabilities(m.capabilities, flows),
        state: state_keys(state, flows),
        layout: layout_with(m.layout, flows),
        rounds: flow_rounds(m.points, flows),
        loops: flow_loops(m.loops, flows),
        validation: validate_with(checks, flows),
    }
}

/// `info()` of a tool whose `#[mcp_tool]` expansion failed (only reachable if the crate
/// compiled anyway, which it does not: the macro also emitted the errors).
pub fn unavailable_info(name: &str) -> ToolInfo {
    ToolInfo::new(name)
}

/// `step()` error of a tool whose `#[mcp_tool]` expansion failed.
pub fn unavailable(name: &str) -> ToolError {
    ToolError::Internal(format!("tool `{name}` did not compile"))
}

/// The constant part of a tool's, prompt's or resource's metadata as the macro writes it (only
/// the fields that differ from [`Meta::DEFAULT`], the rest through `..Meta::DEFAULT`); the
/// parts that depend on types (schemas) and on the flows called are added by [`rounds`] and
/// [`tool_info`].
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    /// The name.
    pub name: &'static str,
    /// `title = "…"`.
    pub title: Option<&'static str>,
    /// `description = "…"` or the doc comment.
    pub description: Option<&'static str>,
    /// The annotation hints: read-only, destructive, idempotent, open-world.
    pub hints: [Option<bool>; 4],
    /// The client capabilities of the body's own requests.
    pub capabilities: RequiredCapabilities,
    /// `max_rounds = n`; `None`: [`default_max_rounds`] of `points` and `loops`.
    pub max_rounds: Option<u32>,
    /// The body's own suspension points (a flow call is not one).
    pub points: u32,
    /// Whether a suspension point is in a loop.
    pub loops: bool,
    /// `ttl = "…"` in seconds.
    pub ttl_secs: Option<u64>,
    /// The body's own layout fingerprint.
    pub layout: &'static str,
    /// `journal`.
    pub journal: bool,
    /// `early_answers`.
    pub early_answers: bool,
    /// `once`.
    pub once: bool,
    /// `task = …`.
    pub task: TaskSupport,
    /// `task_start = …`.
    pub task_start: TaskStart,
    /// `scopes = […]`.
    pub scopes: &'static [&'static str],
}

impl Meta {
    /// Every field at the attribute's default (`name` and `layout` empty).
    pub const DEFAULT: Meta = Meta {
        name: "",
        title: None,
        description: None,
        hints: [None; 4],
        capabilities: caps(false, false, false),
        max_rounds: None,
        points: 0,
        loops: false,
        ttl_secs: None,
        layout: "",
        journal: false,
        early_answers: false,
        once: false,
        task: TaskSupport::Forbidden,
        task_start: TaskStart::Call,
        scopes: &[],
    };
}

/// The `Rounds` of a body described by `m` that calls `flows` (their needs folded in).
pub fn rounds(m: &Meta, flows: &[FlowInfo]) -> Rounds {
    Rounds {
        capabilities: flow_capabilities(m.capabilities, flows),
        max_rounds: match m.max_rounds {
            Some(n) => n,
            None => default_max_rounds(m.points, m.loops, flows),
        },
        state_ttl: m.ttl_secs.map(std::time::Duration::from_secs),
        layout: layout_with(m.layout, flows),
        journal: m.journal,
        early_answers: m.early_answers,
        once: m.once,
    }
}

/// `Tool::info` of a tool described by `m`, with its schemas, calling `flows`.
pub fn tool_info(
    m: &Meta,
    input_schema: JsonObject,
    output_schema: Option<JsonObject>,
    flows: &[FlowInfo],
) -> ToolInfo {
    let r = rounds(m, flows);
    let [read_only, destructive, idempotent, open_world] = m.hints;
    ToolInfo {
        name: m.name.to_owned(),
        title: m.title.map(str::to_owned),
        description: m.description.map(str::to_owned),
        input_schema,
        output_schema,
        annotations: annotations(m.title, read_only, destructive, idempotent, open_world),
        capabilities: r.capabilities,
        max_rounds: r.max_rounds,
        state_ttl: r.state_ttl,
        layout: r.layout,
        journal: r.journal,
        early_answers: r.early_answers,
        once: r.once,
        task: m.task,
        task_start: m.task_start,
        scopes: m.scopes.iter().map(|s| (*s).to_owned()).collect(),
    }
}
