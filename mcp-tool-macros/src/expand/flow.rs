//! A flow: the call value `name(cx, args…)` — a tuple struct named like the function, in both
//! namespaces, so the call reads like a function call — awaited directly (direct mode: the
//! function as written, under the call site's key prefix) or driven by a calling tool's
//! machine through `Flow` (`start` with the arguments, `resume` with the saved state).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ItemFn, Lifetime};

use super::fingerprint;
use super::machine::{flow_infos, flows_fn, machine_fn, own_checks, state_keys};
use crate::analyse::{Analysis, Cap};
use crate::parse::{FLOW_LIFETIME, Sig};
use crate::rt::Rt;

/// Everything generated for a flow function (`direct`: its body with the derived keys).
pub fn expand_flow(f: &ItemFn, direct: &ItemFn, sig: &Sig, a: &Analysis) -> TokenStream {
    let p = Rt;
    let ident = &sig.ident;
    let name = ident.to_string();
    let ret = &sig.ret;
    let lt = Lifetime::new(FLOW_LIFETIME, proc_macro2::Span::call_site());
    let cx = &sig.cx;
    // the type as written, so the author's import of `ToolContext` is used
    let cx_ty = &sig.cx_ty;
    let machine = machine_fn(f, sig, a);
    let ret_t = crate::rt::ret_ty(ret);
    let (head, fields, names) = shape(sig);
    let ordinary: Vec<&syn::Ident> = names
        .iter()
        .zip(&sig.params)
        .filter(|(_, prm)| !prm.state)
        .map(|(n, _)| n)
        .collect();
    let pats = sig.params.iter().map(|prm| &prm.pat);
    let tys = sig.params.iter().map(|prm| &prm.ty);
    let body = &direct.block;
    let attrs = f.attrs.iter().filter(|a| a.path().is_ident("doc"));

    let (el, sa, ro_) = (
        a.caps.contains(&Cap::Elicitation),
        a.caps.contains(&Cap::Sampling),
        a.caps.contains(&Cap::Roots),
    );
    // a flow call is not a round of its own: the flow's points count
    let own_points = a
        .machine
        .points
        .iter()
        .filter(|pt| pt.flow.is_none())
        .count() as u32;
    let layout = fingerprint::layout(a, &f.block);
    let checks = own_checks(a);
    let infos = flow_infos(a);
    let keys = state_keys(sig);
    let (flows_fn, flows) = flows_fn(&infos, "flow");
    // the `Meta` of what `flow_info` reads: the fields that differ from the default
    let mut meta = vec![quote!(name: #name)];
    if el || sa || ro_ {
        meta.push(quote!(capabilities: #p::caps(#el, #sa, #ro_)));
    }
    if own_points != 0 {
        meta.push(quote!(points: #own_points));
    }
    if a.loops {
        meta.push(quote!(loops: true));
    }
    meta.push(quote!(layout: #layout));
    let ordinary_tys = sig
        .params
        .iter()
        .filter(|prm| !prm.state)
        .map(|prm| &prm.ty);

    let head = quote! {
        #(#attrs)*
        ///
        /// An `#[mcp_flow]`: `.await` the call inside a tool or flow (it may suspend), or in
        /// direct mode.
        #head (#fields);

        impl<#lt> #ident<#lt> {
            /// Names this call's site: the prefix of the flow's request keys (`site/key`).
            #[allow(dead_code)]
            pub fn key(self, site: impl ::core::convert::Into<::std::string::String>) -> #p::Keyed<Self> {
                #p::Keyed::new(self, site)
            }

            /// The function as written (direct mode).
            #[allow(clippy::all)]
            async fn __mcp_direct(#cx: #cx_ty, #(#pats: #tys),*) -> #ret #body
        }
    };
    let flows_impl = if infos.is_empty() {
        quote!()
    } else {
        quote!(impl<#lt> #ident<#lt> { #flows_fn })
    };
    let impls = quote! {
        #machine

        #flows_impl

        impl<#lt> ::core::future::IntoFuture for #ident<#lt> {
            type Output = #ret_t;
            type IntoFuture = #p::BoxFuture<#lt, #ret_t>;

            fn into_future(self) -> Self::IntoFuture {
                let #ident(__mcp_cx, #(#names),*) = self;
                ::std::boxed::Box::pin(async move {
                    let __mcp_mark = #p::flow_enter(__mcp_cx, #name);
                    let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx, #(#names),*).await;
                    #p::flow_leave(__mcp_cx, __mcp_mark);
                    __mcp_r
                })
            }
        }

        impl<#lt> #p::Flow for #ident<#lt> {
            type Output = #ret_t;
            const NAME: &'static str = #name;

            fn context(&mut self) -> &mut #p::ToolContext {
                &mut *self.0
            }

            fn info() -> #p::FlowInfo {
                #p::flow_info(
                    &#p::Meta { #(#meta,)* ..#p::Meta::DEFAULT },
                    ::std::vec![#(#keys),*],
                    #checks,
                    #flows,
                )
            }

            fn start<'s>(self) -> #p::BoxFuture<'s, #p::FlowStep<#ret_t>>
            where
                Self: 's,
            {
                let #ident(__mcp_cx, #(#names),*) = self;
                let __mcp_params = ::core::option::Option::Some((#(#ordinary,)*));
                ::std::boxed::Box::pin(__mcp_flow(__mcp_cx, __mcp_params, ::core::option::Option::None))
            }

            fn resume(cx: &mut #p::ToolContext, state: #p::Json) -> #p::BoxFuture<'_, #p::FlowStep<#ret_t>> {
                ::std::boxed::Box::pin(__mcp_flow(cx, ::core::option::Option::None, ::core::option::Option::Some(state)))
            }
        }

        /// One round of the machine inside the flow's key prefix.
        async fn __mcp_flow<#lt>(
            __mcp_cx: &mut #p::ToolContext,
            __mcp_params: ::core::option::Option<(#(#ordinary_tys,)*)>,
            __mcp_state: ::core::option::Option<#p::Json>,
        ) -> #p::FlowStep<#ret_t> {
            let __mcp_mark = #p::flow_enter(__mcp_cx, #name);
            let __mcp_out = __mcp_run(&mut *__mcp_cx, __mcp_params, __mcp_state.as_deref()).await;
            #p::flow_leave(__mcp_cx, __mcp_mark);
            #p::flow_outcome(__mcp_out)
        }
    };
    let impls = crate::rt::scoped(impls, Some(&sig.ret));
    quote!(#head #impls)
}

/// `#vis struct name<'a>`, its fields (`#vis &'a mut ToolContext, #vis P…`) and a name per
/// parameter.
fn shape(sig: &Sig) -> (TokenStream, TokenStream, Vec<syn::Ident>) {
    let p = Rt;
    let ident = &sig.ident;
    let vis = &sig.vis;
    let lt = Lifetime::new(FLOW_LIFETIME, proc_macro2::Span::call_site());
    let tys = sig.params.iter().map(|prm| &prm.ty);
    let names = (0..sig.params.len())
        .map(|i| format_ident!("__mcp_p{}", i))
        .collect();
    (
        quote! {
            #[allow(non_camel_case_types)]
            #vis struct #ident<#lt>
        },
        quote!(#vis &#lt mut #p::ToolContext, #(#vis #tys),*),
        names,
    )
}

/// The expansion of a flow whose body was rejected: the call value and a `Flow` impl that
/// compile (so its callers report nothing more), next to the errors.
pub fn flow_stub(sig: &Sig) -> TokenStream {
    let p = Rt;
    let ident = &sig.ident;
    let name = ident.to_string();
    let ret = &sig.ret;
    let lt = Lifetime::new(FLOW_LIFETIME, proc_macro2::Span::call_site());
    let (head, fields, _) = shape(sig);
    quote! {
        #head (#fields);

        impl<#lt> ::core::future::IntoFuture for #ident<#lt> {
            type Output = #ret;
            type IntoFuture = #p::BoxFuture<#lt, #ret>;
            fn into_future(self) -> Self::IntoFuture {
                ::core::unimplemented!("#[mcp_flow] rejected this function")
            }
        }

        impl<#lt> #p::Flow for #ident<#lt> {
            type Output = #ret;
            const NAME: &'static str = #name;
            fn context(&mut self) -> &mut #p::ToolContext {
                &mut *self.0
            }
            fn info() -> #p::FlowInfo {
                ::core::unimplemented!("#[mcp_flow] rejected this function")
            }
            fn start<'s>(self) -> #p::BoxFuture<'s, #p::FlowStep<#ret>>
            where
                Self: 's,
            {
                ::core::unimplemented!("#[mcp_flow] rejected this function")
            }
            fn resume(
                _cx: &mut #p::ToolContext,
                _state: #p::Json,
            ) -> #p::BoxFuture<'_, #p::FlowStep<#ret>> {
                ::core::unimplemented!("#[mcp_flow] rejected this function")
            }
        }
    }
}
