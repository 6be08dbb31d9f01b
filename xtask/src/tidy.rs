//! `cargo xtask tidy`: the architecture's invariants, checked on the source tree in a
//! second, as rust-analyzer's `xtask/src/tidy.rs` does. Also a `#[test]`, and a step of
//! `cargo xtask test`.
//!
//! The rules:
//! - **layering**: a library crate depends only on the library crates below it, a
//!   plugin only on library crates, and the rooms around them (the test cluster, the
//!   e2e tests, the fuzz entry points, xtask) only on what is below them, nothing on
//!   xtask or the e2e tests, in every dependency table ([`crates`]); inside the
//!   crates, the directories of [`LAYERS`] name none of their forbidden paths
//!   (`shared/resources/src/generate/` does no IO and knows no client,
//!   `shared/cli/src/printers/` writes only to the writer it is given, the flag groups
//!   name nothing of the plugin skeleton, the bottom modules name nothing above them,
//!   the plugins' cores stay behind their seams), and every `crate::` path or library
//!   crate a layer forbids exists there, so that no rule guards nothing;
//! - **module docs**: every `.rs` file opens with a `//!` line;
//! - **code map**: every top-level module of every crate is named in ARCHITECTURE.md's
//!   code map, in its crate's section, and a library crate's in its README;
//! - **doc citations**: a Markdown file's relative links and backticked repo paths name
//!   files that exist, and nothing cites a path outside the repository (a relative path
//!   climbing above its root, or an absolute path beside or inside this machine's
//!   checkout, which no reader has), and neither a Markdown file nor a Rust comment
//!   cites a work-item number; the docs a reader starts from name only paths and module
//!   paths that exist, whatever their first part, and `tests/e2e/main.rs` lists exactly
//!   the modules of `tests/e2e/` ([`citations`]);
//! - **import cycles**: no module of a crate names a sibling that names it back
//!   ([`cycles`]);
//! - **function length**: no function over 100 lines outside the e2e tests
//!   ([`length`]);
//! - **size**: xtask's production code stays within 8,000 lines ([`size`]).
//!
//! Rust is read with `syn` (already in the lock file through serde_derive, clap_derive
//! and thiserror) rather than with regexes: `use` trees with groups, renames and globs,
//! `super::` paths, paths inside expressions and the tokens of macro calls are then
//! seen as the compiler sees them, and comments or strings that merely mention
//! `std::fs` are not mistaken for imports.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::visit::Visit;

mod citations;
mod crates;
mod cycles;
mod length;
mod roots;
mod size;

/// `cargo xtask tidy`.
pub fn run() -> anyhow::Result<()> {
    let root = crate::paths::project_root();
    let problems = check(&root)?;
    if problems.is_empty() {
        eprintln!("xtask tidy: ok");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}");
    }
    anyhow::bail!("tidy: {} problem(s), listed above", problems.len())
}

/// One broken rule at one place.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// Relative to the repository root, with `/` separators.
    pub path: String,
    /// 1-based; 0 when the problem concerns the whole file.
    pub line: usize,
    pub rule: Rule,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    Layering,
    ModuleDoc,
    CodeMap,
    DocCitation,
    ImportCycle,
    FunctionLength,
    Size,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Layering => "layering",
            Rule::ModuleDoc => "module-doc",
            Rule::CodeMap => "code-map",
            Rule::DocCitation => "doc-citation",
            Rule::ImportCycle => "import-cycle",
            Rule::FunctionLength => "function-length",
            Rule::Size => "size",
        })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: [{}] {}", self.path, self.rule, self.message)
        } else {
            write!(
                f,
                "{}:{}: [{}] {}",
                self.path, self.line, self.rule, self.message
            )
        }
    }
}

/// Every rule over the tree at `root`, sorted by place.
pub fn check(root: &Path) -> anyhow::Result<Vec<Problem>> {
    let mut problems = Vec::new();
    let programs = roots::programs(root)?;
    let mut xtask_lines = 0;
    for rel in rust_files(root)? {
        let text = read(root, &rel)?;
        xtask_lines += size::production_lines(&rel, &text);
        problems.extend(module_doc(&rel, &text));
        if let Some(layer) = LAYERS.iter().find(|l| rel.starts_with(l.dir)) {
            problems.extend(layering(&rel, &text, layer));
        }
        if let Some((src, items)) = programs.iter().find(|(src, _)| rel.starts_with(src))
            && rel != format!("{src}/main.rs")
        {
            problems.extend(roots::check(&rel, &text, items));
        }
        if length::applies(&rel) {
            problems.extend(length::check(&rel, &text));
        }
        problems.extend(comment_citations(&rel, &text));
    }
    problems.extend(size::check(xtask_lines));
    problems.extend(crates::check(&crates::packages(root)?));
    problems.extend(vacuous_rules(root, LAYERS)?);
    for src in cycles::crate_roots(root)? {
        problems.extend(cycles::check(root, &src)?);
    }
    let architecture = read(root, "ARCHITECTURE.md")?;
    problems.extend(code_map(root, &architecture)?);
    problems.extend(crate_readmes(root)?);
    let index = citations::Index::scan(root)?;
    for rel in markdown_files(root)? {
        let text = read(root, &rel)?;
        problems.extend(doc_citations(root, &rel, &text));
        if citations::is_strict(&rel) {
            problems.extend(citations::check(root, &index, &rel, &text));
        }
    }
    problems.extend(citations::e2e_module_list(root)?);
    problems.sort();
    Ok(problems)
}

