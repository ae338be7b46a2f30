//! How the output and error types of a tool become a result, chosen by type (autoref
//! dispatch: the impl for the exact type wins over the general one), so aliases
//! (`type Text = String`, `anyhow::Result<T>`) behave like the types they name.

use std::marker::PhantomData;

use super::{CallToolResult, Flow, FlowInfo, FlowStep, JsonObject, ToolContext};
use crate::error::BoxFuture;
use crate::error::ToolError;
use crate::protocol::StructuredContent;

/// Dispatch on a direct-mode future: boxed when it is `Send` ([`SendFuture`]), else `None`
/// ([`LocalFuture`]; a function that holds a non-`Send` value across an `.await` still
/// runs, round by round through its state machine).
pub struct DirectWrap<F>(std::cell::Cell<Option<F>>);

impl<F> DirectWrap<F> {
    /// The dispatcher.
    pub fn new(f: F) -> Self {
        DirectWrap(std::cell::Cell::new(Some(f)))
    }
}

/// A `Send` direct-mode future: boxed.
pub trait SendFuture<'a, T> {
    /// The future, boxed.
    fn boxed(&self) -> Option<BoxFuture<'a, T>>;
}

impl<'a, T, F: std::future::Future<Output = T> + Send + 'a> SendFuture<'a, T> for DirectWrap<F> {
    fn boxed(&self) -> Option<BoxFuture<'a, T>> {
        self.0.take().map(|f| Box::pin(f) as BoxFuture<'a, T>)
    }
}

/// Any other direct-mode future: none.
pub trait LocalFuture<'a, T> {
    /// `None`.
    fn boxed(&self) -> Option<BoxFuture<'a, T>>;
}

impl<'a, T, F: std::future::Future<Output = T>> LocalFuture<'a, T> for &DirectWrap<F> {
    fn boxed(&self) -> Option<BoxFuture<'a, T>> {
        None
    }
}

/// Dispatch on an output type `T`.
pub struct OutputOf<T>(PhantomData<fn() -> T>);

impl<T> OutputOf<T> {
    /// The dispatcher.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        OutputOf(PhantomData)
    }
}

/// `String`: one text content block, no output schema.
pub trait TextOutput {
    /// The result.
    fn finish(&self, v: String) -> Result<CallToolResult, ToolError>;
    /// The output schema.
    fn schema(&self) -> Option<JsonObject>;
}

impl TextOutput for &OutputOf<String> {
    fn finish(&self, v: String) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(v))
    }
    fn schema(&self) -> Option<JsonObject> {
        None
    }
}

/// `CallToolResult`: passed through, no output schema.
pub trait RawOutput {
    /// The result.
    fn finish(&self, v: CallToolResult) -> Result<CallToolResult, ToolError>;
    /// The output schema.
    fn schema(&self) -> Option<JsonObject>;
}

impl RawOutput for &OutputOf<CallToolResult> {
    fn finish(&self, v: CallToolResult) -> Result<CallToolResult, ToolError> {
        Ok(v)
    }
    fn schema(&self) -> Option<JsonObject> {
        None
    }
}

/// Anything else: `structuredContent` plus its JSON text, and an `outputSchema`.
pub trait StructuredOutput<T> {
    /// The result.
    fn finish(&self, v: T) -> Result<CallToolResult, ToolError>
    where
        T: super::ToolOutput;
    /// The output schema.
    fn schema(&self) -> Option<JsonObject>
    where
        T: super::ToolOutput;
}

impl<T> StructuredOutput<T> for OutputOf<T> {
    fn finish(&self, v: T) -> Result<CallToolResult, ToolError>
    where
        T: super::ToolOutput,
    {
        let v = StructuredContent::new(&v)
            .map_err(|e| ToolError::Internal(format!("tool output does not serialize: {e}")))?;
        Ok(CallToolResult::structured(v))
    }
    fn schema(&self) -> Option<JsonObject>
    where
        T: super::ToolOutput,
    {
        let mut s = crate::schema::schema_for::<T>();
        s.remove("$schema");
        Some(s)
    }
}

/// Dispatch on an error type `E`.
pub struct ErrorOf<E>(PhantomData<fn() -> E>);

impl<E> ErrorOf<E> {
    /// The dispatcher.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        ErrorOf(PhantomData)
    }
}

/// `ToolError` itself.
pub trait OwnError {
    /// The error.
    fn tool_error(&self, e: ToolError) -> ToolError;
}

impl OwnError for &ErrorOf<ToolError> {
    fn tool_error(&self, e: ToolError) -> ToolError {
        e
    }
}

