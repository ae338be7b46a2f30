//! The expansion emitted when the tool has errors: the original function, the errors, and a
//! stub `Tool` impl that compiles, so that one mistake does not cascade into unrelated errors
//! at every use of `name::tool()`.

use proc_macro2::TokenStream;
use quote::quote;

/// Stub struct + impl for a tool named `ident`.
pub fn fallback(ident: &syn::Ident, vis: &syn::Visibility) -> TokenStream {
    let p = quote!(::mcp_tool_runtime::__private);
    let name = ident.to_string();
    quote! {
        #[allow(non_camel_case_types)]
        #[doc(hidden)]
        #vis struct #ident {}

        impl #ident {
            /// The tool (this build of it did not compile).
            #vis fn tool() -> Self {
                #ident {}
            }
        }

        impl #p::Tool for #ident {
            fn info(&self) -> #p::ToolInfo {
                #p::unavailable_info(#name)
            }

            fn step<'a>(
                &'a self,
                _cx: &'a mut #p::ToolContext,
                _args: #p::Value,
                _state: ::core::option::Option<#p::Value>,
            ) -> #p::BoxFuture<'a, ::core::result::Result<#p::Step, #p::ToolError>> {
                ::std::boxed::Box::pin(async { ::core::result::Result::Err(#p::unavailable(#name)) })
            }
        }
    }
}

/// The function with its body replaced by `unimplemented!()` (used when the macro rejected
/// something in the body, so that the compiler does not report the same construct again).
pub fn without_body(f: &syn::ItemFn) -> syn::ItemFn {
    let mut f = f.clone();
    f.attrs
        .push(syn::parse_quote!(#[allow(unused_variables, unreachable_code)]));
    f.block = Box::new(syn::parse_quote!({
        ::core::unimplemented!("#[mcp_tool] rejected this function's body")
    }));
    f
}