fn read(root: &Path, rel: &str) -> anyhow::Result<String> {
    let path = root.join(rel);
    std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------
// Walking the tree

/// Directories never walked: build output, fuzzing output, VCS data, dependencies.
const SKIPPED_DIRS: &[&str] = &["target", ".git", "artifacts", "corpus", "node_modules"];

/// Files under `root` whose name passes `keep`, relative and `/`-separated, sorted.
fn walk(root: &Path, dirs: &[&str], keep: &dyn Fn(&str) -> bool) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs
        .iter()
        .map(|d| root.join(d))
        .filter(|p| p.exists())
        .collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if keep(&name) {
                out.push(relative(root, &path));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The trees that hold the workspace's code (each package's sources and READMEs), in
/// the order tidy walks them; the doc checks add the trees that hold only docs.
const CODE_TREES: &[&str] = &[
    "shared",
    "plugins",
    "xtask",
    "bench",
    "tests",
    "localcluster",
    "krew",
    "fuzz",
];

/// [`CODE_TREES`] and the trees of prose and CI files.
fn doc_trees(more: &[&'static str]) -> Vec<&'static str> {
    CODE_TREES
        .iter()
        .copied()
        .chain(["docs", ".github"])
        .chain(more.iter().copied())
        .collect()
}

fn rust_files(root: &Path) -> anyhow::Result<Vec<String>> {
    walk(root, CODE_TREES, &|name| name.ends_with(".rs"))
}

fn markdown_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files: Vec<String> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .into_iter()
        .filter(|f| root.join(f).exists())
        .map(String::from)
        .collect();
    files.extend(walk(root, &doc_trees(&[]), &|name| name.ends_with(".md"))?);
    Ok(files)
}

// ---------------------------------------------------------------------------------------
// Module docs

/// The first non-blank line of every `.rs` file is a `//!` comment saying what the file
/// is for (CONTRIBUTING.md's rule).
fn module_doc(rel: &str, text: &str) -> Option<Problem> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    (!first.trim_start().starts_with("//!")).then(|| Problem {
        path: rel.to_string(),
        line: 1,
        rule: Rule::ModuleDoc,
        message: "the file does not open with a `//!` line saying what it is for".into(),
    })
}

// ---------------------------------------------------------------------------------------
// Layering

/// A directory whose files may not reach some paths or call some macros.
struct Layer {
    dir: &'static str,
    /// Why, for the message.
    invariant: &'static str,
    /// Path prefixes (whole segments) that files of `dir` must not name.
    forbidden: &'static [&'static str],
    /// Macros (by last segment) that files of `dir` must not call.
    forbidden_macros: &'static [&'static str],
}

/// What the bottom modules of `apiclient` (`tls`, `error`, `home`, `term`) may not
/// name: the rest of their crate. ARCHITECTURE.md's "bottom layer".
const ABOVE_APICLIENT_BOTTOM: &[&str] = &[
    "crate::client",
    "crate::credentials",
    "crate::go_net",
    "crate::bound",
    "crate::retry",
    "crate::status",
    "crate::warnings",
    "crate::kubeconfig",
];

/// What rolling-update's pure core (the algorithm behind the `UpdaterOps`,
/// `PrepareOps` and `HandoverOps` seams, and its pure helpers) may not name: the kube
/// implementation of the seams, the options above it, and kube's client.
const ROLLING_UPDATE_CORE: &[&str] = &[
    "crate::cluster",
    "crate::options",
    "crate::file",
    "kube::Api",
    "kube::api::Api",
    "kube::Client",
    "kube::client",
    "kube::runtime",
];

