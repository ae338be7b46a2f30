//! The expansion emitted when the tool has errors: the original function, the errors, and a
//! stub `Tool` impl that compiles, so that one mistake does not cascade into unrelated errors
//! at every use of `name::tool()`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::parse::FnKind;
use crate::rt::Rt;

/// Stub struct + impl for a tool (prompt, resource) named `ident`.
pub fn fallback(kind: FnKind, ident: &syn::Ident, vis: &syn::Visibility) -> TokenStream {
    let p = Rt;
    let name = ident.to_string();
    match kind {
        FnKind::Prompt => {
            return quote! {
                #[allow(non_camel_case_types)]
                #[doc(hidden)]
                #vis struct #ident {}
                impl #ident {
                    /// The prompt (this build of it did not compile).
                    #vis fn prompt() -> Self {
                        #ident {}
                    }
                }
                impl #p::Prompt for #ident {
                    fn info(&self) -> #p::PromptInfo {
                        #p::PromptInfo::new(#name)
                    }
                    fn step<'a>(
                        &'a self,
                        _cx: &'a mut #p::ToolContext,
                        _args: &'a #p::RawValue,
                        _state: ::core::option::Option<&'a #p::RawValue>,
                    ) -> #p::BoxFuture<'a, ::core::result::Result<#p::Step<#p::GetPromptResult>, #p::ToolError>> {
                        ::std::boxed::Box::pin(async { ::core::result::Result::Err(#p::unavailable(#name)) })
                    }
                }
            };
        }
        FnKind::Resource => {
            return quote! {
                #[allow(non_camel_case_types)]
                #[doc(hidden)]
                #vis struct #ident {}
                impl #ident {
                    /// The resource (this build of it did not compile).
                    #vis fn resource() -> Self {
                        #ident {}
                    }
                }
                impl #p::Resource for #ident {
                    fn info(&self) -> #p::ResourceInfo {
                        #p::ResourceInfo::uri(#name, #name)
                    }
                    fn step<'a>(
                        &'a self,
                        _cx: &'a mut #p::ToolContext,
                        _uri: ::std::string::String,
                        _vars: &'a #p::RawValue,
                        _state: ::core::option::Option<&'a #p::RawValue>,
                    ) -> #p::BoxFuture<'a, ::core::result::Result<#p::Step<::std::vec::Vec<#p::ResourceContents>>, #p::ToolError>> {
                        ::std::boxed::Box::pin(async { ::core::result::Result::Err(#p::unavailable(#name)) })
                    }
                }
            };
        }
        _ => {}
    }
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
                _args: &'a #p::RawValue,
                _state: ::core::option::Option<&'a #p::RawValue>,
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
