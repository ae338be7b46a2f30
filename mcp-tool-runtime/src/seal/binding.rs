//! What a state is bound to ([`Binding`]: principal, method, target, argument digest) and
//! what it carries ([`StateBody`]).

use super::digest::args_digest;
use crate::principal::Principal;

/// What a state is bound to: checked on open, never stored in the token.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The authenticated caller.
    pub principal: &'a Principal,
    /// The JSON-RPC method (`tools/call`, `prompts/get`, `resources/read`).
    pub method: &'a str,
    /// The tool name (or prompt name, or resource URI) the request targets.
    pub tool: &'a str,
    /// [`args_digest`] of the request's arguments.
    pub args_digest: [u8; 32],
}

impl<'a> Binding<'a> {
    /// A binding whose digest is computed from `args`.
    pub fn new(
        principal: &'a Principal,
        method: &'a str,
        tool: &'a str,
        args: &serde_json::Value,
    ) -> Self {
        Binding {
            principal,
            method,
            tool,
            args_digest: args_digest(args),
        }
    }
}

/// The contents of a state.
#[derive(Debug, Clone, PartialEq)]
pub struct StateBody {
    /// How many `input_required` results this call has produced so far.
    pub round: u32,
    /// Fingerprint of the tool's state layout (compared by the server, not by `open`).
    pub layout: String,
    /// What the server keeps between rounds.
    pub payload: serde_json::Value,
}
