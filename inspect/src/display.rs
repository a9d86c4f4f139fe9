//! The report as text, for people: sizes, imports, then export by export the dispatch, its
//! entry points, its violations and its exclusions, and a verdict.

use crate::entry::Evidence;
use crate::report::{Dispatch, ExportReport, FunctionRef, Report, Shape};
use std::fmt::{self, Display, Formatter};

impl Display for Report {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "size: {} bytes", self.total_size)?;
        writeln!(f, "sections:")?;
        for section in &self.sections {
            writeln!(f, "  {:<24} {:>9}", section.name, section.size)?;
        }
        writeln!(f, "imports: {}", self.imports.len())?;
        for import in &self.imports {
            writeln!(f, "  {}.{} ({})", import.module, import.name, import.kind)?;
        }
        for export in &self.exports {
            write!(f, "{export}")?;
        }
        if let Some(describe) = &self.describe {
            writeln!(
                f,
                "(not a dispatch path: indirect calls below are not counted)"
            )?;
            write!(f, "{describe}")?;
        }
        let count = self.violations().count();
        match count {
            0 => writeln!(f, "result: clean, no indirect call on any dispatch path"),
            _ => writeln!(f, "result: {count} indirect call(s) on dispatch paths"),
        }
    }
}

impl Display for ExportReport {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "export {} -> {}", self.name, Func(&self.function))?;
        if let Some(dispatch) = &self.dispatch {
            write!(f, "{dispatch}")?;
        }
        // `__describe_module__` is walked the same way, but what it finds is not a violation.
        let label = if self.dispatch.is_some() {
            "violations"
        } else {
            "indirect calls"
        };
        match self.violations.len() {
            0 => writeln!(f, "  {label}: none")?,
            count => writeln!(f, "  {label}: {count}")?,
        }
        for violation in &self.violations {
            writeln!(
                f,
                "    {} at {:#x} in {}",
                violation.kind,
                violation.offset,
                Func(&violation.function)
            )?;
            let path: Vec<&str> = violation
                .path
                .iter()
                .map(|step| step.name.as_str())
                .collect();
            writeln!(f, "      path: {}", path.join(" -> "))?;
        }
        if !self.excluded.is_empty() {
            writeln!(
                f,
                "  excluded as panic or abort machinery ({} indirect call(s) behind it):",
                self.indirect_calls_behind_exclusions
            )?;
        }
        for exclusion in &self.excluded {
            writeln!(
                f,
                "    {} [rule: {}], first called from {}",
                Func(&exclusion.function),
                exclusion.rule,
                exclusion.reached_from.name
            )?;
        }
        Ok(())
    }
}

impl Display for Dispatch {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (kind, default) = match &self.shape {
            Shape::BrTable { default, .. } => ("br_table", Some(default)),
            Shape::CompareChain { default, .. } => ("compare chain", Some(default)),
            Shape::Unrecognised => ("unrecognised (no br_table on the id, no test of it)", None),
        };
        writeln!(
            f,
            "  dispatch: {kind}, {} arm(s), in {}",
            self.shape.arms().len(),
            Func(&self.function)
        )?;
        for arm in self.shape.arms() {
            let entry = self.entries.iter().find(|entry| entry.id == arm.id);
            let author = match entry {
                Some(entry) => match (&entry.author, &entry.entry) {
                    (Some(author), _) => format!("{} [{}]", Func(author), evidence(entry.evidence)),
                    (None, Some(path)) => format!("{path} (no such function found)"),
                    (None, None) => "author's function not recognised".to_owned(),
                },
                None => "no call".to_owned(),
            };
            let thunk = arm
                .callees
                .first()
                .map_or_else(|| "-".to_owned(), |thunk| Func(thunk).to_string());
            writeln!(f, "    {:>3}  {thunk} -> {author}", arm.id)?;
        }
        if let Some(default) = default {
            let names: Vec<String> = default
                .iter()
                .map(|callee| Func(callee).to_string())
                .collect();
            writeln!(
                f,
                "    default  {}",
                if names.is_empty() {
                    "-".to_owned()
                } else {
                    names.join(", ")
                }
            )?;
        }
        Ok(())
    }
}

/// A short description of how an author's function was recognised.
fn evidence(evidence: Evidence) -> &'static str {
    match evidence {
        Evidence::ThunkGenericArgument => "thunk's generic argument",
        Evidence::EntryTraitImpl => "entry trait impl",
        Evidence::ModuleCallee => "module function called by the thunk",
        Evidence::Unknown => "unknown",
    }
}

/// A function as `name (func N)`.
struct Func<'a>(&'a FunctionRef);

impl Display for Func<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{} (func {})", self.0.name, self.0.index)
    }
}
