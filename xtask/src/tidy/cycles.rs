//! The import-cycle rule: inside each crate, no module names a sibling that names it
//! back, directly or around a longer circle.
//!
//! Siblings at every level: the top-level modules of a crate, and the children of
//! each module. A module naming its parent's own items, or a parent its children's,
//! is not a circle between siblings and is left alone (a `mod.rs` composing its
//! children, a child using its parent's types). A name re-exported by a parent
//! (`pub use info::Entry;` in `lib.rs`) counts as the child that defines it, so a
//! crate root's facade hides no edge. Test code (`tests.rs`, `tests/`, items under
//! `#[cfg(test)]`) is not counted: a test may use whatever it checks with.
//!
//! Circles are found as Tarjan's strongly connected components of each level's
//! sibling graph; each is reported once, with one naming per edge as evidence.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::visit::Visit;

use super::{Problem, References, Rule, module_path, relative};

/// A `crate::…` module path.
type ModPath = Vec<String>;

/// Where one module names another: the file, the line and the path as resolved.
#[derive(Debug, Clone)]
struct Evidence {
    file: String,
    line: usize,
    named: String,
}

/// The crates whose modules are checked: each source directory with a crate root.
pub(super) fn crate_roots(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for parent in ["shared", "plugins"] {
        let dir = root.join(parent);
        if !dir.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let src = entry?.path().join("src");
            if src.is_dir() {
                out.push(relative(root, &src));
            }
        }
    }
    for src in [
        "xtask/src",
        "bench/src",
        "tests/src",
        "localcluster/src",
        "fuzz/entries/src",
    ] {
        if root.join(src).is_dir() {
            out.push(src.to_string());
        }
    }
    out.sort();
    Ok(out)
}

/// The import cycles of the crate whose sources are in `src` (relative to `root`).
pub(super) fn check(root: &Path, src: &str) -> anyhow::Result<Vec<Problem>> {
    let mut files = Vec::new();
    collect(&root.join(src), &mut files)?;
    let mut sources = Vec::new();
    for path in files {
        let rel = relative(root, &path);
        let text = std::fs::read_to_string(&path)?;
        sources.push((rel, text));
    }
    let refs: Vec<(&str, &str)> = sources
        .iter()
        .map(|(rel, text)| (rel.as_str(), text.as_str()))
        .collect();
    Ok(cycles(src, &refs))
}

/// `.rs` files under `dir`, without `bin/` (other crates' roots) and test files.
fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            if name != "bin" && name != "tests" {
                collect(&path, out)?;
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
    Ok(())
}

/// What the files of one crate say about its modules: which exist, what each
/// re-exports, and every `crate::…` path each names (with where).
#[derive(Default)]
struct Crate {
    modules: BTreeSet<ModPath>,
    reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
    named: Vec<(ModPath, ModPath, Evidence)>,
}

/// Sibling edges, per parent module: child → child, with the first evidence.
type Levels = BTreeMap<ModPath, BTreeMap<(String, String), Evidence>>;

/// The cycles among the modules of one crate, given its files (`rel`, source) and
/// its source directory `src` (for the messages).
pub(super) fn cycles(src: &str, files: &[(&str, &str)]) -> Vec<Problem> {
    let mut krate = Crate::default();
    for (rel, text) in files {
        if module_path(rel).iter().any(|s| s == "tests") {
            continue;
        }
        // The layering rule reports what cannot be parsed; nothing to add here.
        if let Ok(file) = syn::parse_file(text) {
            krate.read(rel, file);
        }
    }
    krate.resolve_reexports();
    report(src, krate.levels())
}

impl Crate {
    /// Records the modules, re-exports and named paths of the file `rel`.
    fn read(&mut self, rel: &str, mut file: syn::File) {
        strip_tests(&mut file.items);
        let module = module_path(rel);
        for prefix in 1..=module.len() {
            self.modules.insert(module[..prefix].to_vec());
        }
        inline_modules(&module, &file.items, &mut self.modules);
        // `pub use` items: the names a module re-exports from its children.
        let mut facade = References::new(module.clone());
        let mut rest = Vec::new();
        for item in std::mem::take(&mut file.items) {
            match &item {
                syn::Item::Use(u) if !matches!(u.vis, syn::Visibility::Inherited) => {
                    facade.visit_item_use(u);
                }
                _ => rest.push(item),
            }
        }
        file.items = rest;
        let entry = self.reexports.entry(module.clone()).or_default();
        for (name, target) in &facade.imports {
            entry.insert(name.clone(), target.clone());
        }
        let mut refs = References::new(module.clone());
        refs.imports = facade.imports.clone();
        refs.visit_file(&file);
        for (path, line) in &refs.paths {
            let resolved = refs.resolve(path);
            if resolved.first().is_some_and(|s| s == "crate") {
                self.named.push((
                    module.clone(),
                    resolved.clone(),
                    Evidence {
                        file: rel.to_string(),
                        line: *line,
                        named: resolved.join("::"),
                    },
                ));
            }
        }
    }

