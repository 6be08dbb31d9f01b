//! The strict citation rule of the docs a reader starts from (the top-level Markdown
//! files, `docs/*.md`, and the READMEs of the plugins and library crates): every repo
//! path and every module path they put in backticks exists, and `tests/e2e/main.rs`
//! lists exactly the modules of `tests/e2e/`.
//!
//! - A **path** is a backticked span with a `/` (`shared/cli/src/lib.rs`,
//!   `src/options.rs` from a plugin's README) or a file name with a source extension
//!   (`main.rs`, `Cargo.toml`). One with a `/` must exist from the repository's root or
//!   the doc's directory; a bare file name somewhere in the tree. What only looks like
//!   a path is left alone: an API group-version or generator (`batch/v1`,
//!   `deployment/apps.v1`), a Go import path (`sigs.k8s.io/yaml`), a path on the
//!   user's machine (`/usr/lib/cni`, `~/.kube/config`), a placeholder (`<cache-dir>/…`).
//!   So `resource/builtin.rs`, which names no file, is caught although no top-level
//!   `resource` exists, and so is a module path written with slashes (`cli/skeleton`):
//!   write it as a path from the root or as a module (`cli::skeleton`).
//! - A **module path** is a backticked span that starts with a crate of the workspace
//!   (`apiclient::bound::Bound`, `cli::printers::gojson`): its modules must exist as
//!   files, and the first name past them must be a word of the last module's file (an
//!   item or a re-export). Paths of other crates (`kube::Client`) are not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Problem, Rule};

/// What the strict rule looks paths and modules up in, read once per run.
pub(super) struct Index {
    /// Every file name in the tree (`main.rs`, `golden.yaml`).
    file_names: BTreeSet<String>,
    /// Every module's name, as a file stem or a directory under a crate's `src/`
    /// (`skeleton`, `client`, `connect`), and every crate's.
    module_names: BTreeSet<String>,
    /// Each workspace crate's name as Rust spells it, and its source directory.
    crates: BTreeMap<String, PathBuf>,
}

/// Extensions that make a bare backticked name a file of the repository (a `.go` file
/// is more often kubectl's than ours).
const FILE_EXTENSIONS: &[&str] = &[".rs", ".md", ".toml", ".lock"];

/// Extensions that make a backticked span with a `/` a path of the repository.
const PATH_EXTENSIONS: &[&str] = &[
    ".rs", ".md", ".toml", ".lock", ".json", ".yaml", ".yml", ".go", ".c", ".sh", ".svg", ".png",
    ".txt", ".mod", ".sum", ".stdout", ".stderr", ".deflate",
];

impl Index {
    pub(super) fn scan(root: &Path) -> anyhow::Result<Self> {
        let files = super::walk(root, &super::doc_trees(&[".krew"]), &|_| true)?;
        let mut module_names = BTreeSet::new();
        for rel in files.iter().filter(|f| f.ends_with(".rs")) {
            if let Some((_, inside)) = rel.split_once("/src/") {
                module_names.extend(
                    inside
                        .trim_end_matches(".rs")
                        .split('/')
                        .filter(|m| !["lib", "main", "mod"].contains(m))
                        .map(String::from),
                );
            }
        }
        let file_names = files
            .into_iter()
            .chain(top_level_files(root)?)
            .filter_map(|rel| rel.rsplit('/').next().map(String::from))
            .collect();
        let mut crates = BTreeMap::new();
        for package in super::crates::packages(root)? {
            let src = root.join(&package.dir).join("src");
            if src.is_dir() {
                // `cli/skeleton` is a module path with slashes, as `client/connect` is.
                module_names.insert(package.name.clone());
                crates.insert(package.name.replace('-', "_"), src);
            }
        }
        Ok(Self {
            file_names,
            module_names,
            crates,
        })
    }
}

fn top_level_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(out)
}

/// Whether `rel` is one of the docs the strict rule holds.
pub(super) fn is_strict(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    match parts.as_slice() {
        ["README.md" | "ARCHITECTURE.md" | "CONTRIBUTING.md"] => true,
        ["docs", name] => name.ends_with(".md"),
        ["plugins" | "shared", _, "README.md"] => true,
        _ => false,
    }
}

/// The strict rule over one doc.
pub(super) fn check(root: &Path, index: &Index, rel: &str, text: &str) -> Vec<Problem> {
    let dir = Path::new(rel).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (span, line) in super::code_spans(text) {
        let problem = |message: String| Problem {
            path: rel.to_string(),
            line,
            rule: Rule::DocCitation,
            message,
        };
        let lead: String = span
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if lead.contains("::") {
            if let Some(missing) = missing_module_path(index, lead.trim_end_matches(':')) {
                out.push(problem(format!(
                    "names `{lead}`, but {missing} (write a module path that exists, or the file's path)"
                )));
            }
            continue;
        }
        let span = span.trim_end_matches([':', ',', '.', ';']);
        let span = span.split_once(':').map_or(span, |(p, _)| p);
        // What the lax rule of every doc already checks is reported there.
        if !is_path_shaped(index, span) || super::looks_like_repo_path(root, dir, span) {
            continue;
        }
        let cited = super::checkable_prefix(span);
        if cited.is_empty() {
            continue;
        }
        let exists = if cited.contains('/') {
            root.join(cited).exists()
                || root.join(dir).join(cited).exists()
                || super::ignored(root, cited)
        } else {
            index.file_names.contains(cited) || root.join(dir).join(cited).exists()
        };
        if !exists {
            out.push(problem(format!(
                "cites `{span}`, which does not exist (a path is written from the repository's root or the doc's directory; a module as `crate::module`)"
            )));
        }
    }
    out
}

