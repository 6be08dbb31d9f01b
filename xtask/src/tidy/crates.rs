//! The crate-layer rule, read from each package's `Cargo.toml`: the library crates
//! are layers ([`LIBRARY_ORDER`], from the bottom up), and a library crate depends only
//! on the library crates below it; a plugin depends only on library crates; each room
//! around them ([`ROOMS`]: the test cluster, the e2e tests, the fuzz entry points,
//! krew's rules, xtask, the bench) only on what its entry names, so that the test cluster stands on
//! nothing of the workspace; and no package depends on a program of its own
//! ([`PROGRAMS`]: xtask, the bench) or on the e2e tests.
//!
//! The compiler refuses a cycle among normal dependencies, but not an upward
//! dev-dependency (cargo allows those cycles), nor a plugin depending on another
//! package of the workspace, nor a new library crate or room with no place among the layers:
//! those are what this rule holds. Every dependency table counts (`dependencies`,
//! `dev-dependencies`, `build-dependencies`, and their `target.'cfg(…)'` forms).
//!
//! The manifests are read line by line in the workspace's own style (`name.workspace =
//! true`, `name = { … }`, `[dependencies.name]`): a TOML parser would be a dependency
//! of xtask for one rule.

use std::path::Path;

use super::{Problem, Rule};

/// The library crates under `shared/`, from the bottom up: each may depend only on
/// those before it. A new library crate takes its place here. `objectstatus` sits low
/// on purpose: its rules are pure, and the rule keeps them from ever reaching the client.
/// `scripted` (the tests' API server, a dev-dependency only) sits on top: it builds
/// its client as `cli` does.
pub(super) const LIBRARY_ORDER: &[&str] = &[
    "gotext",
    "goyaml",
    "objectstatus",
    "apiclient",
    "resources",
    "cli",
    "scripted",
];

/// A package of the workspace that is neither a library crate nor a plugin.
pub(super) struct Room {
    pub(super) name: &'static str,
    /// Whether it may use the library crates.
    pub(super) libraries: bool,
    /// The other packages of the workspace it may use.
    pub(super) uses: &'static [&'static str],
    /// Why, for the message.
    pub(super) invariant: &'static str,
}

/// The rooms around the product, each with what it may use. Nobody may use `xtask`,
/// `bench` or `tests`; a new room takes its place here.
pub(super) const ROOMS: &[Room] = &[
    Room {
        name: "localcluster",
        libraries: false,
        uses: &[],
        invariant: "the test cluster is a cluster, not a client: it uses no package of the workspace",
    },
    Room {
        name: "fuzz-entries",
        libraries: true,
        uses: &[],
        invariant: "the fuzz entry points use only the library crates they fuzz",
    },
    Room {
        name: "tests",
        libraries: true,
        uses: &["localcluster"],
        invariant: "the e2e tests use the library crates and the test cluster",
    },
    Room {
        name: "bench",
        libraries: true,
        uses: &["localcluster"],
        invariant: "the bench uses the library crates and the test cluster it starts",
    },
    Room {
        name: "krew",
        libraries: false,
        uses: &[],
        invariant: "krew's rules are krew's: the krew package uses no package of the workspace",
    },
    Room {
        name: "xtask",
        libraries: false,
        uses: &["localcluster", "krew"],
        invariant: "xtask runs the plugins and the cluster as programs: it links only the test cluster's addresses and krew's rules",
    },
];

/// The packages that are programs of their own, which `cargo xtask` is or runs: no
/// package depends on them (xtask runs the bench as a program, never links it).
pub(super) const PROGRAMS: &[&str] = &["xtask", "bench"];

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
        } else if let Some(room) = ROOMS.iter().find(|r| r.name == package.name) {
            Box::new(move |dep| (room.libraries && rank(dep).is_some()) || room.uses.contains(&dep))
        } else {
            out.push(problem(
                0,
                format!(
                    "`{}` is a package with no place among the rooms (add it to tidy's ROOMS, with what it may use)",
                    package.name
                ),
            ));
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
                } else if package.dir.starts_with("plugins/") {
                    "a plugin uses only the library crates".to_string()
                } else {
                    ROOMS
                        .iter()
                        .find(|r| r.name == package.name)
                        .map_or("", |r| r.invariant)
                        .to_string()
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
