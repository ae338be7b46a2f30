//! Parameters of a generated stage: the arguments, parsed once, again per stage when needed,
//! or from strings (the other parameters go through [`FromContext`](crate::FromContext)).

use serde::de::DeserializeOwned;

use super::*;

/// The arguments for one stage of the dispatch loop: the value parsed up front the first
/// time, parsed again from the raw arguments when a later stage needs them (each stage owns
/// its copy, so moving out of `args` in one stage does not affect another).
pub fn stage_args<T: DeserializeOwned>(
    parsed: &mut Option<T>,
    raw: &Value,
) -> Result<T, ToolError> {
    match parsed.take() {
        Some(a) => Ok(a),
        None => parse_args(raw.clone()),
    }
}

/// A prompt's arguments or a template's variables (strings) parsed into `T`.
pub fn parse_strings<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    crate::strings::from_strings(&args)
}

/// Like [`stage_args`], for [`parse_strings`].
pub fn stage_strings<T: DeserializeOwned>(
    parsed: &mut Option<T>,
    raw: &Value,
) -> Result<T, ToolError> {
    match parsed.take() {
        Some(a) => Ok(a),
        None => parse_strings(raw.clone()),
    }
}
