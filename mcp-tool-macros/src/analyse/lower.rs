//! Lowering of the body into stages of a dispatch loop.
//!
//! Statements without a suspension point are emitted as written. A statement with one is split:
//! the current stage registers the request(s) and suspends (or, when `round_ready()`, jumps
//! straight on); the next stage (`S<k>`) starts by taking the answer and re-running the rest of
//! that statement. Compound statements (`if`, `match`, loops, blocks) that contain a suspension
//! point are exploded: their control flow becomes jumps between stages (`J<k>`: after the
//! statement, `H<k>`: a loop head), carrying the variables that are in scope and used later.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Lifetime, Local, Stmt, Type};

use std::collections::HashMap;

use super::assign::{self, stmt_effect};
use super::susp::{FlowCall, Kind, Susp, as_suspension, find_all, short_text};
use super::vars::{
    Binding, Names, free_in_expr, free_in_stmt, free_in_stmts, pat_bindings, stmt_defs,
};
use crate::errors::Errors;

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
    /// Request markers it carries (one per request of a suspension point).
    pub markers: Vec<Ident>,
    /// The code of its arm.
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
}

/// The result of lowering.
pub struct Machine {
    /// Stages in creation order (the arms are emitted in this order).
    pub stages: Vec<Stage>,
    /// Suspension points in source order.
    pub points: Vec<Point>,
}

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
enum Cont {
    Return,
    Goto(usize),
}

struct LoopCtx {
    label: Option<Lifetime>,
    is_block: bool,
    brk: Cont,
    cont: Option<usize>,
}

/// Names of the generated items, shared with the expansion.
pub struct Names_ {
    /// The state slot.
    pub st: Ident,
    /// The state enum.
    pub state: Ident,
    /// The dispatch loop label.
    pub dispatch: Lifetime,
    /// The function converting the final value.
    pub finish: Ident,
}

impl Names_ {
    /// The fixed generated names.
    pub fn new() -> Self {
        Names_ {
            st: format_ident!("__mcp_st"),
            state: format_ident!("__mcp_State"),
            dispatch: Lifetime::new("'__mcp_dispatch", Span::call_site()),
            finish: format_ident!("__mcp_finish"),
        }
    }
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
pub fn lower(body: &Block, inputs: &Inputs<'_>, errors: &mut Errors) -> Machine {
    let mut l = Lowerer {
        cx: inputs.cx,
        errors,
        n: Names_::new(),
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
    };
    l.declare(inputs.params.clone());
    let params = l.scopes[0].clone();
    let start = l.new_stage(StageKind::Start, params, Vec::new());
    let code = l.lower_seq(&body.stmts, Tail::Return, Cont::Return, &Names::new());
    l.stages[start].code = code;
    Machine {
        stages: l.stages,
        points: l.points,
    }
}

struct Lowerer<'a> {
    cx: &'a Ident,
    errors: &'a mut Errors,
    n: Names_,
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
}

fn has_susp_stmt(s: &Stmt, cx: &Ident) -> bool {
    !find_all(s, cx).is_empty()
}
fn has_susp(e: &Expr, cx: &Ident) -> bool {
    !find_all(e, cx).is_empty()
}

