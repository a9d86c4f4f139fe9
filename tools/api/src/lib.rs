//! The public surface of a library crate, listed from its source with `syn`: one line per
//! public item, field, variant, method, trait item and impl, sorted, so that a change to what
//! other crates can use shows as a line added or removed in the crate's committed `api.txt`
//! (the check is `tests/workspace.rs`).
//!
//! Why from the source and not from rustdoc's JSON (`cargo public-api`): that JSON is a
//! nightly-only output (stable rustc refuses `--output-format json` unless told it is the
//! compiler's own bootstrap), its format changes with every toolchain, and producing it
//! checks every dependency again (wasmtime's among them) in a build of its own. Reading the
//! source needs none of that and runs in the ordinary `cargo test` in a second. What that
//! costs, and how this lister pays for it:
//!
//! - Visibility is followed the way the compiler does: an item is listed when it is `pub` in a
//!   module reachable through `pub mod`s from the root, or named by a `pub use` (re-exports
//!   of the crate's own items are resolved to the item and listed in full under the path
//!   they are exported at; globs too). Re-exports of another crate's items are listed as the
//!   re-export (`use PATH = other::PATH`): their surface is that crate's (and its own
//!   `api.txt`'s, for the workspace's crates).
//! - What derives and attributes give an item is listed with the item: its `derive`s,
//!   `non_exhaustive`, `repr`, `cfg`, `deprecated`, `doc(hidden)`, `must_use`, the
//!   `proc_macro*` attributes. Auto traits (`Send`, `Sync`) are not: they follow from the
//!   fields, and a field's change is listed.
//! - Impls are listed where they are written, for the crate's public types (and for any type,
//!   of the crate's public traits): `impl Trait for Type` headers, and the `pub` items of
//!   inherent impls with the impl's header.
//! - Not seen: items that a `macro_rules!` of the crate or a proc macro generates (no crate of
//!   the workspace makes its public API that way today: the `#[table]`-generated items are
//!   the user's crate's, not wasmod's). `#[macro_export]` macros themselves are listed.
//! - Items under `#[cfg(test)]` are left out; other `cfg`s are kept as attributes: the
//!   surface is the union over targets, each item saying where it exists. A module that is
//!   both `#[doc(hidden)]` and behind a `cfg` (a crate's internals opened by a feature to its
//!   own benches and the workspace's tests, such as `wasmod_node::internals`) is left out with
//!   its contents: it is not an API, and no published crate depends on it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::{fmt, fs};
use syn::ext::IdentExt;
use syn::{Attribute, Fields, ImplItem, Item, TraitItem, Type, UseTree, Visibility};

/// How deep re-exports may go through each other before the lister stops following them (a
/// guard against `use`s that name each other).
const MAX_DEPTH: usize = 32;

/// A crate's source could not be read: a file is missing or does not parse.
#[derive(Debug)]
pub struct Error {
    file: PathBuf,
    reason: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.reason)
    }
}

impl std::error::Error for Error {}

/// One module of the crate (the root is module 0), with its items as written.
struct Module {
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    public_children: BTreeSet<String>,
    items: Vec<Item>,
}

/// Every module of a crate.
struct Crate {
    modules: Vec<Module>,
}

/// The lines of the public surface of the library whose root file is `root` (`src/lib.rs`),
/// its paths starting with `crate_name` (`wasmod_abi`), sorted.
pub fn surface(root: &Path, crate_name: &str) -> Result<Vec<String>, Error> {
    let krate = Crate::read(root)?;
    let mut lister = Lister {
        krate: &krate,
        crate_name,
        lines: BTreeSet::new(),
        types: BTreeMap::new(),
        visited: BTreeSet::new(),
    };
    lister.export_module(0, crate_name, 0);
    lister.macros();
    lister.impls();
    Ok(lister.lines.into_iter().collect())
}

/// How the committed surface and the source disagree.
#[derive(Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Lines of the source's surface that the snapshot lacks.
    pub added: Vec<String>,
    /// Lines of the snapshot that the source's surface lacks.
    pub removed: Vec<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.removed {
            writeln!(f, "- {line}")?;
        }
        for line in &self.added {
            writeln!(f, "+ {line}")?;
        }
        Ok(())
    }
}