const LAYERS: &[Layer] = &[
    Layer {
        dir: "shared/apiclient/src/tls",
        invariant: "tls is a bottom module: it names nothing else of its crate",
        forbidden: ABOVE_APICLIENT_BOTTOM,
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/apiclient/src/error",
        invariant: "error is a bottom module: it names nothing of its crate but tls",
        forbidden: ABOVE_APICLIENT_BOTTOM,
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/apiclient/src/home",
        invariant: "home is a bottom module: it names nothing else of its crate",
        forbidden: ABOVE_APICLIENT_BOTTOM,
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/apiclient/src/term",
        invariant: "term is a bottom module: it names nothing else of its crate",
        forbidden: ABOVE_APICLIENT_BOTTOM,
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/resources/src/typed",
        invariant: "typed is a bottom module: no client, no other module of its crate",
        forbidden: &[
            "apiclient",
            "crate::openapi",
            "crate::rest",
            "crate::generate",
            "crate::server_schema",
            "crate::Builder",
        ],
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/goyaml/src/text",
        invariant: "text is a bottom module: bytes to text, nothing of the YAML above it",
        forbidden: &[
            "crate::emit",
            "crate::key_order",
            "crate::to_json",
            "gotext",
        ],
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/create-file/src/create",
        invariant: "create-file: options -> create/edit -> create; nothing calls back into options",
        forbidden: &["crate::options", "crate::edit"],
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/create-file/src/wait",
        invariant: "create-file: options -> wait -> create; nothing calls back into options",
        forbidden: &["crate::options", "crate::edit"],
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/create-file/src/edit",
        invariant: "create-file: options -> create/edit -> create; nothing calls back into options",
        forbidden: &["crate::options"],
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/run-pod/src/create",
        invariant: "run-pod: options drives create and attach; neither calls back into it",
        forbidden: &["crate::options"],
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/run-pod/src/attach",
        invariant: "run-pod: options drives create and attach; neither calls back into it",
        forbidden: &["crate::options"],
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/handover",
        invariant: "rolling-update's core is behind its seams (the hand-over's requests go through HandoverOps): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/updater",
        invariant: "rolling-update's core is behind its seams (the updater's requests go through UpdaterOps): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/prepare",
        invariant: "rolling-update's core is behind its seams (the steps before the update go through PrepareOps): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/controller",
        invariant: "rolling-update's core is behind its seams (pure): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/fencepost",
        invariant: "rolling-update's core is behind its seams (pure): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/merge",
        invariant: "rolling-update's core is behind its seams (pure): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/names",
        invariant: "rolling-update's core is behind its seams (pure): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "plugins/rolling-update/src/validate",
        invariant: "rolling-update's core is behind its seams (pure): no kube client, never cluster",
        forbidden: ROLLING_UPDATE_CORE,
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/resources/src/generate/",
        invariant: "generators are pure: no IO, no client, no clap",
        forbidden: &[
            "std::fs",
            "std::io",
            "std::net",
            "std::process",
            "std::env",
            "tokio",
            "hyper",
            "hyper_util",
            "hyper_rustls",
            "tower",
            "clap",
            "kube::Client",
            "kube::client",
            "kube::Api",
            "kube::api::Api",
            "kube::Discovery",
            "kube::discovery",
            "kube::runtime",
            "kube_client",
            "kube_runtime",
            "apiclient",
            "crate::rest",
            "crate::builder",
            "crate::Builder",
            "crate::mapper",
            "crate::openapi",
            "crate::server_schema",
            "crate::source",
            "crate::url",
            "crate::kustomize",
            "crate::cache_file",
        ],
        forbidden_macros: &["print", "println", "eprint", "eprintln", "dbg"],
    },
    Layer {
        dir: "shared/cli/src/printers/",
        invariant: "printers write only to the writer they are given",
        forbidden: &[
            "std::io::stdout",
            "std::io::stderr",
            "std::io::Stdout",
            "std::io::Stderr",
            "std::io::StdoutLock",
            "std::io::StderrLock",
            "tokio::io::stdout",
            "tokio::io::stderr",
        ],
        forbidden_macros: &["print", "println", "eprint", "eprintln", "dbg"],
    },
    Layer {
        dir: "shared/cli/src/flags/",
        invariant: "flag groups sit below the plugin skeleton: of their crate they name only the printers",
        forbidden: &[
            "crate::skeleton",
            "crate::run",
            "crate::Plugin",
            "crate::context",
            "crate::Context",
            "crate::finish",
            "crate::completion",
            "crate::help",
            "crate::interrupt",
            "crate::logging",
            "crate::closed_output",
            "crate::flag_error",
            "crate::status_line",
        ],
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/apiclient/src/client",
        invariant: "the API client is built from a kube Config, whatever made it: it knows neither the kubeconfig loader nor kuberc, nor the words of API refusals",
        forbidden: &["crate::kubeconfig", "crate::kuberc", "crate::status"],
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/apiclient/src/credentials",
        invariant: "credentials sit below the client and the kubeconfig loader that use them",
        forbidden: &[
            "crate::client",
            "crate::kubeconfig",
            "crate::kuberc",
            "crate::bound",
            "crate::retry",
            "crate::warnings",
        ],
        forbidden_macros: &[],
    },
    Layer {
        dir: "shared/apiclient/src/kubeconfig",
        invariant: "the kubeconfig loader builds a Config, never a client: it sits below the client and its layers",
        forbidden: &[
            "crate::client",
            "crate::bound",
            "crate::retry",
            "crate::warnings",
            "crate::status",
            "crate::go_net",
        ],
        forbidden_macros: &[],
    },
];

