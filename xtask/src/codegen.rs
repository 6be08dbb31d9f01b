//! `cargo xtask codegen [--check]`: the one way to write every generated file, as
//! rust-analyzer's `cargo xtask codegen`. Without `--check` it rewrites the files whose
//! text differs; with it, it generates them in memory (and a temporary directory) and
//! fails naming each stale file and the command that fixes it. `cargo xtask test` runs
//! `--check`.
//!
//! The generated files, and what writes them:
//! - `.krew/*.yaml`, the krew-release-bot templates: the plugins' Cargo.toml through
//!   `crate::dist::templates`, in process.
//! - `shared/cli/src/printers/gojson/table.rs`, Go's JSON field layout of the k8s.io/api
//!   types: `go run .` in `shared/cli/gojson-gen` (reflection), then rustfmt.
//! - `shared/resources/src/builtin/schema.json` and its deflated copy: k8s-openapi's
//!   typed models through schemars, by resources' test
//!   `schema_is_generated_from_the_typed_models`.
//! - `shared/goyaml/src/emit/golden.yaml`: what the reference kubectl prints for
//!   goyaml's golden cases, by goyaml's test `golden_table_is_kubectls_output`.
//!
//! The last two are written where their inputs are, in their crates' tests (the typed
//! models with schemars are a dev-dependency; the cases are test code): this runs them
//! with `KUBEPLUG_CODEGEN_OUT=DIR` and they write into DIR instead of checking, so each
//! test without it is also its file's freshness test, as rust-analyzer's `sourcegen`
//! tests are. This module's own test does the same for the first two.
//!
//! Not here: the plugins' transcripts (`TRYCMD=overwrite`). They are what the tests
//! expect the program to print, reviewed by hand against kubectl; a command that rewrites
//! them from the program's current output would make those tests pass whatever it
//! printed (rust-analyzer likewise keeps `UPDATE_EXPECT=1` apart from its codegen).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::flags;

/// The environment variable that turns a crate's generator test into a generator: the
/// directory it writes its files into.
const OUT_VAR: &str = "KUBEPLUG_CODEGEN_OUT";
/// The kubectl the golden-table generator runs (the reference release's).
const KUBECTL_VAR: &str = "KUBEPLUG_CODEGEN_KUBECTL";

/// One generated file: its path from the repository root and the text it should have.
#[derive(Debug)]
pub struct Generated {
    pub path: PathBuf,
    pub contents: Vec<u8>,
}

/// Generated files a generator could not write here, and why.
#[derive(Debug)]
pub struct Skipped {
    pub paths: Vec<PathBuf>,
    pub why: String,
}

/// Everything the generators produced.
#[derive(Debug, Default)]
pub struct Output {
    pub files: Vec<Generated>,
    /// Files in a directory a generator owns whole (`.krew/`) that it did not write.
    pub extra: Vec<PathBuf>,
    pub skipped: Vec<Skipped>,
}

pub fn run(flags: &flags::Codegen) -> anyhow::Result<()> {
    let started = Instant::now();
    let root = crate::paths::project_root();
    let mut out = Output::default();
    krew_templates(&root, &mut out)?;
    gojson_table(&root, &mut out)?;
    crate_tests(&root, &mut out)?;
    for skipped in &out.skipped {
        for path in &skipped.paths {
            eprintln!("codegen: {}: skipped: {}", path.display(), skipped.why);
        }
    }
    let stale = stale(&root, &out);
    let took = format!("{:.1} s", started.elapsed().as_secs_f64());
    if flags.check {
        if !stale.is_empty() {
            bail!(
                "{} generated file(s) are not what their generator writes:\n  {}\n\
                 run `cargo xtask codegen` and commit the result",
                stale.len(),
                stale
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join("\n  ")
            );
        }
        eprintln!(
            "codegen: {} generated files are current ({took})",
            out.files.len()
        );
        return Ok(());
    }
    write(&root, &out, &stale)?;
    eprintln!(
        "codegen: {} of {} generated files rewritten ({took})",
        stale.len(),
        out.files.len()
    );
    Ok(())
}

/// The paths (from the root) whose text in the tree is not what was generated, and the
/// extra files that should not be there.
pub fn stale(root: &Path, out: &Output) -> Vec<PathBuf> {
    let mut stale: Vec<PathBuf> = out
        .files
        .iter()
        .filter(|g| std::fs::read(root.join(&g.path)).ok().as_ref() != Some(&g.contents))
        .map(|g| g.path.clone())
        .collect();
    stale.extend(out.extra.iter().cloned());
    stale
}

