//! Parameters of a generated stage: the arguments, parsed once, again per stage when needed,
//! or from strings (the other parameters go through [`FromContext`](crate::FromContext)).

use serde::de::DeserializeOwned;

use super::*;

/// The arguments of a tool's, prompt's or resource's machine: parsed up front (checked in
/// the first round, before any code), parsed again from the raw value when a later stage
/// needs them (each stage owns its copy, so moving out of `args` in one stage does not
/// affect another).
pub struct Args<T> {
    parsed: Option<T>,
    raw: Value,
    parse: fn(&Value) -> Result<T, ToolError>,
}

impl<T: DeserializeOwned> Args<T> {
    /// A tool's arguments (JSON).
    pub fn json(raw: Value) -> Result<Self, ToolError> {
        Self::new(raw, crate::tool::parse_args_ref::<T>)
    }

    /// A prompt's arguments or a template's variables (strings, see [`parse_strings`]).
    pub fn strings(raw: Value) -> Result<Self, ToolError> {
        Self::new(raw, |v| crate::strings::from_strings(v))
    }
}

impl<T> Args<T> {
    fn new(raw: Value, parse: fn(&Value) -> Result<T, ToolError>) -> Result<Self, ToolError> {
        Ok(Args {
            parsed: Some(parse(&raw)?),
            raw,
            parse,
        })
    }

    /// The arguments for one stage: the value parsed up front the first time, parsed again
    /// after.
    pub fn get(&mut self) -> Result<T, ToolError> {
        match self.parsed.take() {
            Some(a) => Ok(a),
            None => (self.parse)(&self.raw),
        }
    }
}

/// A prompt's arguments or a template's variables (strings) parsed into `T`.
pub fn parse_strings<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    crate::strings::from_strings(&args)
}
