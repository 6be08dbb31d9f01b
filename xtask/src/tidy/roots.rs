//! No arrows back up into a program's `main.rs`: in xtask and the bench, a module names
//! other modules, never an item of the crate root (`crate::project_root`), so the root
//! stays `main` and the list of modules, and what every module needs has a module of
//! its own (`paths`, `command`) that the code map names.

use std::path::Path;

use syn::visit::Visit;

use super::{Problem, References, Rule, module_path, read};

/// The source directories of the programs whose `main.rs` no module may name.
pub(super) const PROGRAMS: &[&str] = &["xtask/src", "bench/src"];

/// The items of a crate root other than its modules and imports (`main`, a helper
/// function, a constant): what the crate's modules must not name.
pub(super) fn root_items(main: &str) -> Vec<String> {
    let Ok(file) = syn::parse_file(main) else {
        return Vec::new();
    };
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
            syn::Item::Const(c) => Some(c.ident.to_string()),
            syn::Item::Static(s) => Some(s.ident.to_string()),
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            syn::Item::Type(t) => Some(t.ident.to_string()),
            syn::Item::Trait(t) => Some(t.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The items of `PROGRAMS`' roots, by source directory.
pub(super) fn programs(root: &Path) -> anyhow::Result<Vec<(&'static str, Vec<String>)>> {
    let mut out = Vec::new();
    for src in PROGRAMS {
        if root.join(src).join("main.rs").exists() {
            out.push((*src, root_items(&read(root, &format!("{src}/main.rs"))?)));
        }
    }
    Ok(out)
}

/// The places where file `rel` (a module of a program, not its root) names one of
/// the root's `items`.
pub(super) fn check(rel: &str, text: &str, items: &[String]) -> Vec<Problem> {
    let Ok(file) = syn::parse_file(text) else {
        return Vec::new(); // the layering rule and the compiler report it
    };
    let mut refs = References::new(module_path(rel));
    refs.visit_file(&file);
    let mut out: Vec<Problem> = refs
        .paths
        .iter()
        .filter_map(|(path, line)| {
            let resolved = refs.resolve(path);
            match resolved.as_slice() {
                [krate, item, ..] if krate == "crate" && items.contains(item) => Some(Problem {
                    path: rel.to_string(),
                    line: *line,
                    rule: Rule::Layering,
                    message: format!(
                        "names `crate::{item}`, an item of the crate root (a module names modules: give `{item}` a module of its own)"
                    ),
                }),
                _ => None,
            }
        })
        .collect();
    out.sort_by_key(|p| p.line);
    out.dedup();
    out
}
