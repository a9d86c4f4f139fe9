//! The IR of an entry point: a reducer, procedure, view or HTTP handler.
//!
//! Parsing checks the function's shape (no generics, not `async`, the right context first,
//! parameters that are plain names of owned types) and the attribute's arguments, reporting
//! every problem with its span.

use super::kind::{EntryKind, Lifecycle, Role};
use crate::diagnostics::Errors;
use proc_macro2::Span;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;

/// The kinds of entry point, with what each attribute says.
#[derive(Clone)]
pub enum Kind {
    /// `#[reducer]`, `#[reducer(init)]`, ..
    Reducer {
        /// Its lifecycle role, if it has one.
        lifecycle: Option<Lifecycle>,
    },
    /// `#[procedure]`.
    Procedure,
    /// `#[view]`; anonymous when its context is `&AnonymousViewContext`.
    View {
        /// Whether the view takes `&AnonymousViewContext`.
        anonymous: bool,
    },
    /// `#[http_handler(METHOD, "/path")]`.
    HttpHandler {
        /// The method's variant of `wasmod::http::Method` (`Get`, `Post`, ..).
        method: syn::Ident,
        /// The path.
        path: syn::LitStr,
    },
}

impl Kind {
    /// The kind of entry point this is, which decides its list and its export.
    pub fn entry_kind(&self) -> EntryKind {
        match self {
            Self::Reducer { .. } => EntryKind::Reducer,
            Self::Procedure => EntryKind::Procedure,
            Self::View { anonymous: false } => EntryKind::View,
            Self::View { anonymous: true } => EntryKind::AnonymousView,
            Self::HttpHandler { .. } => EntryKind::HttpHandler,
        }
    }

    /// The attribute an entry point of this kind is written with.
    pub fn attr(&self) -> Attr {
        match self {
            Self::Reducer { .. } => Attr::Reducer,
            Self::Procedure => Attr::Procedure,
            Self::View { .. } => Attr::View,
            Self::HttpHandler { .. } => Attr::HttpHandler,
        }
    }
}

/// Which attribute an entry point was written with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Attr {
    /// `#[reducer]`.
    Reducer,
    /// `#[procedure]`.
    Procedure,
    /// `#[view]`.
    View,
    /// `#[http_handler]`.
    HttpHandler,
}

impl Attr {
    /// Every entry-point attribute.
    const ALL: [Self; 4] = [
        Self::Reducer,
        Self::Procedure,
        Self::View,
        Self::HttpHandler,
    ];

    /// The attribute for an attribute path's last segment, if it is one of the entry points'.
    pub fn from_path(path: &syn::Path) -> Option<Self> {
        let last = &path.segments.last()?.ident;
        Self::ALL.into_iter().find(|attr| last == attr.name())
    }

    /// The attribute's name: `reducer`, `procedure`, `view`, `http_handler`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reducer => "reducer",
            Self::Procedure => "procedure",
            Self::View => "view",
            Self::HttpHandler => "http_handler",
        }
    }

    /// The word used in messages: "reducer", "procedure", "view", "http handler".
    pub fn noun(self) -> &'static str {
        let kind = match self {
            Self::Reducer => EntryKind::Reducer,
            Self::Procedure => EntryKind::Procedure,
            Self::View => EntryKind::View,
            Self::HttpHandler => EntryKind::HttpHandler,
        };
        kind.word()
    }
}

/// A validated entry point.
pub struct EntryPoint {
    /// What kind it is.
    pub kind: Kind,
    /// Its name in the module description.
    pub name: String,
    /// The user's function, as written.
    pub func: syn::ItemFn,
    /// Its parameters after the context.
    pub params: Vec<Param>,
    /// Its return type (`()` when omitted).
    pub output: syn::Type,
    /// Its `#[cfg]` attributes, repeated on everything generated for it.
    pub cfgs: Vec<syn::Attribute>,
}