/// Whether a backticked span is taken for a path of the repository: a file name
/// with a source extension, a span with a `/` ending in a file's extension, or one
/// whose every part is a module's name (`cli/skeleton`, a module path with slashes).
/// Go's packages (`text/template`, `net/http`), media types (`application/yaml`),
/// subresources (`pods/attach`) and user agents (`kubeplug/0.1.0`) are none of these.
fn is_path_shaped(index: &Index, span: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_-./<>*…{},$[]".contains(c);
    if span.is_empty()
        || !span.chars().all(allowed)
        || span.starts_with(['/', '~', '$', '-', '<', '*', '.'])
        || span.starts_with("target/")
    {
        return false;
    }
    if !span.contains('/') {
        return FILE_EXTENSIONS.iter().any(|e| span.ends_with(e));
    }
    let segments: Vec<&str> = span.split('/').filter(|s| !s.is_empty()).collect();
    let (Some(first), Some(last)) = (segments.first(), segments.last()) else {
        return false;
    };
    // `sigs.k8s.io/yaml`, `k8s.io/api`: a Go import path.
    if first.contains('.') && !PATH_EXTENSIONS.iter().any(|e| first.ends_with(e)) {
        return false;
    }
    // `batch/v1`, `apps/v1beta1`, `deployment/apps.v1`, `run-pod/v1`: a group-version
    // or a generator's name.
    if is_version(last.rsplit('.').next().unwrap_or(last)) {
        return false;
    }
    PATH_EXTENSIONS.iter().any(|e| last.ends_with(e))
        || segments.iter().all(|s| index.module_names.contains(*s))
}

/// `v1`, `v2alpha1`, `v1beta1`.
fn is_version(word: &str) -> bool {
    let Some(rest) = word.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let rest = &rest[digits..];
    rest.is_empty()
        || ["alpha", "beta"].iter().any(|stage| {
            rest.strip_prefix(stage)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// What of a `crate::…` path does not exist, or `None` when it all does (or the crate
/// is not one of the workspace's).
fn missing_module_path(index: &Index, path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (first, rest) = segments.split_first()?;
    let src = index.crates.get(*first)?;
    let mut dir = src.clone();
    let mut file = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|f| f.exists());
    let mut module = first.to_string();
    for (i, segment) in rest.iter().enumerate() {
        let as_file = dir.join(format!("{segment}.rs"));
        let as_dir = dir.join(segment);
        if as_file.exists() || as_dir.join("mod.rs").exists() {
            file = [as_file, as_dir.join("mod.rs")]
                .into_iter()
                .find(|f| f.exists());
            dir = as_dir;
            module = format!("{module}::{segment}");
            continue;
        }
        let text = file
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        if !super::has_word(&text, segment) {
            return Some(format!("`{module}` has no `{segment}`"));
        }
        // Past the item (a method, a variant, a field): named somewhere in the crate.
        for later in &rest[i + 1..] {
            if !crate_has_word(src, later) {
                return Some(format!("the crate `{first}` never names `{later}`"));
            }
        }
        return None;
    }
    None
}

fn crate_has_word(src: &Path, word: &str) -> bool {
    let Ok(files) = super::walk(src, &["."], &|name| name.ends_with(".rs")) else {
        return false;
    };
    files.iter().any(|rel| {
        std::fs::read_to_string(src.join(rel)).is_ok_and(|text| super::has_word(&text, word))
    })
}

/// `tests/e2e/main.rs` against the files of `tests/e2e/`: every file is a `mod`, and
/// the `//!` list (`//! - \`name\`: …`) names exactly the `mod`s.
pub(super) fn e2e_module_list(root: &Path) -> anyhow::Result<Vec<Problem>> {
    let main = "tests/e2e/main.rs";
    let Ok(text) = std::fs::read_to_string(root.join(main)) else {
        return Ok(Vec::new());
    };
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(root.join("tests/e2e"))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs")
            && stem != "main"
        {
            files.insert(stem.to_string());
        }
    }
    let mut mods = BTreeMap::new();
    let mut listed = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(name) = line
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            mods.insert(name.trim().to_string(), n + 1);
        } else if let Some(rest) = line.strip_prefix("//! - `")
            && let Some((name, _)) = rest.split_once('`')
        {
            listed.insert(name.to_string(), n + 1);
        }
    }
    let problem = |line: usize, message: String| Problem {
        path: main.into(),
        line,
        rule: Rule::DocCitation,
        message,
    };
    let mut out = Vec::new();
    for file in &files {
        if !mods.contains_key(file) {
            out.push(problem(
                0,
                format!(
                    "`tests/e2e/{file}.rs` is not a `mod` of the e2e binary: its tests never run"
                ),
            ));
        }
    }
    for (name, line) in &mods {
        if !listed.contains_key(name) {
            out.push(problem(
                *line,
                format!("module `{name}` is missing from the `//!` list of modules"),
            ));
        }
    }
    for (name, line) in &listed {
        if !mods.contains_key(name) {
            out.push(problem(
                *line,
                format!("the `//!` list names `{name}`, which is not a module of the e2e binary"),
            ));
        }
    }
    Ok(out)
}
