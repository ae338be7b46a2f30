//! What a tool or flow returns: [`ToolReturn`] and the traits the output and error types
//! must implement (their diagnostics name what to change).

use serde::Serialize;

use super::*;

/// The return type of a tool or flow: `Result<T, E>` (any alias of it) whose error type can
/// carry the framework's errors ([`CarriesToolError`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the return type of a tool or flow",
    label = "return `Result<T, E>` where `E: From<ToolError>`",
    note = "`E` may be `ToolError`, `anyhow::Error`, `Box<dyn std::error::Error + Send + Sync>`, or your own error with `impl From<ToolError>` (the `?` after `cx.ask(..).await` converts into it)"
)]
pub trait ToolReturn {
    /// `T`.
    type Ok;
    /// `E`.
    type Error: CarriesToolError;
    /// The value as a `Result`.
    fn into_result(self) -> Result<Self::Ok, Self::Error>;
    /// The value for an error.
    fn from_error(e: Self::Error) -> Self;
}

/// The error type of a tool or flow: it can carry the framework's errors, because the `?`
/// after `cx.ask(..).await` (and the generated code) converts a `ToolError` into it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a tool or flow: it needs `From<ToolError>`",
    label = "the `?` after `cx.ask(..).await` turns a `ToolError` into this type",
    note = "use `ToolError`, `anyhow::Error`, `Box<dyn std::error::Error + Send + Sync>`, or add `impl From<ToolError> for {Self}` (keep the `ToolError` inside it so that a declined request or an invalid answer keeps its meaning)"
)]
pub trait CarriesToolError: From<ToolError> {}
impl<E: From<ToolError>> CarriesToolError for E {}

impl<T, E: CarriesToolError> ToolReturn for Result<T, E> {
    type Ok = T;
    type Error = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
    fn from_error(e: E) -> Self {
        Err(e)
    }
}

/// A flow's machine result: a protocol or `?` error becomes the flow's own error value.
pub fn flow_outcome<R: ToolReturn>(r: Result<FlowStep<R>, R::Error>) -> FlowStep<R> {
    r.unwrap_or_else(|e| FlowStep::Done(R::from_error(e)))
}

/// Output types of tools other than `String` and `CallToolResult`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of a tool",
    label = "a tool returns `Result<T, E>` with `T` = `String`, `CallToolResult`, or a type that is `Serialize + JsonSchema`",
    note = "derive `Serialize` and `schemars::JsonSchema` on it (it becomes `structuredContent` and the tool's `outputSchema`)"
)]
pub trait ToolOutput: Serialize + schemars::JsonSchema {}
impl<T: Serialize + schemars::JsonSchema> ToolOutput for T {}

/// Error types of tools other than `ToolError`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a tool",
    label = "the tool's error type must convert into `Box<dyn std::error::Error + Send + Sync>`",
    note = "use `ToolError`, `anyhow::Error`, a boxed error, or an error type implementing `std::error::Error + Send + Sync`"
)]
pub trait IntoToolError: Into<Box<dyn std::error::Error + Send + Sync>> {}
impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> IntoToolError for E {}

/// The machine's end: the function's result `r`, returned (`return done(r)` where the body
/// returns; `R` is the function's return type, from the machine's).
pub fn done<R, E>(r: R) -> Result<FlowStep<R>, E> {
    Ok(FlowStep::Done(r))
}

/// The `Ok` value of the function's result `r`, or its error converted by `err` (the
/// generated `__mcp_done`: the conversion is chosen by type there, `autoref::ErrorOf`).
pub fn value<R: ToolReturn>(
    r: R,
    err: impl FnOnce(R::Error) -> ToolError,
) -> Result<R::Ok, ToolError> {
    r.into_result().map_err(err)
}
