//! What entry points may return, and how each becomes a result for the host.

use super::CallError;
use crate::http::Response;
use wasmod_abi::{AlgebraicType, Encode, SchemaType, Typespace};

/// An error a reducer or HTTP handler may return: it becomes the message the host reports.
///
/// Implemented for the string types. Implement it for your own error type to return it
/// directly; the conversion is yours to write, so it may format if you accept that cost on the
/// error path.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an entry point's error",
    note = "return `Result<_, String>` (or `&'static str`), or implement `wasmod::IntoErrorMessage` for your error type"
)]
pub trait IntoErrorMessage {
    /// The message.
    fn into_error_message(self) -> String;
}

impl IntoErrorMessage for String {
    fn into_error_message(self) -> String {
        self
    }
}

impl IntoErrorMessage for &str {
    fn into_error_message(self) -> String {
        self.to_owned()
    }
}

impl IntoErrorMessage for Box<str> {
    fn into_error_message(self) -> String {
        self.into_string()
    }
}

impl IntoErrorMessage for std::borrow::Cow<'_, str> {
    fn into_error_message(self) -> String {
        self.into_owned()
    }
}

/// What a reducer may return: `()` or `Result<(), E>`.
#[diagnostic::on_unimplemented(
    message = "a reducer cannot return `{Self}`",
    note = "a reducer returns `()` or `Result<(), E>` where `E` is a string type or implements `wasmod::IntoErrorMessage`"
)]
pub trait ReducerReturn {
    /// `Ok` to commit, `Err` to roll back with a message.
    fn into_call_result(self) -> Result<(), CallError>;
}

impl ReducerReturn for () {
    #[inline]
    fn into_call_result(self) -> Result<(), CallError> {
        Ok(())
    }
}

impl<E: IntoErrorMessage> ReducerReturn for Result<(), E> {
    #[inline]
    fn into_call_result(self) -> Result<(), CallError> {
        self.map_err(|error| CallError::failed(error.into_error_message()))
    }
}

/// What a view may return: a `Vec` or an `Option` of a wasmod type (usually a table's rows).
#[diagnostic::on_unimplemented(
    message = "a view cannot return `{Self}`",
    note = "a view returns `Vec<T>` or `Option<T>`, where `T` is a table's row type or another `SchemaType`"
)]
pub trait ViewReturn: Encode {
    /// The type's description.
    fn schema(typespace: &mut Typespace) -> AlgebraicType;
}

impl<T: SchemaType> ViewReturn for Vec<T> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        <Self as SchemaType>::schema(typespace)
    }
}

impl<T: SchemaType> ViewReturn for Option<T> {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        <Self as SchemaType>::schema(typespace)
    }
}

/// What an HTTP handler may return: a [`Response`], or `Result<Response, E>` (an `Err` is
/// answered with status 500 and the message).
#[diagnostic::on_unimplemented(
    message = "an HTTP handler cannot return `{Self}`",
    note = "an HTTP handler returns `Response` or `Result<Response, E>` where `E` is a string type or implements `wasmod::IntoErrorMessage`"
)]
pub trait HttpReturn {
    /// The response, or the error message.
    fn into_response(self) -> Result<Response, CallError>;
}

impl HttpReturn for Response {
    #[inline]
    fn into_response(self) -> Result<Response, CallError> {
        Ok(self)
    }
}

impl<E: IntoErrorMessage> HttpReturn for Result<Response, E> {
    #[inline]
    fn into_response(self) -> Result<Response, CallError> {
        self.map_err(|error| CallError::failed(error.into_error_message()))
    }
}
