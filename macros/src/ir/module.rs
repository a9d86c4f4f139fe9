//! The IR of a module: the one list of tables and entry points that both the description and
//! the dispatch are generated from.
//!
//! Two surface forms produce it:
//!
//! - `#[wasmod::module] mod app { .. }` collects the tables and entry points written inside the
//!   inline module, nested inline modules included;
//! - `#[wasmod::module(tables(..), reducers(..), ..)]` lists them by path, for items in other
//!   files; on a unit struct (which becomes the module's marker type) or added to an inline
//!   module.

use super::entry::{cfg_attrs, Attr, AttrArgs, EntryPoint, Kind};
use super::kind::{EntryKind, Role};
use super::table::Table;
use crate::diagnostics::Errors;
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;

/// The lists of a module, in description order: its tables, then its entry points of each kind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Category {
    /// `tables(..)`.
    Tables,
    /// The entry points of one kind: `reducers(..)`, `views(..)` (views taking
    /// `&ViewContext`), `anonymous_views(..)` (views taking `&AnonymousViewContext`), ..
    Entries(EntryKind),
}

/// How many lists a module has.
pub const CATEGORIES: usize = 1 + EntryKind::ALL.len();

impl Category {
    /// Every category, in description order.
    pub fn all() -> impl Iterator<Item = Self> {
        std::iter::once(Self::Tables).chain(EntryKind::ALL.into_iter().map(Self::Entries))
    }

    /// The category's position in [`Category::all`], which is its list's in [`Module::lists`].
    pub fn index(self) -> usize {
        match self {
            Self::Tables => 0,
            Self::Entries(kind) => 1 + kind as usize,
        }
    }

    /// The keyword of the list form.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Tables => "tables",
            Self::Entries(kind) => kind.list(),
        }
    }
}

/// One registered table or entry point.
pub struct Registration {
    /// Its path, relative to where the generated code lives.
    pub path: syn::Path,
    /// The `#[cfg]`s it is under (its own and its enclosing inline modules').
    pub cfgs: Vec<syn::Attribute>,
    /// Its name, when the macro can see it (inline items); used for early, spanned checks.
    pub name: Option<(String, Span)>,
    /// Its lifecycle role, when the macro can see it (inline reducers).
    pub lifecycle: Option<Role>,
    /// Its method and route pattern, when the macro can see them (inline HTTP handlers).
    pub route: Option<Route>,
}

/// An inline HTTP handler's method and route pattern, to refuse two that answer the same
/// requests.
pub struct Route {
    /// The method, as written (`GET`).
    pub method: String,
    /// The pattern, as written.
    pub text: String,
    /// The pattern, parsed.
    pub pattern: wasmod_route::Pattern,
    /// Where the pattern is written.
    pub span: Span,
}

/// A validated module.
pub struct Module {
    /// Where the module's code goes, and the marker type.
    pub form: Form,
    /// The registrations of each category, in order: ids are positions.
    pub lists: [Vec<Registration>; CATEGORIES],
    /// Whether parsing reported errors. The module's code is still generated, so that its items
    /// do not all report themselves unregistered, but without the compile-time checks, which
    /// would only repeat the errors.
    pub reported_errors: bool,
}

/// The item the module attribute was on.
pub enum Form {
    /// An inline module; the marker type `Module` is generated inside it.
    Inline(syn::ItemMod),
    /// A unit struct, which is the marker type.
    Marker(syn::ItemStruct),
}

impl Module {
    /// The registrations of `category`.
    pub fn list(&self, category: Category) -> &[Registration] {
        &self.lists[category.index()]
    }

    /// Parses the module attribute's arguments and the item it is on.
    pub fn parse(args: TokenStream, item: TokenStream, errors: &mut Errors) -> Option<Self> {
        let mut lists: [Vec<Registration>; CATEGORIES] = Default::default();
        if let Some(listed) = errors.take(syn::parse2::<ListArgs>(args)) {
            for (category, registration) in listed.entries {
                lists[category.index()].push(registration);
            }
        }
        let form = match syn::parse2::<syn::Item>(item) {
            Ok(syn::Item::Mod(module)) => {
                match &module.content {
                    Some((_, items)) => collect(items, &syn::Path { leading_colon: None, segments: Default::default() }, &[], &mut lists, errors),
                    None => errors.error_at(&module, "`#[wasmod::module]` needs the module's items inline (`mod app { .. }`); for entry points in other files, list them: `#[wasmod::module(reducers(path::to::reducer), ..)] pub struct App;`"),
                }
                Form::Inline(module)
            }
            Ok(syn::Item::Struct(marker)) => {
                if !matches!(marker.fields, syn::Fields::Unit) || !marker.generics.params.is_empty()
                {
                    errors.error_at(
                        &marker,
                        "the module's marker is a unit struct without generics: `pub struct App;`",
                    );
                }
                Form::Marker(marker)
            }
            Ok(other) => {
                errors.error_at(other, "`#[wasmod::module]` goes on an inline module (`mod app { .. }`) or on a unit struct listing the module's entry points");
                return None;
            }
            Err(error) => {
                errors.push(error);
                return None;
            }
        };
        check_duplicates(&lists, errors);
        for list in &mut lists {
            let mut seen = Vec::new();
            list.retain(|registration| {
                let path = path_text(&registration.path);
                let first = !seen.contains(&path);
                seen.push(path);
                first
            });
        }
        let reported_errors = errors.has_errors();
        Some(Self {
            form,
            lists,
            reported_errors,
        })
    }
}