/// The first lines of every snapshot.
pub const HEADER: &str = "\
# The public surface of this crate, one line per item (tools/api). A change to the crate's
# public API must change this file in the same commit: after a deliberate change, rewrite it
# with `WASMOD_API_BLESS=1 cargo test -p wasmod-api --test workspace` and review the diff.
";

/// The snapshot text of `lines`.
pub fn snapshot_text(lines: &[String]) -> String {
    let mut text = HEADER.to_owned();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// Compares `lines` with the snapshot text `snapshot` (its comment lines ignored).
pub fn compare(lines: &[String], snapshot: &str) -> Result<(), Mismatch> {
    let committed: BTreeSet<&str> = snapshot
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .collect();
    let current: BTreeSet<&str> = lines.iter().map(String::as_str).collect();
    let added: Vec<String> = current
        .difference(&committed)
        .map(|s| (*s).to_owned())
        .collect();
    let removed: Vec<String> = committed
        .difference(&current)
        .map(|s| (*s).to_owned())
        .collect();
    if added.is_empty() && removed.is_empty() {
        Ok(())
    } else {
        Err(Mismatch { added, removed })
    }
}

impl Crate {
    fn read(root: &Path) -> Result<Crate, Error> {
        let mut krate = Crate {
            modules: Vec::new(),
        };
        krate.add(None, None, false);
        let dir = root.parent().unwrap_or(Path::new("."));
        krate.read_file(0, root, dir)?;
        Ok(krate)
    }

    fn add(&mut self, parent: Option<usize>, name: Option<&str>, public: bool) -> usize {
        let index = self.modules.len();
        self.modules.push(Module {
            parent,
            children: BTreeMap::new(),
            public_children: BTreeSet::new(),
            items: Vec::new(),
        });
        if let (Some(parent), Some(name)) = (parent, name) {
            self.modules[parent].children.insert(name.to_owned(), index);
            if public {
                self.modules[parent].public_children.insert(name.to_owned());
            }
        }
        index
    }

    fn read_file(&mut self, module: usize, file: &Path, dir: &Path) -> Result<(), Error> {
        let error = |reason: String| Error {
            file: file.to_owned(),
            reason,
        };
        let source = fs::read_to_string(file).map_err(|e| error(e.to_string()))?;
        let parsed = syn::parse_file(&source).map_err(|e| error(e.to_string()))?;
        self.read_items(module, parsed.items, file, dir)
    }

    fn read_items(
        &mut self,
        module: usize,
        items: Vec<Item>,
        file: &Path,
        dir: &Path,
    ) -> Result<(), Error> {
        for item in items {
            if test_only(attributes(&item)) {
                continue;
            }
            match item {
                Item::Mod(inner) => {
                    let name = inner.ident.unraw().to_string();
                    let public = matches!(inner.vis, Visibility::Public(_))
                        && !internals_behind_a_feature(&inner.attrs);
                    let child = self.add(Some(module), Some(&name), public);
                    if let Some((_, content)) = inner.content {
                        self.read_items(child, content, file, &dir.join(&name))?;
                    } else {
                        let (child_file, child_dir) = module_file(&inner, file, dir, &name);
                        self.read_file(child, &child_file, &child_dir)?;
                    }
                }
                other => self.modules[module].items.push(other),
            }
        }
        Ok(())
    }

    /// The module `path` names from `from`, if it is one of the crate's.
    fn module_at(&self, from: usize, path: &[String], depth: usize) -> Option<usize> {
        match self.resolve(from, path, depth) {
            Found::Module(module) => Some(module),
            Found::Item(..) | Found::External(_) => None,
        }
    }

    /// What `name` means in `module`: a child module, an item, or what a `use` there brings
    /// in (named or by a glob). `None` when the crate has no such name there.
    fn lookup(&self, module: usize, name: &str, depth: usize) -> Option<Found<'_>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let here = &self.modules[module];
        if let Some(&child) = here.children.get(name) {
            return Some(Found::Module(child));
        }
        for item in &here.items {
            if !matches!(item, Item::Use(_) | Item::Impl(_))
                && item_name(item).as_deref() == Some(name)
            {
                return Some(Found::Item(module, item));
            }
        }
        let mut globs = Vec::new();
        for item in &here.items {
            let Item::Use(declaration) = item else {
                continue;
            };
            for import in imports(&declaration.tree) {
                match &import.leaf {
                    Leaf::Name {
                        name: original,
                        alias,
                    } if alias == name => {
                        let mut path = import.path.clone();
                        path.push(original.clone());
                        return Some(self.resolve(module, &path, depth + 1));
                    }
                    Leaf::Glob => globs.push(import.path),
                    Leaf::Name { .. } => {}
                }
            }
        }
        globs.into_iter().find_map(|glob| {
            let opened = self.module_at(module, &glob, depth + 1)?;
            (opened != module)
                .then(|| self.lookup(opened, name, depth + 1))
                .flatten()
        })
    }

    /// What the path of a `use` written in `module` names: one of the crate's modules or
    /// items, or another crate's path (through the crate's own re-exports of it: `http::X`
    /// where `pub use other::http;` is `other::http::X`).
    fn resolve(&self, module: usize, path: &[String], depth: usize) -> Found<'_> {
        let mut current = module;
        for (i, segment) in path.iter().enumerate() {
            let found = match segment.as_str() {
                "crate" if i == 0 => Some(Found::Module(0)),
                "self" if i == 0 => Some(Found::Module(current)),
                "super" => self.modules[current].parent.map(Found::Module),
                name => self.lookup(current, name, depth + 1),
            };
            let rest = &path[i + 1..];
            match found {
                Some(Found::Module(next)) => current = next,
                Some(Found::Item(defined, item)) if rest.is_empty() => {
                    return Found::Item(defined, item)
                }
                Some(Found::External(outside)) => {
                    let mut full = vec![outside];
                    full.extend(rest.iter().cloned());
                    return Found::External(full.join("::"));
                }
                // An enum's variant, or a name the crate does not have (another crate's).
                Some(Found::Item(..)) | None => return Found::External(path.join("::")),
            }
        }
        Found::Module(current)
    }
}

