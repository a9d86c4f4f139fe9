//! A crate's module tree, read from its source files with `syn`, and the resolution of the
//! paths written in it to the module that defines what they name.

use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::{fmt, fs};
use syn::ext::IdentExt;
use syn::visit::Visit;
use syn::{Item, UseTree};

/// How many imports a path may go through before it is given up as unresolved (a guard
/// against imports that name each other).
const MAX_HOPS: usize = 32;

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

/// One module of the tree (the crate root is module 0).
pub struct Module {
    /// Its path below the crate root: `["a", "b"]` for `crate::a::b`, empty for the root.
    pub path: Vec<String>,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    /// The names of the items it defines (types, functions, constants, traits, macros).
    items: BTreeSet<String>,
    /// Its named imports: the name they bring in, and the path they were written with.
    imports: BTreeMap<String, Vec<String>>,
    /// Its glob imports (`use a::b::*`): the paths of the modules they open.
    globs: Vec<Vec<String>>,
    /// Every path of two segments or more written in it, or in one of its `use` declarations.
    pub references: Vec<Vec<String>>,
}

/// What a path names: an item of a module, or the module itself (`item` is `None`).
pub struct Target {
    /// The module, an index into [`Tree::modules`].
    pub module: usize,
    /// The item's name, if the path names an item rather than the module.
    pub item: Option<String>,
}

/// A crate's modules, each with its items, imports and the paths written in it.
pub struct Tree {
    /// The modules; the root is the first.
    pub modules: Vec<Module>,
}

impl Tree {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`), following its
    /// `mod` declarations to their files (`a.rs` or `a/mod.rs`, or a `#[path]`).
    pub fn read(root: &Path) -> Result<Tree, Error> {
        let mut tree = Tree {
            modules: Vec::new(),
        };
        let root_module = tree.add(None, None);
        let dir = root.parent().unwrap_or(Path::new("."));
        tree.read_file(root_module, root, dir)?;
        Ok(tree)
    }

    fn add(&mut self, parent: Option<usize>, name: Option<&str>) -> usize {
        let mut path = parent.map_or_else(Vec::new, |p| self.modules[p].path.clone());
        path.extend(name.map(str::to_owned));
        let index = self.modules.len();
        self.modules.push(Module {
            path,
            parent,
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            imports: BTreeMap::new(),
            globs: Vec::new(),
            references: Vec::new(),
        });
        if let (Some(parent), Some(name)) = (parent, name) {
            self.modules[parent].children.insert(name.to_owned(), index);
        }
        index
    }

    /// Reads `file` into `module`; its file modules are looked for in `dir`.
    fn read_file(&mut self, module: usize, file: &Path, dir: &Path) -> Result<(), Error> {
        let error = |reason: String| Error {
            file: file.to_owned(),
            reason,
        };
        let source = fs::read_to_string(file).map_err(|e| error(e.to_string()))?;
        let parsed = syn::parse_file(&source).map_err(|e| error(e.to_string()))?;
        self.read_items(module, &parsed.items, file, dir)
    }

    fn read_items(
        &mut self,
        module: usize,
        items: &[Item],
        file: &Path,
        dir: &Path,
    ) -> Result<(), Error> {
        for item in items.iter().filter(|item| !test_only(item)) {
            match item {
                Item::Mod(inner) => {
                    let name = inner.ident.unraw().to_string();
                    let child = self.add(Some(module), Some(&name));
                    if let Some((_, content)) = &inner.content {
                        self.read_items(child, content, file, &dir.join(&name))?;
                    } else {
                        let (child_file, child_dir) = module_file(inner, file, dir, &name);
                        self.read_file(child, &child_file, &child_dir)?;
                    }
                }
                Item::Use(declaration) => {
                    let here = &mut self.modules[module];
                    for (path, name) in imports_of(declaration) {
                        match name {
                            None => here.globs.push(path.clone()),
                            Some(name) if name != "_" => {
                                here.imports.insert(name, path.clone());
                            }
                            Some(_) => {}
                        }
                        here.references.push(path);
                    }
                }
                other => {
                    if let Some(name) = item_name(other) {
                        self.modules[module].items.insert(name);
                    }
                    References(&mut self.modules[module].references).visit_item(other);
                }
            }
        }
        Ok(())
    }

    /// What `path`, written in module `from`, names; `None` for what is outside the crate
    /// (other crates, the prelude) or local (a variable, a generic parameter, an item of
    /// `from` itself named by one segment).
    pub fn resolve(&self, from: usize, path: &[String]) -> Option<Target> {
        self.resolve_hops(from, path, 0)
    }

