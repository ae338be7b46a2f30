//! Error accumulation: every check records its spanned error here and analysis goes on, so
//! one mistake produces one message instead of a cascade.

use proc_macro2::{Span, TokenStream};
use std::fmt::Display;

/// A list of spanned errors, combined into one `syn::Error` at the end.
#[derive(Default)]
pub struct Errors {
    inner: Option<syn::Error>,
}

impl Errors {
    /// Records an error at `span`.
    pub fn push(&mut self, span: Span, message: impl Display) {
        self.add(syn::Error::new(span, message));
    }

    /// Records an error spanning the tokens of `tokens`.
    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl Display) {
        self.add(syn::Error::new_spanned(tokens, message));
    }

    /// Records an existing error (e.g. a parse error).
    pub fn add(&mut self, error: syn::Error) {
        match &mut self.inner {
            Some(all) => all.combine(error),
            None => self.inner = Some(error),
        }
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.inner.is_none()
    }

    /// The `compile_error!` invocations for everything recorded.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.inner
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }

    /// The messages, for unit tests.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.inner
            .iter()
            .flat_map(|e| e.clone().into_iter())
            .map(|e| e.to_string())
            .collect()
    }
}
