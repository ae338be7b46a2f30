//! Code generation: the state enum, the dispatch loop, the `Tool` impl and its metadata.

mod direct;
mod fingerprint;

pub use direct::with_default_keys;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{ItemFn, LitStr};

use crate::analyse::lower::Names_;
use crate::analyse::{Analysis, Cap, StageKind};
use crate::parse::{OutputKind, ToolAttr, ToolSig};

/// Everything generated next to the original function.
pub fn expand(f: &ItemFn, attr: &ToolAttr, sig: &ToolSig, a: &Analysis) -> TokenStream {
    let ident = &sig.ident;
    let p = quote!(::mcp_tool_runtime::__private);
    let Names_ {
        st,
        state,
        dispatch,
        finish,
    } = Names_::new();
    let m = &a.machine;

    // --- the state enum: one generic parameter per carried variable or marker -------------
    let mut params: Vec<(String, syn::Ident)> = Vec::new(); // (var key, param)
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
        if s.vars.is_empty() && s.markers.is_empty() {
            variants.push(quote!(#name));
            continue;
        }
        let fields: Vec<TokenStream> = s
            .vars
            .iter()
            .map(|v| {
                let t = param_of(format!("v{}", v.id));
                let id = &v.ident;
                quote!(#id: #t)
            })
            .collect();
        let markers: Vec<TokenStream> = s
            .markers
            .iter()
            .map(|mk| {
                let t = param_of(mk.to_string());
                quote!(#mk: #t)
            })
            .collect();
        variants.push(quote!(#name { #(#fields,)* #(#markers,)* }));
    }
    let generics: Vec<&syn::Ident> = params.iter().map(|(_, p)| p).collect();
    let generics = if generics.is_empty() {
        quote!()
    } else {
        quote!(<#(#generics),*>)
    };

    // --- loading a saved state -------------------------------------------------------------
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
            quote_spanned!(id.span()=> #id: __mcp_vars.restore(#key)?)
        });
        let StageKind::Resume(k) = s.kind else {
            unreachable!("filtered")
        };
        let markers = s.markers.iter().zip(&m.points[k].keys).map(|(mk, key)| {
            let n = mk.to_string();
            quote!(#mk: __mcp_vars.marker(#n, #key)?)
        });
        loads.push(quote! {
            #stage => #state::#name { #(#fields,)* #(#markers,)* }
        });
    }
    let load = if loads.is_empty() {
        quote! {
            ::core::option::Option::Some(_) => return ::core::result::Result::Err(#p::invalid_state()),
        }
    } else {
        quote! {
            ::core::option::Option::Some(__mcp_saved) => {
                let (__mcp_stage, mut __mcp_vars) = #p::open_state(__mcp_saved)?;
                match __mcp_stage.as_str() {
                    #(#loads,)*
                    _ => return ::core::result::Result::Err(#p::invalid_state()),
                }
            }
        }
    };

    // --- arguments: parsed (and checked) up front, bound in every stage -------------------
    let cx = &sig.cx;
    let (bind_args, stage_args, input_schema) = match &sig.args {
        Some((pat, ty)) => (
            quote!(let mut __mcp_parsed = ::core::option::Option::Some(#p::parse_args::<#ty>(__mcp_args.clone())?);),
            quote!(let #pat: #ty = #p::stage_args(&mut __mcp_parsed, &__mcp_args)?;),
            quote!(#p::input_schema::<#ty>()),
        ),
        None => (
            quote!(let _ = __mcp_args;),
            quote!(),
            quote!(#p::empty_input_schema()),
        ),
    };

    let arg_names: Vec<String> = match &sig.args {
        Some((pat, _)) => crate::analyse::vars::pat_bindings(pat)
            .into_iter()
            .map(|b| b.ident.to_string())
            .collect(),
        None => Vec::new(),
    };

    // --- the arms --------------------------------------------------------------------------
    let arms = m.stages.iter().map(|s| {
        let name = &s.name;
        let code = &s.code;
        let fields = s.vars.iter().map(|v| {
            let id = &v.ident;
            if v.mutable {
                quote!(mut #id)
            } else {
                quote!(#id)
            }
        });
        let markers = &s.markers;
        let pat = if s.vars.is_empty() && s.markers.is_empty() {
            quote!(#state::#name)
        } else {
            quote!(#state::#name { #(#fields,)* #(#markers,)* })
        };
        // only stages that mention the arguments bind them
        let args = if mentions_any(code, &arg_names) {
            stage_args.clone()
        } else {
            quote!()
        };
        quote!(#pat => { #args #code })
    });

    let ok_ty = &sig.ok_ty;
    let err_ty = &sig.err_ty;
    let (finish_fn, output_schema) = match sig.output {
        OutputKind::Text => (quote!(finish_text), quote!(::core::option::Option::None)),
        OutputKind::Raw => (quote!(finish_raw), quote!(::core::option::Option::None)),
        OutputKind::Structured => (
            quote!(finish_structured),
            quote!(::core::option::Option::Some(#p::output_schema::<#ok_ty>())),
        ),
    };
    // items declared at the top of the body are visible in every stage
    let items = f
        .block
        .stmts
        .iter()
        .filter(|s| matches!(s, syn::Stmt::Item(_)));

    // --- metadata ----------------------------------------------------------------------------
    let name = attr
        .name
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| ident.to_string());
    let opt_str = |s: Option<String>| match s {
        Some(s) => quote!(::core::option::Option::Some(::std::string::String::from(#s))),
        None => quote!(::core::option::Option::None),
    };
    let title_s = attr.title.as_ref().map(LitStr::value);
    let title = opt_str(title_s.clone());
    let title_ref = match &title_s {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let description = opt_str(
        attr.description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| crate::parse::doc_string(&f.attrs)),
    );
    let hint = |b: Option<bool>| match b {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    };
    let (ro, de, id_, ow) = (
        hint(attr.read_only),
        hint(attr.destructive),
        hint(attr.idempotent),
        hint(attr.open_world),
    );
    let (el, sa, ro_) = (
        a.caps.contains(&Cap::Elicitation),
        a.caps.contains(&Cap::Sampling),
        a.caps.contains(&Cap::Roots),
    );
    let max_rounds = attr.max_rounds.unwrap_or_else(|| default_max_rounds(a));
    let ttl = match attr.ttl_secs {
        Some(s) => quote!(::core::option::Option::Some(::core::time::Duration::from_secs(#s))),
        None => quote!(::core::option::Option::None),
    };
    let layout = fingerprint::layout(a, &f.block);
    let journal = attr.journal;
    let checks = m
        .points
        .iter()
        .flat_map(|pt| pt.elicit_types.iter())
        .map(|(key, ty)| quote!(#p::check_elicitation::<#ty>(#key)?;));
    let doc = format!(
        "The `{name}` MCP tool generated by `#[mcp_tool]` from `fn {ident}`: register it with `{ident}::tool()`."
    );

    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        pub struct #ident {}

        impl #ident {
            /// The tool, ready for `Server::builder(..).tool(..)`.
            pub fn tool() -> Self {
                #ident {}
            }
        }

        impl #p::Tool for #ident {
            fn info(&self) -> #p::ToolInfo {
                #p::ToolInfo {
                    name: ::std::string::String::from(#name),
                    title: #title,
                    description: #description,
                    input_schema: #input_schema,
                    output_schema: #output_schema,
                    annotations: #p::annotations(#title_ref, #ro, #de, #id_, #ow),
                    capabilities: #p::RequiredCapabilities { elicitation: #el, sampling: #sa, roots: #ro_ },
                    max_rounds: #max_rounds,
                    state_ttl: #ttl,
                    layout: ::std::string::String::from(#layout),
                    journal: #journal,
                }
            }

            fn validate(&self) -> ::core::result::Result<(), #p::RegistrationError> {
                #(#checks)*
                ::core::result::Result::Ok(())
            }

            fn step<'a>(
                &'a self,
                cx: &'a mut #p::ToolContext,
                args: #p::Value,
                state: ::core::option::Option<#p::Value>,
            ) -> #p::BoxFuture<'a, ::core::result::Result<#p::Step, #p::ToolError>> {
                #[allow(unused_mut, unused_variables, unused_assignments, unreachable_code, non_camel_case_types, clippy::all)]
                async fn __mcp_run(
                    #cx: &mut #p::ToolContext,
                    __mcp_args: #p::Value,
                    __mcp_state: ::core::option::Option<#p::Value>,
                ) -> ::core::result::Result<#p::Step, #p::ToolError> {
                    #(#items)*
                    #[allow(dead_code)]
                    enum #state #generics {
                        #(#variants,)*
                    }
                    fn #finish(
                        r: ::core::result::Result<#ok_ty, #err_ty>,
                    ) -> ::core::result::Result<#p::Step, #p::ToolError> {
                        #p::#finish_fn(r)
                    }
                    #bind_args
                    let mut #st = match __mcp_state {
                        ::core::option::Option::None => #state::Start,
                        #load
                    };
                    #dispatch: loop {
                        match #st {
                            #(#arms)*
                        }
                    }
                }
                ::std::boxed::Box::pin(__mcp_run(cx, args, state))
            }
        }
    }
}

/// True when `code` contains one of `names` as an identifier.
fn mentions_any(code: &TokenStream, names: &[String]) -> bool {
    code.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
        proc_macro2::TokenTree::Group(g) => mentions_any(&g.stream(), names),
        _ => false,
    })
}

/// `max_rounds` when not given: one per suspension point, or 100 when one sits in a loop.
pub fn default_max_rounds(a: &Analysis) -> u32 {
    if a.loops {
        100
    } else {
        (a.machine.points.len() as u32).max(1)
    }
}