/// A parameter after the context.
pub struct Param {
    /// Its name in the description.
    pub name: String,
    /// Its type.
    pub ty: syn::Type,
}

/// The arguments of an entry point's attribute.
pub struct AttrArgs {
    /// `name = "..."`.
    pub name: Option<syn::LitStr>,
    /// The reducer's lifecycle role.
    pub lifecycle: Option<Lifecycle>,
    /// The HTTP handler's method and path.
    pub route: Option<(syn::Ident, syn::LitStr)>,
}

const MISSING_ROUTE: &str =
    "an HTTP handler needs a method and a path: `#[http_handler(GET, \"/path\")]`";

const METHODS: [(&str, &str); 7] = [
    ("GET", "Get"),
    ("POST", "Post"),
    ("PUT", "Put"),
    ("PATCH", "Patch"),
    ("DELETE", "Delete"),
    ("HEAD", "Head"),
    ("OPTIONS", "Options"),
];

impl AttrArgs {
    /// Parses the tokens inside an entry point's attribute.
    pub fn parse(attr: Attr, tokens: proc_macro2::TokenStream, errors: &mut Errors) -> Self {
        let mut args = Self {
            name: None,
            lifecycle: None,
            route: None,
        };
        if attr == Attr::HttpHandler && tokens.is_empty() {
            errors.push(syn::Error::new(Span::call_site(), MISSING_ROUTE));
            return args;
        }
        let parser = |input: syn::parse::ParseStream<'_>| -> syn::Result<()> {
            if attr == Attr::HttpHandler {
                args.route = Some(parse_route(input)?);
                if input.is_empty() {
                    return Ok(());
                }
                input.parse::<syn::Token![,]>()?;
            }
            while !input.is_empty() {
                let key: syn::Ident = input.call(syn::Ident::parse_any)?;
                if key == "name" {
                    input.parse::<syn::Token![=]>()?;
                    let name: syn::LitStr = input.parse()?;
                    if name.value().is_empty() {
                        return Err(syn::Error::new(name.span(), "the name cannot be empty"));
                    }
                    if args.name.replace(name).is_some() {
                        return Err(syn::Error::new(key.span(), "`name` is given twice"));
                    }
                } else if let Some(role) = Role::from_ident(&key).filter(|_| attr == Attr::Reducer)
                {
                    let lifecycle = Lifecycle {
                        role,
                        span: key.span(),
                    };
                    if args.lifecycle.replace(lifecycle).is_some() {
                        return Err(syn::Error::new(
                            key.span(),
                            "a reducer has at most one lifecycle role",
                        ));
                    }
                } else {
                    let accepted = match attr {
                        Attr::Reducer => {
                            let roles: Vec<String> = Role::ALL
                                .iter()
                                .map(|role| format!("`{}`", role.keyword()))
                                .collect();
                            format!("{} or `name = \"..\"`", roles.join(", "))
                        }
                        Attr::HttpHandler => "a method and a path, then `name = \"..\"`".into(),
                        Attr::Procedure | Attr::View => "`name = \"..\"`".into(),
                    };
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown argument `{key}` for `#[{}]`; it accepts {accepted}",
                            attr.name()
                        ),
                    ));
                }
                if !input.is_empty() {
                    input.parse::<syn::Token![,]>()?;
                }
            }
            Ok(())
        };
        errors.take(syn::parse::Parser::parse2(parser, tokens));
        args
    }
}

fn parse_route(input: syn::parse::ParseStream<'_>) -> syn::Result<(syn::Ident, syn::LitStr)> {
    let method: syn::Ident = input.call(syn::Ident::parse_any)?;
    let variant = METHODS
        .iter()
        .find(|(wire, _)| method == wire)
        .map(|(_, variant)| syn::Ident::new(variant, method.span()))
        .ok_or_else(|| {
            syn::Error::new(
                method.span(),
                format!("unknown HTTP method `{method}`; use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS"),
            )
        })?;
    input.parse::<syn::Token![,]>()?;
    let path: syn::LitStr = input.parse()?;
    wasmod_route::Pattern::parse(&path.value())
        .map_err(|error| syn::Error::new(path.span(), error))?;
    Ok((variant, path))
}

