//! The lowered body, what analysis hands to expansion: the stages of the dispatch loop (each a
//! variant of the state enum and the code of its arm), the suspension points with their keys,
//! and the variables each stage carries. The lowering builds it; the expansion turns it into
//! the machine function.
//!
//! All of it is data except the pieces of code: [`Stage::code`], [`Stage::prologue`],
//! [`Var::deferred`] and [`Rederive::stmt`] are tokens, because they are the author's own
//! statements (rewritten, for a stage's code), which the machine runs as written.

use proc_macro2::TokenStream;
use syn::{Ident, Type};

use super::susp::{FlowCall, Susp};
use super::vars::Names;

/// A variable the state machine can carry between stages.
#[derive(Clone, Debug)]
pub struct Var {
    /// Its name, with the span of its declaration.
    pub ident: Ident,
    /// Unique per declaration.
    pub id: usize,
    /// Declared `mut`.
    pub mutable: bool,
    /// Visibly a borrow (`let x = &…`, `let x: &T = …`, `ref x`): cannot be kept.
    pub borrow: bool,
    /// Declared without a value (`let x;`): its declaration, emitted again at the start of
    /// a stage where it is not assigned yet (such a stage does not carry it).
    pub deferred: Option<TokenStream>,
    /// A borrow of the tool's arguments: bound again from them in every stage that needs
    /// it, never carried.
    pub rederive: Option<Rederive>,
    /// Declared by a `let` whose value is visibly owned (see
    /// [`visibly_owned`](crate::analyse::args::visibly_owned)): it may be kept only so that a
    /// request can be made again.
    pub owned: bool,
}

/// How a borrow of the arguments is bound again in a later stage.
#[derive(Clone, Debug)]
pub struct Rederive {
    /// The statement that binds it (`let name = &args.name;`).
    pub stmt: TokenStream,
    /// What the statement mentions (kept or re-derived in turn).
    pub deps: Names,
    /// The statement's identity (a pattern binding several names is bound once).
    pub group: usize,
}

/// What starts a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageKind {
    /// The first round.
    Start,
    /// Right after suspension point `k` (index into `Machine::points`): stored in the state.
    Resume(usize),
    /// An internal jump target (after a branch, a loop head): never stored.
    Jump,
}

/// One variant of the state enum and the code of its arm.
pub struct Stage {
    /// Variant name (`Start`, `S0`, `J1`, …).
    pub name: Ident,
    /// What starts it.
    pub kind: StageKind,
    /// The variables it carries.
    pub vars: Vec<Var>,
    /// The variables it carries only so that it can make its suspension point's requests
    /// again (read by a builder, not used later): saved when they serialize, restored only
    /// when the requests are made again.
    pub soft: Vec<Var>,
    /// Request markers it carries (one per request of a suspension point).
    pub markers: Vec<Ident>,
    /// The code of its arm: the author's statements from where the stage starts to where it
    /// ends, rewritten (`break`/`continue` out of exploded loops become jumps, `return e`
    /// returns through the finish function), with the generated code spliced in where the
    /// stage suspends (requests, saving its variables), resumes (answers, a flow's result),
    /// jumps to another stage or iterates an exploded `for`. The runtime paths in it come
    /// from [`crate::rt::Rt`], the error plumbing from [`crate::rt::plumb`].
    pub code: TokenStream,
    /// Statements that start its arm: borrows of the arguments bound again, deferred
    /// variables declared again.
    pub prologue: Vec<TokenStream>,
    /// For the stage after a `let` whose initializer is exploded: the field with the value.
    pub value: Option<Ident>,
}

/// A suspension point as analysed.
pub struct Point {
    /// What was recognised.
    pub susp: Susp,
    /// The key of each request.
    pub keys: Vec<String>,
    /// Inside a loop (so it may run more than once per call).
    pub in_loop: bool,
    /// `(key, T)` for every `ask`/`elicit` whose `T` is visible (checked by `Tool::validate`).
    pub elicit_types: Vec<(String, Type)>,
    /// For a flow call: the call (its site name is `keys[0]`).
    pub flow: Option<FlowCall>,
    /// The key is the method and its ordinal (`ask_2`): nothing named the point.
    pub ordinal: bool,
}

/// The result of lowering.
pub struct Machine {
    /// Stages in creation order (the arms are emitted in this order).
    pub stages: Vec<Stage>,
    /// Suspension points in source order.
    pub points: Vec<Point>,
    /// The machine's `const`s: one `Point` (from `rt`) per request of a suspension point
    /// (`__mcp_R<k>`, `__mcp_R<k>_<i>`), shared by its first request and the one made again.
    pub consts: Vec<TokenStream>,
}