    /// A re-export through a path relative to its module (`pub use info::Entry;` in
    /// `lib.rs`, edition 2018's paths) names a child of it.
    fn resolve_reexports(&mut self) {
        for (module, names) in &mut self.reexports {
            for target in names.values_mut() {
                if target.first().is_some_and(|s| s != "crate") {
                    let mut child = module.clone();
                    child.push(target[0].clone());
                    if self.modules.contains(&child) {
                        let mut full = module.clone();
                        full.extend(target.iter().cloned());
                        *target = full;
                    }
                }
            }
            names.retain(|_, target| target.first().is_some_and(|s| s == "crate"));
        }
    }

    /// The named paths as edges between siblings, per parent module.
    fn levels(self) -> Levels {
        let mut levels = Levels::new();
        for (from, path, evidence) in self.named {
            let to = owner(&path, &self.modules, &self.reexports);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                levels
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry((from[common].clone(), to[common].clone()))
                    .or_insert(evidence);
            }
        }
        levels
    }
}

/// One problem per circle of each level, with one naming per edge as evidence.
fn report(src: &str, levels: Levels) -> Vec<Problem> {
    let mut out = Vec::new();
    for (parent, edges) in levels {
        for component in components(&edges) {
            let mut evidence: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .map(|((a, b), e)| format!("{a} → {b} ({}:{} names `{}`)", e.file, e.line, e.named))
                .collect();
            evidence.sort();
            let scope = if parent.len() == 1 {
                format!("the crate in `{src}`")
            } else {
                format!("`{}` in `{src}`", parent.join("::"))
            };
            out.push(Problem {
                path: src.to_string(),
                line: 0,
                rule: Rule::ImportCycle,
                message: format!(
                    "import cycle among the modules of {scope}: {}",
                    evidence.join("; ")
                ),
            });
        }
    }
    out
}

/// The module that holds what `path` names: its longest prefix that is a module, with
/// re-exported names followed to where they are defined.
fn owner(
    path: &[String],
    modules: &BTreeSet<ModPath>,
    reexports: &BTreeMap<ModPath, BTreeMap<String, ModPath>>,
) -> ModPath {
    let mut path = path.to_vec();
    // Re-exports of re-exports resolve on; a bound keeps a re-export loop finite.
    for _ in 0..8 {
        let mut module: ModPath = vec!["crate".into()];
        let mut followed = false;
        for (i, segment) in path.iter().enumerate().skip(1) {
            let mut next = module.clone();
            next.push(segment.clone());
            if modules.contains(&next) {
                module = next;
                continue;
            }
            if let Some(target) = reexports.get(&module).and_then(|r| r.get(segment))
                && !target.starts_with(&path[..=i])
            {
                let mut redirected = target.clone();
                redirected.extend(path[i + 1..].iter().cloned());
                path = redirected;
                followed = true;
            }
            break;
        }
        if !followed {
            return module;
        }
    }
    vec!["crate".into()]
}

/// Inline `mod x { … }` items, as modules of their own.
fn inline_modules(parent: &ModPath, items: &[syn::Item], out: &mut BTreeSet<ModPath>) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let mut path = parent.clone();
            path.push(m.ident.to_string());
            out.insert(path.clone());
            if let Some((_, inner)) = &m.content {
                inline_modules(&path, inner, out);
            }
        }
    }
}

/// Drops items under `#[cfg(test)]`, at any depth of inline modules.
fn strip_tests(items: &mut Vec<syn::Item>) {
    items.retain(|item| !is_test(item));
    for item in items {
        if let syn::Item::Mod(m) = item
            && let Some((_, inner)) = &mut m.content
        {
            strip_tests(inner);
        }
    }
}

fn is_test(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Mod(m) => &m.attrs,
        syn::Item::Fn(f) => &f.attrs,
        syn::Item::Use(u) => &u.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Struct(s) => &s.attrs,
        syn::Item::Enum(e) => &e.attrs,
        syn::Item::Const(c) => &c.attrs,
        syn::Item::Static(s) => &s.attrs,
        syn::Item::Trait(t) => &t.attrs,
        syn::Item::Type(t) => &t.attrs,
        syn::Item::Macro(m) => &m.attrs,
        _ => return false,
    };
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The strongly connected components with more than one module (Tarjan).
fn components(edges: &BTreeMap<(String, String), Evidence>) -> Vec<BTreeSet<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(v: &'a str, graph: &BTreeMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in &graph[v] {
            if !s.index.contains_key(w) {
                visit(w, graph, s);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for &v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(v, &graph, &mut state);
        }
    }
    state.out
}
