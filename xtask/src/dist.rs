//! `cargo xtask dist`: release archives, krew manifests and checksums.
//!
//! 1. Build the plugins (release profile: size-optimised, LTO, stripped) for the host
//!    and for every declared target whose standard library is installed
//!    ([`crate::targets`]), and report each binary's size.
//! 2. Pack one archive per target ([`crate::archive`]): the three binaries,
//!    LICENSE and THIRD-PARTY-NOTICES (the licences of everything linked into them,
//!    [`crate::notices`]), reproducibly.
//! 3. Write one krew manifest per plugin from the archives present in the output
//!    directory (so a release job can collect the archives of every runner and run
//!    `dist --no-build` once), with the sha256 of those very files; `sha256sums.txt`.
//!
//! The krew-release-bot templates in `.krew/` come from the same metadata
//! ([`templates`]); `cargo xtask codegen` writes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::archive;
use crate::flags;
use crate::krew_manifest::{self as render, PlatformEntry, Source};
use crate::metadata::{self, PROJECT, Workspace};
use crate::targets::{self, Target};

/// What `dist` produced.
#[derive(Debug)]
pub struct Dist {
    pub out: PathBuf,
    /// `plugin name → manifest path`.
    pub manifests: BTreeMap<String, PathBuf>,
}

/// The default output directory.
pub fn default_out() -> PathBuf {
    crate::paths::target_dir().join("dist")
}

pub fn run(flags: &flags::Dist) -> anyhow::Result<()> {
    let dist = dist(flags)?;
    eprintln!("\ndist: manifests in {}:", dist.out.join("krew").display());
    for path in dist.manifests.values() {
        eprintln!("  {}", path.display());
    }
    eprintln!(
        "check them with `cargo xtask krew-check {}`",
        dist.out.display()
    );
    Ok(())
}

/// Builds, packs and writes the manifests as `flags` say.
pub fn dist(flags: &flags::Dist) -> anyhow::Result<Dist> {
    let ws = metadata::load()?;
    let out = flags.out.clone().unwrap_or_else(default_out);
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    if !flags.no_build {
        let host = targets::host_triple()?;
        for (target, cross) in select_targets(&flags.targets, &host)? {
            if !flags.prebuilt {
                build(&ws, &target, cross, &flags.profile, flags.cargo.as_deref())?;
            }
            pack(&ws, &target, cross, &flags.profile, &out)?;
        }
    }
    let base_url = flags
        .base_url
        .clone()
        .unwrap_or_else(|| ws.default_base_url());
    let manifests = write_manifests(&ws, &out, &base_url)?;
    Ok(Dist { out, manifests })
}

/// The targets to build: those asked for, or the host plus every declared target
/// whose standard library is installed. The flag says whether to pass `--target`.
fn select_targets(asked: &[String], host: &str) -> anyhow::Result<Vec<(Target, bool)>> {
    let known = |triple: &str| {
        Target::from_triple(triple).with_context(|| {
            format!(
                "{triple}: not a platform krew knows (linux/darwin/windows on x86_64/aarch64/…)"
            )
        })
    };
    if !asked.is_empty() {
        return asked.iter().map(|t| Ok((known(t)?, t != host))).collect();
    }
    let host_target = known(host)?;
    let mut chosen = Vec::new();
    for triple in targets::RELEASE {
        if triple == host || targets::std_installed(triple) {
            chosen.push((known(triple)?, triple != host));
        } else {
            eprintln!(
                "dist: skipping {triple} (its standard library is not installed here; the release workflow builds it)"
            );
        }
    }
    // The host build stands in for its platform when the release target for it
    // cannot be built here (e.g. a glibc host without the musl target).
    if !chosen
        .iter()
        .any(|(t, _)| (t.os, t.arch) == (host_target.os, host_target.arch))
    {
        chosen.insert(0, (host_target, false));
    }
    Ok(chosen)
}

fn build(
    ws: &Workspace,
    target: &Target,
    cross: bool,
    profile: &str,
    cargo: Option<&str>,
) -> anyhow::Result<()> {
    let bins: Vec<&str> = ws.plugins.iter().map(|p| p.bin.as_str()).collect();
    let started = std::time::Instant::now();
    for mut cmd in crate::release::build_commands(cargo, &bins, &target.triple, cross, profile) {
        crate::run::run(&mut cmd)?;
    }
    eprintln!(
        "dist: built {} ({profile}) in {:.0?}",
        target.triple,
        started.elapsed()
    );
    Ok(())
}

/// The fixed modification time of archive entries: `SOURCE_DATE_EPOCH` (the
/// reproducible-builds convention), else the time of the HEAD commit, else 0.
fn source_date_epoch() -> u64 {
    if let Some(epoch) = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        return epoch;
    }
    let root = crate::paths::project_root();
    crate::run::output(
        "git",
        &["-C", &root.to_string_lossy(), "log", "-1", "--format=%ct"],
    )
    .and_then(|s| s.trim().parse().ok())
    .unwrap_or(0)
}

