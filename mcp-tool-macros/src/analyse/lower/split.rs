//! Splitting a statement at its suspension point: the requests (or the flow call) end the
//! current stage; the rest of the statement starts the next one.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Local, Stmt, Type};

use super::super::susp::{FlowCall, Kind, Susp, as_suspension, find_all, short_text};
use super::super::vars::{Names, free_in_stmt, pat_bindings, stmt_defs};
use super::*;
use crate::analyse::anf::{Origin, Origins, is_assign_op};
use crate::analyse::refusal::Refusal;
use crate::rt::{Rt, witness};

impl Lowerer<'_> {
    /// Splits a statement with a suspension point directly in it. Returns the code that ends
    /// the current stage and the index of the new stage (whose code starts with the rest of
    /// the statement; the caller appends what follows). Declares the statement's bindings.
    pub(super) fn split(
        &mut self,
        s: &Stmt,
        tail: Tail,
        live_after: &Names,
    ) -> Option<(TokenStream, usize)> {
        let found = find_all(s, self.cx);
        let susp_expr = found[0].clone();
        if found.len() > 1 {
            self.errors.refuse(
                found[1],
                Refusal::Unlowered {
                    what: short_text(found[1]),
                },
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
                    self.errors
                        .refuse(&susp.tokens, Refusal::Unlowered { what: text });
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
                Some(p) => single_binding(p, self.origins),
                None => assign_target(main),
            };
            return self.split_flow(s, tail, live_after, &susp, call, derived);
        }
        let derived: Vec<Option<String>> = match (susp.kind, pat) {
            (Kind::Round, Some(p)) => {
                let p = strip_type(p);
                match p {
                    syn::Pat::Tuple(t) => t
                        .elems
                        .iter()
                        .map(|p| single_binding(p, self.origins))
                        .collect(),
                    _ => vec![None; susp.parts.len()],
                }
            }
            (_, Some(p)) => vec![single_binding(p, self.origins)],
            (_, None) => vec![assign_target(main)],
        };
        let mut keys = Vec::new();
        let mut ordinal = false;
        for (i, part) in susp.parts.iter().enumerate() {
            let mut key = part
                .key
                .as_ref()
                .map(|k| k.value())
                .or_else(|| derived.get(i).cloned().flatten());
            if key.is_none() && susp.kind != Kind::Round {
                // no name to take it from: the method and its ordinal in source order
                let n = self
                    .points
                    .iter()
                    .filter(|p| p.susp.kind == susp.kind)
                    .count();
                key = Some(format!("{}_{}", susp.method, n + 1));
                ordinal = true;
            }
            match key {
                Some(k) if k.is_empty() => self.errors.refuse(&part.tokens, Refusal::EmptyKey),
                Some(k) if k.contains(crate::analyse::KEY_SEPARATOR) => {
                    self.errors.refuse(&part.tokens, Refusal::KeyWithSeparator)
                }
                Some(k) => keys.push(k),
                None => self.errors.refuse(&part.tokens, Refusal::NoKeyInRound),
            }
        }
        if keys.len() != susp.parts.len() {
            return None;
        }
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].contains(k) {
                self.errors.refuse(
                    &susp.parts[i].tokens,
                    Refusal::DuplicateKeyInRound { key: k },
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
            // `let NameForm { name } = cx.ask(..).await?;`: the answer type is the pattern's
            // path (an irrefutable `let`, so a struct, not an enum variant)
            Stmt::Local(Local {
                pat:
                    syn::Pat::Struct(syn::PatStruct {
                        qself: None, path, ..
                    })
                    | syn::Pat::TupleStruct(syn::PatTupleStruct {
                        qself: None, path, ..
                    }),
                init: Some(init),
                ..
            }) if susp.kind == Kind::Ask && direct_or_try(&init.expr, &susp_expr) => {
                Some(syn::Type::Path(syn::TypePath {
                    qself: None,
                    path: path.clone(),
                }))
            }
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
        // the request code (the `regen` flag is decided below, once the stage is known)
        let cx = self.cx;
        let mut before = TokenStream::new();
        let mut builders = Vec::new();
        for (i, part) in susp.parts.iter().enumerate() {
            let mut builder = part.builder.clone();
            if matches!(susp.kind, Kind::Ask | Kind::Elicit)
                && part.elicit_ty.is_none()
                && let Some((_, t)) = elicit_types.get(i)
            {
                set_turbofish(&mut builder, t);
            }
            builders.push(builder);
        }
        // the resumed statement
        let p = Rt;
        let answer = if susp.kind == Kind::Checkpoint {
            quote!(#p::resumed())
        } else {
            let each: Vec<TokenStream> = markers
                .iter()
                .map(|m| quote!(#p::answer_for(#cx, #m)))
                .collect();
            if susp.kind == Kind::Round {
                quote!(#p::answers((#(#each,)*)))
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
        let (regenerable, soft) = self.regeneration(&susp, &builders, &mut live_point);
        let soft_saved = |v: &Var| format_ident!("__mcp_k{}_{}", k, v.ident);
        let soft_ty = |v: &Var| format_ident!("__mcp_t{}_{}", k, v.ident);
        // before the requests are made (a builder may move what it reads)
        for v in &soft {
            let id = &v.ident;
            let (saved, ty) = (soft_saved(v), soft_ty(v));
            before.extend(quote_spanned!(id.span()=>
                let #saved = (&&#p::soft_probe(&#id)).soft_save(&#id);
                let #ty = #p::type_of(&#id);
            ));
        }
        // with soft variables, the request is made again only when they were saved
        let regen = if soft.is_empty() {
            None
        } else {
            let saved = soft.iter().map(soft_saved);
            Some(quote!((#(#saved.is_some())&&*)))
        };
        // one `const` per request: its key, whether `.key("…")` fixed it at the suspension
        // point (otherwise a key set on the builder where it was built wins at run time, as
        // in direct mode) and whether it can be made again
        let consts: Vec<Ident> = markers
            .iter()
            .map(|m| format_ident!("__mcp_R{}", &m.to_string()["__mcp_m".len()..]))
            .collect();
        for (i, part) in susp.parts.iter().enumerate() {
            let (c, key, fixed) = (&consts[i], &keys[i], part.key.is_some());
            let n = markers[i].to_string();
            self.consts
                .push(quote!(const #c: #p::Point = #p::point(#n, #key, #fixed, #regenerable);));
        }
        // the builder bound first (its own line), then registered under the point's `const`
        let request_code = |this: &mut Self, regen: Option<&TokenStream>| {
            let mut out = TokenStream::new();
            for (i, part) in susp.parts.iter().enumerate() {
                let builder = this.rewrite_expr(&builders[i]);
                let (m, c) = (&markers[i], &consts[i]);
                let b = format_ident!("__mcp_b{}", &m.to_string()["__mcp_m".len()..]);
                let req = match regen {
                    None => quote_spanned!(part.span=> __mcp_p.request(#cx, &#c, #b)?),
                    Some(r) => quote_spanned!(part.span=> __mcp_p.request_if(#cx, &#c, #r, #b)?),
                };
                out.extend(quote_spanned!(part.span=> let #b = #builder; let #m = #req;));
            }
            out
        };
        before.extend(request_code(self, regen.as_ref()));
        // made again in the stage after the point: the soft variables restored first
        let mut requests = TokenStream::new();
        for v in &soft {
            let id = &v.ident;
            let take = plumb(
                self.cx,
                &self.err,
                quote_spanned!(id.span()=> (&&#p::soft_probe_slot(&#id)).soft_take(#id)),
            );
            requests.extend(quote_spanned!(id.span()=> let #id = #take;));
        }
        requests.extend(request_code(self, None));
        let (vars, prologue) = self.stage_vars(&live_point);
        for v in vars.iter().filter(|v| v.borrow) {
            self.errors.refuse_at(
                v.ident.span(),
                Refusal::BorrowKept {
                    var: crate::analyse::anf::display(self.origins, &v.ident.to_string()),
                    text: &text,
                    flow: false,
                },
            );
        }
        self.points.push(Point {
            susp: susp.clone(),
            keys,
            in_loop: self.in_loop(),
            elicit_types,
            flow: None,
            ordinal,
        });
        let stage = self.new_stage(StageKind::Resume(k), vars.clone(), markers.clone());
        self.stages[stage].prologue = prologue;
        self.stages[stage].soft = soft.clone();
        // suspend
        let GeneratedNames {
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
            let rt_id = Rt.at(id.span());
            let save = quote_spanned!(id.span()=> (&&#rt_id::probe(&#id)).vtable().save(&#id));
            quote_spanned!(id.span()=> (#n, #save))
        });
        let stage_name = name.to_string();
        let soft_fields = soft.iter().map(|v| {
            let (saved, ty) = (soft_saved(v), soft_ty(v));
            quote!(#p::Slot::soft(#saved, #ty))
        });
        let ready = if susp.kind == Kind::Checkpoint {
            TokenStream::new()
        } else {
            quote! {
                if #p::Reentrant::round_ready(#cx) {
                    #st = #state::#name(#(#p::Slot::Live(#idents),)* #(#soft_fields,)* #(#markers),*);
                    continue #dispatch;
                }
            }
        };
        let suspend = if susp.kind == Kind::Checkpoint {
            // a checkpoint always ends the round; markers are unused
            let markers = markers.iter().map(|_| quote!(::core::marker::PhantomData));
            quote! {
                let __mcp_saved = __mcp_p.suspend(#cx, #stage_name, [#(#saves),*]);
                #st = #state::#name(#(#p::Slot::Live(#idents),)* #(#markers),*);
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
                .map(|((_, m), _)| quote!(#m.kept()))
                .collect();
            if !soft.is_empty() {
                let soft_saves = soft.iter().map(|v| {
                    let n = v.ident.to_string();
                    let saved = soft_saved(v);
                    quote!((#n, #saved))
                });
                quote!(return __mcp_p.suspend_full(#cx, #stage_name, [#(#saves),*], [#(#soft_saves),*], [#(#runtime_keys),*]);)
            } else if runtime_keys.is_empty() {
                quote!(return __mcp_p.suspend(#cx, #stage_name, [#(#saves),*]);)
            } else {
                quote!(return __mcp_p.suspend_keys(#cx, #stage_name, [#(#saves),*], [#(#runtime_keys),*]);)
            }
        };
        before.extend(quote!(#ready #suspend));
        // the new stage: the requests made again when their answers are missing, else the
        // rest of the statement
        let code = self.resumed_code(&resumed, tail);
        let code = if regenerable {
            quote! {
                if #p::reasking(#cx) {
                    #requests
                    return #p::reask();
                }
                #code
            }
        } else {
            code
        };
        self.declare_stmt(s);
        self.stages[stage].code = code;
        Some((before, stage))
    }

    /// Whether the stage after a suspension point can make its requests again (a retry
    /// missing an answer is then asked again without the requests kept in the state), and the
    /// variables it keeps only for that ("soft"). It can when it has what the builders read:
    /// its own variables, the parameters, borrows of the arguments (added to `live_point`:
    /// bound again for free), and other variables whose `let` visibly binds an owned value —
    /// soft ones, saved before the requests are made when they serialize, restored only to
    /// make them again (a probe cannot tell a borrow from an owned type, and a borrow in a
    /// probe is a hard error, not a fallback). A builder reading anything else keeps its
    /// requests whole; so does one reading a soft variable that does not serialize (decided at
    /// run time).
    fn regeneration(
        &self,
        susp: &Susp,
        builders: &[Expr],
        live_point: &mut Names,
    ) -> (bool, Vec<Var>) {
        let mut extra: Vec<String> = builders
            .iter()
            .flat_map(free_in_expr)
            .filter(|n| !live_point.contains(n))
            .filter(|n| self.lookup(n).is_some())
            .collect();
        extra.sort();
        extra.dedup();
        let regenerable = susp.kind != Kind::Checkpoint
            && extra.iter().all(|n| {
                self.lookup(n).is_some_and(|v| {
                    v.rederive.is_some() || (v.owned && !v.borrow && v.deferred.is_none())
                })
            });
        if !regenerable {
            return (false, Vec::new());
        }
        let mut soft: Vec<Var> = Vec::new();
        for n in extra {
            match self.lookup(&n) {
                Some(v) if v.rederive.is_some() => {
                    live_point.insert(n);
                }
                Some(v) => soft.push(v.clone()),
                None => {}
            }
        }
        soft.sort_by_key(|v| v.id);
        (true, soft)
    }

    /// The rest of a split statement, in the stage after its suspension point.
    pub(super) fn resumed_code(&mut self, resumed: &Stmt, tail: Tail) -> TokenStream {
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
    pub(super) fn next_site(&mut self, base: &str) -> String {
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
    pub(super) fn split_flow(
        &mut self,
        s: &Stmt,
        tail: Tail,
        live_after: &Names,
        susp: &Susp,
        call: &FlowCall,
        derived: Option<String>,
    ) -> Option<(TokenStream, usize)> {
        let text = &susp.text;
        let p = Rt;
        let span = call.call.span();
        if let Some(seg) = call.path.segments.iter().find(|s| !s.arguments.is_empty()) {
            self.errors.refuse(&seg.arguments, Refusal::FlowTurbofish);
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
        if site.is_empty() || site.contains(crate::analyse::KEY_SEPARATOR) {
            let at = call
                .key
                .as_ref()
                .map(|k| k.to_token_stream())
                .unwrap_or_else(|| susp.tokens.clone());
            self.errors.refuse(at, Refusal::BadSite);
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
            self.errors.refuse_at(
                v.ident.span(),
                Refusal::BorrowKept {
                    var: crate::analyse::anf::display(self.origins, &v.ident.to_string()),
                    text,
                    flow: true,
                },
            );
        }
        self.points.push(Point {
            susp: susp.clone(),
            keys: vec![site.clone()],
            in_loop: self.in_loop(),
            elicit_types: Vec::new(),
            flow: Some(call.clone()),
            ordinal: false,
        });
        let stage = self.new_stage(StageKind::Resume(k), vars.clone(), vec![slot.clone()]);
        self.stages[stage].prologue = prologue;
        let call_tokens = self.rewrite_expr(&Expr::Call(call.call.clone()));
        let GeneratedNames {
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
                let save = quote_spanned!(id.span()=> (&&#p::probe(&#id)).vtable().save(&#id));
                quote_spanned!(id.span()=> (#n, #save))
            })
            .collect();
        let witness = witness(&call.path, &call.call);
        let start_ops = quote_spanned!(span=> (&&#p::autoref::wrap(&__mcp_call)).ops());
        let resume_ops = quote_spanned!(span=> (&&#p::autoref::wrap_witness(&__mcp_w)).ops());
        let cx = self.cx;
        // the flow's step as a `FlowSlot` (its state kept with the call site): suspended, the
        // caller suspends too; finished, the next stage takes its result
        let suspend = quote! {
            return __mcp_p.suspend_flow(#cx, #stage_name, [#(#saves),*], #slot_name, #slot, #site);
        };
        // the call's arguments, then its `.key(…)`: Rust's order
        let before = quote! {
            let __mcp_call = #call_tokens;
            let #slot = #start_ops.call(#site_expr, __mcp_call).await;
            if #slot.suspended() {
                #suspend
            }
            #st = #state::#name(#(#p::Slot::Live(#idents),)* #slot);
            continue #dispatch;
        };
        let resume = quote! {
            let #result = match #slot {
                #p::FlowSlot::Done(__mcp_r) => __mcp_r,
                #p::FlowSlot::Saved(#site_var, __mcp_s) => {
                    let __mcp_w = #witness;
                    let #slot = #resume_ops.again(#cx, #site_var, __mcp_s).await;
                    let #p::FlowSlot::Done(__mcp_r) = #slot else {
                        #suspend
                    };
                    __mcp_r
                }
            };
        };
        let rest = self.resumed_code(&resumed, tail);
        self.declare_stmt(s);
        self.stages[stage].code = quote!(#resume #rest);
        Some((before, stage))
    }

    /// Checks that nothing with an effect runs before the suspension point in `root` (the
    /// A-normal form made it so; a form it missed is refused, not miscompiled).
    pub(super) fn check_first(&mut self, root: &Expr, text: &str) -> bool {
        let mut w = EffectsBefore {
            cx: self.cx,
            found: false,
            impure: None,
            bad: None,
        };
        w.walk(root);
        let at = match (w.bad, w.impure) {
            (Some((_, "reported")), _) => return false,
            (Some((span, _)), _) | (None, Some(span)) => span,
            (None, None) => return true,
        };
        let what = text.to_owned();
        self.errors.refuse(at, Refusal::Unlowered { what });
        false
    }
}

pub(super) fn node_span<T: quote::ToTokens>(t: &T) -> Span {
    t.span()
}

pub(super) fn strip_type(p: &syn::Pat) -> &syn::Pat {
    match p {
        syn::Pat::Type(t) => strip_type(&t.pat),
        other => other,
    }
}

/// The key a pattern gives: the name of its single binding as written, leading underscores
/// removed. A temporary of the A-normal form gives none.
pub(super) fn single_binding(p: &syn::Pat, origins: &Origins) -> Option<String> {
    let b = pat_bindings(p);
    match b.as_slice() {
        [one] => {
            let mut s = one.ident.to_string();
            match origins.get(&s) {
                Some(Origin::Renamed(n)) => s = n.clone(),
                Some(Origin::Temp(_)) => return None,
                None => {}
            }
            let t = s.trim_start_matches('_');
            (!t.is_empty()).then(|| t.to_string())
        }
        _ => None,
    }
}

/// `x = …` / `x += …`: the key is `x`.
pub(super) fn assign_target(e: &Expr) -> Option<String> {
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

/// `init` is the suspension itself or the suspension followed by `?`.
pub(super) fn direct_or_try(init: &Expr, susp: &Expr) -> bool {
    match init {
        Expr::Try(t) => std::ptr::eq(&*t.expr, susp) || *t.expr == *susp,
        e => e == susp,
    }
}

/// `T` of `Elicitation<T>`.
pub(super) fn elicitation_inner(t: &Type) -> Option<Type> {
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
pub(super) fn set_turbofish(e: &mut Expr, t: &Type) {
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