    fn resolve_hops(&self, from: usize, path: &[String], hops: usize) -> Option<Target> {
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => self.walk(0, rest, hops),
            "self" => self.walk(from, rest, hops),
            "super" => self.walk(self.modules[from].parent?, rest, hops),
            _ => self.step(from, path, hops, false),
        }
    }

    /// Follows `path` down from `module`.
    fn walk(&self, module: usize, path: &[String], hops: usize) -> Option<Target> {
        match path.split_first() {
            None => Some(Target { module, item: None }),
            Some((first, rest)) if first == "super" => {
                self.walk(self.modules[module].parent?, rest, hops)
            }
            Some(_) => self.step(module, path, hops, true),
        }
    }

    /// Looks the first segment of `path` up in `module`: one of its modules, items, imports
    /// or the names of its glob imports. A name not found is taken as defined in `module`
    /// when `inside` (it was reached by a path into the module: a macro may have made it), and
    /// as outside the crate otherwise.
    fn step(&self, module: usize, path: &[String], hops: usize, inside: bool) -> Option<Target> {
        let (first, rest) = path.split_first()?;
        let here = &self.modules[module];
        if let Some(&child) = here.children.get(first) {
            return self.walk(child, rest, hops);
        }
        if here.items.contains(first) {
            let item = Some(first.clone());
            return Some(Target { module, item });
        }
        if hops >= MAX_HOPS {
            return None;
        }
        if let Some(imported) = here.imports.get(first) {
            if imported.as_slice() == std::slice::from_ref(first) {
                return None; // `use other_crate;`
            }
            let full: Vec<String> = imported.iter().chain(rest).cloned().collect();
            return self.resolve_hops(module, &full, hops + 1);
        }
        for glob in &here.globs {
            let opened = self.resolve_hops(module, glob, hops + 1);
            if let Some(Target {
                module: opened,
                item: None,
            }) = opened
            {
                if opened != module && self.has(opened, first) {
                    return self.walk(opened, path, hops + 1);
                }
            }
        }
        let item = Some(first.clone());
        inside.then_some(Target { module, item })
    }

    fn has(&self, module: usize, name: &str) -> bool {
        let here = &self.modules[module];
        here.children.contains_key(name)
            || here.items.contains(name)
            || here.imports.contains_key(name)
    }

    /// Whether `ancestor` is `module` or one of the modules that contain it.
    pub fn contains(&self, ancestor: usize, module: usize) -> bool {
        let (outer, inner) = (&self.modules[ancestor].path, &self.modules[module].path);
        inner.starts_with(outer)
    }
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

/// Whether an item is compiled for tests only (`#[cfg(test)]`).
fn test_only(item: &Item) -> bool {
    let attributes = match item {
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
        _ => return false,
    };
    attributes.iter().any(|attribute| {
        let syn::Meta::List(list) = &attribute.meta else {
            return false;
        };
        list.path.is_ident("cfg") && list.tokens.to_string() == "test"
    })
}

/// The name an item defines in its module's namespace, if any.
fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(item) => &item.ident,
        Item::Enum(item) => &item.ident,
        Item::Fn(item) => &item.sig.ident,
        Item::Macro(item) => item.ident.as_ref()?,
        Item::Static(item) => &item.ident,
        Item::Struct(item) => &item.ident,
        Item::Trait(item) => &item.ident,
        Item::TraitAlias(item) => &item.ident,
        Item::Type(item) => &item.ident,
        Item::Union(item) => &item.ident,
        _ => return None,
    };
    Some(ident.unraw().to_string())
}

/// One import of a `use` declaration: its full path, and the name it brings in (`None` for a
/// glob, `use a::*`; `_` for `use a::Trait as _`).
type Import = (Vec<String>, Option<String>);

/// The imports of a `use` declaration; none if its path starts with `::` (another crate's).
fn imports_of(declaration: &syn::ItemUse) -> Vec<Import> {
    let mut imports = Vec::new();
    if declaration.leading_colon.is_none() {
        flatten(&declaration.tree, &mut Vec::new(), &mut imports);
    }
    imports
}

fn flatten(tree: &UseTree, prefix: &mut Vec<String>, imports: &mut Vec<Import>) {
    match tree {
        UseTree::Path(inner) => {
            prefix.push(inner.ident.unraw().to_string());
            flatten(&inner.tree, prefix, imports);
            prefix.pop();
        }
        UseTree::Name(inner) => imports.push(named(prefix, &inner.ident, None)),
        UseTree::Rename(inner) => imports.push(named(prefix, &inner.ident, Some(&inner.rename))),
        UseTree::Glob(_) => imports.push((prefix.clone(), None)),
        UseTree::Group(group) => {
            for tree in &group.items {
                flatten(tree, prefix, imports);
            }
        }
    }
}

/// `prefix::name`, brought in as `alias` or as its last segment (`use a::{self}` brings `a`).
fn named(prefix: &[String], name: &syn::Ident, alias: Option<&syn::Ident>) -> Import {
    let mut path = prefix.to_vec();
    let name = name.unraw().to_string();
    if name != "self" {
        path.push(name);
    }
    let brought = alias.map(|alias| alias.unraw().to_string());
    let brought = brought.or_else(|| path.last().cloned()).unwrap_or_default();
    (path, Some(brought))
}

/// Collects the paths of two segments or more in an item: in its code and types, in the `use`
/// declarations of its function bodies, and in the tokens of the macro calls in it.
struct References<'a>(&'a mut Vec<Vec<String>>);

impl<'ast> Visit<'ast> for References<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segments = path.segments.iter().map(|s| s.ident.unraw().to_string());
            self.0.push(segments.collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, declaration: &'ast syn::ItemUse) {
        self.0
            .extend(imports_of(declaration).into_iter().map(|(path, _)| path));
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A module inside a function body: not part of the module tree, left out.
    }

    fn visit_macro(&mut self, call: &'ast syn::Macro) {
        self.visit_path(&call.path);
        paths_in_tokens(call.tokens.clone(), self.0);
    }
}

/// The paths (`a::b`, `$crate::a::b`) in a macro call's tokens, which `syn` does not parse.
fn paths_in_tokens(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let separator = |at: usize| match (tokens.get(at), tokens.get(at + 1)) {
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) => {
            a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
        }
        _ => false,
    };
    let mut at = 0;
    while at < tokens.len() {
        match &tokens[at] {
            TokenTree::Group(group) => paths_in_tokens(group.stream(), out),
            TokenTree::Ident(first) if at < 2 || !separator(at - 2) => {
                let mut path = vec![first.unraw().to_string()];
                while separator(at + 1) {
                    let Some(TokenTree::Ident(next)) = tokens.get(at + 3) else {
                        break;
                    };
                    path.push(next.unraw().to_string());
                    at += 3;
                }
                if path.len() > 1 {
                    out.push(path);
                }
            }
            _ => {}
        }
        at += 1;
    }
}
