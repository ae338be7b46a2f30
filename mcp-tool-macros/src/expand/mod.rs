//! Code generation, from the analysis to tokens: the machine function shared by tools and
//! flows ([`machine`]), the `Tool` impl of a tool ([`tool`]), the `Prompt` and `Resource` impls
//! ([`prompt`], [`resource`]), the call value and `Flow` impl of a flow ([`flow`]), the function kept for direct mode ([`direct`]) and the layout
//! fingerprint ([`fingerprint`]).

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