/// The `#[cfg]` attributes among `attrs`.
pub fn cfg_attrs(attrs: &[syn::Attribute]) -> Vec<syn::Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .cloned()
        .collect()
}

/// The context type an entry point of `attr` expects first, and whether it is `&mut`.
fn expected_contexts(attr: Attr) -> (&'static [&'static str], bool) {
    match attr {
        Attr::Reducer => (&["ReducerContext"], false),
        Attr::Procedure => (&["ProcedureContext"], true),
        Attr::View => (&["ViewContext", "AnonymousViewContext"], false),
        Attr::HttpHandler => (&["HttpContext"], true),
    }
}

/// The name of the context type `ty` refers to, if it is `&Name` or `&mut Name` (any path).
pub fn context_name(ty: &syn::Type) -> Option<(String, bool)> {
    let syn::Type::Reference(reference) = ty else {
        return None;
    };
    let syn::Type::Path(path) = &*reference.elem else {
        return None;
    };
    let last = path.path.segments.last()?;
    Some((last.ident.to_string(), reference.mutability.is_some()))
}

impl EntryPoint {
    /// Parses and validates the function an entry-point attribute is on.
    pub fn parse(
        attr: Attr,
        args: AttrArgs,
        func: syn::ItemFn,
        errors: &mut Errors,
    ) -> Option<Self> {
        let noun = attr.noun();
        let sig = &func.sig;
        if let Some(asyncness) = &sig.asyncness {
            errors.error_at(asyncness, format!("a {noun} cannot be `async`: entry points run to completion inside one host call"));
        }
        if let Some(unsafety) = &sig.unsafety {
            errors.error_at(unsafety, format!("a {noun} cannot be `unsafe`"));
        }
        if let Some(constness) = &sig.constness {
            errors.error_at(constness, format!("a {noun} cannot be `const`"));
        }
        if let Some(abi) = &sig.abi {
            errors.error_at(
                abi,
                format!("a {noun} is a plain Rust function; remove the `extern`"),
            );
        }
        if let Some(variadic) = &sig.variadic {
            errors.error_at(variadic, format!("a {noun} cannot be variadic"));
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.error_at(&sig.generics, format!("a {noun} cannot be generic: the host calls one concrete function per entry point"));
        }

        for input in &sig.inputs {
            if let syn::FnArg::Receiver(receiver) = input {
                errors.error_at(
                    receiver,
                    format!("a {noun} is a free function, not a method"),
                );
            }
        }
        let mut inputs = sig
            .inputs
            .iter()
            .filter(|input| matches!(input, syn::FnArg::Typed(_)));
        let (expected, mutable) = expected_contexts(attr);
        let context_message = || {
            let reference = if mutable { "&mut " } else { "&" };
            let options: Vec<String> = expected
                .iter()
                .map(|name| format!("`ctx: {reference}{name}`"))
                .collect();
            format!(
                "the first parameter of a {noun} must be {}",
                options.join(" or ")
            )
        };
        let mut anonymous = false;
        match inputs.next() {
            None => errors.push(syn::Error::new(
                sig.paren_token.span.join(),
                context_message(),
            )),
            Some(syn::FnArg::Receiver(_)) => {}
            Some(syn::FnArg::Typed(typed)) => match context_name(&typed.ty) {
                Some((name, is_mut)) if expected.contains(&name.as_str()) && is_mut == mutable => {
                    anonymous = name == "AnonymousViewContext";
                }
                _ => errors.error_at(&typed.ty, context_message()),
            },
        }

        let params: Vec<Param> = inputs
            .enumerate()
            .filter_map(|(index, input)| parse_param(noun, index, input, errors))
            .collect();

        let kind = match attr {
            Attr::Reducer => {
                if let (Some(lifecycle), false) = (&args.lifecycle, params.is_empty()) {
                    errors.push(syn::Error::new(
                        sig.inputs.span(),
                        format!("a lifecycle reducer (`{}`) takes only its context: the host calls it with no arguments", lifecycle.role.keyword()),
                    ));
                }
                Kind::Reducer {
                    lifecycle: args.lifecycle,
                }
            }
            Attr::Procedure => Kind::Procedure,
            Attr::View => {
                check_view_output(sig, errors);
                Kind::View { anonymous }
            }
            Attr::HttpHandler => {
                if params.len() != 1 {
                    errors.push(syn::Error::new(
                        sig.inputs.span(),
                        "an HTTP handler takes its context and the request: `(ctx: &mut HttpContext, request: Request)`",
                    ));
                }
                let (method, path) = args.route?;
                Kind::HttpHandler { method, path }
            }
        };

        let output = match &sig.output {
            syn::ReturnType::Default => syn::parse_quote!(()),
            syn::ReturnType::Type(_, ty) => (**ty).clone(),
        };
        let name = args
            .name
            .map_or_else(|| sig.ident.unraw().to_string(), |name| name.value());
        let cfgs = cfg_attrs(&func.attrs);
        Some(Self {
            kind,
            name,
            params,
            output,
            cfgs,
            func,
        })
    }