/// `anyhow::Error`: the `ToolError` that `?` put into it comes out as it was; anything
/// else is [`ToolError::Failed`] with the whole context chain.
#[cfg(feature = "anyhow")]
pub trait AnyhowError {
    /// The error.
    fn tool_error(&self, e: anyhow::Error) -> ToolError;
}

#[cfg(feature = "anyhow")]
impl AnyhowError for &ErrorOf<anyhow::Error> {
    fn tool_error(&self, e: anyhow::Error) -> ToolError {
        match e.downcast::<ToolError>() {
            Ok(t) => t,
            Err(e) => ToolError::Failed(format!("{e:#}")),
        }
    }
}

/// Stands in for [`AnyhowError`] without the `anyhow` feature (implemented for nothing).
#[cfg(not(feature = "anyhow"))]
pub trait AnyhowError {}

/// Any other error: a `ToolError` inside it (`anyhow::Error` and boxed errors keep the
/// one `?` put there) comes out as it was; anything else is [`ToolError::Failed`].
pub trait OtherError<E> {
    /// The error.
    fn tool_error(&self, e: E) -> ToolError
    where
        E: super::IntoToolError;
}

impl<E> OtherError<E> for ErrorOf<E> {
    fn tool_error(&self, e: E) -> ToolError
    where
        E: super::IntoToolError,
    {
        let boxed: Box<dyn std::error::Error + Send + Sync> = e.into();
        match boxed.downcast::<ToolError>() {
            Ok(t) => *t,
            Err(other) => ToolError::Failed(other.to_string()),
        }
    }
}

/// A kept variable of a serializable type: its save/restore table.
pub trait IsKept<T> {
    /// The table.
    fn vtable(&self) -> super::KeptVTable<T>;
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> IsKept<T> for &super::KeptProbe<T> {
    fn vtable(&self) -> super::KeptVTable<T> {
        super::stage::vtable_of::<T>()
    }
}

/// Any other type: one error ([`Kept`](super::Kept)'s diagnostic) at the variable, the
/// same at every save and restore (so the compiler reports it once).
pub trait NotKept<T> {
    /// Never usable.
    fn vtable(&self) -> super::KeptVTable<T>
    where
        T: super::Kept;
}

impl<T> NotKept<T> for super::KeptProbe<T> {
    fn vtable(&self) -> super::KeptVTable<T>
    where
        T: super::Kept,
    {
        unreachable!("not serializable: this code does not compile")
    }
}

/// A variable kept only so that a request can be made again (see [`SoftProbe`](super::SoftProbe)),
/// of a serializable type: saved and restored like any kept variable.
pub trait IsSoft<T> {
    /// Its JSON, or `None` when it does not serialize.
    fn soft_save(&self, v: &T) -> Option<super::Json>;
    /// Its value: live, or restored from its JSON; absent -> invalid state.
    fn soft_take(&self, slot: super::Slot<T>) -> Result<T, ToolError>;
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> IsSoft<T> for &super::SoftProbe<T> {
    fn soft_save(&self, v: &T) -> Option<super::Json> {
        super::stage::vtable_of::<T>().save(v).ok()
    }
    fn soft_take(&self, slot: super::Slot<T>) -> Result<T, ToolError> {
        super::stage::vtable_of::<T>().take(slot)
    }
}

/// Any other type: never saved, so the request that reads it is kept whole (no compile
/// error: nothing after the suspension point needs the variable).
pub trait NotSoft<T> {
    /// Always `None`.
    fn soft_save(&self, v: &T) -> Option<super::Json>;
    /// Only a live value (a saved one cannot exist).
    fn soft_take(&self, slot: super::Slot<T>) -> Result<T, ToolError>;
}

impl<T> NotSoft<T> for super::SoftProbe<T> {
    fn soft_save(&self, _v: &T) -> Option<super::Json> {
        None
    }
    fn soft_take(&self, slot: super::Slot<T>) -> Result<T, ToolError> {
        match slot {
            super::Slot::Live(v) => Ok(v),
            _ => Err(ToolError::InvalidState),
        }
    }
}

/// Dispatch on a flow call's type `F`: the value of `flow_fn(cx, …)` (or a witness of its
/// type built in dead code).
pub struct FlowWrap<F>(PhantomData<fn() -> F>);

/// The dispatcher for the type of `f`.
pub fn wrap<F>(_f: &F) -> FlowWrap<F> {
    FlowWrap(PhantomData)
}

/// The dispatcher for the type of a witness (`false.then(|| flow_fn(loop {}, …))`).
pub fn wrap_witness<F>(_w: &Option<F>) -> FlowWrap<F> {
    FlowWrap(PhantomData)
}

/// A real flow.
pub trait IsFlow<F> {
    /// Its operations.
    fn ops(&self) -> FlowOps<F>;
}

impl<F: Flow> IsFlow<F> for &FlowWrap<F> {
    fn ops(&self) -> FlowOps<F> {
        FlowOps(PhantomData)
    }
}

/// Anything else: one error (`Flow`'s diagnostic) at the call, and operations that
/// type-check against anything so that nothing else is reported.
pub trait NotFlow<F> {
    /// Never usable.
    fn ops(&self) -> NoFlowOps
    where
        F: Flow;
}

impl<F> NotFlow<F> for FlowWrap<F> {
    fn ops(&self) -> NoFlowOps
    where
        F: Flow,
    {
        NoFlowOps
    }
}

/// The operations of a flow type.
pub struct FlowOps<F>(PhantomData<fn() -> F>);

impl<F: Flow> FlowOps<F> {
    /// Starts `flow` at call site `site`.
    pub fn start<'s>(self, site: String, mut flow: F) -> BoxFuture<'s, FlowStep<F::Output>>
    where
        F: 's,
    {
        flow.context().set_site(site);
        flow.start()
    }

