//! Every construct the body analysis refuses, in one place: the kinds of refusal and their
//! messages, each showing the rewrite. The checks that find them run where the construct is
//! seen (the position visitor in [`super::positions`], the lowering, the journal checks) and
//! report through the one error sink, [`Errors::refuse`].
//!
//! The attribute and signature checks of [`crate::parse`] report their own messages: they are
//! about the function's outline, not its body.

use proc_macro2::Span;
use quote::ToTokens;

use crate::errors::Errors;

/// A refused construct in the body of a tool or flow. `text` is the suspension point as
/// written (shortened).
pub enum Refusal<'a> {
    /// A suspension point inside a closure.
    InClosure { text: &'a str },
    /// A suspension point inside an `async` block.
    InAsyncBlock { text: &'a str },
    /// A suspension point inside a match guard.
    InMatchGuard { text: &'a str },
    /// A suspension point inside a nested item.
    InNestedItem { text: &'a str },
    /// A suspension point inside another macro's arguments.
    InMacro { name: String, cx: String },
    /// `cx.round(x)` whose argument is not a tuple literal.
    RoundNotATuple,
    /// An element of `cx.round((…))` that is not a visible request builder.
    RoundElementUnknown,
    /// `cx.ask(..)` not awaited where it is written.
    NotAwaited { text: &'a str },
    /// The context passed to awaited code that is not a flow call.
    ContextToNonFlow { text: &'a str, cx: String },
    /// A literal key that is empty.
    EmptyKey,
    /// A literal key containing the flow-site separator.
    KeyWithSeparator,
    /// No key can be derived for a request of `cx.round`.
    NoKeyInRound,
    /// Two requests of one round share a key.
    DuplicateKeyInRound { key: &'a str },
    /// A borrow kept across a suspension point.
    BorrowKept {
        var: String,
        text: &'a str,
        flow: bool,
    },
    /// A flow call with type arguments.
    FlowTurbofish,
    /// A flow call-site name that is empty or contains the separator.
    BadSite,
    /// A suspension point in a condition that chains `let`s with `&&`.
    InLetChain,
    /// A suspension point in the place an assignment writes to.
    InAssignedPlace,
    /// A key written (or taken from a binding) that a method-and-ordinal key also takes.
    OrdinalKeyTaken { key: &'a str },
    /// A suspension point inside an `unsafe` block.
    InUnsafeBlock,
    /// A form the lowering cannot split, which the A-normal form should have brought into
    /// one: a guard that no known program reaches (`what` names the construct).
    Unlowered { what: String },
    /// With `journal`: a fixed key inside a loop.
    JournalKeyInLoop { key: &'a str },
    /// With `journal`: two suspension points with one key.
    JournalDuplicateKey { key: &'a str },
    /// With `journal`: a flow called in a loop without a per-iteration site.
    JournalFlowInLoop { site: &'a str },
    /// With `journal`: two flow calls with one site.
    JournalDuplicateSite { site: &'a str },
}

impl Refusal<'_> {
    /// The message: what is refused, why, and the rewrite.
    pub fn message(&self) -> String {
        let sep = super::KEY_SEPARATOR;
        match self {
            Refusal::InClosure { text } => format!(
                "`{text}` cannot suspend inside a closure: the closure is not part of the tool's state machine; \
                 call it in the tool body instead, e.g. `let v = {text}?;` and pass `v` to the closure"
            ),
            Refusal::InAsyncBlock { text } => format!(
                "`{text}` cannot suspend inside an `async` block: only the tool body itself is split into rounds; \
                 move it out: `let v = {text}?;` before the block"
            ),
            Refusal::InMatchGuard { text } => format!(
                "`{text}` cannot suspend inside a match guard: a guard runs while the arm's bindings \
                 borrow the scrutinee, and a borrow cannot be stored in the requestState; bind it first: \
                 `let ok = {text}?;` and use `if ok` in the guard"
            ),
            Refusal::InNestedItem { text } => {
                format!("`{text}` belongs to another function: only the tool's own body can suspend")
            }
            Refusal::InMacro { name, cx } => format!(
                "a suspension point cannot be inside `{name}!(…)`: the macro's expansion is not visible to `#[mcp_tool]`; \
                 bind it first: `let v = {cx}.ask(…).await?;` then `{name}!(…, v)`"
            ),
            Refusal::RoundNotATuple => {
                "`cx.round` takes a tuple literal of request builders: `cx.round((Ask::<A>::new(\"…\"), Sample::user(\"…\")))`".into()
            }
            Refusal::RoundElementUnknown => {
                "cannot see which request this is: start each element of `cx.round((…))` with `Ask::<T>::new(…)`, `Elicit::<T>::new(…)`, `UrlElicit::new(…)`, `Sample::user(…)` or `Roots::new()`".into()
            }
            Refusal::NotAwaited { text } => format!(
                "`{text}` is a suspension point and must be awaited where it is written, e.g. `let v = {text}.await?;` \
                 (the macro splits the tool there; a stored or passed-on request builder cannot be split)"
            ),
            Refusal::ContextToNonFlow { text, cx } => format!(
                "`{text}` passes the context to awaited code that is not a flow call: only an `#[mcp_flow]` function, \
                 called as `name({cx}, …).await` (optionally `.key(…)` before `.await`), can take the context across a \
                 suspension; make the callee a free `#[mcp_flow] async fn` and call it that way, or pass it what it \
                 needs instead of the context (e.g. `{cx}.principal()`)"
            ),
            Refusal::EmptyKey => "an input request key cannot be empty".into(),
            Refusal::KeyWithSeparator => format!(
                "an input request key cannot contain `{sep}`: it separates a flow's call site from the flow's own keys"
            ),
            Refusal::NoKeyInRound => {
                "cannot derive a key for this request of `cx.round`: bind the results to a tuple of names \
                 (`let (a, b) = cx.round((…)).await?;`) or add `.key(\"…\")` to the element"
                    .into()
            }
            Refusal::DuplicateKeyInRound { key } => format!(
                "two requests of one round use the key \"{key}\"; give one of them `.key(\"another\")`"
            ),
            Refusal::BorrowKept { var, text, flow } => {
                let (what, after) = if *flow {
                    ("flow call", "the call")
                } else {
                    ("suspension point", "the suspension point")
                };
                format!(
                    "`{var}` is a borrow held across the {what} `{text}`; a borrow cannot be stored in the \
                     requestState: keep an owned value instead (e.g. `.to_owned()`, `.clone()`), or borrow again after {after}"
                )
            }
            Refusal::FlowTurbofish => "a flow is not generic: call it without type arguments".into(),
            Refusal::BadSite => format!(
                "a flow's call-site name cannot be empty or contain `{sep}` (it separates the site from the flow's keys)"
            ),
            Refusal::InLetChain => {
                "a suspension point cannot be in a condition that chains `let`s with `&&`: \
                 bind it first (`let v = cx.ask(…).await?;`) and test `v` in the chain"
                    .into()
            }
            Refusal::InAssignedPlace => {
                "a suspension point cannot be in the place an assignment writes to (Rust evaluates \
                 that place after the value); bind it first: `let i = cx.ask(…).await?;`, then `v[i] = …`"
                    .into()
            }
            Refusal::OrdinalKeyTaken { key } => format!(
                "the key \"{key}\" is also the key of a suspension point that nothing names (its method \
                 and ordinal in source order); give one of them `.key(\"…\")`"
            ),
            Refusal::InUnsafeBlock => {
                "a suspension point inside an `unsafe` block cannot be split: the block's safety argument \
                 holds for one uninterrupted run, and at a suspension point its values are serialized and may \
                 resume on another replica; keep the suspension outside the block"
                    .into()
            }
            Refusal::Unlowered { what } => format!(
                "`{what}` is in a form `#[mcp_tool]` does not split (its A-normal form should have \
                 brought it into one: please report this); bind the suspension point with its own \
                 `let v = cx.ask(…).await?;` first"
            ),
            Refusal::JournalKeyInLoop { key } => format!(
                "with `journal`, answers are kept by key, so a suspension point inside a loop needs a key that \
                 differs per iteration, or every iteration gets the first answer to \"{key}\": \
                 add `.key(format!(\"{key}_{{i}}\"))` with the iteration's index or item"
            ),
            Refusal::JournalDuplicateKey { key } => format!(
                "with `journal`, answers are kept by key, so two suspension points cannot share the key \"{key}\"; \
                 rename the binding or add `.key(\"…\")`"
            ),
            Refusal::JournalFlowInLoop { site } => format!(
                "with `journal`, answers are kept by key, so a flow called inside a loop needs a call-site name \
                 that differs per iteration, or every iteration gets the first answers of \"{site}\": \
                 add `.key(format!(\"{site}_{{i}}\"))` to the call with the iteration's index or item"
            ),
            Refusal::JournalDuplicateSite { site } => format!(
                "with `journal`, answers are kept by key, so two flow calls cannot share the call-site name \"{site}\"; \
                 give one of them `.key(\"…\")`"
            ),
        }
    }
}

impl Errors {
    /// Records `refusal` spanning the tokens of `at`.
    pub fn refuse(&mut self, at: impl ToTokens, refusal: Refusal<'_>) {
        self.push_spanned(at, refusal.message());
    }

    /// Records `refusal` at `span`.
    pub fn refuse_at(&mut self, span: Span, refusal: Refusal<'_>) {
        self.push(span, refusal.message());
    }
}