fn pack(
    ws: &Workspace,
    target: &Target,
    cross: bool,
    profile: &str,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let bin_dir = targets::bin_dir(
        &crate::paths::target_dir(),
        cross.then_some(target.triple.as_str()),
        profile,
    );
    let license_path = crate::paths::project_root().join("LICENSE");
    let mut files = vec![archive::File {
        name: "LICENSE".into(),
        contents: std::fs::read(&license_path)
            .with_context(|| format!("cannot read {}", license_path.display()))?,
        executable: false,
    }];
    let bins: Vec<&str> = ws.plugins.iter().map(|p| p.bin.as_str()).collect();
    files.push(archive::File {
        name: "THIRD-PARTY-NOTICES".into(),
        contents: crate::notices::third_party(&bins, &target.triple)?.into_bytes(),
        executable: false,
    });
    let mut over = Vec::new();
    for plugin in &ws.plugins {
        let name = format!("{}{}", plugin.bin, target.exe_suffix());
        let path = bin_dir.join(&name);
        let contents =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        if profile == "release" {
            // The size budget (`cargo xtask size`), checked where every release target is built: a
            // release runner refuses to pack a binary over it (`cargo xtask size`
            // measures the same build here).
            let budget = crate::size::budget(&target.triple);
            eprintln!(
                "dist: {}",
                crate::size::line(&name, contents.len() as u64, budget)
            );
            if contents.len() as u64 > budget {
                over.push(name.clone());
            }
        } else {
            eprintln!(
                "dist: {:<32} {:>10}",
                name,
                crate::size::human(contents.len() as u64)
            );
        }
        files.push(archive::File {
            name,
            contents,
            executable: true,
        });
    }
    if !over.is_empty() {
        anyhow::bail!(
            "not packing {}: over the {} budget: {}",
            target.triple,
            crate::size::human(crate::size::budget(&target.triple)),
            over.join(", ")
        );
    }
    let bytes = archive::write(target.format(), &files, source_date_epoch())?;
    let path = out.join(ws.archive_name(&target.triple, target.format().extension()));
    std::fs::write(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "dist: {:<32} {:>10}  sha256 {}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        crate::size::human(bytes.len() as u64),
        archive::sha256_hex(&bytes)
    );
    Ok(path)
}

/// The archives of this version in `out`, one per os/arch (a declared release target
/// wins over another triple for the same platform), in a stable order.
pub fn archives(ws: &Workspace, out: &Path) -> anyhow::Result<Vec<(Target, PathBuf)>> {
    let prefix = format!("{PROJECT}-{}-", ws.tag());
    let mut found: BTreeMap<(usize, &str, &str), (Target, PathBuf)> = BTreeMap::new();
    for entry in std::fs::read_dir(out)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let Some(triple) = rest
            .strip_suffix(".tar.gz")
            .or_else(|| rest.strip_suffix(".zip"))
        else {
            continue;
        };
        let Some(target) = Target::from_triple(triple) else {
            continue;
        };
        if !name.ends_with(target.format().extension()) {
            continue;
        }
        let order = krew::PLATFORMS
            .iter()
            .position(|p| *p == (target.os, target.arch))
            .unwrap_or(usize::MAX);
        let key = (order, target.os, target.arch);
        let better = match found.get(&key) {
            None => true,
            Some((existing, _)) => target.is_release() && !existing.is_release(),
        };
        if better {
            found.insert(key, (target, entry.path()));
        }
    }
    Ok(found.into_values().collect())
}

fn write_manifests(
    ws: &Workspace,
    out: &Path,
    base_url: &str,
) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    let archives = archives(ws, out)?;
    if archives.is_empty() {
        bail!(
            "no archives of {} in {}; run `cargo xtask dist` without --no-build",
            ws.tag(),
            out.display()
        );
    }
    let mut sums = String::new();
    let mut hashed = Vec::new();
    for (target, path) in &archives {
        let bytes = std::fs::read(path)?;
        let sha = archive::sha256_hex(&bytes);
        let file = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        sums.push_str(&format!("{sha}  {file}\n"));
        hashed.push((target, file, sha));
    }
    std::fs::write(out.join("sha256sums.txt"), sums)?;
    let dir = out.join("krew");
    std::fs::create_dir_all(&dir)?;
    let mut written = BTreeMap::new();
    for plugin in &ws.plugins {
        let entries: Vec<PlatformEntry<'_>> = hashed
            .iter()
            .map(|(target, file, sha)| PlatformEntry {
                target,
                source: Source::Archive {
                    uri: format!("{}/{file}", base_url.trim_end_matches('/')),
                    sha256: sha,
                },
            })
            .collect();
        let text = render::manifest(plugin, &ws.tag(), &entries);
        let path = dir.join(format!("{}.yaml", plugin.name));
        std::fs::write(&path, text)?;
        written.insert(plugin.name.clone(), path);
    }
    Ok(written)
}

/// The release-bot templates, as they should be in `.krew/`.
pub fn templates(ws: &Workspace) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let release: Vec<Target> = targets::RELEASE
        .iter()
        .map(|t| Target::from_triple(t).with_context(|| format!("{t}: unknown platform")))
        .collect::<anyhow::Result<_>>()?;
    let dir = crate::paths::project_root().join(".krew");
    Ok(ws
        .plugins
        .iter()
        .map(|p| {
            (
                dir.join(format!("{}.yaml", p.name)),
                render::release_bot_template(ws, p, &release),
            )
        })
        .collect())
}