fn is_compound(e: &Expr) -> bool {
    matches!(
        e,
        Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_)
    )
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
            markers,
            code: TokenStream::new(),
            prologue: Vec::new(),
            value: None,
        });
        self.stages.len() - 1
    }

    /// `expr` (a `Result<T, ToolError>` of the generated plumbing) unwrapped, its error
    /// recorded in the context and returned as the machine's error type.
    fn plumb(&self, expr: TokenStream) -> TokenStream {
        let err = &self.err;
        let span = err
            .clone()
            .into_iter()
            .next()
            .map(|t| t.span())
            .unwrap_or_else(Span::call_site);
        let ok = quote_spanned!(span=> ::mcp_tool_runtime::__private::ok::<_, #err>);
        let cx = self.cx;
        quote!(#ok(#expr, #cx)?)
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
                .is_some_and(|i| super::args::looks_borrowed(&i.expr));
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
                    && super::args::reaches_into(&init.expr, &self.args, &derived) =>
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
                let msg = format!(
                    "`{}` is declared again inside a branch or loop that contains a suspension point, and the outer `{}` is still used afterwards; rename one of them",
                    v.ident, v.ident
                );
                self.errors.push(span, msg);
            }
        }
        let Names_ {
            st,
            state,
            dispatch,
            ..
        } = &self.n;
        let name = &stage.name;
        let vars = stage.vars.iter().map(|v| {
            let id = &v.ident;
            if Some(id) == stage.value.as_ref() {
                match &value {
                    Some(val) => quote!(#id: #val),
                    None => quote!(#id: ::core::unreachable!("a block that produces a value ended without one")),
                }
            } else {
                quote!(#id)
            }
        });
        quote!({ #st = #state::#name { #(#vars),* }; continue #dispatch; })
    }

    fn emit_cont(&mut self, c: Cont, span: Span) -> TokenStream {
        match c {
            Cont::Return => TokenStream::new(),
            Cont::Goto(t) => self.goto(t, span),
        }
    }

    /// Rewrites `break`/`continue` that leave exploded loops into jumps and `return e` into
    /// `return __mcp_finish(e)`.
    fn rewrite<T: quote::ToTokens + Clone>(
        &mut self,
        node: &T,
        f: fn(&mut Rw, &mut T),
    ) -> TokenStream {
        let mut targets = Vec::new();
        for i in 0..self.loops.len() {
            let (label, is_block, brk, cont) = {
                let l = &self.loops[i];
                (l.label.clone(), l.is_block, l.brk, l.cont)
            };
            let (brk, brk_value) = match brk {
                Cont::Goto(t) => {
                    // the loop (or labelled block) is a `let` initializer: `break v` carries `v`
                    let value = self.stages[t]
                        .value
                        .is_some()
                        .then(|| self.goto_with(t, node_span(node), Some(quote!(__mcp_value))));
                    (Some(self.goto(t, node_span(node))), value)
                }
                Cont::Return => (None, None),
            };
            let cont = cont.map(|t| self.goto(t, node_span(node)));
            targets.push(RwLoop {
                label: label.map(|l| l.ident.to_string()),
                is_block,
                brk,
                brk_value,
                cont,
            });
        }
        let mut rw = Rw {
            loops: &targets,
            inner: Vec::new(),
            finish: &self.n.finish,
            errors: Vec::new(),
        };
        let mut node = node.clone();
        f(&mut rw, &mut node);
        for (span, m) in rw.errors {
            self.errors.push(span, m);
        }
        quote!(#node)
    }

    fn rewrite_stmt(&mut self, s: &Stmt) -> TokenStream {
        self.rewrite(s, |rw, s| rw.visit_stmt_mut(s))
    }

    fn rewrite_expr(&mut self, e: &Expr) -> TokenStream {
        self.rewrite(e, |rw, e| rw.visit_expr_mut(e))
    }

    /// The final expression `e` of a list in `tail` position.
    fn tail_value(&mut self, e: &Expr, tail: Tail) -> TokenStream {
        match tail {
            Tail::Return => self.ret(e),
            Tail::Value(j) => {
                let e = self.rewrite_expr(e);
                let g = self.goto_with(j, e.span(), Some(quote!(__mcp_value)));
                quote!({ let __mcp_value = #e; #g })
            }
            Tail::Stmt => {
                let e = self.rewrite_expr(e);
                quote!(#e;)
            }
        }
    }

    fn ret(&mut self, e: &Expr) -> TokenStream {
        let e = self.rewrite_expr(e);
        let finish = &self.n.finish;
        quote!(return #finish(#e);)
    }

    /// Hoists a suspension in an `if` condition, `match` scrutinee or `for` iterable into a
    /// `let` before the statement.
    fn hoist(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for s in stmts {
            if let Stmt::Local(l) = s
                && let Some(init) = &l.init
                && init.diverge.is_none()
                && matches!(&*init.expr, Expr::If(_) | Expr::Match(_))
            {
                let mut l = l.clone();
                let init = l.init.as_mut().expect("init");
                let slot: &mut Expr = match &mut *init.expr {
                    Expr::If(i) => match &mut *i.cond {
                        Expr::Let(x) => &mut x.expr,
                        c => c,
                    },
                    Expr::Match(m) => &mut m.expr,
                    _ => unreachable!(),
                };
                if has_susp(slot, self.cx) {
                    let tmp = format_ident!("__mcp_tmp{}", self.tmp);
                    self.tmp += 1;
                    let first = std::mem::replace(slot, syn::parse_quote!(#tmp));
                    out.push(syn::parse_quote!(let #tmp = #first;));
                    out.push(Stmt::Local(l));
                    continue;
                }
            }
            if let Stmt::Expr(e, semi) = s {
                let mut e = e.clone();
                let slot: Option<&mut Expr> = match &mut e {
                    Expr::If(i) => match &mut *i.cond {
                        Expr::Let(l) => Some(&mut *l.expr),
                        c => Some(c),
                    },
                    Expr::Match(m) => Some(&mut *m.expr),
                    Expr::ForLoop(f) => Some(&mut *f.expr),
                    _ => None,
                };
                if let Some(slot) = slot
                    && has_susp(slot, self.cx)
                {
                    let tmp = format_ident!("__mcp_tmp{}", self.tmp);
                    self.tmp += 1;
                    let init = std::mem::replace(slot, syn::parse_quote!(#tmp));
                    out.push(syn::parse_quote!(let #tmp = #init;));
                    out.push(Stmt::Expr(e, *semi));
                    continue;
                }
            }
            out.push(s.clone());
        }
        out
    }

    fn lower_block(
        &mut self,
        b: &Block,
        tail: Tail,
        cont: Cont,
        live_after: &Names,
    ) -> TokenStream {
        self.scopes.push(Vec::new());
        let code = self.lower_seq(&b.stmts, tail, cont, live_after);
        self.scopes.pop();
        quote!({ #code })
    }

    fn lower_seq(
        &mut self,
        stmts: &[Stmt],
        tail: Tail,
        cont: Cont,
        live_after: &Names,
    ) -> TokenStream {
        let stmts = self.hoist(stmts);
        let n = stmts.len();
        let mut live = vec![Names::new(); n + 1];
        live[n] = live_after.clone();
        for i in (0..n).rev() {
            let mut l = live[i + 1].clone();
            for d in stmt_defs(&stmts[i]) {
                l.remove(&d.ident.to_string());
            }
            l.extend(free_in_stmt(&stmts[i]));
            live[i] = l;
        }
        let mut out = TokenStream::new();
        for i in 0..n {
            let s = &stmts[i];
            let is_tail = tail != Tail::Stmt && i == n - 1 && matches!(s, Stmt::Expr(_, None));
            let here = if is_tail { tail } else { Tail::Stmt };
            if !has_susp_stmt(s, self.cx) {
                match s {
                    Stmt::Expr(e, None) if is_tail => out.extend(self.tail_value(e, tail)),
                    Stmt::Expr(e, None) if i == n - 1 => {
                        let e = self.rewrite_expr(e);
                        out.extend(quote!(#e;));
                    }
                    _ => out.extend(self.rewrite_stmt(s)),
                }
                self.note_assigns(s);
                self.declare_stmt(s);
                continue;
            }
            let rest = &stmts[i + 1..];
            match s {
                Stmt::Local(l)
                    if l.init
                        .as_ref()
                        .is_some_and(|init| init.diverge.is_none() && is_compound(&init.expr)) =>
                {
                    let init = &l.init.as_ref().expect("init").expr;
                    let val = format_ident!("__mcp_val{}", self.tmp);
                    self.tmp += 1;
                    let mut lv = live[i + 1].clone();
                    for d in stmt_defs(s) {
                        lv.remove(&d.ident.to_string());
                    }
                    // the stage after the initializer: deferred variables as it leaves them
                    let before = self.assigned.clone();
                    self.note_assigns(s);
                    let (mut vars, prologue) = self.stage_vars(&lv);
                    let after = std::mem::replace(&mut self.assigned, before);
                    vars.push(Var {
                        ident: val.clone(),
                        id: self.next_id,
                        mutable: false,
                        borrow: false,
                        deferred: None,
                        rederive: None,
                    });
                    self.next_id += 1;
                    let j = self.new_stage(StageKind::Jump, vars, Vec::new());
                    self.stages[j].value = Some(val.clone());
                    self.stages[j].prologue = prologue;
                    let code = self.lower_compound(init, Tail::Value(j), Cont::Goto(j), &lv);
                    self.assigned = after;
                    out.extend(code);
                    let pat = &l.pat;
                    let mut code = quote!(let #pat = #val;);
                    self.declare_stmt(s);
                    code.extend(self.lower_seq(rest, tail, cont, live_after));
                    self.stages[j].code = code;
                    return out;
                }
                Stmt::Expr(e, _) if is_compound(e) => {
                    let before = self.assigned.clone();
                    self.note_assigns(s);
                    let after = std::mem::replace(&mut self.assigned, before.clone());
                    let (target, rest_stage) = if is_tail {
                        (
                            match tail {
                                Tail::Value(j) => Cont::Goto(j),
                                _ => Cont::Return,
                            },
                            None,
                        )
                    } else if rest.is_empty() {
                        (cont, None)
                    } else {
                        self.assigned = after.clone();
                        let j = self.new_stage_for(StageKind::Jump, &live[i + 1], Vec::new());
                        self.assigned = before;
                        (Cont::Goto(j), Some(j))
                    };
                    let code = self.lower_compound(e, here, target, &live[i + 1]);
                    self.assigned = after;
                    out.extend(code);
                    if let Some(j) = rest_stage {
                        let code = self.lower_seq(rest, tail, cont, live_after);
                        self.stages[j].code = code;
                    }
                    return out;
                }
                Stmt::Local(_) | Stmt::Expr(..) => {
                    let code = self.split(s, here, &live[i + 1]);
                    self.note_assigns(s);
                    match code {
                        Some((before, stage)) => {
                            out.extend(before);
                            let more = self.lower_seq(rest, tail, cont, live_after);
                            self.stages[stage].code.extend(more);
                        }
                        None => {
                            // error already reported; keep going for more diagnostics
                            let more = self.lower_seq(rest, tail, cont, live_after);
                            out.extend(more);
                        }
                    }
                    return out;
                }
                _ => {
                    out.extend(self.rewrite_stmt(s));
                }
            }
        }
        let span = stmts
            .last()
            .map(|s| s.span())
            .unwrap_or_else(Span::call_site);
        let diverges = matches!(
            stmts.last(),
            Some(Stmt::Expr(
                Expr::Return(_) | Expr::Break(_) | Expr::Continue(_),
                _
            ))
        );
        if !diverges {
            out.extend(self.emit_cont(cont, span));
        }
        out
    }

    /// Splits a statement with a suspension point directly in it. Returns the code that ends
    /// the current stage and the index of the new stage (whose code starts with the rest of
    /// the statement; the caller appends what follows). Declares the statement's bindings.
    fn split(&mut self, s: &Stmt, tail: Tail, live_after: &Names) -> Option<(TokenStream, usize)> {
        let found = find_all(s, self.cx);
        let susp_expr = found[0].clone();
        if found.len() > 1 {
            let text = short_text(found[1]);
            self.errors.push_spanned(
                found[1],
                format!("one suspension point per statement: bind each with its own `let` first, e.g. `let b = {text}?;`"),
            );
            return None;
        }
        let susp = as_suspension(&susp_expr, self.cx).expect("found a suspension");
        let text = short_text(&susp_expr);
        let (main, pat): (&Expr, Option<&syn::Pat>) = match s {
            Stmt::Local(Local {
                init: Some(init),
                pat,
                ..
            }) => {
                if has_susp(&init.expr, self.cx) {
                    (&init.expr, Some(pat))
                } else {
                    self.errors.push_spanned(
                        &susp.tokens,
                        format!(
                            "`{text}` cannot suspend inside the `else` block of a `let … else`; write it as a `match` whose \
                             other arm suspends and returns: `let x = match init {{ Some(x) => x, _ => {{ let v = {text}?; return …; }} }};`"
                        ),
                    );
                    return None;
                }
            }
            Stmt::Expr(e, _) => (e, None),
            _ => return None,
        };
        if !self.check_first(main, &text) {
            return None;
        }
        // keys
        if let Some(call) = &susp.flow {
            let derived = match pat {
                Some(p) => single_binding(p),
                None => assign_target(main),
            };
            return self.split_flow(s, tail, live_after, &susp, call, derived);
        }
        let derived: Vec<Option<String>> = match (susp.kind, pat) {
            (Kind::Round, Some(p)) => {
                let p = strip_type(p);
                match p {
                    syn::Pat::Tuple(t) => t.elems.iter().map(single_binding).collect(),
                    _ => vec![None; susp.parts.len()],
                }
            }
            (_, Some(p)) => vec![single_binding(p)],
            (_, None) => vec![assign_target(main)],
        };
        let mut keys = Vec::new();
        for (i, part) in susp.parts.iter().enumerate() {
            let key = part
                .key
                .as_ref()
                .map(|k| k.value())
                .or_else(|| derived.get(i).cloned().flatten());
            match key {
                Some(k) if k.is_empty() => self
                    .errors
                    .push_spanned(&part.tokens, "an input request key cannot be empty"),
                Some(k) if k.contains(super::KEY_SEPARATOR) => self.errors.push_spanned(
                    &part.tokens,
                    format!(
                        "an input request key cannot contain `{}`: it separates a flow's call site from the flow's own keys",
                        super::KEY_SEPARATOR
                    ),
                ),
                Some(k) => keys.push(k),
                None => {
                    let msg = if susp.kind == Kind::Round {
                        "cannot derive a key for this request of `cx.round`: bind the results to a tuple of names \
                         (`let (a, b) = cx.round((…)).await?;`) or add `.key(\"…\")` to the element"
                            .to_string()
                    } else {
                        format!(
                            "cannot derive a key for `{text}`: bind it to a name (`let answer = {text}?;`, key \"answer\") \
                             or add `.key(\"…\")` before `.await`"
                        )
                    };
                    self.errors.push_spanned(&part.tokens, msg);
                }
            }
        }
        if keys.len() != susp.parts.len() {
            return None;
        }
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].contains(k) {
                self.errors.push_spanned(
                    &susp.parts[i].tokens,
                    format!("two requests of one round use the key \"{k}\"; give one of them `.key(\"another\")`"),
                );
                return None;
            }
        }
        let k = self.points.len();
        let markers: Vec<Ident> = if susp.parts.len() == 1 {
            vec![format_ident!("__mcp_m{}", k)]
        } else {
            (0..susp.parts.len())
                .map(|i| format_ident!("__mcp_m{}_{}", k, i))
                .collect()
        };
        // visible element types for validate()
        let mut elicit_types = Vec::new();
        let annotated = match s {
            Stmt::Local(Local {
                pat: syn::Pat::Type(pt),
                init: Some(init),
                ..
            }) if direct_or_try(&init.expr, &susp_expr) => Some((*pt.ty).clone()),
            _ => None,
        };
        for (i, part) in susp.parts.iter().enumerate() {
            let ty = part.elicit_ty.clone().or_else(|| match susp.kind {
                Kind::Ask => annotated.clone(),
                Kind::Elicit => annotated.as_ref().and_then(elicitation_inner),
                _ => None,
            });
            if let Some(t) = ty {
                elicit_types.push((keys[i].clone(), t));
            }
        }
        // the request code
        let cx = self.cx;
        let mut before = TokenStream::new();
        for (i, part) in susp.parts.iter().enumerate() {
            let mut builder = part.builder.clone();
            if matches!(susp.kind, Kind::Ask | Kind::Elicit)
                && part.elicit_ty.is_none()
                && let Some((_, t)) = elicit_types.get(i)
            {
                set_turbofish(&mut builder, t);
            }
            let builder = self.rewrite_expr(&builder);
            let m = &markers[i];
            let key = &keys[i];
            // a `.key("…")` at the suspension point fixes the key; otherwise a key set on the
            // builder where it was built wins at run time (as in direct mode)
            let fixed = part.key.is_some();
            let req = quote_spanned!(part.span=> ::mcp_tool_runtime::__private::request_key(#cx, #key, #fixed, #builder));
            let req = self.plumb(req);
            before.extend(quote_spanned!(part.span=> let #m = #req;));
        }
        // the resumed statement
        let answer = if susp.kind == Kind::Checkpoint {
            quote!(::mcp_tool_runtime::__private::resumed())
        } else {
            let each: Vec<TokenStream> = markers
                .iter()
                .map(|m| quote!(::mcp_tool_runtime::__private::answer_for(#cx, #m)))
                .collect();
            if susp.kind == Kind::Round {
                quote!(::mcp_tool_runtime::__private::answers((#(#each,)*)))
            } else {
                quote!(#(#each)*)
            }
        };
        let mut resumed = s.clone();
        Replace {
            cx: self.cx,
            with: Some(answer),
        }
        .visit_stmt_mut(&mut resumed);
        let mut live_point = live_after.clone();
        for d in stmt_defs(s) {
            live_point.remove(&d.ident.to_string());
        }
        live_point.extend(free_in_stmt(&resumed));
        let (vars, prologue) = self.stage_vars(&live_point);
        for v in vars.iter().filter(|v| v.borrow) {
            self.errors.push(
                v.ident.span(),
                format!(
                    "`{}` is a borrow held across the suspension point `{text}`; a borrow cannot be stored in the \
                     requestState: keep an owned value instead (e.g. `.to_owned()`, `.clone()`), or borrow again after the suspension point",
                    v.ident
                ),
            );
        }
        self.points.push(Point {
            susp: susp.clone(),
            keys,
            in_loop: self.in_loop(),
            elicit_types,
            flow: None,
        });
        let stage = self.new_stage(StageKind::Resume(k), vars.clone(), markers.clone());
        self.stages[stage].prologue = prologue;
        // suspend
        let Names_ {
            st,
            state,
            dispatch,
            ..
        } = &self.n;
        let name = self.stages[stage].name.clone();
        let idents: Vec<&Ident> = vars.iter().map(|v| &v.ident).collect();
        let saves = vars.iter().map(|v| {
            let id = &v.ident;
            let n = id.to_string();
            let save = quote_spanned!(id.span()=> (&&::mcp_tool_runtime::__private::probe(&#id)).vtable().save(&#id));
            let save = self.plumb(save);
            quote_spanned!(id.span()=> (#n, #save))
        });
        let stage_name = name.to_string();
        let ready = if susp.kind == Kind::Checkpoint {
            TokenStream::new()
        } else {
            quote! {
                if #cx.round_ready() {
                    #st = #state::#name { #(#idents: ::mcp_tool_runtime::__private::Slot::Live(#idents),)* #(#markers),* };
                    continue #dispatch;
                }
            }
        };
        let suspend = if susp.kind == Kind::Checkpoint {
            // a checkpoint always ends the round; markers are unused
            quote! {
                let __mcp_saved = ::mcp_tool_runtime::__private::suspend(#stage_name, [#(#saves),*]);
                #st = #state::#name { #(#idents: ::mcp_tool_runtime::__private::Slot::Live(#idents),)* #(#markers: ::core::marker::PhantomData),* };
                return __mcp_saved;
            }
        } else {
            // keys that may differ from the derived ones at run time are kept too
            let runtime_keys: Vec<TokenStream> = susp
                .parts
                .iter()
                .zip(&markers)
                .zip(&self.points[k].keys)
                .filter(|((part, _), _)| part.key.is_none())
                .map(|((_, m), key)| {
                    let n = m.to_string();
                    quote!((#n, #m.saved(#key)))
                })
                .collect();
            if runtime_keys.is_empty() {
                quote!(return ::mcp_tool_runtime::__private::suspend(#stage_name, [#(#saves),*]);)
            } else {
                quote!(return ::mcp_tool_runtime::__private::suspend_keys(#stage_name, [#(#saves),*], [#(#runtime_keys),*]);)
            }
        };
        before.extend(quote!(#ready #suspend));
        // the new stage: the rest of the statement
        let code = self.resumed_code(&resumed, tail);
        self.declare_stmt(s);
        self.stages[stage].code = code;
        Some((before, stage))
    }

    /// The rest of a split statement, in the stage after its suspension point.
    fn resumed_code(&mut self, resumed: &Stmt, tail: Tail) -> TokenStream {
        match resumed {
            Stmt::Expr(e, None) if tail != Tail::Stmt => self.tail_value(e, tail),
            Stmt::Expr(Expr::Return(r), _) => match &r.expr {
                Some(e) => self.ret(e),
                None => self.rewrite_stmt(resumed),
            },
            Stmt::Expr(e, None) => {
                let e = self.rewrite_expr(e);
                quote!(#e;)
            }
            other => self.rewrite_stmt(other),
        }
    }

    /// The name of the next flow call site derived from `base` (`login`, then `login_2`, …).
    fn next_site(&mut self, base: &str) -> String {
        let n = self.sites.entry(base.to_owned()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base.to_owned()
        } else {
            format!("{base}_{n}")
        }
    }

    /// Splits a statement whose suspension point is a flow call: the current stage starts
    /// the flow (its own state machine, run until it returns or suspends); the next stage
    /// (`S<k>`) resumes it when it had suspended, then runs the rest of the statement with
    /// the flow's result in place of the call. The flow's state is kept in the caller's,
    /// under the call's slot.
    fn split_flow(
        &mut self,
        s: &Stmt,
        tail: Tail,
        live_after: &Names,
        susp: &Susp,
        call: &FlowCall,
        derived: Option<String>,
    ) -> Option<(TokenStream, usize)> {
        let text = &susp.text;
        let p = quote!(::mcp_tool_runtime::__private);
        let span = call.call.span();
        if let Some(seg) = call.path.segments.iter().find(|s| !s.arguments.is_empty()) {
            self.errors.push_spanned(
                &seg.arguments,
                "a flow is not generic: call it without type arguments",
            );
            return None;
        }
        let k = self.points.len();
        // the call site's name
        let base = derived.unwrap_or_else(|| call.name());
        let (site, site_expr) = match (&call.key, call.literal_key()) {
            (_, Some(l)) => (l.value(), quote!(::std::string::String::from(#l))),
            (Some(e), None) => (
                self.next_site(&base),
                quote_spanned!(e.span()=> ::core::convert::Into::<::std::string::String>::into(#e)),
            ),
            (None, None) => {
                let site = self.next_site(&base);
                (site.clone(), quote!(::std::string::String::from(#site)))
            }
        };
        if site.is_empty() || site.contains(super::KEY_SEPARATOR) {
            self.errors.push_spanned(
                call.key.as_ref().map(|k| k.to_token_stream()).unwrap_or_else(|| susp.tokens.clone()),
                format!("a flow's call-site name cannot be empty or contain `{}` (it separates the site from the flow's keys)", super::KEY_SEPARATOR),
            );
            return None;
        }
        let slot = format_ident!("__mcp_m{}", k);
        let slot_name = slot.to_string();
        let site_var = format_ident!("__mcp_site{}", k);
        let result = format_ident!("__mcp_r{}", k);
        // the statement, resumed with the flow's result in place of the call
        let mut resumed = s.clone();
        Replace {
            cx: self.cx,
            with: Some(quote!(#result)),
        }
        .visit_stmt_mut(&mut resumed);
        let mut live_point = live_after.clone();
        for d in stmt_defs(s) {
            live_point.remove(&d.ident.to_string());
        }
        live_point.extend(free_in_stmt(&resumed));
        let (vars, prologue) = self.stage_vars(&live_point);
        for v in vars.iter().filter(|v| v.borrow) {
            self.errors.push(
                v.ident.span(),
                format!(
                    "`{}` is a borrow held across the flow call `{text}`; a borrow cannot be stored in the \
                     requestState: keep an owned value instead (e.g. `.to_owned()`, `.clone()`), or borrow again after the call",
                    v.ident
                ),
            );
        }
        self.points.push(Point {
            susp: susp.clone(),
            keys: vec![site.clone()],
            in_loop: self.in_loop(),
            elicit_types: Vec::new(),
            flow: Some(call.clone()),
        });
        let stage = self.new_stage(StageKind::Resume(k), vars.clone(), vec![slot.clone()]);
        self.stages[stage].prologue = prologue;
        let call_tokens = self.rewrite_expr(&Expr::Call(call.call.clone()));
        let Names_ {
            st,
            state,
            dispatch,
            ..
        } = &self.n;
        let name = self.stages[stage].name.clone();
        let stage_name = name.to_string();
        let idents: Vec<&Ident> = vars.iter().map(|v| &v.ident).collect();
        let saves: Vec<TokenStream> = vars
            .iter()
            .map(|v| {
                let id = &v.ident;
                let n = id.to_string();
                let save =
                    self.plumb(quote_spanned!(id.span()=> (&&#p::probe(&#id)).vtable().save(&#id)));
                quote_spanned!(id.span()=> (#n, #save))
            })
            .collect();
        let witness = witness(call);
        let start_ops = quote_spanned!(span=> (&&#p::autoref::wrap(&__mcp_call)).ops());
        let resume_ops = quote_spanned!(span=> (&&#p::autoref::wrap_witness(&__mcp_w)).ops());
        let cx = self.cx;
        let before = quote! {
            let #site_var: ::std::string::String = #site_expr;
            let __mcp_call = #call_tokens;
            let #slot = match #start_ops.start(::core::clone::Clone::clone(&#site_var), __mcp_call).await {
                #p::FlowStep::Done(__mcp_r) => #p::FlowSlot::Done(__mcp_r),
                #p::FlowStep::Suspended(__mcp_s) => {
                    return #p::suspend_flow(#stage_name, [#(#saves),*], #slot_name, __mcp_s, &#site_var, #site);
                }
            };
            #st = #state::#name { #(#idents: #p::Slot::Live(#idents),)* #slot };
            continue #dispatch;
        };
        let resume = quote! {
            let #result = match #slot {
                #p::FlowSlot::Done(__mcp_r) => __mcp_r,
                #p::FlowSlot::Saved(#site_var, __mcp_s) => {
                    let __mcp_w = #witness;
                    match #resume_ops.resume(#cx, ::core::clone::Clone::clone(&#site_var), __mcp_s).await {
                        #p::FlowStep::Done(__mcp_r) => __mcp_r,
                        #p::FlowStep::Suspended(__mcp_s) => {
                            return #p::suspend_flow(#stage_name, [#(#saves),*], #slot_name, __mcp_s, &#site_var, #site);
                        }
                    }
                }
            };
        };
        let rest = self.resumed_code(&resumed, tail);
        self.declare_stmt(s);
        self.stages[stage].code = quote!(#resume #rest);
        Some((before, stage))
    }

    /// Checks that nothing with an effect runs before the suspension point in `root`.
    fn check_first(&mut self, root: &Expr, text: &str) -> bool {
        let mut w = Walk {
            cx: self.cx,
            found: false,
            impure: None,
            bad: None,
        };
        w.walk(root);
        if let Some((span, what)) = w.bad {
            let msg = match what {
                "reported" => return false,
                "lazy" => format!(
                    "`{text}` is on the right of `&&`/`||`, so it runs only sometimes; make that explicit: \
                     `let mut ok = a; if ok {{ ok = {text}?; }}`"
                ),
                "value" => format!(
                    "`{text}` is inside an `if`/`match`/loop/block that produces a value, which cannot be split; \
                     use statements instead: move the code that needs the value into the branch, \
                     e.g. `if c {{ let v = {text}?; … }}`"
                ),
                _ => format!(
                    "`{text}` cannot suspend here; bind it with its own `let v = {text}?;` first"
                ),
            };
            self.errors.push_spanned(span, msg);
            return false;
        }
        if let Some(span) = w.impure {
            self.errors.push_spanned(
                span,
                format!(
                    "this runs before `{text}` in the same expression, so it would run in the round before the suspension \
                     and its result would be lost; hoist the suspension into its own statement first: `let v = {text}?;`, then use `v` here"
                ),
            );
            return false;
        }
        true
    }

    fn lower_compound(
        &mut self,
        e: &Expr,
        ret: Tail,
        target: Cont,
        live_after: &Names,
    ) -> TokenStream {
        let span = e.span();
        match e {
            Expr::If(i) => {
                if has_susp(&i.cond, self.cx) {
                    self.errors.push_spanned(
                        &i.cond,
                        "a suspension point in an `else if` condition cannot be split; nest it: `else { let c = cx.ask(…).await?; if c { … } }`",
                    );
                }
                self.scopes.push(Vec::new());
                let cond = self.rewrite_expr(&i.cond);
                if let Expr::Let(l) = &*i.cond {
                    self.declare(pat_bindings(&l.pat));
                }
                let before = self.assigned.clone();
                let then = self.lower_block(&i.then_branch, ret, target, live_after);
                self.assigned = before.clone();
                self.scopes.pop();
                let els = match &i.else_branch {
                    Some((_, e)) => match &**e {
                        Expr::If(_) => self.lower_compound(e, ret, target, live_after),
                        Expr::Block(b) => self.lower_block(&b.block, ret, target, live_after),
                        other => {
                            let block: Block = syn::parse_quote!({ #other });
                            self.lower_block(&block, ret, target, live_after)
                        }
                    },
                    None => {
                        let g = self.emit_cont(target, span);
                        quote!({ #g })
                    }
                };
                self.assigned = before;
                quote!(if #cond #then else #els)
            }
            Expr::Match(m) => {
                let scrut = self.rewrite_expr(&m.expr);
                let mut arms = TokenStream::new();
                let before = self.assigned.clone();
                for arm in &m.arms {
                    self.assigned = before.clone();
                    self.scopes.push(Vec::new());
                    self.declare(pat_bindings(&arm.pat));
                    let pat = &arm.pat;
                    let guard = arm.guard.as_ref().map(|(_, g)| {
                        let g = self.rewrite_expr(g);
                        quote!(if #g)
                    });
                    let body = match &*arm.body {
                        Expr::Block(b) if b.label.is_none() => {
                            self.lower_block(&b.block, ret, target, live_after)
                        }
                        other => {
                            let block: Block = syn::parse_quote!({ #other });
                            self.lower_block(&block, ret, target, live_after)
                        }
                    };
                    self.scopes.pop();
                    arms.extend(quote!(#pat #guard => #body));
                }
                self.assigned = before;
                quote!(match #scrut { #arms })
            }
            Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.loops.push(LoopCtx {
                        label: Some(l.name.clone()),
                        is_block: true,
                        brk: target,
                        cont: None,
                    });
                    let code = self.lower_block(&b.block, ret, target, live_after);
                    self.loops.pop();
                    code
                } else {
                    self.lower_block(&b.block, ret, target, live_after)
                }
            }
            Expr::Loop(lp) => {
                let mut live_h = free_in_stmts(&lp.body.stmts);
                live_h.extend(live_after.iter().cloned());
                self.lower_loop(
                    lp.label.as_ref().map(|l| l.name.clone()),
                    &live_h,
                    target,
                    span,
                    &lp.body.stmts,
                    |me, h| {
                        let body = me.lower_block(&lp.body, Tail::Stmt, Cont::Goto(h), &live_h);
                        quote!(#body)
                    },
                )
            }
            Expr::While(w) => {
                let mut live_h = free_in_expr(&w.cond);
                live_h.extend(free_in_stmts(&w.body.stmts));
                live_h.extend(live_after.iter().cloned());
                self.lower_loop(
                    w.label.as_ref().map(|l| l.name.clone()),
                    &live_h,
                    target,
                    span,
                    &w.body.stmts,
                    |me, h| {
                        me.scopes.push(Vec::new());
                        let cond = me.rewrite_expr(&w.cond);
                        if let Expr::Let(l) = &*w.cond {
                            me.declare(pat_bindings(&l.pat));
                        }
                        let body = me.lower_block(&w.body, Tail::Stmt, Cont::Goto(h), &live_h);
                        me.scopes.pop();
                        let exit = me.emit_cont(target, span);
                        quote!(if #cond #body else { #exit })
                    },
                )
            }
            Expr::ForLoop(f) => {
                let bindings = pat_bindings(&f.pat);
                let derived: Names = self
                    .scopes
                    .iter()
                    .flatten()
                    .filter(|v| v.rederive.is_some())
                    .map(|v| v.ident.to_string())
                    .collect();
                // over a borrow of the arguments: keep the position, bind the item again
                let positional = bindings.iter().all(|b| !b.mutable && !b.by_ref)
                    && super::args::reaches_into(&f.expr, &self.args, &derived);
                let src = self.rewrite_expr(&f.expr);
                let iter = format_ident!(
                    "__mcp_{}{}",
                    if positional { "pos" } else { "iter" },
                    self.tmp,
                    span = f.expr.span()
                );
                self.tmp += 1;
                let init = if positional {
                    quote_spanned!(f.expr.span()=> let mut #iter: usize = 0;)
                } else {
                    quote_spanned!(f.expr.span()=> let mut #iter = ::mcp_tool_runtime::__private::for_items(#src);)
                };
                self.declare(vec![Binding {
                    ident: iter.clone(),
                    mutable: true,
                    by_ref: false,
                }]);
                let mut live_h = free_in_stmts(&f.body.stmts);
                for b in &bindings {
                    live_h.remove(&b.ident.to_string());
                }
                live_h.insert(iter.to_string());
                if positional {
                    live_h.extend(free_in_expr(&f.expr));
                }
                live_h.extend(live_after.iter().cloned());
                let code = self.lower_loop(f.label.as_ref().map(|l| l.name.clone()), &live_h, target, span, &f.body.stmts, |me, h| {
                    me.scopes.push(Vec::new());
                    let pat = &f.pat;
                    let head = if positional {
                        let mut deps = free_in_expr(&f.expr);
                        deps.insert(iter.to_string());
                        let item = me.plumb(quote!(::mcp_tool_runtime::__private::nth_item(#src, #iter - 1)));
                        let rebind = quote!(let #pat = #item;);
                        me.declare_rederived(bindings.clone(), rebind, deps);
                        quote!(if let ::core::option::Option::Some(#pat) = ::core::iter::Iterator::nth(&mut ::core::iter::IntoIterator::into_iter(#src), #iter))
                    } else {
                        me.declare(bindings.clone());
                        quote!(if let ::core::option::Option::Some(#pat) = #iter.pop_front())
                    };
                    let body = me.lower_block(&f.body, Tail::Stmt, Cont::Goto(h), &live_h);
                    me.scopes.pop();
                    let exit = me.emit_cont(target, span);
                    if positional {
                        quote!(#head { #iter += 1; #body } else { #exit })
                    } else {
                        quote!(#head #body else { #exit })
                    }
                });
                quote!(#init #code)
            }
            other => {
                self.errors.push_spanned(
                    other,
                    "a suspension point inside an `unsafe` block cannot be split; keep the suspension outside the block",
                );
                TokenStream::new()
            }
        }
    }

    fn lower_loop(
        &mut self,
        label: Option<Lifetime>,
        live_h: &Names,
        target: Cont,
        span: Span,
        stmts: &[Stmt],
        body: impl FnOnce(&mut Self, usize) -> TokenStream,
    ) -> TokenStream {
        // at the head, a deferred variable the body assigns may be assigned or not
        self.note_maybe(stmts);
        let h = self.new_stage_for(StageKind::Jump, live_h, Vec::new());
        let enter = self.goto(h, span);
        self.loops.push(LoopCtx {
            label,
            is_block: false,
            brk: target,
            cont: Some(h),
        });
        let code = body(self, h);
        self.loops.pop();
        self.stages[h].code = code;
        enter
    }
}

/// An expression of the flow call's type that is never evaluated (`if false { Some(f(loop
/// {}, …)) } else { None }`): names the flow's type without naming its path as a type, so
/// that a function that is not a flow gets `Flow`'s diagnostic, not a path error.
pub fn witness(call: &FlowCall) -> TokenStream {
    let path = &call.path;
    let args = call.call.args.iter().map(|_| quote!(loop {}));
    quote_spanned! {call.call.span()=>
        if false {
            ::core::option::Option::Some(#path(#(#args),*))
        } else {
            ::core::option::Option::None
        }
    }
}

fn node_span<T: quote::ToTokens>(t: &T) -> Span {
    t.span()
}

fn strip_type(p: &syn::Pat) -> &syn::Pat {
    match p {
        syn::Pat::Type(t) => strip_type(&t.pat),
        other => other,
    }
}

/// The key a pattern gives: the name of its single binding, leading underscores removed.
fn single_binding(p: &syn::Pat) -> Option<String> {
    let b = pat_bindings(p);
    match b.as_slice() {
        [one] => {
            let s = one.ident.to_string();
            if s.starts_with("__mcp_") {
                // a hoisted `if`/`match`/`for` head: no name to derive a key from
                return None;
            }
            let t = s.trim_start_matches('_');
            (!t.is_empty()).then(|| t.to_string())
        }
        _ => None,
    }
}

/// `x = …` / `x += …`: the key is `x`.
fn assign_target(e: &Expr) -> Option<String> {
    let left = match e {
        Expr::Assign(a) => &a.left,
        Expr::Binary(b) if is_assign_op(&b.op) => &b.left,
        _ => return None,
    };
    match &**left {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Field(f) => match &f.member {
            syn::Member::Named(n) => Some(n.to_string()),
            _ => None,
        },
        _ => None,
    }
}

fn is_assign_op(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// `init` is the suspension itself or the suspension followed by `?`.
fn direct_or_try(init: &Expr, susp: &Expr) -> bool {
    match init {
        Expr::Try(t) => std::ptr::eq(&*t.expr, susp) || *t.expr == *susp,
        e => e == susp,
    }
}

/// `T` of `Elicitation<T>`.
fn elicitation_inner(t: &Type) -> Option<Type> {
    let Type::Path(tp) = t else { return None };
    let seg = tp.path.segments.last()?;
    if seg.ident != "Elicitation" {
        return None;
    }
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(ab) => ab.args.iter().find_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t.clone()),
            _ => None,
        }),
        _ => None,
    }
}

/// `…::Ask::new(m)` -> `…::Ask::<T>::new(m)` (inside builder calls).
fn set_turbofish(e: &mut Expr, t: &Type) {
    match e {
        Expr::MethodCall(m) => set_turbofish(&mut m.receiver, t),
        Expr::Call(c) => {
            if let Expr::Path(p) = &mut *c.func {
                let n = p.path.segments.len();
                if n >= 2 {
                    p.path.segments[n - 2].arguments =
                        syn::PathArguments::AngleBracketed(syn::parse_quote!(::<#t>));
                }
            }
        }
        _ => {}
    }
}

struct Walk<'c> {
    cx: &'c Ident,
    found: bool,
    impure: Option<TokenStream>,
    bad: Option<(TokenStream, &'static str)>,
}

fn pure(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Paren(p) => pure(&p.expr),
        Expr::Reference(r) => pure(&r.expr),
        Expr::Field(f) => pure(&f.base),
        Expr::Cast(c) => pure(&c.expr),
        Expr::Tuple(t) => t.elems.iter().all(pure),
        Expr::Unary(u) => pure(&u.expr),
        _ => false,
    }
}

impl Walk<'_> {
    fn walk(&mut self, e: &Expr) {
        if self.found || self.bad.is_some() {
            return;
        }
        if as_suspension(e, self.cx).is_some() {
            self.found = true;
            return;
        }
        if !has_susp(e, self.cx) {
            if !pure(e) && self.impure.is_none() {
                self.impure = Some(e.to_token_stream());
            }
            return;
        }
        match e {
            Expr::MethodCall(m) => {
                self.walk(&m.receiver);
                m.args.iter().for_each(|a| self.walk(a));
            }
            Expr::Call(c) => {
                self.walk(&c.func);
                c.args.iter().for_each(|a| self.walk(a));
            }
            Expr::Binary(b) => {
                if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_))
                    && has_susp(&b.right, self.cx)
                {
                    self.bad = Some((b.right.to_token_stream(), "lazy"));
                } else if is_assign_op(&b.op) {
                    self.walk(&b.right);
                    self.walk(&b.left);
                } else {
                    self.walk(&b.left);
                    self.walk(&b.right);
                }
            }
            Expr::Assign(a) => {
                self.walk(&a.right);
                self.walk(&a.left);
            }
            Expr::Unary(u) => self.walk(&u.expr),
            Expr::Cast(c) => self.walk(&c.expr),
            Expr::Paren(p) => self.walk(&p.expr),
            Expr::Group(g) => self.walk(&g.expr),
            Expr::Field(f) => self.walk(&f.base),
            Expr::Try(t) => self.walk(&t.expr),
            Expr::Await(a) => self.walk(&a.base),
            Expr::Reference(r) => self.walk(&r.expr),
            Expr::Return(r) => {
                if let Some(x) = &r.expr {
                    self.walk(x)
                }
            }
            Expr::Index(i) => {
                self.walk(&i.expr);
                self.walk(&i.index);
            }
            Expr::Struct(s) => {
                s.fields.iter().for_each(|f| self.walk(&f.expr));
                if let Some(r) = &s.rest {
                    self.walk(r)
                }
            }
            Expr::Tuple(t) => t.elems.iter().for_each(|x| self.walk(x)),
            Expr::Array(a) => a.elems.iter().for_each(|x| self.walk(x)),
            Expr::Range(r) => {
                if let Some(x) = &r.start {
                    self.walk(x)
                }
                if let Some(x) = &r.end {
                    self.walk(x)
                }
            }
            Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_)
            | Expr::TryBlock(_)
            | Expr::Const(_) => self.bad = Some((e.to_token_stream(), "value")),
            Expr::Closure(_) | Expr::Async(_) | Expr::Macro(_) => {
                self.bad = Some((e.to_token_stream(), "reported"))
            }
            _ => self.bad = Some((e.to_token_stream(), "other")),
        }
    }
}

/// Replaces the (only) suspension point with the answer expression.
struct Replace<'c> {
    cx: &'c Ident,
    with: Option<TokenStream>,
}

impl VisitMut for Replace<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.with.is_some() && as_suspension(e, self.cx).is_some() {
            *e = Expr::Verbatim(self.with.take().expect("once"));
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

struct RwLoop {
    label: Option<String>,
    is_block: bool,
    brk: Option<TokenStream>,
    /// The jump of `break value` (its value in `__mcp_value`), when the loop has a value.
    brk_value: Option<TokenStream>,
    cont: Option<TokenStream>,
}

/// Rewrites `break`/`continue`/`return` in code that is emitted as written.
struct Rw<'a> {
    loops: &'a [RwLoop],
    /// Loops and labelled blocks inside the code being rewritten: (label, is_block).
    inner: Vec<(Option<String>, bool)>,
    finish: &'a Ident,
    errors: Vec<(Span, String)>,
}

impl<'a> Rw<'a> {
    /// The exploded loop a `break`/`continue` with this label targets, if it leaves the code.
    fn target(&self, label: Option<&Lifetime>, is_continue: bool) -> Option<&'a RwLoop> {
        let loops: &'a [RwLoop] = self.loops;
        match label {
            Some(l) => {
                let name = l.ident.to_string();
                if self
                    .inner
                    .iter()
                    .any(|(n, _)| n.as_deref() == Some(name.as_str()))
                {
                    return None;
                }
                loops
                    .iter()
                    .rev()
                    .find(|x| x.label.as_deref() == Some(name.as_str()))
            }
            None => {
                if self.inner.iter().any(|(_, is_block)| !is_block) {
                    return None;
                }
                let _ = is_continue;
                loops.iter().rev().find(|x| !x.is_block)
            }
        }
    }
}

impl VisitMut for Rw<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                let label = match e {
                    Expr::Loop(l) => l.label.as_ref(),
                    Expr::While(l) => l.label.as_ref(),
                    Expr::ForLoop(l) => l.label.as_ref(),
                    _ => None,
                }
                .map(|l| l.name.ident.to_string());
                self.inner.push((label, false));
                syn::visit_mut::visit_expr_mut(self, e);
                self.inner.pop();
            }
            Expr::Block(b) if b.label.is_some() => {
                self.inner
                    .push((b.label.as_ref().map(|l| l.name.ident.to_string()), true));
                syn::visit_mut::visit_expr_mut(self, e);
                self.inner.pop();
            }
            Expr::Break(b) => {
                if let Some(t) = self.target(b.label.as_ref(), false) {
                    if let Some(v) = &mut b.expr {
                        if let Some(g) = &t.brk_value {
                            self.visit_expr_mut(v);
                            let v = &**v;
                            *e = Expr::Verbatim(quote!({ let __mcp_value = #v; #g }));
                            return;
                        }
                        self.errors.push((v.span(), "`break` with a value out of a loop that contains a suspension point works only when the loop is a `let` initializer (`let x = loop { … break v; };`); assign to a variable declared before the loop, or `return` the value".into()));
                    }
                    match &t.brk {
                        Some(g) => *e = Expr::Verbatim(g.clone()),
                        None => self.errors.push((
                            b.span(),
                            "cannot `break` out of a loop that ends the function; `return` the value instead".into(),
                        )),
                    }
                } else {
                    syn::visit_mut::visit_expr_mut(self, e);
                }
            }
            Expr::Continue(c) => {
                if let Some(t) = self.target(c.label.as_ref(), true)
                    && let Some(g) = &t.cont
                {
                    *e = Expr::Verbatim(g.clone());
                }
            }
            Expr::Return(r) => {
                if let Some(x) = &mut r.expr {
                    self.visit_expr_mut(x);
                    let finish = self.finish;
                    let x = &**x;
                    *e = Expr::Verbatim(quote!(return #finish(#x)));
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
