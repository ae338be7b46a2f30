//! Lowering of the body into stages of a dispatch loop: the `Lowerer` (scopes, the variables
//! each stage carries, jumps), which the submodules extend.
//!
//! Statements without a suspension point are emitted as written. A statement with one is split:
//! the current stage registers the request(s) and suspends (or, when `round_ready()`, jumps
//! straight on); the next stage (`S<k>`) starts by taking the answer and re-running the rest of
//! that statement. Compound statements (`if`, `match`, loops, blocks) that contain a suspension
//! point are exploded: their control flow becomes jumps between stages (`J<k>`: after the
//! statement, or a loop head), carrying the variables that are in scope and used later.
//!
//! The pieces: [`seq`] lowers statement lists and blocks, [`split`] splits a statement at its
//! suspension point (a request or a flow call), [`compound`] explodes `if`/`match`/loops/
//! blocks, [`rewrite`] rewrites the code emitted as written (jumps out of exploded loops,
//! `return`, the effects-before check). What it produces is a [`Machine`] ([`super::model`]),
//! whose stage code is the author's code rewritten with the generated code spliced in; that
//! generated code takes the runtime's path and plumbing from [`crate::rt`].

mod compound;
mod rewrite;
mod seq;
mod split;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Block, Expr, Ident, Lifetime, Stmt, Type};

use std::collections::HashMap;

use super::anf::{Origins, is_compound};
use super::assign::{self, stmt_effect};
use super::susp::find_all;
use super::vars::{Binding, Names, free_in_expr, stmt_defs};
use crate::errors::Errors;
use crate::rt::{GeneratedNames, plumb};

pub use super::model::{Machine, Point, Rederive, Stage, StageKind, Var};
use rewrite::{EffectsBefore, ExplodedLoop, JumpRewriter, Replace};
use split::node_span;

/// Where the final expression of a statement list goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// Statement position: the value is `()`.
    Stmt,
    /// The function's result.
    Return,
    /// The value of a `let` initializer, carried to stage `J` in its value field.
    Value(usize),
}

#[derive(Clone, Copy)]
/// Where control goes after a piece of code: the function returns, or the dispatch loop
/// jumps to a stage.
enum After {
    Return,
    Goto(usize),
}

/// A loop (or labelled block) being exploded: where `break` and `continue` go.
struct LoopCtx {
    label: Option<Lifetime>,
    is_block: bool,
    brk: After,
    cont: Option<usize>,
}

/// What the body sees besides its own variables.
pub struct Inputs<'a> {
    /// The context parameter.
    pub cx: &'a Ident,
    /// Names bound from a tool's arguments (parsed again every round).
    pub args: Names,
    /// A flow's parameters (the `Start` stage carries them).
    pub params: Vec<Binding>,
    /// The machine's error type (`<R as ToolReturn>::Error`): plumbing errors become it.
    pub err: TokenStream,
}

/// Lowers `body`.
pub fn lower(body: &Block, inputs: &Inputs<'_>, origins: &Origins, errors: &mut Errors) -> Machine {
    let mut l = Lowerer {
        origins,
        cx: inputs.cx,
        errors,
        n: GeneratedNames::new(),
        stages: Vec::new(),
        points: Vec::new(),
        scopes: vec![Vec::new()],
        next_id: 0,
        loops: Vec::new(),
        tmp: 0,
        jumps: 0,
        args: inputs.args.clone(),
        err: inputs.err.clone(),
        assigned: HashMap::new(),
        sites: HashMap::new(),
        consts: Vec::new(),
    };
    l.declare(inputs.params.clone());
    let params = l.scopes[0].clone();
    let start = l.new_stage(StageKind::Start, params, Vec::new());
    let code = l.lower_seq(&body.stmts, Tail::Return, After::Return, &Names::new());
    l.stages[start].code = code;
    Machine {
        stages: l.stages,
        points: l.points,
        consts: l.consts,
    }
}

struct Lowerer<'a> {
    cx: &'a Ident,
    /// What the names made by the A-normal form stand for.
    origins: &'a Origins,
    errors: &'a mut Errors,
    n: GeneratedNames,
    stages: Vec<Stage>,
    points: Vec<Point>,
    scopes: Vec<Vec<Var>>,
    next_id: usize,
    loops: Vec<LoopCtx>,
    tmp: usize,
    jumps: usize,
    /// Names bound from the tool's arguments.
    args: Names,
    /// The machine's error type.
    err: TokenStream,
    /// The assignment state of each deferred variable (by id).
    assigned: HashMap<usize, assign::State>,
    /// How many flow calls derived each site name so far (`login`, `login_2`, …).
    sites: HashMap<String, usize>,
    /// The machine's `const`s (see [`Machine::consts`]).
    consts: Vec<TokenStream>,
}