/// The list form's arguments: `tables(A, B), reducers(a, #[cfg(x)] b::c), ..`.
struct ListArgs {
    entries: Vec<(Category, Registration)>,
}

impl Parse for ListArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut entries = Vec::new();
        let mut seen: Vec<Category> = Vec::new();
        while !input.is_empty() {
            let keyword = input.call(syn::Ident::parse_any)?;
            let category = Category::all()
                .find(|category| keyword == category.keyword())
                .ok_or_else(|| {
                    syn::Error::new(
                        keyword.span(),
                        format!(
                            "unknown list `{keyword}`; a module lists {}",
                            list_keywords()
                        ),
                    )
                })?;
            if seen.contains(&category) {
                return Err(syn::Error::new(
                    keyword.span(),
                    format!("`{keyword}` is listed twice"),
                ));
            }
            seen.push(category);
            let content;
            syn::parenthesized!(content in input);
            while !content.is_empty() {
                let attrs = content.call(syn::Attribute::parse_outer)?;
                if let Some(attr) = attrs.iter().find(|attr| !attr.path().is_ident("cfg")) {
                    return Err(syn::Error::new(
                        attr.span(),
                        "only `#[cfg(..)]` can be put on a listed item",
                    ));
                }
                let path: syn::Path = content.parse()?;
                entries.push((
                    category,
                    Registration {
                        path,
                        cfgs: attrs,
                        name: None,
                        lifecycle: None,
                        route: None,
                    },
                ));
                if !content.is_empty() {
                    content.parse::<syn::Token![,]>()?;
                }
            }
            if !input.is_empty() {
                input.parse::<syn::Token![,]>()?;
            }
        }
        Ok(Self { entries })
    }
}

/// Collects the tables and entry points of an inline module's items, recursing into nested
/// inline modules. `prefix` is the path of the nested module being read; `cfgs` the `#[cfg]`s
/// of the modules around it.
fn collect(
    items: &[syn::Item],
    prefix: &syn::Path,
    cfgs: &[syn::Attribute],
    lists: &mut [Vec<Registration>; CATEGORIES],
    errors: &mut Errors,
) {
    for item in items {
        match item {
            syn::Item::Fn(func) => {
                let Some(attr) = func
                    .attrs
                    .iter()
                    .find(|attr| Attr::from_path(attr.path()).is_some())
                else {
                    continue;
                };
                let attr_kind = Attr::from_path(attr.path()).unwrap_or(Attr::Reducer);
                // An entry point its own attribute will refuse is left out of the dispatch, so
                // that its error is the only one reported.
                let mut entry_errors = Errors::default();
                let args = AttrArgs::parse(attr_kind, attr_tokens(attr), &mut entry_errors);
                let entry = EntryPoint::parse(attr_kind, args, func.clone(), &mut entry_errors);
                let Ok(Some(entry)) = entry_errors.finish(entry) else {
                    continue;
                };
                let mut registration =
                    registration(prefix, &func.sig.ident, cfgs, &func.attrs, Some(entry.name));
                if let Kind::Reducer {
                    lifecycle: Some(lifecycle),
                } = entry.kind
                {
                    registration.lifecycle = Some(lifecycle.role);
                }
                if let Kind::HttpHandler { method, path } = &entry.kind {
                    registration.route =
                        wasmod_route::Pattern::parse(&path.value())
                            .ok()
                            .map(|pattern| Route {
                                method: method.to_string().to_uppercase(),
                                text: path.value(),
                                pattern,
                                span: path.span(),
                            });
                }
                let category = Category::Entries(entry.kind.entry_kind());
                lists[category.index()].push(registration);
            }
            syn::Item::Struct(table) => {
                let Some(attr) = table.attrs.iter().find(|attr| {
                    attr.path()
                        .segments
                        .last()
                        .is_some_and(|segment| segment.ident == "table")
                }) else {
                    continue;
                };
                let mut table_errors = Errors::default();
                let parsed = Table::parse(attr_tokens(attr), table.clone(), &mut table_errors);
                if table_errors.finish(parsed).is_ok() {
                    lists[Category::Tables.index()].push(registration(
                        prefix,
                        &table.ident,
                        cfgs,
                        &table.attrs,
                        None,
                    ));
                }
            }
            syn::Item::Mod(module) => {
                if module.attrs.iter().any(|attr| {
                    attr.path()
                        .segments
                        .last()
                        .is_some_and(|segment| segment.ident == "module")
                }) {
                    errors.error_at(
                        &module.ident,
                        "modules do not nest: a wasm binary has one set of exports",
                    );
                    continue;
                }
                if let Some((_, nested)) = &module.content {
                    let mut path = prefix.clone();
                    path.segments.push(module.ident.clone().into());
                    let mut nested_cfgs = cfgs.to_vec();
                    nested_cfgs.extend(cfg_attrs(&module.attrs));
                    collect(nested, &path, &nested_cfgs, lists, errors);
                }
            }
            _ => {}
        }
    }
}