/// The rules of `layers` that guard nothing: a directory that does not exist, a
/// `crate::` path that names no module or item of the layer's crate, or a library crate
/// the layer's crate does not depend on (the compiler already refuses to name it).
fn vacuous_rules(root: &Path, layers: &[Layer]) -> anyhow::Result<Vec<Problem>> {
    let mut out = Vec::new();
    let problem = |message: String| Problem {
        path: "xtask/src/tidy.rs".into(),
        line: 0,
        rule: Rule::Layering,
        message,
    };
    for layer in layers {
        let dir = layer.dir.trim_end_matches('/');
        let (Some(at), true) = (
            dir.find("/src"),
            root.join(dir).exists() || root.join(format!("{dir}.rs")).exists(),
        ) else {
            out.push(problem(format!(
                "the layer `{}` names no directory or module of the tree: its rule guards nothing",
                layer.dir
            )));
            continue;
        };
        let (crate_dir, src) = (&dir[..at], root.join(&dir[..at + 4]));
        let manifest = read(root, &format!("{crate_dir}/Cargo.toml"))?;
        let dependencies = crates::package(crate_dir, &manifest).dependencies;
        for forbidden in layer.forbidden {
            let segments: Vec<&str> = forbidden.split("::").collect();
            let guards = match segments[0] {
                "crate" => crate_path_exists(&src, &segments[1..]),
                library if crates::LIBRARY_ORDER.contains(&library) => {
                    dependencies.iter().any(|(d, _)| d == library)
                }
                _ => true, // std, tokio, kube…: a guard against adding them
            };
            if !guards {
                out.push(problem(format!(
                    "the layer `{}` forbids `{forbidden}`, which its crate does not have: the rule guards nothing (remove it, or name what the layer must not reach)",
                    layer.dir
                )));
            }
        }
    }
    Ok(out)
}

/// Whether `segments` (after `crate::`) name something of the crate in `src`: modules
/// down the file tree, then an item, a word of the last module's file.
fn crate_path_exists(src: &Path, segments: &[&str]) -> bool {
    let mut dir = src.to_path_buf();
    let mut file = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|f| f.exists());
    for segment in segments {
        let as_file = dir.join(format!("{segment}.rs"));
        let as_dir = dir.join(segment);
        if as_file.exists() || as_dir.is_dir() {
            file = [as_file, as_dir.join("mod.rs")]
                .into_iter()
                .find(|f| f.exists());
            dir = as_dir;
            continue;
        }
        let text = file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        return has_word(&text, segment);
    }
    true
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(is_ident)
            && !text[i + word.len()..].chars().next().is_some_and(is_ident)
    })
}

/// The problems of one source file of `layer`.
fn layering(rel: &str, text: &str, layer: &Layer) -> Vec<Problem> {
    let problem = |line: usize, message: String| Problem {
        path: rel.to_string(),
        line,
        rule: Rule::Layering,
        message: format!("{message} ({})", layer.invariant),
    };
    let file = match syn::parse_file(text) {
        Ok(file) => file,
        Err(e) => {
            let line = e.span().start().line;
            return vec![problem(line, format!("cannot be parsed: {e}"))];
        }
    };
    let mut refs = References::new(module_path(rel));
    refs.visit_file(&file);
    let mut out = Vec::new();
    for (path, line) in &refs.paths {
        let resolved = refs.resolve(path);
        if let Some(prefix) = layer
            .forbidden
            .iter()
            .find(|f| starts_with_segments(&resolved, f))
        {
            out.push(problem(
                *line,
                format!("names `{}` (under `{prefix}`)", resolved.join("::")),
            ));
        }
    }
    for (name, line) in &refs.macros {
        if layer.forbidden_macros.contains(&name.as_str()) {
            out.push(problem(*line, format!("calls `{name}!`")));
        }
    }
    out.sort_by_key(|p| p.line);
    out.dedup();
    out
}

