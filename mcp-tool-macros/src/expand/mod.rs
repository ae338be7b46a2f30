//! Code generation, from the analysis to tokens: the machine function shared by tools and
//! flows ([`machine`]), the `Tool` impl of a tool ([`tool`]), the `Prompt` and `Resource`
//! impls ([`prompt`], [`resource`]), the call value and `Flow` impl of a flow ([`flow`]), the
//! function kept for direct mode ([`direct`]) and the layout fingerprint ([`fingerprint`]).
//! It reads the analysis ([`crate::analyse::Analysis`] and its [`model`](crate::analyse::model))
//! and names the runtime through [`crate::rt`].

mod direct;
mod fingerprint;
mod flow;
mod machine;
mod prompt;
mod resource;
mod tool;

pub use direct::with_default_keys;
pub use flow::{expand_flow, flow_stub};
pub use prompt::expand_prompt;
pub use resource::expand_resource;
pub use tool::expand_tool;