/// The tokens inside an attribute's parentheses (none for a bare `#[attr]`).
fn attr_tokens(attr: &syn::Attribute) -> TokenStream {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => TokenStream::new(),
    }
}

fn registration(
    prefix: &syn::Path,
    ident: &syn::Ident,
    outer_cfgs: &[syn::Attribute],
    attrs: &[syn::Attribute],
    name: Option<String>,
) -> Registration {
    let mut path = prefix.clone();
    path.segments.push(ident.clone().into());
    let mut cfgs = outer_cfgs.to_vec();
    cfgs.extend(cfg_attrs(attrs));
    Registration {
        path,
        cfgs,
        name: name.map(|name| (name, ident.span())),
        lifecycle: None,
        route: None,
    }
}

/// The list form's keywords, for messages: "`tables`, `reducers`, .. and `http_handlers`".
fn list_keywords() -> String {
    let keywords: Vec<String> = Category::all()
        .map(|category| format!("`{}`", category.keyword()))
        .collect();
    match keywords.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The same path registered twice, or two visible entry points with one name.
fn check_duplicates(lists: &[Vec<Registration>; CATEGORIES], errors: &mut Errors) {
    let all: Vec<(Category, &Registration)> = Category::all()
        .flat_map(|category| {
            lists[category.index()]
                .iter()
                .map(move |registration| (category, registration))
        })
        .collect();
    for (position, (category, registration)) in all.iter().enumerate() {
        let path = path_text(&registration.path);
        if all[..position].iter().any(|(earlier_category, earlier)| {
            earlier_category == category && path_text(&earlier.path) == path
        }) {
            errors.error_at(&registration.path, format!("`{path}` is registered twice"));
        }
        if *category == Category::Tables {
            continue;
        }
        let earlier_entries = || {
            all[..position]
                .iter()
                .filter(|(category, _)| *category != Category::Tables)
                .map(|(_, earlier)| earlier)
        };
        if let Some((name, span)) = &registration.name {
            if earlier_entries().any(|earlier| {
                earlier
                    .name
                    .as_ref()
                    .is_some_and(|(other, _)| other == name)
            }) {
                errors.push(syn::Error::new(*span, format!("two entry points of this module are named `{name}`; rename one with `name = \"..\"` in its attribute")));
            }
        }
        if let Some(route) = &registration.route {
            let clash = earlier_entries()
                .filter_map(|earlier| earlier.route.as_ref())
                .find(|earlier| {
                    earlier.method == route.method && earlier.pattern.same_routes(&route.pattern)
                });
            if let Some(earlier) = clash {
                errors.push(syn::Error::new(
                    route.span,
                    format!(
                        "another HTTP handler of this module answers {} `{}`: each method and route pattern has one handler",
                        route.method, earlier.text
                    ),
                ));
            }
        }
        if let (Some(role), Some((_, span))) = (&registration.lifecycle, &registration.name) {
            if earlier_entries().any(|earlier| earlier.lifecycle == Some(*role)) {
                errors.push(syn::Error::new(*span, format!("this module already has a reducer for `{}`: each lifecycle role has at most one", role.keyword())));
            }
        }
    }
}

/// A path as written, `a::b::c`.
fn path_text(path: &syn::Path) -> String {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    let text = segments.join("::");
    if path.leading_colon.is_some() {
        format!("::{text}")
    } else {
        text
    }
}