/// What a name means in a module.
enum Found<'a> {
    Module(usize),
    Item(usize, &'a Item),
    External(String),
}

/// One name a `use` brings in: the path before it, and the name (or a glob).
struct Import {
    path: Vec<String>,
    leaf: Leaf,
}

enum Leaf {
    Name { name: String, alias: String },
    Glob,
}

fn imports(tree: &UseTree) -> Vec<Import> {
    fn walk(tree: &UseTree, path: &mut Vec<String>, out: &mut Vec<Import>) {
        match tree {
            UseTree::Path(p) => {
                path.push(p.ident.unraw().to_string());
                walk(&p.tree, path, out);
                path.pop();
            }
            // `use a::b::{self}`: the module `a::b` itself.
            UseTree::Name(n) if n.ident == "self" && !path.is_empty() => {
                let name = path.pop().expect("not empty");
                out.push(Import {
                    path: path.clone(),
                    leaf: Leaf::Name {
                        alias: name.clone(),
                        name: name.clone(),
                    },
                });
                path.push(name);
            }
            UseTree::Rename(r) if r.ident == "self" && !path.is_empty() => {
                let name = path.pop().expect("not empty");
                out.push(Import {
                    path: path.clone(),
                    leaf: Leaf::Name {
                        name: name.clone(),
                        alias: r.rename.unraw().to_string(),
                    },
                });
                path.push(name);
            }
            UseTree::Name(n) => {
                let name = n.ident.unraw().to_string();
                out.push(Import {
                    path: path.clone(),
                    leaf: Leaf::Name {
                        alias: name.clone(),
                        name,
                    },
                });
            }
            UseTree::Rename(r) => out.push(Import {
                path: path.clone(),
                leaf: Leaf::Name {
                    name: r.ident.unraw().to_string(),
                    alias: r.rename.unraw().to_string(),
                },
            }),
            UseTree::Glob(_) => out.push(Import {
                path: path.clone(),
                leaf: Leaf::Glob,
            }),
            UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, path, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// Collects the lines.
struct Lister<'a> {
    krate: &'a Crate,
    crate_name: &'a str,
    lines: BTreeSet<String>,
    /// The public types and traits: where each is defined (module, name), and the paths it
    /// is public at.
    types: BTreeMap<(usize, String), BTreeSet<String>>,
    visited: BTreeSet<(usize, String)>,
}

impl Lister<'_> {
    /// Lists module `module`'s public items under `prefix`, as the module `prefix`.
    fn export_module(&mut self, module: usize, prefix: &str, depth: usize) {
        self.line(prefix, "mod".to_owned());
        self.export_contents(module, prefix, depth);
    }

    /// Lists the public items, modules and re-exports of `module` under `prefix`.
    fn export_contents(&mut self, module: usize, prefix: &str, depth: usize) {
        if depth > MAX_DEPTH || !self.visited.insert((module, prefix.to_owned())) {
            return;
        }
        let krate = self.krate;
        let here = &krate.modules[module];
        for item in &here.items {
            match item {
                Item::Use(declaration) if is_public(&declaration.vis) => {
                    for import in imports(&declaration.tree) {
                        self.export_use(module, import, prefix, depth + 1);
                    }
                }
                Item::Use(_) | Item::Impl(_) | Item::Macro(_) => {}
                other if public_item(other) => {
                    if let Some(name) = item_name(other) {
                        self.export_item(module, other, &format!("{prefix}::{name}"));
                    }
                }
                _ => {}
            }
        }
        for name in &here.public_children {
            let child = here.children[name];
            self.export_module(child, &format!("{prefix}::{name}"), depth + 1);
        }
    }

    fn export_use(&mut self, module: usize, import: Import, prefix: &str, depth: usize) {
        let krate = self.krate;
        match import.leaf {
            Leaf::Name { name, alias } => {
                if alias == "_" {
                    return;
                }
                let mut path = import.path.clone();
                path.push(name);
                let at = format!("{prefix}::{alias}");
                match krate.resolve(module, &path, depth) {
                    Found::Module(target) => self.export_module(target, &at, depth + 1),
                    Found::Item(defined, item) => self.export_item(defined, item, &at),
                    Found::External(written) => self.line(&at, format!("use {written}")),
                }
            }
            Leaf::Glob => match krate.resolve(module, &import.path, depth) {
                Found::Module(target) => self.export_contents(target, prefix, depth + 1),
                Found::External(written) => self.line(prefix, format!("use {written}::*")),
                Found::Item(..) => self.line(prefix, format!("use {}::*", import.path.join("::"))),
            },
        }
    }

    fn line(&mut self, path: &str, text: String) {
        self.lines.insert(format!("{path}: {text}"));
    }

    /// Lists one public item, defined in module `defined`, as `path`.
    fn export_item(&mut self, defined: usize, item: &Item, path: &str) {
        if let Some(name) = item_name(item) {
            if matches!(
                item,
                Item::Struct(_) | Item::Enum(_) | Item::Union(_) | Item::Trait(_) | Item::Type(_)
            ) {
                self.types
                    .entry((defined, name))
                    .or_default()
                    .insert(path.to_owned());
            }
        }
        match item {
            Item::Struct(s) => {
                let mut header = s.clone();
                header.attrs = kept(&s.attrs);
                header.fields = Fields::Unit;
                header.semi_token = Some(Default::default());
                let shape = match &s.fields {
                    Fields::Named(_) => " { .. }",
                    Fields::Unnamed(_) => " ( .. )",
                    Fields::Unit => "",
                };
                let text = render(Item::Struct(header));
                let text = text.trim_end_matches(';').to_owned() + shape;
                self.line(path, text);
                self.fields(path, &s.fields);
            }
            Item::Union(u) => {
                let mut header = u.clone();
                header.attrs = kept(&u.attrs);
                header.fields.named.clear();
                self.line(path, render(Item::Union(header)));
                self.fields(path, &Fields::Named(u.fields.clone()));
            }
            Item::Enum(e) => {
                let mut header = e.clone();
                header.attrs = kept(&e.attrs);
                header.variants.clear();
                self.line(path, strip_braces(render(Item::Enum(header))));
                for variant in &e.variants {
                    let mut variant = variant.clone();
                    variant.attrs = kept(&variant.attrs);
                    variant.discriminant = None;
                    for field in variant.fields.iter_mut() {
                        field.attrs = kept(&field.attrs);
                    }
                    let name = variant.ident.unraw().to_string();
                    let wrapper: Item = syn::parse_quote!(enum __Api { #variant });
                    let text = render(wrapper);
                    let text = text
                        .trim_start_matches("enum __Api {")
                        .trim_end_matches('}')
                        .trim()
                        .trim_end_matches(',')
                        .to_owned();
                    self.line(&format!("{path}::{name}"), text);
                }
            }
            Item::Trait(t) => {
                let mut header = t.clone();
                header.attrs = kept(&t.attrs);
                header.items.clear();
                self.line(path, strip_braces(render(Item::Trait(header))));
                for trait_item in &t.items {
                    let mut trait_item = trait_item.clone();
                    let name = match &mut trait_item {
                        TraitItem::Fn(f) => {
                            f.attrs = kept(&f.attrs);
                            if f.default.is_some() {
                                f.default = Some(syn::parse_quote!({}));
                            }
                            f.sig.ident.unraw().to_string()
                        }
                        TraitItem::Const(c) => {
                            c.attrs = kept(&c.attrs);
                            c.default = None;
                            c.ident.unraw().to_string()
                        }
                        TraitItem::Type(t) => {
                            t.attrs = kept(&t.attrs);
                            t.ident.unraw().to_string()
                        }
                        _ => continue,
                    };
                    let wrapper: Item = syn::parse_quote!(trait __Api { #trait_item });
                    let text = render(wrapper);
                    let text = text
                        .trim_start_matches("trait __Api {")
                        .trim_end_matches('}')
                        .trim()
                        .to_owned();
                    self.line(&format!("{path}::{name}"), text);
                }
            }
            Item::Fn(f) => {
                let mut f = f.clone();
                f.attrs = kept(&f.attrs);
                f.block = Box::new(syn::parse_quote!({}));
                self.line(path, strip_braces(render(Item::Fn(f))));
            }
            Item::Const(c) => {
                let mut c = c.clone();
                c.attrs = kept(&c.attrs);
                c.expr = Box::new(syn::parse_quote!(..));
                self.line(path, render(Item::Const(c)));
            }
            Item::Static(s) => {
                let mut s = s.clone();
                s.attrs = kept(&s.attrs);
                s.expr = Box::new(syn::parse_quote!(..));
                self.line(path, render(Item::Static(s)));
            }
            Item::Type(t) => {
                let mut t = t.clone();
                t.attrs = kept(&t.attrs);
                self.line(path, render(Item::Type(t)));
            }
            Item::TraitAlias(t) => {
                let mut t = t.clone();
                t.attrs = kept(&t.attrs);
                self.line(path, render(Item::TraitAlias(t)));
            }
            _ => {}
        }
    }

    fn fields(&mut self, path: &str, fields: &Fields) {
        let mut private = false;
        for (index, field) in fields.iter().enumerate() {
            if !is_public(&field.vis) {
                private = true;
                continue;
            }
            let name = field
                .ident
                .as_ref()
                .map_or_else(|| index.to_string(), |ident| ident.unraw().to_string());
            let mut field = field.clone();
            field.attrs = kept(&field.attrs);
            field.ident = None;
            field.colon_token = None;
            let ty = &field.ty;
            let attrs = &field.attrs;
            let wrapper: Item = syn::parse_quote!(struct __Api(#(#attrs)* pub #ty););
            let text = render(wrapper);
            let text = text
                .trim_start_matches("struct __Api(")
                .trim_end_matches(");")
                .trim()
                .trim_end_matches(',')
                .to_owned();
            self.line(&format!("{path}::{name}"), text);
        }
        if private {
            self.line(path, "(and private fields)".to_owned());
        }
    }

    /// `#[macro_export]` macros: at the crate's root, wherever they are written.
    fn macros(&mut self) {
        let krate = self.krate;
        for module in &krate.modules {
            for item in &module.items {
                let Item::Macro(m) = item else { continue };
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if let (true, Some(ident)) = (exported, &m.ident) {
                    let mut attrs = kept(&m.attrs);
                    attrs.retain(|a| !a.path().is_ident("macro_export"));
                    let attrs = attrs.iter().map(|a| render_attribute(a) + " ");
                    let text = format!("{}macro_rules! {ident}", attrs.collect::<String>());
                    self.line(&format!("{}::{ident}", self.crate_name), text);
                }
            }
        }
    }

    /// The impls of the crate's public types and traits, wherever they are written.
    fn impls(&mut self) {
        let krate = self.krate;
        for (index, module) in krate.modules.iter().enumerate() {
            for item in &module.items {
                let Item::Impl(block) = item else { continue };
                let self_path = match &*block.self_ty {
                    Type::Path(p) if p.qself.is_none() => Some(&p.path),
                    _ => None,
                };
                let on_type = self_path.and_then(|p| self.public_path(index, p));
                let mut header = block.clone();
                header.attrs = kept(&block.attrs);
                header.items.clear();
                let header_text = strip_braces(render(Item::Impl(header)));
                if let Some((_, trait_path, _)) = &block.trait_ {
                    let at = on_type.or_else(|| self.public_path(index, trait_path));
                    if let Some(at) = at {
                        self.line(&at, header_text);
                    }
                    continue;
                }
                let Some(at) = on_type else { continue };
                for impl_item in &block.items {
                    let mut impl_item = impl_item.clone();
                    let (public, name) = match &mut impl_item {
                        ImplItem::Fn(f) => {
                            f.attrs = kept(&f.attrs);
                            f.block = syn::parse_quote!({});
                            (is_public(&f.vis), f.sig.ident.unraw().to_string())
                        }
                        ImplItem::Const(c) => {
                            c.attrs = kept(&c.attrs);
                            c.expr = syn::parse_quote!(..);
                            (is_public(&c.vis), c.ident.unraw().to_string())
                        }
                        ImplItem::Type(t) => {
                            t.attrs = kept(&t.attrs);
                            (is_public(&t.vis), t.ident.unraw().to_string())
                        }
                        _ => continue,
                    };
                    if !public {
                        continue;
                    }
                    let wrapper: Item = syn::parse_quote!(impl __Api { #impl_item });
                    let text = render(wrapper);
                    let text = strip_braces(
                        text.trim_start_matches("impl __Api {")
                            .trim_end_matches('}')
                            .trim()
                            .to_owned(),
                    );
                    self.line(&format!("{at}::{name}"), format!("{header_text}: {text}"));
                }
            }
        }
    }

    /// The first public path of the crate's type or trait that `path`, written in `module`,
    /// names; `None` for another crate's or a private one.
    fn public_path(&self, module: usize, path: &syn::Path) -> Option<String> {
        let segments: Vec<String> = path
            .segments
            .iter()
            .map(|s| s.ident.unraw().to_string())
            .collect();
        let (name, prefix) = segments.split_last()?;
        let Found::Item(defined, _) = (if prefix.is_empty() {
            self.krate.lookup(module, name, 0)?
        } else {
            self.krate.resolve(module, &segments, 0)
        }) else {
            return None;
        };
        let paths = self.types.get(&(defined, name.clone()))?;
        paths
            .iter()
            .min_by_key(|p| (p.len(), (*p).clone()))
            .cloned()
    }
}

fn is_public(visibility: &Visibility) -> bool {
    matches!(visibility, Visibility::Public(_))
}

/// The attributes that are part of an item's API: what it derives, `non_exhaustive`, its
/// layout, where it exists (`cfg`), and how it is meant to be used.
fn kept(attributes: &[Attribute]) -> Vec<Attribute> {
    const KEPT: [&str; 9] = [
        "derive",
        "non_exhaustive",
        "repr",
        "cfg",
        "deprecated",
        "must_use",
        "proc_macro",
        "proc_macro_attribute",
        "proc_macro_derive",
    ];
    attributes
        .iter()
        .filter(|attribute| {
            let path = attribute.path();
            KEPT.iter().any(|name| path.is_ident(name))
                || (path.is_ident("doc") && doc_hidden(attribute))
                || path.is_ident("macro_export")
        })
        .cloned()
        .collect()
}

/// Whether a module is `#[doc(hidden)]` and compiled only under a `cfg` (a feature): a crate's
/// internals opened for its own benchmarks, not a surface other crates use.
fn internals_behind_a_feature(attributes: &[Attribute]) -> bool {
    let hidden = attributes
        .iter()
        .any(|attribute| attribute.path().is_ident("doc") && doc_hidden(attribute));
    hidden
        && attributes
            .iter()
            .any(|attribute| attribute.path().is_ident("cfg"))
}

fn doc_hidden(attribute: &Attribute) -> bool {
    match &attribute.meta {
        syn::Meta::List(list) => list.tokens.to_string() == "hidden",
        _ => false,
    }
}

/// One item as prettyplease lays it out, on one line.
fn render(item: Item) -> String {
    let file = syn::File {
        shebang: None,
        attrs: Vec::new(),
        items: vec![item],
    };
    prettyplease::unparse(&file)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn render_attribute(attribute: &Attribute) -> String {
    let item: Item = syn::parse_quote!(#attribute struct __Api;);
    render(item)
        .trim_end_matches("struct __Api;")
        .trim()
        .to_owned()
}

/// `text` without a trailing empty body (`{}`).
fn strip_braces(text: String) -> String {
    match text.strip_suffix("{}") {
        Some(stripped) => stripped.trim_end().to_owned(),
        None => text,
    }
}

fn attributes(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(item) => &item.attrs,
        Item::Enum(item) => &item.attrs,
        Item::ExternCrate(item) => &item.attrs,
        Item::Fn(item) => &item.attrs,
        Item::ForeignMod(item) => &item.attrs,
        Item::Impl(item) => &item.attrs,
        Item::Macro(item) => &item.attrs,
        Item::Mod(item) => &item.attrs,
        Item::Static(item) => &item.attrs,
        Item::Struct(item) => &item.attrs,
        Item::Trait(item) => &item.attrs,
        Item::TraitAlias(item) => &item.attrs,
        Item::Type(item) => &item.attrs,
        Item::Union(item) => &item.attrs,
        Item::Use(item) => &item.attrs,
        _ => &[],
    }
}

fn public_item(item: &Item) -> bool {
    let visibility = match item {
        Item::Const(item) => &item.vis,
        Item::Enum(item) => &item.vis,
        Item::Fn(item) => &item.vis,
        Item::Static(item) => &item.vis,
        Item::Struct(item) => &item.vis,
        Item::Trait(item) => &item.vis,
        Item::TraitAlias(item) => &item.vis,
        Item::Type(item) => &item.vis,
        Item::Union(item) => &item.vis,
        _ => return false,
    };
    is_public(visibility)
}

fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(item) => &item.ident,
        Item::Enum(item) => &item.ident,
        Item::Fn(item) => &item.sig.ident,
        Item::Static(item) => &item.ident,
        Item::Struct(item) => &item.ident,
        Item::Trait(item) => &item.ident,
        Item::TraitAlias(item) => &item.ident,
        Item::Type(item) => &item.ident,
        Item::Union(item) => &item.ident,
        Item::Macro(item) => item.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.unraw().to_string())
}

/// Whether an item is compiled only for the crate's own tests (`#[cfg(test)]`).
fn test_only(attributes: &[Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        let syn::Meta::List(list) = &attribute.meta else {
            return false;
        };
        list.path.is_ident("cfg") && list.tokens.to_string() == "test"
    })
}

/// The file of `mod name;` declared in `file`, and the directory of its own file modules.
fn module_file(
    declaration: &syn::ItemMod,
    file: &Path,
    dir: &Path,
    name: &str,
) -> (PathBuf, PathBuf) {
    let attribute = declaration.attrs.iter().find(|a| a.path().is_ident("path"));
    if let Some(syn::Meta::NameValue(pair)) = attribute.map(|a| &a.meta) {
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(value),
            ..
        }) = &pair.value
        {
            let child = file.parent().unwrap_or(dir).join(value.value());
            let child_dir = child.parent().unwrap_or(dir).to_owned();
            return (child, child_dir);
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
}