    /// Resumes the flow called at `site` from its saved state.
    pub fn resume(
        self,
        cx: &mut ToolContext,
        site: String,
        state: super::Json,
    ) -> BoxFuture<'_, FlowStep<F::Output>> {
        cx.set_site(site);
        F::resume(cx, state)
    }

    /// Starts `flow` at call site `site`: its result, or its state kept with the site.
    pub fn call<'s>(self, site: String, flow: F) -> super::SlotFuture<'s, F::Output>
    where
        F: 's,
    {
        super::SlotFuture::new(self.start(site.clone(), flow), site)
    }

    /// Resumes the flow called at `site` from its saved state: its result, or its new state
    /// kept with the site.
    pub fn again(
        self,
        cx: &mut ToolContext,
        site: String,
        state: super::Json,
    ) -> super::SlotFuture<'_, F::Output> {
        super::SlotFuture::new(self.resume(cx, site.clone(), state), site)
    }

    /// What a caller takes from the flow (a flow already being described higher up the
    /// stack — recursion — contributes only its name and "may loop").
    pub fn info(self) -> FlowInfo {
        thread_local! {
            static DESCRIBING: std::cell::RefCell<Vec<&'static str>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let me = std::any::type_name::<F>();
        if DESCRIBING.with(|d| d.borrow().contains(&me)) {
            return FlowInfo {
                name: F::NAME,
                capabilities: Default::default(),
                state: Vec::new(),
                layout: format!("recursive:{}", F::NAME),
                rounds: 0,
                loops: true,
                validation: Ok(()),
            };
        }
        DESCRIBING.with(|d| d.borrow_mut().push(me));
        let info = F::info();
        DESCRIBING.with(|d| d.borrow_mut().pop());
        info
    }
}

/// Stand-in operations for a call that is not a flow (the code does not compile).
pub struct NoFlowOps;

impl NoFlowOps {
    /// Never runs.
    pub fn start<X, R>(self, _site: String, _flow: X) -> BoxFuture<'static, FlowStep<R>> {
        unreachable!("not a flow: this code does not compile")
    }
    /// Never runs.
    pub fn resume<R, S>(
        self,
        _cx: &mut ToolContext,
        _site: String,
        _state: S,
    ) -> BoxFuture<'_, FlowStep<R>> {
        unreachable!("not a flow: this code does not compile")
    }
    /// Never runs.
    pub fn info(self) -> FlowInfo {
        unreachable!("not a flow: this code does not compile")
    }
    /// Never runs.
    pub fn call<X, R>(self, _site: String, _flow: X) -> super::SlotFuture<'static, R> {
        unreachable!("not a flow: this code does not compile")
    }
    /// Never runs.
    pub fn again<R, S>(
        self,
        _cx: &mut ToolContext,
        _site: String,
        _state: S,
    ) -> super::SlotFuture<'_, R> {
        unreachable!("not a flow: this code does not compile")
    }
}

/// Every dispatch trait of this module, imported as `_`: generated code brings them all into
/// scope with one `use …::autoref::traits::*;` (each method name belongs to one family, and
/// each family is implemented only for this module's wrapper types, so having them all in
/// scope changes no other method call).
pub mod traits {
    pub use super::{
        AnyhowError as _, IsFlow as _, IsKept as _, IsSoft as _, LocalFuture as _, NotFlow as _,
        NotKept as _, NotSoft as _, OtherError as _, OwnError as _, RawOutput as _,
        SendFuture as _, StructuredOutput as _, TextOutput as _,
    };
}
