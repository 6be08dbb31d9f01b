//! The crate-layer rule, read from each package's `Cargo.toml`: the library crates
//! are layers ([`LIBRARY_ORDER`], from the bottom up), and a library crate depends only
//! on the library crates below it; a plugin depends only on library crates; the bench
//! only on library crates and the test cluster's crate; and no package depends on a
//! program of its own ([`PROGRAMS`]: xtask, the bench).
//!
//! The compiler refuses a cycle among normal dependencies, but not an upward
//! dev-dependency (cargo allows those cycles), nor a plugin depending on another
//! package of the workspace, nor a new library crate with no place among the layers:
//! those are what this rule holds. Every dependency table counts (`dependencies`,
//! `dev-dependencies`, `build-dependencies`, and their `target.'cfg(…)'` forms).
//!
//! The manifests are read line by line in the workspace's own style (`name.workspace =
//! true`, `name = { … }`, `[dependencies.name]`): a TOML parser would be a dependency
//! of xtask for one rule.

use std::path::Path;

use super::{Problem, Rule};

/// The library crates under `shared/`, from the bottom up: each may depend only on
/// those before it. A new library crate takes its place here.
pub(super) const LIBRARY_ORDER: &[&str] = &["gotext", "goyaml", "apiclient", "resources", "cli"];

/// The packages that are programs of their own, which `cargo xtask` is or runs: no
/// package depends on them (xtask runs the bench as a program, never links it).
pub(super) const PROGRAMS: &[&str] = &["xtask", "bench"];

/// The test cluster's crate, which the bench starts its cluster with.
const TEST_CLUSTER: &str = "localcluster";

/// One package of the workspace.
#[derive(Debug)]
pub(super) struct Package {
    /// The directory, relative to the root (`shared/cli`).
    pub(super) dir: String,
    pub(super) name: String,
    /// Each dependency's name and the 1-based line of the manifest that names it.
    pub(super) dependencies: Vec<(String, usize)>,
}

/// The workspace's packages: the `members` of the root `Cargo.toml`.
pub(super) fn packages(root: &Path) -> anyhow::Result<Vec<Package>> {
    let manifest = super::read(root, "Cargo.toml")?;
    let mut out = Vec::new();
    for dir in members(&manifest) {
        let text = super::read(root, &format!("{dir}/Cargo.toml"))?;
        out.push(package(&dir, &text));
    }
    Ok(out)
}

/// The quoted entries of `members = [ … ]`.
fn members(manifest: &str) -> Vec<String> {
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    rest[open + 1..close]
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split(','))
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(String::from)
        .collect()
}

/// A package's name and dependencies from its manifest's text.
pub(super) fn package(dir: &str, text: &str) -> Package {
    let mut name = String::new();
    let mut dependencies = Vec::new();
    let mut table = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header.trim_end_matches(']').to_string();
            // `[dependencies.name]`, `[target.'cfg(unix)'.dev-dependencies.name]`
            if let Some((tables, dep)) = table.rsplit_once('.')
                && tables.ends_with("dependencies")
            {
                dependencies.push((dep.trim_matches('"').to_string(), n + 1));
            }
            continue;
        }
        let key = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or("")
            .trim_matches('"');
        if key.is_empty() {
            continue;
        }
        if table == "package" && key == "name" && name.is_empty() {
            name = line
                .split_once('=')
                .map_or("", |(_, v)| v.trim().trim_matches('"'))
                .to_string();
        } else if table.ends_with("dependencies") {
            dependencies.push((key.to_string(), n + 1));
        }
    }
    Package {
        dir: dir.to_string(),
        name,
        dependencies,
    }
}

/// The problems of the workspace's packages against the layers.
pub(super) fn check(packages: &[Package]) -> Vec<Problem> {
    let workspace: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    let rank = |name: &str| LIBRARY_ORDER.iter().position(|l| *l == name);
    let mut out = Vec::new();
    for package in packages {
        let manifest = format!("{}/Cargo.toml", package.dir);
        let problem = |line: usize, message: String| Problem {
            path: manifest.clone(),
            line,
            rule: Rule::Layering,
            message,
        };
        for (dep, line) in &package.dependencies {
            if PROGRAMS.contains(&dep.as_str()) && workspace.contains(&dep.as_str()) {
                out.push(problem(
                    *line,
                    format!(
                        "`{}` depends on `{dep}` (a program of its own, which `cargo xtask` is or runs: nothing links it)",
                        package.name
                    ),
                ));
            }
        }
        let allowed: Box<dyn Fn(&str) -> bool> = if package.dir.starts_with("shared/") {
            let Some(own) = rank(&package.name) else {
                out.push(problem(
                    0,
                    format!(
                        "`{}` is a library crate with no place among the layers (add it to tidy's LIBRARY_ORDER, above what it uses)",
                        package.name
                    ),
                ));
                continue;
            };
            Box::new(move |dep| rank(dep).is_some_and(|r| r < own))
        } else if package.dir.starts_with("plugins/") {
            Box::new(|dep| rank(dep).is_some())
        } else if package.name == "bench" {
            Box::new(|dep| rank(dep).is_some() || dep == TEST_CLUSTER)
        } else {
            continue;
        };
        for (dep, line) in &package.dependencies {
            // A program as a dependency is reported above, whoever depends on it.
            if workspace.contains(&dep.as_str())
                && !allowed(dep)
                && !PROGRAMS.contains(&dep.as_str())
            {
                let why = if package.dir.starts_with("shared/") {
                    format!(
                        "a library crate uses only the library crates below it: {}, bottom up",
                        LIBRARY_ORDER.join(" → ")
                    )
                } else if package.name == "bench" {
                    format!("the bench uses only the library crates and `{TEST_CLUSTER}`")
                } else {
                    "a plugin uses only the library crates".to_string()
                };
                out.push(problem(
                    *line,
                    format!("`{}` depends on `{dep}` ({why})", package.name),
                ));
            }
        }
    }
    out
}
