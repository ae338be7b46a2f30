//! Statement lists and blocks: liveness per statement, hoisting, and the dispatch of each
//! statement to emission as written, splitting or exploding.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Stmt};

use super::super::vars::{Names, free_in_stmt, stmt_defs};
use super::*;

impl Lowerer<'_> {
    /// Rewrites `break`/`continue` that leave exploded loops into jumps and `return e` into
    /// `return done(e)` (the runtime function `rt` names).
    pub(super) fn rewrite<T: quote::ToTokens + Clone>(
        &mut self,
        node: &T,
        f: fn(&mut JumpRewriter, &mut T),
    ) -> TokenStream {
        let mut targets = Vec::new();
        for i in 0..self.loops.len() {
            let (label, is_block, brk, cont) = {
                let l = &self.loops[i];
                (l.label.clone(), l.is_block, l.brk, l.cont)
            };
            let (brk, brk_value) = match brk {
                After::Goto(t) => {
                    // the loop (or labelled block) is a `let` initializer: `break v` carries `v`
                    let value = self.stages[t]
                        .value
                        .is_some()
                        .then(|| self.goto_with(t, node_span(node), Some(quote!(__mcp_value))));
                    (Some(self.goto(t, node_span(node))), value)
                }
                After::Return => (None, None),
            };
            let cont = cont.map(|t| self.goto(t, node_span(node)));
            targets.push(ExplodedLoop {
                label: label.map(|l| l.ident.to_string()),
                is_block,
                brk,
                brk_value,
                cont,
            });
        }
        let mut rw = JumpRewriter {
            loops: &targets,
            inner: Vec::new(),
            finish: &self.n.finish,
            errors: Vec::new(),
        };
        let mut node = node.clone();
        f(&mut rw, &mut node);
        for (span, r) in rw.errors {
            self.errors.refuse_at(span, r);
        }
        quote!(#node)
    }

    pub(super) fn rewrite_stmt(&mut self, s: &Stmt) -> TokenStream {
        self.rewrite(s, |rw, s| rw.visit_stmt_mut(s))
    }

    pub(super) fn rewrite_expr(&mut self, e: &Expr) -> TokenStream {
        self.rewrite(e, |rw, e| rw.visit_expr_mut(e))
    }

    /// The final expression `e` of a list in `tail` position.
    pub(super) fn tail_value(&mut self, e: &Expr, tail: Tail) -> TokenStream {
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

    pub(super) fn ret(&mut self, e: &Expr) -> TokenStream {
        let e = self.rewrite_expr(e);
        let finish = &self.n.finish;
        quote!(return #finish(#e);)
    }

    pub(super) fn lower_block(
        &mut self,
        b: &Block,
        tail: Tail,
        cont: After,
        live_after: &Names,
    ) -> TokenStream {
        self.scopes.push(Vec::new());
        let code = self.lower_seq(&b.stmts, tail, cont, live_after);
        self.scopes.pop();
        quote!({ #code })
    }

    pub(super) fn lower_seq(
        &mut self,
        stmts: &[Stmt],
        tail: Tail,
        cont: After,
        live_after: &Names,
    ) -> TokenStream {
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
            // items at the top of the body are declared once for the whole machine
            if matches!(s, Stmt::Item(_)) && self.scopes.len() == 1 {
                continue;
            }
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
                        owned: false,
                    });
                    self.next_id += 1;
                    let j = self.new_stage(StageKind::Jump, vars, Vec::new());
                    self.stages[j].value = Some(val.clone());
                    self.stages[j].prologue = prologue;
                    let code = self.lower_compound(init, Tail::Value(j), After::Goto(j), &lv);
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
                                Tail::Value(j) => After::Goto(j),
                                _ => After::Return,
                            },
                            None,
                        )
                    } else if rest.is_empty() {
                        (cont, None)
                    } else {
                        self.assigned = after.clone();
                        let j = self.new_stage_for(StageKind::Jump, &live[i + 1], Vec::new());
                        self.assigned = before;
                        (After::Goto(j), Some(j))
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
}
