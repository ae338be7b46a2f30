//! Parameters of a generated stage: the arguments, parsed once, again per stage when needed,
//! or from strings (the other parameters go through [`FromContext`](crate::FromContext)).

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::*;

/// The arguments of a tool's, prompt's or resource's machine: parsed up front (checked in
/// the first round, before any code), parsed again from their text when a later stage
/// needs them (each stage owns its copy, so moving out of `args` in one stage does not
/// affect another).
pub struct Args<'a, T> {
    parsed: Option<T>,
    raw: &'a RawValue,
    parse: fn(&RawValue) -> Result<T, ToolError>,
}

impl<'a, T: DeserializeOwned> Args<'a, T> {
    /// A tool's arguments (JSON).
    pub fn json(raw: &'a RawValue) -> Result<Self, ToolError> {
        Self::new(raw, crate::tool::parse_args::<T>)
    }

    /// A prompt's arguments or a template's variables (strings, see [`parse_strings`]).
    pub fn strings(raw: &'a RawValue) -> Result<Self, ToolError> {
        Self::new(raw, parse_strings::<T>)
    }
}

impl<'a, T> Args<'a, T> {
    fn new(
        raw: &'a RawValue,
        parse: fn(&RawValue) -> Result<T, ToolError>,
    ) -> Result<Self, ToolError> {
        Ok(Args {
            parsed: Some(parse(raw)?),
            raw,
            parse,
        })
    }

    /// The arguments for one stage: the value parsed up front the first time, parsed again
    /// after.
    pub fn get(&mut self) -> Result<T, ToolError> {
        match self.parsed.take() {
            Some(a) => Ok(a),
            None => (self.parse)(self.raw),
        }
    }
}

/// A prompt's arguments or a template's variables (an object of strings, as JSON text)
/// parsed into `T`.
pub fn parse_strings<T: DeserializeOwned>(args: &RawValue) -> Result<T, ToolError> {
    let tree: Value =
        serde_json::from_str(args.get()).map_err(|e| ToolError::InvalidArguments {
            field: String::new(),
            message: e.to_string(),
        })?;
    crate::strings::from_strings(&tree)
}