fn starts_with_segments(path: &[String], prefix: &str) -> bool {
    let prefix: Vec<&str> = prefix.split("::").collect();
    path.len() >= prefix.len() && path.iter().zip(&prefix).all(|(a, b)| a == b)
}

/// The module path of a file from its place in its crate: `shared/resources/src/generate/pod.rs`
/// is `crate::generate::pod`, `…/mod.rs` its directory, `lib.rs`/`main.rs` `crate`.
fn module_path(rel: &str) -> Vec<String> {
    let mut segments: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
    if let Some(src) = segments.iter().position(|s| *s == "src") {
        segments.drain(..=src);
    }
    if matches!(segments.last(), Some(&"mod" | &"lib" | &"main")) {
        segments.pop();
    }
    std::iter::once("crate")
        .chain(segments)
        .map(String::from)
        .collect()
}

/// Every path a file names (in `use` trees, types, expressions, patterns, attributes
/// and the tokens of macro calls), with its line, and the `use` names to resolve them.
struct References {
    /// The module the visitor is in (inline `mod` blocks push onto it).
    module: Vec<String>,
    /// Imported name → full path, over the whole file (shadowing is not modelled:
    /// a layer that imports a forbidden path is reported at that `use` anyway).
    imports: BTreeMap<String, Vec<String>>,
    paths: Vec<(Vec<String>, usize)>,
    macros: Vec<(String, usize)>,
}

impl References {
    fn new(module: Vec<String>) -> Self {
        Self {
            module,
            imports: BTreeMap::new(),
            paths: Vec::new(),
            macros: Vec::new(),
        }
    }

    /// `self::`, `super::` and imported first segments replaced by absolute paths.
    fn resolve(&self, path: &[String]) -> Vec<String> {
        let Some(first) = path.first() else {
            return Vec::new();
        };
        match first.as_str() {
            "crate" => path.to_vec(),
            "self" | "super" => {
                let mut base = self.module.clone();
                let mut rest = path;
                if rest.first().is_some_and(|s| s == "self") {
                    rest = &rest[1..];
                }
                while rest.first().is_some_and(|s| s == "super") {
                    if base.len() > 1 {
                        base.pop();
                    }
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                base
            }
            name => match self.imports.get(name) {
                // An import of an import (`use std::io; use io::Write;`) resolves on.
                Some(full) if full.first().map(String::as_str) != Some(name) => {
                    let mut out = self.resolve(full);
                    out.extend(path[1..].iter().cloned());
                    out
                }
                _ => path.to_vec(),
            },
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, line);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut full = prefix.clone();
                if name != "self" {
                    full.push(name.clone());
                }
                let key = if name == "self" {
                    prefix.last().cloned().unwrap_or_default()
                } else {
                    name
                };
                self.record_import(key, full, line);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.record_import(r.rename.to_string(), full, line);
            }
            syn::UseTree::Glob(_) => self.paths.push((self.resolve(prefix), line)),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item, line);
                }
            }
        }
    }

    fn record_import(&mut self, key: String, full: Vec<String>, line: usize) {
        let resolved = self.resolve(&full);
        self.paths.push((resolved.clone(), line));
        self.imports.insert(key, resolved);
    }

    /// Paths (`a::b::c`, `::a::b`) and macro calls (`name!`) in raw tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    if g.delimiter() != Delimiter::None || !g.stream().is_empty() {
                        self.tokens(g.stream());
                    }
                    i += 1;
                }
                TokenTree::Ident(ident) => {
                    let line = ident.span().start().line;
                    let mut path = vec![ident.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
                        {
                            path.push(next.to_string());
                            j += 3;
                        } else {
                            break;
                        }
                    }
                    if let Some(TokenTree::Punct(bang)) = trees.get(j)
                        && bang.as_char() == '!'
                        && matches!(trees.get(j + 1), Some(TokenTree::Group(_)))
                        && let Some(last) = path.last()
                    {
                        self.macros.push((last.clone(), line));
                    }
                    if path.len() > 1 {
                        self.paths.push((path, line));
                    }
                    i = j;
                }
                TokenTree::Punct(_) | TokenTree::Literal(_) => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for References {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let line = item.use_token.span.start().line;
        self.use_tree(&mut Vec::new(), &item.tree, line);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.module.push(item.ident.to_string());
        syn::visit::visit_item_mod(self, item);
        self.module.pop();
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = path
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        self.paths.push((segments, line));
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        if let Some(last) = mac.path.segments.last() {
            self.macros
                .push((last.ident.to_string(), last.ident.span().start().line));
        }
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

// ---------------------------------------------------------------------------------------
// The code map

/// Where each crate's modules must be named in ARCHITECTURE.md: the crate's source
/// root, the `###` heading of its section and, for a plugin, the `- `name`:` bullet.
fn crate_sections(root: &Path) -> anyhow::Result<Vec<(String, String, Option<String>)>> {
    let mut out = vec![
        ("xtask/src".to_string(), "`xtask/`".to_string(), None),
        ("bench/src".to_string(), "`bench/`".to_string(), None),
        ("tests/src".to_string(), "`tests/`".to_string(), None),
        (
            "localcluster/src".to_string(),
            "`localcluster/`".to_string(),
            None,
        ),
        ("krew/src".to_string(), "`krew/`".to_string(), None),
    ];
    let mut libraries: Vec<String> = std::fs::read_dir(root.join("shared"))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    libraries.sort();
    for library in libraries {
        out.push((
            format!("shared/{library}/src"),
            format!("`shared/{library}/`"),
            None,
        ));
    }
    let mut plugins: Vec<String> = std::fs::read_dir(root.join("plugins"))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    plugins.sort();
    for plugin in plugins {
        out.push((
            format!("plugins/{plugin}/src"),
            "`plugins/*`".to_string(),
            Some(format!("- `{plugin}`")),
        ));
    }
    Ok(out)
}

/// The top-level modules of a crate's source directory: `foo.rs` and `foo/`, without
/// the crate roots, `tests` modules and `bin/` (cargo's, not a module).
fn crate_modules(src: &Path) -> anyhow::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let module = if entry.file_type()?.is_dir() {
            name
        } else if let Some(stem) = name.strip_suffix(".rs") {
            stem.to_string()
        } else {
            continue;
        };
        if !["lib", "main", "tests", "bin"].contains(&module.as_str()) && !names.contains(&module) {
            names.push(module);
        }
    }
    names.sort();
    Ok(names)
}

