//! The state machine of a tool or flow body: one `async fn` that declares the generic state
//! enum (one variant per stage, one type parameter per carried variable, inferred by rustc),
//! loads the saved stage (if any), and runs the dispatch loop `loop { match st { … } }` until
//! the body returns (`FlowStep::Done`) or suspends (`FlowStep::Suspended` with the state).
//!
//! Tools and flows differ only in their inputs: a tool's arguments are parsed again in every
//! stage that mentions them; a flow's parameters arrive once and the `Start` stage carries
//! them like any variable. `State<T>` parameters are taken from the context in every stage
//! that mentions them.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ItemFn;
use syn::spanned::Spanned;

use crate::analyse::{Analysis, StageKind};
use crate::parse::{FnKind, Sig};
use crate::rt::{GeneratedNames, Rt, err_ty, ok_fn, plumb, witness};

/// The machine function `__mcp_run`: for a tool
/// `async fn __mcp_run(cx, __mcp_args: &RawValue, __mcp_state: Option<&RawValue>)`, for a flow
/// `async fn __mcp_run(cx, __mcp_params: Option<(P…)>, __mcp_state: Option<&RawValue>)`, both
/// returning `Result<FlowStep<R>, E>`.
pub fn machine_fn(f: &ItemFn, sig: &Sig, a: &Analysis) -> TokenStream {
    let p = Rt;
    let GeneratedNames {
        st,
        state,
        dispatch,
        ..
    } = GeneratedNames::new();
    let m = &a.machine;
    let cx = &sig.cx;
    let err = err_ty(&sig.ret);

    // --- the state enum: one generic parameter per carried variable or slot ----------------
    let mut params: Vec<(String, syn::Ident)> = Vec::new();
    let mut param_of = |key: String| -> syn::Ident {
        if let Some((_, p)) = params.iter().find(|(k, _)| *k == key) {
            return p.clone();
        }
        let id = format_ident!("__mcp_T{}", params.len());
        params.push((key, id.clone()));
        id
    };
    let mut variants = Vec::new();
    for s in &m.stages {
        let name = &s.name;
        if s.vars.is_empty() && s.soft.is_empty() && s.markers.is_empty() {
            variants.push(quote!(#name));
            continue;
        }
        // a tuple variant: its variables, soft variables and markers, in that order
        let mut fields: Vec<TokenStream> = Vec::new();
        let resumed = matches!(s.kind, StageKind::Resume(_));
        for v in &s.vars {
            let t = param_of(format!("v{}", v.id));
            // a resumed stage holds its variables live or saved (restored in its arm)
            if resumed {
                fields.push(quote!(#p::Slot<#t>));
            } else {
                fields.push(quote!(#t));
            }
        }
        for v in &s.soft {
            let t = param_of(format!("v{}", v.id));
            fields.push(quote!(#p::Slot<#t>));
        }
        for mk in &s.markers {
            let t = param_of(mk.to_string());
            fields.push(quote!(#t));
        }
        variants.push(quote!(#name(#(#fields,)*)));
    }
    let generics: Vec<&syn::Ident> = params.iter().map(|(_, p)| p).collect();
    let generics = if generics.is_empty() {
        quote!()
    } else {
        quote!(<#(#generics),*>)
    };

    // --- loading a saved state: one field a line, checked once after ----------------------
    let mut loads = Vec::new();
    for s in m
        .stages
        .iter()
        .filter(|s| matches!(s.kind, StageKind::Resume(_)))
    {
        let name = &s.name;
        let stage = name.to_string();
        let fields = s.vars.iter().map(|v| {
            let id = &v.ident;
            let key = id.to_string();
            quote_spanned!(id.span()=> __mcp_v.saved(#key))
        });
        let soft = s.soft.iter().map(|v| {
            let id = &v.ident;
            let key = id.to_string();
            quote_spanned!(id.span()=> __mcp_v.saved_soft(#key))
        });
        let fields = fields.chain(soft);
        let StageKind::Resume(k) = s.kind else {
            unreachable!("filtered")
        };
        let point = &m.points[k];
        let markers = s.markers.iter().zip(&point.keys).map(|(mk, key)| {
            let n = mk.to_string();
            if point.flow.is_some() {
                quote!(__mcp_v.flow(#n, #key))
            } else {
                // the point's `const` (see the lowering's `split`)
                let c = format_ident!("__mcp_R{}", &n["__mcp_m".len()..]);
                quote!(__mcp_v.marker(&#c))
            }
        });
        loads.push((stage, quote!(#state::#name(#(#fields,)* #(#markers,)*))));
    }
    let vars = if loads.is_empty() {
        quote!(_)
    } else {
        quote!(mut __mcp_v)
    };
    let open = quote!(let (__mcp_s, #vars) = __mcp_p.open(#cx, __mcp_state)?;);
    let check = if loads.is_empty() {
        quote!()
    } else {
        let check = plumb(cx, &err, quote!(__mcp_v.check()));
        quote!(#check;)
    };
    let invalid = quote!(return __mcp_p.invalid(#cx));

    // --- inputs ------------------------------------------------------------------------------
    let states: Vec<(TokenStream, TokenStream)> = sig
        .states()
        .map(|prm| {
            let (pat, ty) = (&prm.pat, &prm.ty);
            let take = plumb(
                cx,
                &err,
                quote_spanned!(ty.span()=> <#ty as #p::FromContext>::from_context(#cx)),
            );
            (quote!(#pat), quote!(let #pat: #ty = #take;))
        })
        .collect();
    let (input_param, first) = match sig.kind {
        FnKind::Tool | FnKind::Prompt | FnKind::Resource => {
            let (bind, _) = tool_args(sig);
            let loads = loads.iter().map(|(stage, value)| quote!(#stage => #value));
            (
                quote!(__mcp_args: &#p::RawValue),
                quote! {
                    #bind
                    #open
                    let mut #st = match __mcp_s.as_str() {
                        "" => #state::Start,
                        #(#loads,)*
                        _ => #invalid,
                    };
                    #check
                },
            )
        }
        FnKind::Flow => {
            let ordinary: Vec<&crate::parse::Param> =
                sig.params.iter().filter(|p| !p.state).collect();
            let tys = ordinary.iter().map(|p| &p.ty);
            let pats = ordinary.iter().map(|p| &p.pat);
            let start = &m.stages[0];
            let fields = start.vars.iter().map(|v| &v.ident);
            let start_value = if start.vars.is_empty() {
                quote!(#state::Start)
            } else {
                quote!(#state::Start(#(#fields,)*))
            };
            let loads = loads
                .iter()
                .map(|(stage, value)| quote!((_, #stage) => #value));
            (
                quote!(__mcp_params: ::core::option::Option<(#(#tys,)*)>),
                quote! {
                    #open
                    let mut #st = match (__mcp_params, __mcp_s.as_str()) {
                        (::core::option::Option::Some((#(#pats,)*)), _) => #start_value,
                        #(#loads,)*
                        _ => #invalid,
                    };
                    #check
                },
            )
        }
    };

    // --- the arms ----------------------------------------------------------------------------
    let arg_names: Vec<String> = match (sig.kind, sig.args()) {
        (FnKind::Tool | FnKind::Prompt | FnKind::Resource, Some(a)) => {
            crate::analyse::vars::pat_bindings(&a.pat)
                .into_iter()
                .map(|b| b.ident.to_string())
                .collect()
        }
        _ => Vec::new(),
    };
    let stage_args = tool_args(sig).1;
    let arms = m.stages.iter().map(|s| {
        let name = &s.name;
        let code = &s.code;
        let prologue = &s.prologue;
        let resumed = matches!(s.kind, StageKind::Resume(_));
        let fields = s.vars.iter().chain(&s.soft).map(|v| {
            let id = &v.ident;
            if v.mutable && !resumed {
                quote!(mut #id)
            } else {
                quote!(#id)
            }
        });
        // a resumed stage's variables: live, or restored from the state (one diagnostic per
        // variable that is not serializable, the same here and where it is saved)
        let unwrap = s.vars.iter().filter(|_| resumed).map(|v| {
            let id = &v.ident;
            let rt_id = Rt.at(id.span());
            let take = plumb(
                cx,
                &err,
                quote_spanned!(id.span()=> (&&#rt_id::probe_slot(&#id)).vtable().take(#id)),
            );
            if v.mutable {
                quote_spanned!(id.span()=> let mut #id = #take;)
            } else {
                quote_spanned!(id.span()=> let #id = #take;)
            }
        });
        let unwrap = quote!(#(#unwrap)*);
        let markers = &s.markers;
        let pat = if s.vars.is_empty() && s.soft.is_empty() && s.markers.is_empty() {
            quote!(#state::#name)
        } else {
            quote!(#state::#name(#(#fields,)* #(#markers,)*))
        };
        let body = quote!(#(#prologue)* #code);
        // only stages that mention the arguments (or a state parameter) bind them
        let args = if mentions_any(&body, &arg_names) {
            stage_args.clone()
        } else {
            quote!()
        };
        let state_params = states.iter().filter_map(|(pat, bind)| {
            let names: Vec<String> = pat
                .clone()
                .into_iter()
                .filter_map(|t| match t {
                    proc_macro2::TokenTree::Ident(i) => Some(i.to_string()),
                    _ => None,
                })
                .collect();
            mentions_any(&body, &names).then_some(bind)
        });
        quote!(#pat => { #unwrap #args #(#state_params)* #body })
    });

    // items declared at the top of the body are visible in every stage
    let items = f
        .block
        .stmts
        .iter()
        .filter(|s| matches!(s, syn::Stmt::Item(_)));
    let variants = &variants;
    let ok = ok_fn(&err);
    let ret_t = crate::rt::ret_ty(&sig.ret);
    let consts = &m.consts;
    // a flow's parameters may borrow for the call value's lifetime
    let lt = (sig.kind == FnKind::Flow).then(|| {
        let lt = syn::Lifetime::new(crate::parse::FLOW_LIFETIME, proc_macro2::Span::call_site());
        quote!(<#lt>)
    });
    quote! {
        async fn __mcp_run #lt (
            #cx: &mut #p::ToolContext,
            #input_param,
            __mcp_state: ::core::option::Option<&#p::RawValue>,
        ) -> ::core::result::Result<#p::FlowStep<#ret_t>, #err> {
            #(#items)*
            enum #state #generics {
                #(#variants,)*
            }
            #(#consts)*
            #ok
            #first
            #dispatch: loop {
                match #st {
                    #(#arms)*
                }
            }
        }
    }
}

/// `async fn __mcp_direct(cx, __mcp_args: &RawValue, __mcp_uri: String) -> Result<T, ToolError>`:
/// the function as written, called once (direct mode: a legacy session's host answers each
/// request as it is made) with its arguments parsed as the machine parses them and its
/// `State<T>` parameters taken from the context; its result is finished by `__mcp_done`, as
/// in `step` (`__private::direct_done`).
///
/// It is an `async fn` of its own (not an `async` block in `direct`), so that `direct` can ask
/// whether its future is `Send` (`autoref::DirectWrap`): a function that holds a non-`Send`
/// value across an `.await` gets no direct mode rather than a compile error.
pub fn direct_fn(sig: &Sig, fin: &Finish) -> TokenStream {
    let p = Rt;
    let (cx, ident) = (&sig.cx, &sig.ident);
    let ty = &fin.ty;
    let names: Vec<_> = (0..sig.params.len())
        .map(|i| format_ident!("__mcp_p{}", i))
        .collect();
    // the arguments are moved into the one parameter that takes them
    let binds = sig.params.iter().zip(&names).map(|(prm, v)| {
        let ty = &prm.ty;
        let take = if prm.state {
            quote_spanned!(ty.span()=> <#ty as #p::FromContext>::from_context(#cx))
        } else if sig.kind == FnKind::Tool {
            quote!(#p::parse_args::<#ty>(__mcp_args))
        } else {
            quote!(#p::parse_strings::<#ty>(__mcp_args))
        };
        quote!(let #v: #ty = #take?;)
    });
    let (uri, done) = if fin.uri {
        (
            quote!(__mcp_uri: ::std::string::String,),
            quote!(|__mcp_r| Self::__mcp_done(__mcp_r, &__mcp_uri)),
        )
    } else {
        (quote!(), quote!(Self::__mcp_done))
    };
    quote! {
        async fn __mcp_direct(
            #cx: &mut #p::ToolContext,
            __mcp_args: &#p::RawValue,
            #uri
        ) -> ::core::result::Result<#ty, #p::ToolError> {
            #(#binds)*
            let __mcp_r = #ident(&mut *#cx, #(#names),*).await;
            #p::direct_done(#cx, __mcp_r, #done)
        }
    }
}

/// The body of `direct`: `__mcp_direct`'s future, boxed when it is `Send` (`uri`: the
/// requested URI of a resource).
pub fn direct_call(vars: TokenStream, uri: Option<TokenStream>) -> TokenStream {
    let p = Rt;
    let uri = uri.map(|u| quote!(, #u));
    quote!((&#p::autoref::DirectWrap::new(Self::__mcp_direct(cx, #vars #uri))).boxed())
}

/// A tool's arguments: the parse up front (checks them in the first round, before any
/// code) and the binding of each stage that mentions them.
fn tool_args(sig: &Sig) -> (TokenStream, TokenStream) {
    let p = Rt;
    let (cx, err) = (&sig.cx, err_ty(&sig.ret));
    match (sig.kind, sig.args()) {
        (FnKind::Tool | FnKind::Prompt | FnKind::Resource, Some(a)) => {
            let (pat, ty) = (&a.pat, &a.ty);
            // a tool's arguments are JSON; a prompt's arguments and a template's variables
            // are strings, parsed into the field types (`{id}` into `id: u32`)
            let parse = if sig.kind == FnKind::Tool {
                plumb(cx, &err, quote!(#p::Args::<#ty>::json(__mcp_args)))
            } else {
                plumb(cx, &err, quote!(#p::Args::<#ty>::strings(__mcp_args)))
            };
            let stage = plumb(cx, &err, quote!(__mcp_a.get()));
            (
                quote!(let mut __mcp_a = #parse;),
                quote!(let #pat: #ty = #stage;),
            )
        }
        (FnKind::Tool | FnKind::Prompt | FnKind::Resource, None) => {
            (quote!(let _ = __mcp_args;), quote!())
        }
        (FnKind::Flow, _) => (quote!(), quote!()),
    }
}

/// True when `code` contains one of `names` as an identifier.
pub fn mentions_any(code: &TokenStream, names: &[String]) -> bool {
    code.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
        proc_macro2::TokenTree::Group(g) => mentions_any(&g.stream(), names),
        _ => false,
    })
}

/// `fn __mcp_flows()` of a body that calls flows (`infos`, see [`flow_infos`]; `what`: "tool",
/// "prompt", …) and the expression of what they need: `&Self::__mcp_flows()`, or `&[]` (and
/// no function) when it calls none.
pub fn flows_fn(infos: &[TokenStream], what: &str) -> (TokenStream, TokenStream) {
    let p = Rt;
    if infos.is_empty() {
        return (quote!(), quote!(&[]));
    }
    let doc = format!("What the {what} takes from the flows it calls.");
    (
        quote! {
            #[doc = #doc]
            fn __mcp_flows() -> ::std::vec::Vec<#p::FlowInfo> {
                ::std::vec![#(#infos),*]
            }
        },
        quote!(&Self::__mcp_flows()),
    )
}

/// `(&&wrap_witness(&<witness>)).ops().info()` for each flow the body calls.
pub fn flow_infos(a: &Analysis) -> Vec<TokenStream> {
    let p = Rt;
    a.machine
        .points
        .iter()
        .filter_map(|pt| pt.flow.as_ref())
        .map(|call| {
            let w = witness(&call.path, &call.call);
            let span = call.call.span();
            quote_spanned!(span=> (&&#p::autoref::wrap_witness(&#w)).ops().info())
        })
        .collect()
}

/// The state types the function's `FromContext` parameters need (one `Vec<StateKey>` each).
pub fn state_keys(sig: &Sig) -> Vec<TokenStream> {
    let p = Rt;
    sig.states()
        .map(|prm| {
            let ty = &prm.ty;
            quote_spanned!(ty.span()=> <#ty as #p::FromContext>::keys())
        })
        .collect()
}

/// The registration checks of the body's own `ask`/`elicit` types.
pub fn own_checks(a: &Analysis) -> TokenStream {
    let p = Rt;
    let checks = a
        .machine
        .points
        .iter()
        .flat_map(|pt| pt.elicit_types.iter())
        .map(|(key, ty)| quote!(#p::check_elicitation::<#ty>(#key)));
    quote!([#(#checks),*])
}

/// `Rounds { … }` of a tool, prompt or resource, with its flows' needs folded in (expects
/// `__mcp_flows` in scope): `__private::rounds(&Meta { … }, &__mcp_flows)`.
pub fn rounds_expr(attr: &crate::parse::ToolAttr, a: &Analysis, body: &syn::Block) -> TokenStream {
    let p = Rt;
    let meta = meta_lit(attr, a, body, Vec::new());
    quote!(#p::rounds(&#meta, &__mcp_flows))
}

/// The `__private::Meta { … }` literal of a body: the fields that differ from the default
/// (those of `extra`, then the rounds' own), the rest `..Meta::DEFAULT`.
pub fn meta_lit(
    attr: &crate::parse::ToolAttr,
    a: &Analysis,
    body: &syn::Block,
    mut fields: Vec<TokenStream>,
) -> TokenStream {
    let p = Rt;
    let (el, sa, ro) = (
        a.caps.contains(&crate::analyse::Cap::Elicitation),
        a.caps.contains(&crate::analyse::Cap::Sampling),
        a.caps.contains(&crate::analyse::Cap::Roots),
    );
    if el || sa || ro {
        fields.push(quote!(capabilities: #p::caps(#el, #sa, #ro)));
    }
    // a flow call is not a round of its own: the flow's points count
    let own_points = a
        .machine
        .points
        .iter()
        .filter(|pt| pt.flow.is_none())
        .count() as u32;
    match attr.max_rounds {
        Some(n) => fields.push(quote!(max_rounds: ::core::option::Option::Some(#n))),
        None => {
            if own_points != 0 {
                fields.push(quote!(points: #own_points));
            }
            if a.loops {
                fields.push(quote!(loops: true));
            }
        }
    }
    if let Some(s) = attr.ttl_secs {
        fields.push(quote!(ttl_secs: ::core::option::Option::Some(#s)));
    }
    let layout = super::fingerprint::layout(a, body);
    fields.push(quote!(layout: #layout));
    for (on, name) in [
        (attr.journal, "journal"),
        (attr.early_answers, "early_answers"),
        (attr.once, "once"),
    ] {
        if on {
            let name = format_ident!("{}", name);
            fields.push(quote!(#name: true));
        }
    }
    quote!(#p::Meta { #(#fields,)* ..#p::Meta::DEFAULT })
}

/// `{ "arg" => completer(f), … }` of a prompt or resource.
pub fn completions_expr(attr: &crate::parse::ToolAttr) -> TokenStream {
    let p = Rt;
    let entries = attr.complete.iter().map(|(arg, f)| {
        let name = arg.to_string();
        quote_spanned!(f.span()=> (::std::string::String::from(#name), #p::completer(#f)))
    });
    quote!(::std::collections::BTreeMap::from([#(#entries),*]))
}

/// How a tool, prompt or resource ends: the type of its completed value and the conversion
/// of the function's `Ok` value `__mcp_v` into it (`__mcp_uri: &str` is in scope).
pub struct Finish {
    /// `CallToolResult`, `GetPromptResult` or `Vec<ResourceContents>`.
    pub ty: TokenStream,
    /// `Result<ty, ToolError>` from `__mcp_v`.
    pub ok: TokenStream,
    /// It reads the requested URI (`__mcp_uri: &str`, a resource's): `__mcp_done` takes it.
    pub uri: bool,
}

/// The associated function shared by `step` and `direct` (so that a wrong return type is
/// reported once): `__mcp_done(r, uri)`, the completed value of the function's result `r`.
pub fn finish_fns(sig: &Sig, fin: &Finish) -> TokenStream {
    let p = Rt;
    let ret = &sig.ret;
    let ret_t = crate::rt::ret_ty(ret);
    let err = err_ty(&sig.ret);
    let (ty, finish_ok) = (&fin.ty, &fin.ok);
    let errs = quote_spanned!(ret.span()=> &&#p::autoref::ErrorOf::<#err>::new());
    let finish_err = quote_spanned!(ret.span()=> __mcp_e.tool_error(__mcp_x));
    let uri = fin.uri.then(|| quote!(, __mcp_uri: &str));
    quote! {
        /// The completed value of the function's result.
        fn __mcp_done(
            __mcp_r: #ret_t #uri
        ) -> ::core::result::Result<#ty, #p::ToolError> {
            let __mcp_e = #errs;
            let __mcp_v = #p::value(__mcp_r, |__mcp_x| #finish_err)?;
            #finish_ok
        }

    }
}

/// The `step` wrapper's conversion of the machine's outcome (`__mcp_out`) into a `Step`
/// (`uri`: the requested URI, for a resource).
pub fn outcome_to_step(_sig: &Sig, uri: Option<TokenStream>) -> TokenStream {
    let p = Rt;
    match uri {
        Some(uri) => quote!(#p::to_step(cx, __mcp_out, |__mcp_r| Self::__mcp_done(__mcp_r, #uri))),
        None => quote!(#p::to_step(cx, __mcp_out, Self::__mcp_done)),
    }
}

/// Tokens of the `scopes: Vec<String>` of an info.
pub fn scopes_vec(scopes: &[String]) -> TokenStream {
    quote!(::std::vec![#(::std::string::String::from(#scopes)),*])
}

/// Tokens of an optional string.
pub fn opt_string(s: Option<String>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(::std::string::String::from(#s))),
        None => quote!(::core::option::Option::None),
    }
}

/// Used by the fingerprint: the tokens of `t`.
#[allow(dead_code)]
pub fn tokens_of<T: ToTokens>(t: &T) -> String {
    t.to_token_stream().to_string()
}
