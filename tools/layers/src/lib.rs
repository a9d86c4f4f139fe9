//! Finds import circles between the modules of a crate.
//!
//! A crate's modules should form layers: if `registry` uses a name from `routes`, `routes`
//! should not use one from `registry`. A circle usually means one name is defined in the
//! wrong file, and it makes both modules one unit that can only be read, tested and moved
//! together. [`check`] reads a crate's source files with `syn` (no compiler, no macro
//! expansion), builds the graph of the dependencies between its modules, and returns every
//! [`Circle`] in it. A crate is one target: a `src/main.rs` beside a `src/lib.rs` is a crate of
//! its own. The test `tests/workspace.rs` runs it on every library and binary target of every
//! member of the workspace, and fails on any circle but those listed in `known-circles.txt`
//! (which are waiting for a change that opens them).
//!
//! # What a dependency is
//!
//! A **reference** is a path of two segments or more (`crate::table::RowId`, `super::Query`,
//! `table::RowId`, `self::plan::Plan`) written in a module: in a `use` declaration, in code or a
//! type, in an attribute's path, or in the tokens of a macro call (`format!`, `vec!`, or the
//! `$crate::…` of a `macro_rules!`), anywhere in the module's own items (not in its child
//! modules, which are modules of their own). Paths written with a leading `::`, or whose first
//! segment is no module, item or import of the crate (`std::…`, `serde::…`, a local variable's
//! `x::…`), name nothing in the crate and are left out.
//!
//! A reference is **resolved** to the module that *defines* what it names, as rustc would:
//! from `crate`, `self`, `super`, or a first segment that is a child module, an import or a
//! name a glob import brings into the module it is written in, down through child modules;
//! an import met on the way (`pub use inner::Thing`, `use crate::a::Thing`) is followed to
//! where it points, and a glob import (`use a::*`) is looked into for the name. So
//! `crate::RowId`, when the root re-exports `RowId` from `table`, resolves to `table`: a
//! re-export does not hide where a name lives. A path that ends at a module names that
//! module. The item found is named by its path's segment after the module's
//! (`crate::table::RowId::new` names `RowId` of `table`).
//!
//! Module **A depends on module B** when a reference written in A (or in a module inside A)
//! resolves to B or to a module inside B, and neither of A and B contains the other. The
//! dependency is drawn between the children of their lowest common ancestor that contain
//! them: `crate::a::x::f` naming `crate::a::y::z::T` is an edge `x → y` among the children of
//! `crate::a`; `crate::b` naming `crate::a::T` is an edge `b → a` among the root's children.
//!
//! **A module and its own ancestors or descendants never depend on each other**: a parent
//! declaring and re-exporting its children (`mod table; pub use table::Table;`) and a child
//! using its parent's items (`use super::*`, `use crate::Error` when `Error` is the root's
//! own) is the ordinary shape of a Rust module, and says nothing about layers. Only the
//! re-exports are looked through: a child's `crate::X` where the root re-exports `X` from a
//! sibling is a dependency on the sibling.
//!
//! A **circle** is a strongly connected set of two or more children of one module in this
//! graph: modules each of which depends, directly or through the others, on every other.
//! Each is reported once, with every dependency between its modules and the references that
//! make it.
//!
//! # What it does not see
//!
//! It reads source, so it sees what is written, not what macros generate (a name a macro
//! defines is taken as defined in the module the path reaches), and not names that reach a
//! module by one segment through a glob import (`use super::*;` then `RowId`): the `use`
//! declaration that brought the name into the crate's module is itself a reference, which is
//! where a dependency is usually seen. Method calls and inferred types name no module.
//!
//! Items under exactly `#[cfg(test)]` (a `mod tests`, a test helper) are left out: a module's unit
//! tests may build their cases from any module of the crate, as an integration test would,
//! without making the module depend on them. Code under any other `cfg` counts, whatever the
//! cfg.

mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use tree::Tree;

pub use tree::Error;

/// A set of sibling modules that depend on each other, directly or through one another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// The path of the module whose children they are: `crate`, or `crate::realtime`.
    pub parent: String,
    /// The children in the circle, by name, sorted.
    pub modules: Vec<String>,
    /// Every dependency between two of them, sorted by `from` then `to`.
    pub edges: Vec<Edge>,
}