/// The text under `heading` (a `###` line containing it) up to the next heading.
fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let start = doc
        .match_indices("\n### ")
        .map(|(i, _)| i + 1)
        .find(|&i| doc[i..].lines().next().is_some_and(|l| l.contains(heading)))?;
    let body = &doc[start..];
    let first_line_end = body.find('\n').unwrap_or(body.len());
    let end = body[first_line_end..]
        .find("\n#")
        .map_or(body.len(), |e| first_line_end + e);
    Some(&body[..end])
}

/// The bullet starting with `start` (a line beginning so) up to the next bullet.
fn bullet<'a>(text: &'a str, start: &str) -> Option<&'a str> {
    let begin = text.lines().position(|l| l.starts_with(start))?;
    let lines: Vec<&str> = text.lines().collect();
    let end = lines[begin + 1..]
        .iter()
        .position(|l| l.starts_with("- ") || l.starts_with("**"))
        .map_or(lines.len(), |e| begin + 1 + e);
    let offset: usize = lines[..begin].iter().map(|l| l.len() + 1).sum();
    let len: usize = lines[begin..end].iter().map(|l| l.len() + 1).sum();
    text.get(offset..(offset + len).min(text.len()))
}

/// Identifier-like words inside the backticked spans of `text`.
fn backticked_words(text: &str) -> Vec<&str> {
    code_spans(text)
        .into_iter()
        .flat_map(|(span, _)| span.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|w| !w.is_empty())
        .collect()
}

fn code_map(root: &Path, architecture: &str) -> anyhow::Result<Vec<Problem>> {
    let mut out = Vec::new();
    let map = match architecture.find("## Code map") {
        Some(start) => {
            let rest = &architecture[start + 3..];
            let end = rest.find("\n## ").map_or(rest.len(), |e| e + 1);
            &rest[..end]
        }
        None => {
            return Ok(vec![Problem {
                path: "ARCHITECTURE.md".into(),
                line: 0,
                rule: Rule::CodeMap,
                message: "has no `## Code map` section".into(),
            }]);
        }
    };
    for (src, heading, plugin) in crate_sections(root)? {
        let src_dir = root.join(&src);
        if !src_dir.is_dir() {
            continue;
        }
        let scope = section(map, &heading).and_then(|s| match &plugin {
            Some(start) => bullet(s, start),
            None => Some(s),
        });
        let Some(scope) = scope else {
            out.push(Problem {
                path: "ARCHITECTURE.md".into(),
                line: 0,
                rule: Rule::CodeMap,
                message: format!(
                    "the code map has no section for `{src}` (a `### {heading}` heading{})",
                    plugin
                        .map(|p| format!(" with a `{p}:` bullet"))
                        .unwrap_or_default()
                ),
            });
            continue;
        };
        let words = backticked_words(scope);
        for module in crate_modules(&src_dir)? {
            if !words.contains(&module.as_str()) {
                out.push(Problem {
                    path: "ARCHITECTURE.md".into(),
                    line: 0,
                    rule: Rule::CodeMap,
                    message: format!(
                        "the code map does not name module `{module}` ({src}/{module}) under {heading}"
                    ),
                });
            }
        }
    }
    Ok(out)
}

