//! Collecting errors, so that one expansion reports every mistake it finds at once.

use proc_macro2::TokenStream;

/// Errors gathered while parsing and validating; each keeps its span.
#[derive(Default)]
pub struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records `error`.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(combined) => combined.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Records an error with `message` at the span of `tokens`.
    pub fn error_at(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Keeps the value of `result`, recording its error.
    pub fn take<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }

    /// Whether an error was recorded.
    pub fn has_errors(&self) -> bool {
        self.combined.is_some()
    }

    /// The recorded errors as `compile_error!` invocations (nothing if there are none).
    pub fn into_compile_errors(self) -> TokenStream {
        self.combined
            .map(|error| error.to_compile_error())
            .unwrap_or_default()
    }

    /// `Ok(value)` if nothing was recorded, else every recorded error.
    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.combined {
            Some(error) => Err(error),
            None => Ok(value),
        }
    }
}

/// Runs a macro's parse-then-generate pipeline, turning errors into `compile_error!`s.
///
/// When parsing fails, `fallback` (typically the user's item, unchanged) is emitted beside the
/// errors, so that one mistake does not cascade into "cannot find" errors elsewhere.
pub fn expand(result: syn::Result<TokenStream>, fallback: TokenStream) -> TokenStream {
    match result {
        Ok(tokens) => tokens,
        Err(error) => {
            let errors = error.to_compile_error();
            quote::quote! { #fallback #errors }
        }
    }
}
