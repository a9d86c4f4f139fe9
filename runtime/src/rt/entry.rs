//! The traits an entry point's generated zero-sized type implements.

use super::CallError;
#[cfg(doc)]
use crate::context::{AnonymousViewContext, ViewContext};
use crate::context::{HttpContext, ProcedureContext, ReducerContext};
use wasmod_abi::{
    http::Method, AlgebraicType, HttpHandlerDef, Lifecycle, ParamDef, ProcedureDef, ReducerDef,
    Typespace, ViewDef,
};

/// A reducer: implemented by `#[reducer]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a reducer",
    label = "listed as a reducer here",
    note = "reducers are functions marked `#[wasmod::reducer]`"
)]
pub trait Reducer {
    /// The reducer's name.
    const NAME: &'static str;
    /// Its lifecycle role, if any.
    const LIFECYCLE: Option<Lifecycle>;

    /// Its parameters after the context.
    fn params(typespace: &mut Typespace) -> Vec<ParamDef>;

    /// Decodes `args` and calls the function.
    fn invoke(ctx: &ReducerContext, args: &[u8]) -> Result<(), CallError>;

    /// Its description.
    fn describe(typespace: &mut Typespace) -> ReducerDef {
        ReducerDef {
            name: Self::NAME.to_owned(),
            params: Self::params(typespace),
            lifecycle: Self::LIFECYCLE,
        }
    }
}

/// A procedure: implemented by `#[procedure]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a procedure",
    label = "listed as a procedure here",
    note = "procedures are functions marked `#[wasmod::procedure]`"
)]
pub trait Procedure {
    /// The procedure's name.
    const NAME: &'static str;

    /// Its parameters after the context.
    fn params(typespace: &mut Typespace) -> Vec<ParamDef>;

    /// Its return type.
    fn returns(typespace: &mut Typespace) -> AlgebraicType;

    /// Decodes `args`, calls the function, and encodes its result.
    fn invoke(ctx: &mut ProcedureContext, args: &[u8]) -> Result<Vec<u8>, CallError>;

    /// Its description.
    fn describe(typespace: &mut Typespace) -> ProcedureDef {
        ProcedureDef {
            name: Self::NAME.to_owned(),
            params: Self::params(typespace),
            returns: Self::returns(typespace),
        }
    }
}

/// A view: implemented by `#[view]`.
///
/// `Context` is the view's first parameter type: [`ViewContext`] for a view that sees its
/// caller (dispatched by `__call_view__`), [`AnonymousViewContext`] for one that does not
/// (dispatched by `__call_view_anon__`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a view",
    label = "listed as a view here",
    note = "views are functions marked `#[wasmod::view]`; those taking `&ViewContext` are listed under `views(..)`, those taking `&AnonymousViewContext` under `anonymous_views(..)`"
)]
pub trait View {
    /// The view's name.
    const NAME: &'static str;

    /// The context the view takes.
    type Context;

    /// Its parameters after the context.
    fn params(typespace: &mut Typespace) -> Vec<ParamDef>;

    /// Its return type.
    fn returns(typespace: &mut Typespace) -> AlgebraicType;

    /// Decodes `args`, calls the function, and encodes its result.
    fn invoke(ctx: &Self::Context, args: &[u8]) -> Result<Vec<u8>, CallError>;

    /// Its description.
    fn describe(typespace: &mut Typespace) -> ViewDef {
        let params = Self::params(typespace);
        ViewDef {
            name: Self::NAME.to_owned(),
            params,
            returns: Self::returns(typespace),
        }
    }
}

/// An HTTP handler: implemented by `#[http_handler]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an HTTP handler",
    label = "listed as an HTTP handler here",
    note = "HTTP handlers are functions marked `#[wasmod::http_handler(METHOD, \"/path\")]`"
)]
pub trait HttpHandler {
    /// The handler's name.
    const NAME: &'static str;
    /// The method it answers.
    const METHOD: Method;
    /// The path it answers.
    const PATH: &'static str;

    /// Decodes the request, calls the function, and encodes its response.
    fn invoke(ctx: &mut HttpContext, request: &[u8]) -> Result<Vec<u8>, CallError>;

    /// Its description.
    fn describe(_typespace: &mut Typespace) -> HttpHandlerDef {
        HttpHandlerDef {
            name: Self::NAME.to_owned(),
            method: Self::METHOD,
            path: Self::PATH.to_owned(),
        }
    }
}