/// Each library crate's README names every top-level module of the crate, so that a
/// reader of `shared/<crate>/README.md` sees all it holds.
fn crate_readmes(root: &Path) -> anyhow::Result<Vec<Problem>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root.join("shared")) else {
        return Ok(out);
    };
    let mut crates: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    for name in crates {
        let readme = format!("shared/{name}/README.md");
        let text = std::fs::read_to_string(root.join(&readme)).unwrap_or_default();
        let words = backticked_words(&text);
        for module in crate_modules(&root.join(format!("shared/{name}/src")))? {
            if !words.contains(&module.as_str()) {
                out.push(Problem {
                    path: readme.clone(),
                    line: 0,
                    rule: Rule::CodeMap,
                    message: format!(
                        "does not name module `{module}` (shared/{name}/src/{module}) of its crate"
                    ),
                });
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Doc citations

/// The lines of Markdown text outside fenced blocks, with their line numbers (from 1).
fn unfenced_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter_map(move |(n, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((n + 1, line))
    })
}

/// Inline code spans of Markdown text outside fenced blocks, with their line numbers.
fn code_spans(text: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    for (n, line) in unfenced_lines(text) {
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            let ticks = rest[open..].chars().take_while(|&c| c == '`').count();
            let after = &rest[open + ticks..];
            let fence = &rest[open..open + ticks];
            match after.find(fence) {
                Some(close) => {
                    out.push((after[..close].trim(), n));
                    rest = &after[close + ticks..];
                }
                None => break,
            }
        }
    }
    out
}

/// Relative link targets (`[text](target)`) outside fenced blocks, with their lines.
fn link_targets(text: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    for (n, line) in unfenced_lines(text) {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(close) = after.find(')') else { break };
            let target = after[..close].split_whitespace().next().unwrap_or("");
            out.push((target, n));
            rest = &after[close..];
        }
    }
    out
}

/// The top-level entries a backticked path must start with to be taken for a repo path
/// (`target/…` is build output and never checked).
fn looks_like_repo_path(root: &Path, dir: &Path, span: &str) -> bool {
    if span.is_empty()
        || span.contains(char::is_whitespace)
        || span.contains("://")
        || span.contains("::")
        || span.starts_with("target/")
    {
        return false;
    }
    let first = span.split('/').next().unwrap_or("");
    span.contains('/')
        && !first.is_empty()
        && (root.join(first).exists() || root.join(dir).join(first).exists())
}

/// The part of a cited path before any placeholder (`<target>`, `*`, `…`, `{a,b}`,
/// `$VAR`): only that much can be checked.
fn checkable_prefix(path: &str) -> &str {
    let cut = path
        .find(['<', '*', '…', '{', '$', '['])
        .map_or(path.len(), |i| path[..i].rfind('/').map_or(0, |s| s + 1));
    &path[..cut]
}

/// Paths in `line` that leave the repository: relative ones climbing above the root
/// from `dir` (`../notes/…` in a top-level README), and absolute ones under `beside`,
/// the directory holding this machine's checkout (notes kept next to it, or the
/// checkout's own absolute path). Readers of the repository have neither.
fn escaping_paths(beside: Option<&str>, dir: &Path, line: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find(['.', '/']) {
        let start = rest[..i]
            .char_indices()
            .rev()
            .find(|&(_, c)| !is_path_char(c))
            .map_or(0, |(s, c)| s + c.len_utf8());
        let len = rest[start..]
            .find(|c: char| !is_path_char(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + len];
        let escapes = if let Some(beside) = beside
            && word.starts_with('/')
            && word
                .strip_prefix(beside)
                .is_some_and(|r| r.starts_with('/'))
        {
            true
        } else if word.starts_with("../") {
            let mut depth = dir.components().count() as isize;
            let mut escaped = false;
            for part in word.split('/') {
                match part {
                    ".." => depth -= 1,
                    "." | "" => {}
                    _ => depth += 1,
                }
                escaped |= depth < 0;
            }
            escaped
        } else {
            false
        };
        if escapes {
            out.push(word.trim_end_matches('.').to_string());
        }
        rest = &rest[(start + len).max(i + 1)..];
    }
    out
}

/// The directory holding this machine's checkout (`/home/me/src` for
/// `/home/me/src/kubeplug`), found at run time: an absolute path under it is this
/// machine's alone. `None` when the checkout sits at the top of the file system.
fn beside_checkout(root: &Path) -> Option<String> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let parent = root.parent()?;
    (parent.components().count() > 1).then(|| parent.to_string_lossy().into_owned())
}

