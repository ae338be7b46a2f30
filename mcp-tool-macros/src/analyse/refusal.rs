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
    /// A suspension point in a `while` condition.
    InLoopCondition { text: &'a str },
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
    /// Two suspension points in one statement.
    TwoInOneStatement { second: &'a str },
    /// A suspension point in the `else` block of a `let … else`.
    InLetElseBlock { text: &'a str },
    /// A literal key that is empty.
    EmptyKey,
    /// A literal key containing the flow-site separator.
    KeyWithSeparator,
    /// No key can be derived for a request of `cx.round`.
    NoKeyInRound,
    /// No key can be derived for a suspension point.
    NoKey { text: &'a str },
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
    /// A suspension point on the right of `&&`/`||`.
    LazyOperand { text: &'a str },
    /// A suspension point inside an `if`/`match`/loop/block whose value is used.
    InValueExpression { text: &'a str },
    /// A suspension point in a position the split does not handle.
    CannotSuspendHere { text: &'a str },
    /// Effectful code before a suspension point in the same expression.
    EffectBefore { text: &'a str },
    /// A suspension point in an `else if` condition.
    InElseIfCondition,
    /// A suspension point inside an `unsafe` block.
    InUnsafeBlock,
    /// A variable declared again inside an exploded branch while the outer one is used later.
    Shadowed { var: String },
    /// `break value` out of a loop with a suspension point that is not a `let` initializer.
    BreakValueNotLet,
    /// `break` out of a loop that ends the function.
    BreakOutOfReturningLoop,
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
                "`{text}` cannot suspend inside a match guard; bind it first: `let ok = {text}?;` and use `if ok` in the guard"
            ),
            Refusal::InLoopCondition { text } => format!(
                "`{text}` cannot suspend in a loop condition (it runs again each iteration); bind it first: \
                 `loop {{ let c = {text}?; if !c {{ break; }} … }}`"
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
            Refusal::TwoInOneStatement { second } => format!(
                "one suspension point per statement: bind each with its own `let` first, e.g. `let b = {second}?;`"
            ),
            Refusal::InLetElseBlock { text } => format!(
                "`{text}` cannot suspend inside the `else` block of a `let … else`; write it as a `match` whose \
                 other arm suspends and returns: `let x = match init {{ Some(x) => x, _ => {{ let v = {text}?; return …; }} }};`"
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
            Refusal::NoKey { text } => format!(
                "cannot derive a key for `{text}`: bind it to a name (`let answer = {text}?;`, key \"answer\") \
                 or add `.key(\"…\")` before `.await`"
            ),
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
            Refusal::LazyOperand { text } => format!(
                "`{text}` is on the right of `&&`/`||`, so it runs only sometimes; make that explicit: \
                 `let mut ok = a; if ok {{ ok = {text}?; }}`"
            ),
            Refusal::InValueExpression { text } => format!(
                "`{text}` is inside an `if`/`match`/loop/block that produces a value, which cannot be split; \
                 use statements instead: move the code that needs the value into the branch, \
                 e.g. `if c {{ let v = {text}?; … }}`"
            ),
            Refusal::CannotSuspendHere { text } => {
                format!("`{text}` cannot suspend here; bind it with its own `let v = {text}?;` first")
            }
            Refusal::EffectBefore { text } => format!(
                "this runs before `{text}` in the same expression, so it would run in the round before the suspension \
                 and its result would be lost; hoist the suspension into its own statement first: `let v = {text}?;`, then use `v` here"
            ),
            Refusal::InElseIfCondition => {
                "a suspension point in an `else if` condition cannot be split; nest it: `else { let c = cx.ask(…).await?; if c { … } }`"
                    .into()
            }
            Refusal::InUnsafeBlock => {
                "a suspension point inside an `unsafe` block cannot be split; keep the suspension outside the block".into()
            }
            Refusal::Shadowed { var } => format!(
                "`{var}` is declared again inside a branch or loop that contains a suspension point, and the outer `{var}` is still used afterwards; rename one of them"
            ),
            Refusal::BreakValueNotLet => {
                "`break` with a value out of a loop that contains a suspension point works only when the loop is a `let` initializer \
                 (`let x = loop { … break v; };`); assign to a variable declared before the loop, or `return` the value"
                    .into()
            }
            Refusal::BreakOutOfReturningLoop => {
                "cannot `break` out of a loop that ends the function; `return` the value instead".into()
            }
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