/// The dependency of one child on another, and the references that make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The child that depends (its name).
    pub from: String,
    /// The child it depends on.
    pub to: String,
    /// The references, sorted and without repeats.
    pub names: Vec<Reference>,
}

/// One reference of a dependency.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reference {
    /// The module it is written in: `crate::routes`.
    pub module: String,
    /// The path as written: `crate::registry::QueryId`.
    pub written: String,
    /// What it names: `crate::registry::QueryId`, or the module `crate::registry`.
    pub names: String,
}

/// The dependencies among the children of one module: `(from, to)` and the references.
type Graph = BTreeMap<(String, String), BTreeSet<Reference>>;

/// The circles among the modules of the crate whose root file is `root` (`src/lib.rs`,
/// `src/main.rs`), sorted by parent module then by modules. Fails if a module's file is
/// missing or does not parse.
pub fn check(root: &Path) -> Result<Vec<Circle>, Error> {
    let tree = Tree::read(root)?;
    // The dependencies among the children of each module, by the module's path.
    let mut graphs: BTreeMap<Vec<String>, Graph> = BTreeMap::new();
    for (from, module) in tree.modules.iter().enumerate() {
        for written in &module.references {
            let Some(target) = tree.resolve(from, written) else {
                continue;
            };
            if tree.contains(from, target.module) || tree.contains(target.module, from) {
                continue;
            }
            let to = &tree.modules[target.module].path;
            let common = module
                .path
                .iter()
                .zip(to)
                .take_while(|(a, b)| a == b)
                .count();
            let mut names = display_path(to);
            if let Some(item) = target.item {
                names = format!("{names}::{item}");
            }
            let reference = Reference {
                module: display_path(&module.path),
                written: written.join("::"),
                names,
            };
            let edge = (module.path[common].clone(), to[common].clone());
            let graph = graphs.entry(module.path[..common].to_vec()).or_default();
            graph.entry(edge).or_default().insert(reference);
        }
    }
    let mut circles = Vec::new();
    for (parent, graph) in graphs {
        for modules in strongly_connected(&graph) {
            let edges = graph
                .iter()
                .filter(|((from, to), _)| modules.contains(from) && modules.contains(to))
                .map(|((from, to), names)| Edge {
                    from: from.clone(),
                    to: to.clone(),
                    names: names.iter().cloned().collect(),
                })
                .collect();
            let parent = display_path(&parent);
            circles.push(Circle {
                parent,
                modules: modules.into_iter().collect(),
                edges,
            });
        }
    }
    Ok(circles)
}

fn display_path(path: &[String]) -> String {
    std::iter::once("crate")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// The strongly connected sets of two nodes or more of a graph given by its edges (Tarjan's
/// algorithm), in the order of their smallest node.
fn strongly_connected(edges: &Graph) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
        next.entry(to).or_default();
    }
    struct Search<'a> {
        next: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'a> Search<'a> {
        fn visit(&mut self, node: &'a str) {
            let order = self.index.len();
            self.index.insert(node, order);
            self.low.insert(node, order);
            self.stack.push(node);
            for &to in &self.next[node] {
                if !self.index.contains_key(to) {
                    self.visit(to);
                    self.low.insert(node, self.low[node].min(self.low[to]));
                } else if self.stack.contains(&to) {
                    self.low.insert(node, self.low[node].min(self.index[to]));
                }
            }
            if self.low[node] == self.index[node] {
                let at = self.stack.iter().rposition(|&n| n == node).unwrap_or(0);
                let set: BTreeSet<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if set.len() > 1 {
                    self.found.push(set);
                }
            }
        }
    }
    let mut search = Search {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for &node in next.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.found.sort();
    search.found
}

/// How many references of each dependency a circle's display shows.
const SHOWN: usize = 4;

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a circle among the children of `{}`: ", self.parent)?;
        writeln!(f, "{}", self.modules.join(", "))?;
        for edge in &self.edges {
            writeln!(f, "  {} -> {}:", edge.from, edge.to)?;
            for name in edge.names.iter().take(SHOWN) {
                write!(f, "    in {}: `{}`", name.module, name.written)?;
                if name.names != name.written {
                    write!(f, " (names {})", name.names)?;
                }
                writeln!(f)?;
            }
            if edge.names.len() > SHOWN {
                writeln!(f, "    and {} more", edge.names.len() - SHOWN)?;
            }
        }
        Ok(())
    }
}