/// Whether a `.gitignore` along `path` names one of its segments (build and fuzzing
/// output such as `fuzz/artifacts/`): such paths exist only on a working machine.
fn ignored(root: &Path, path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    (0..segments.len()).any(|depth| {
        let dir = root.join(segments[..depth].join("/"));
        std::fs::read_to_string(dir.join(".gitignore")).is_ok_and(|ignore| {
            ignore
                .lines()
                .map(|l| l.trim().trim_matches('/'))
                .any(|pattern| pattern == segments[depth])
        })
    })
}

/// `issue 21`, `Issue #32`: a work-item number (an upstream tracker's, written
/// `krew#812` or as a link, is not one of ours).
fn work_item(line: &str) -> Option<&str> {
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("issue") {
        let start = from + at;
        from = start + "issue".len();
        if start > 0 && lower.as_bytes()[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        let rest = lower[from..].strip_prefix('s').unwrap_or(&lower[from..]);
        let Some(rest) = rest.strip_prefix(' ') else {
            continue;
        };
        let number = rest.strip_prefix('#').unwrap_or(rest);
        let digits = number.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let end = line.len() - number.len() + digits;
            return Some(&line[start..end]);
        }
    }
    None
}

/// Work-item numbers in the comments of a Rust file: a comment says what a thing is or
/// why it is so, which a number does not. tidy's own rule and tests name examples.
fn comment_citations(rel: &str, text: &str) -> Vec<Problem> {
    if rel.starts_with("xtask/src/tidy") {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with("//"))
        .filter_map(|(n, line)| {
            work_item(line).map(|cited| Problem {
                path: rel.to_string(),
                line: n + 1,
                rule: Rule::DocCitation,
                message: format!(
                    "cites `{cited}`, an internal work-item number that means nothing to a reader (say what the thing is)"
                ),
            })
        })
        .collect()
}

fn doc_citations(root: &Path, rel: &str, text: &str) -> Vec<Problem> {
    let mut out = Vec::new();
    let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
    let problem = |line: usize, message: String| Problem {
        path: rel.to_string(),
        line,
        rule: Rule::DocCitation,
        message,
    };
    let beside = beside_checkout(root);
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        // A shell block may `cd` first: there only the machine's own path is certain.
        let cited = escaping_paths(beside.as_deref(), dir, line)
            .into_iter()
            .filter(|c| !fenced || c.starts_with('/'));
        for cited in cited {
            out.push(problem(
                n + 1,
                format!("cites `{cited}`, which is outside the repository or this machine's alone (put what the project relies on into the repo, in our own words)"),
            ));
        }
    }
    // Recorded bench runs keep the words the bench wrote then.
    if !rel.starts_with("bench/runs/") {
        for (n, line) in unfenced_lines(text) {
            if let Some(cited) = work_item(line) {
                out.push(problem(
                    n,
                    format!("cites `{cited}`, an internal work-item number that means nothing to a reader (say what the thing is)"),
                ));
            }
        }
    }
    for (target, line) in link_targets(text) {
        let path = target.split('#').next().unwrap_or("");
        if path.is_empty() || path.contains(':') || path.starts_with('/') {
            continue; // an anchor, a URL (`https:`, `mailto:`) or an absolute path
        }
        let cited = checkable_prefix(path);
        if !cited.is_empty() && !root.join(dir).join(cited).exists() {
            out.push(problem(
                line,
                format!("links to `{path}`, which does not exist"),
            ));
        }
    }
    for (span, line) in code_spans(text) {
        let span = span.trim_end_matches([':', ',', '.']);
        // `path:line` citations check the path.
        let span = span.split_once(':').map_or(span, |(p, _)| p);
        if !looks_like_repo_path(root, dir, span) {
            continue;
        }
        let cited = checkable_prefix(span);
        if cited.is_empty() {
            continue;
        }
        if !root.join(cited).exists()
            && !root.join(dir).join(cited).exists()
            && !ignored(root, cited)
        {
            out.push(problem(
                line,
                format!("cites `{span}`, which does not exist"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