fn write(root: &Path, out: &Output, stale: &[PathBuf]) -> anyhow::Result<()> {
    for generated in out.files.iter().filter(|g| stale.contains(&g.path)) {
        let path = root.join(&generated.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &generated.contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("codegen: wrote {}", generated.path.display());
    }
    for extra in &out.extra {
        std::fs::remove_file(root.join(extra))
            .with_context(|| format!("cannot remove {}", extra.display()))?;
        eprintln!("codegen: removed {} (no plugin writes it)", extra.display());
    }
    Ok(())
}

/// `.krew/`: one release-bot template per plugin, and nothing else.
pub fn krew_templates(root: &Path, out: &mut Output) -> anyhow::Result<()> {
    let ws = crate::metadata::load()?;
    let dir = root.join(".krew");
    let mut expected = Vec::new();
    for (path, text) in crate::dist::templates(&ws)? {
        let path = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        expected.push(path.clone());
        out.files.push(Generated {
            path,
            contents: text.into_bytes(),
        });
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut extra: Vec<PathBuf> = entries
            .flatten()
            .filter_map(|e| e.path().strip_prefix(root).ok().map(Path::to_path_buf))
            .filter(|p| !expected.contains(p))
            .collect();
        extra.sort();
        out.extra.extend(extra);
    }
    Ok(())
}

/// Where the Go generator lives and the file it writes.
const GOJSON_GEN: &str = "shared/cli/gojson-gen";
const GOJSON_TABLE: &str = "shared/cli/src/printers/gojson/table.rs";

/// `table.rs`: the Go program's output, formatted as `cargo fmt` would. It reads
/// k8s.io/api at the version its `go.mod` pins, from the module cache (the Go proxy
/// the first time); `-mod=readonly` so that it never rewrites `go.mod` or `go.sum`.
pub fn gojson_table(root: &Path, out: &mut Output) -> anyhow::Result<()> {
    let path = PathBuf::from(GOJSON_TABLE);
    let Some(go) = which::which("go").ok() else {
        out.skipped.push(Skipped {
            paths: vec![path],
            why: "`go` is not on PATH (Go ≥ 1.23 generates it; `cargo xtask testenv` needs it too)"
                .into(),
        });
        return Ok(());
    };
    let gen_dir = root.join(GOJSON_GEN);
    let mut cmd = Command::new(go);
    cmd.args(["run", "."])
        .current_dir(&gen_dir)
        .env("GOFLAGS", "-mod=readonly");
    let go_out = output_of(&mut cmd, None)?;
    let formatted = output_of(
        Command::new(rustfmt()).args(["--edition", "2024", "--emit", "stdout"]),
        Some(&go_out),
    )?;
    out.files.push(Generated {
        path,
        contents: formatted,
    });
    Ok(())
}

/// The rustfmt of the toolchain running this (cargo sets `RUSTFMT` for nothing, so the
/// one beside `cargo`, else PATH's).
fn rustfmt() -> PathBuf {
    let cargo = PathBuf::from(env!("CARGO"));
    cargo
        .parent()
        .map(|dir| dir.join("rustfmt"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("rustfmt"))
}

/// Runs `cmd` with `input` on its stdin and returns its stdout; fails with its stderr.
fn output_of(cmd: &mut Command, input: Option<&[u8]>) -> anyhow::Result<Vec<u8>> {
    use std::io::Write as _;
    let line = crate::run::command_line(cmd);
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run `{line}`"))?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(input)?;
    }
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "`{line}` failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    Ok(output.stdout)
}

/// A generator that is a crate's test: the test's full name, and the files it writes
/// into `KUBEPLUG_CODEGEN_OUT` (by file name) with where each belongs.
struct CrateTest {
    test: &'static str,
    files: &'static [(&'static str, &'static str)],
}

const SCHEMA: CrateTest = CrateTest {
    test: "builtin::tests::schema_is_generated_from_the_typed_models",
    files: &[
        ("schema.json", "shared/resources/src/builtin/schema.json"),
        (
            "schema.json.deflate",
            "shared/resources/src/builtin/schema.json.deflate",
        ),
    ],
};

const GOLDEN: CrateTest = CrateTest {
    test: "emit::tests::golden_table_is_kubectls_output",
    files: &[("golden.yaml", "shared/goyaml/src/emit/golden.yaml")],
};

/// The schema and the golden table, from their crates' tests in one `cargo test`. It is
/// `--workspace --lib`, not `-p resources -p goyaml`: the same features, so the same
/// test binaries as `cargo test --workspace` (which `cargo xtask test` has built by
/// then) instead of a second build of k8s-openapi with other features.
fn crate_tests(root: &Path, out: &mut Output) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let mut cmd = crate::run::cargo(root);
    cmd.args(["test", "--workspace", "--lib", "--quiet", "--", "--exact"])
        .arg(SCHEMA.test)
        .env(OUT_VAR, dir.path());
    match reference_kubectl() {
        Ok(kubectl) => {
            cmd.arg(GOLDEN.test).env(KUBECTL_VAR, kubectl);
        }
        Err(why) => out.skipped.push(Skipped {
            paths: GOLDEN.files.iter().map(|(_, p)| PathBuf::from(p)).collect(),
            why,
        }),
    }
    // The tests' own lines (one per test binary) only matter when one fails.
    let line = crate::run::command_line(&cmd);
    eprintln!("$ {OUT_VAR}={} {line}", dir.path().display());
    let output = cmd
        .stdout(Stdio::piped())
        .output()
        .with_context(|| format!("cannot run `{line}`"))?;
    if !output.status.success() {
        bail!(
            "the generator tests failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout).trim_end()
        );
    }
    let skipped: Vec<&Path> = out
        .skipped
        .iter()
        .flat_map(|s| s.paths.iter().map(PathBuf::as_path))
        .collect();
    let mut generated = Vec::new();
    for generator in [SCHEMA, GOLDEN] {
        for (name, path) in generator.files {
            if skipped.contains(&Path::new(path)) {
                continue;
            }
            let written = dir.path().join(name);
            let contents = std::fs::read(&written).with_context(|| {
                format!(
                    "{} wrote no {name} (is its `{OUT_VAR}` branch gone?)",
                    generator.test
                )
            })?;
            generated.push(Generated {
                path: PathBuf::from(path),
                contents,
            });
        }
    }
    out.files.extend(generated);
    Ok(())
}

/// The reference kubectl (the current release's, which `cargo xtask testenv` builds), or
/// why there is none. Not PATH's: another release prints other YAML.
fn reference_kubectl() -> Result<PathBuf, String> {
    use localcluster::{Binaries, Release};
    let binaries = Binaries::locate(Release::Current).map_err(|e| {
        format!("the reference kubectl is not built here ({e}); `cargo xtask testenv` builds it")
    })?;
    binaries
        .kubectl
        .ok_or_else(|| "KUBEBUILDER_ASSETS has no kubectl, the reference one".to_string())
}

#[cfg(test)]
mod tests;