fn has_susp_stmt(s: &Stmt, cx: &Ident) -> bool {
    !find_all(s, cx).is_empty()
}
fn has_susp(e: &Expr, cx: &Ident) -> bool {
    !find_all(e, cx).is_empty()
}

impl Lowerer<'_> {
    fn new_stage(&mut self, kind: StageKind, vars: Vec<Var>, markers: Vec<Ident>) -> usize {
        let name = match kind {
            StageKind::Start => format_ident!("Start"),
            StageKind::Resume(k) => format_ident!("S{}", k),
            StageKind::Jump => {
                self.jumps += 1;
                format_ident!("J{}", self.jumps - 1)
            }
        };
        self.stages.push(Stage {
            name,
            kind,
            vars,
            soft: Vec::new(),
            markers,
            code: TokenStream::new(),
            prologue: Vec::new(),
            value: None,
        });
        self.stages.len() - 1
    }

    /// A stage whose carried variables are those of `live` (see [`Self::stage_vars`]).
    fn new_stage_for(&mut self, kind: StageKind, live: &Names, markers: Vec<Ident>) -> usize {
        let (vars, prologue) = self.stage_vars(live);
        let s = self.new_stage(kind, vars, markers);
        self.stages[s].prologue = prologue;
        s
    }

    fn declare(&mut self, bindings: Vec<Binding>) {
        self.declare_borrow(bindings, false)
    }

    fn declare_stmt(&mut self, s: &Stmt) {
        let Stmt::Local(l) = s else { return };
        let bindings = stmt_defs(s);
        let borrow = matches!(&l.pat, syn::Pat::Type(t) if matches!(&*t.ty, Type::Reference(_)))
            || l.init
                .as_ref()
                .is_some_and(|i| crate::analyse::args::looks_borrowed(&i.expr));
        // a borrow of the arguments (`let name = &args.name;`) is bound again where needed
        let derived: Names = self
            .scopes
            .iter()
            .flatten()
            .filter(|v| v.rederive.is_some())
            .map(|v| v.ident.to_string())
            .collect();
        let rederive = match &l.init {
            Some(init)
                if borrow
                    && init.diverge.is_none()
                    && bindings.iter().all(|b| !b.mutable)
                    && crate::analyse::args::reaches_into(&init.expr, &self.args, &derived) =>
            {
                let group = self.next_id;
                Some(Rederive {
                    stmt: quote!(#s),
                    deps: free_in_expr(&init.expr),
                    group,
                })
            }
            _ => None,
        };
        let owned = crate::analyse::args::visibly_owned(l);
        // `let x;` / `let x: T;`: deferred initialisation
        let deferred = l.init.is_none().then(|| {
            let pat = &l.pat;
            quote!(let #pat;)
        });
        for b in bindings {
            let id = self.next_id;
            self.next_id += 1;
            if deferred.is_some() {
                self.assigned.insert(id, assign::State::Unassigned);
            }
            self.scopes.last_mut().expect("scope").push(Var {
                ident: b.ident,
                id,
                mutable: b.mutable,
                borrow: (borrow || b.by_ref) && rederive.is_none(),
                deferred: deferred.clone(),
                rederive: rederive.clone(),
                owned: owned && !b.by_ref,
            });
        }
    }

    fn declare_borrow(&mut self, bindings: Vec<Binding>, borrow: bool) {
        for b in bindings {
            let id = self.next_id;
            self.next_id += 1;
            let borrow = borrow || b.by_ref;
            self.scopes.last_mut().expect("scope").push(Var {
                ident: b.ident,
                id,
                mutable: b.mutable,
                borrow,
                deferred: None,
                rederive: None,
                owned: false,
            });
        }
    }

    /// Declares the bindings of a `for` pattern that are bound again from the arguments
    /// (`stmt` binds them).
    fn declare_rederived(&mut self, bindings: Vec<Binding>, stmt: TokenStream, deps: Names) {
        let group = self.next_id;
        for b in bindings {
            let id = self.next_id;
            self.next_id += 1;
            self.scopes.last_mut().expect("scope").push(Var {
                ident: b.ident,
                id,
                mutable: false,
                borrow: false,
                owned: false,
                deferred: None,
                rederive: Some(Rederive {
                    stmt: stmt.clone(),
                    deps: deps.clone(),
                    group,
                }),
            });
        }
    }

    /// The assignment state of `v` here (`Assigned` for ordinary variables).
    fn assign_state(&self, v: &Var) -> assign::State {
        self.assigned
            .get(&v.id)
            .copied()
            .unwrap_or(assign::State::Assigned)
    }

    /// Records what statement `s` does to the deferred variables in scope.
    fn note_assigns(&mut self, s: &Stmt) {
        let deferred: Vec<(usize, String)> = self
            .scopes
            .iter()
            .flatten()
            .filter(|v| v.deferred.is_some())
            .map(|v| (v.id, v.ident.to_string()))
            .collect();
        for (id, name) in deferred {
            if self.lookup(&name).map(|v| v.id) != Some(id) {
                continue; // shadowed: `s` names another variable
            }
            let effect = stmt_effect(s, &name);
            if let Some(st) = self.assigned.get_mut(&id) {
                *st = st.then(effect);
            }
        }
    }

    /// Marks every deferred variable that `s` may assign as possibly assigned (a loop body
    /// seen from its head).
    fn note_maybe(&mut self, stmts: &[Stmt]) {
        let ids: Vec<(usize, String)> = self
            .scopes
            .iter()
            .flatten()
            .filter(|v| v.deferred.is_some())
            .map(|v| (v.id, v.ident.to_string()))
            .collect();
        for (id, name) in ids {
            if assign::block_effect(stmts, &name) != assign::Effect::No
                && let Some(st) = self.assigned.get_mut(&id)
            {
                *st = st.then(assign::Effect::Maybe);
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|v| v.ident == name)
    }

    /// What a stage starting here needs of the visible variables named in `live`: those it
    /// carries (in declaration order), and its prologue — borrows of the arguments bound
    /// again (with what they depend on carried in turn) and deferred variables not assigned
    /// yet, declared again.
    fn stage_vars(&self, live: &Names) -> (Vec<Var>, Vec<TokenStream>) {
        let mut names = live.clone();
        loop {
            let more: Names = names
                .iter()
                .filter_map(|n| self.lookup(n))
                .filter_map(|v| v.rederive.as_ref())
                .flat_map(|r| r.deps.iter().cloned())
                .filter(|d| !names.contains(d))
                .collect();
            if more.is_empty() {
                break;
            }
            names.extend(more);
        }
        let mut vars: Vec<Var> = names
            .iter()
            .filter_map(|n| self.lookup(n).cloned())
            .collect();
        vars.sort_by_key(|v| v.id);
        let mut carried = Vec::new();
        let mut prologue = Vec::new();
        let mut groups = Vec::new();
        for v in vars {
            if let Some(r) = &v.rederive {
                if !groups.contains(&r.group) {
                    groups.push(r.group);
                    prologue.push(r.stmt.clone());
                }
            } else if let Some(decl) = &v.deferred
                && self.assign_state(&v) != assign::State::Assigned
            {
                prologue.push(decl.clone());
            } else {
                carried.push(v);
            }
        }
        (carried, prologue)
    }

    fn in_loop(&self) -> bool {
        self.loops.iter().any(|l| !l.is_block)
    }

    /// `{ st = State::X { vars }; continue 'dispatch; }`
    fn goto(&mut self, target: usize, span: Span) -> TokenStream {
        self.goto_with(target, span, None)
    }

    /// A jump that also carries the value of an exploded `let` initializer (in `__mcp_value`).
    fn goto_with(&mut self, target: usize, span: Span, value: Option<TokenStream>) -> TokenStream {
        let stage = &self.stages[target];
        for v in &stage.vars {
            if Some(&v.ident) == stage.value.as_ref() {
                continue;
            }
            if self.lookup(&v.ident.to_string()).map(|c| c.id) != Some(v.id) {
                // the A-normal form renames a variable declared again where it would be
                self.errors.refuse_at(
                    span,
                    super::refusal::Refusal::Unlowered {
                        what: v.ident.to_string(),
                    },
                );
            }
        }
        let GeneratedNames {
            st,
            state,
            dispatch,
            ..
        } = &self.n;
        let name = &stage.name;
        let vars: Vec<TokenStream> = stage
            .vars
            .iter()
            .map(|v| {
                let id = &v.ident;
                if Some(id) == stage.value.as_ref() {
                    match &value {
                        Some(val) => quote!(#val),
                        None => quote!(::core::unreachable!(
                            "a block that produces a value ended without one"
                        )),
                    }
                } else {
                    quote!(#id)
                }
            })
            .collect();
        // the stage's variant: a tuple of its variables, or a unit variant
        let value = if vars.is_empty() {
            quote!(#state::#name)
        } else {
            quote!(#state::#name(#(#vars),*))
        };
        quote!({ #st = #value; continue #dispatch; })
    }

    fn emit_cont(&mut self, c: After, span: Span) -> TokenStream {
        match c {
            After::Return => TokenStream::new(),
            After::Goto(t) => self.goto(t, span),
        }
    }
}