    /// The entry point's function name.
    pub fn ident(&self) -> &syn::Ident {
        &self.func.sig.ident
    }
}

fn parse_param(noun: &str, index: usize, input: &syn::FnArg, errors: &mut Errors) -> Option<Param> {
    let syn::FnArg::Typed(typed) = input else {
        errors.error_at(input, format!("a {noun} is a free function, not a method"));
        return None;
    };
    let name = match &*typed.pat {
        syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
            ident.ident.unraw().to_string()
        }
        syn::Pat::Wild(_) => format!("arg{index}"),
        other => {
            errors.error_at(other, "an entry point's parameters are plain names (`name: Type`): the description names each one");
            return None;
        }
    };
    if let Some(problem) = unsupported_type(&typed.ty) {
        errors.push(syn::Error::new(problem.0, problem.1));
        return None;
    }
    Some(Param {
        name,
        ty: (*typed.ty).clone(),
    })
}

/// Why `ty` cannot be a parameter type, if it cannot: references borrow from nothing the
/// host keeps, and `impl Trait` names no concrete type to decode.
fn unsupported_type(ty: &syn::Type) -> Option<(Span, String)> {
    struct Finder(Option<(Span, String)>);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            self.0.get_or_insert((
                reference.span(),
                "parameters are decoded into owned values: use an owned type (`String` rather than `&str`, `Vec<T>` rather than `&[T]`)".to_owned(),
            ));
        }
        fn visit_type_impl_trait(&mut self, ty: &'ast syn::TypeImplTrait) {
            self.0.get_or_insert((
                ty.span(),
                "a parameter needs a concrete type to be decoded into, not `impl Trait`".to_owned(),
            ));
        }
    }
    let mut finder = Finder(None);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.0
}

fn check_view_output(sig: &syn::Signature, errors: &mut Errors) {
    const MESSAGE: &str = "a view returns `Vec<T>` or `Option<T>`, of any `T` with a schema (a table's row, a `#[derive(SchemaType)]` type, a number, a `String`, …)";
    match &sig.output {
        syn::ReturnType::Default => errors.error_at(
            &sig.ident,
            format!("{MESSAGE}; `{}` returns nothing", sig.ident),
        ),
        syn::ReturnType::Type(_, ty) => {
            let container = match &**ty {
                syn::Type::Path(path) => path
                    .path
                    .segments
                    .last()
                    .map(|segment| segment.ident.to_string()),
                _ => None,
            };
            if !matches!(container.as_deref(), Some("Vec" | "Option")) {
                errors.error_at(ty, MESSAGE);
            }
        }
    }
}
