//! The manifests `render` writes, through the `krew` package's checks (here, where the
//! manifests and archives are written): krew-check against a valid manifest and archive, then against each way krew (or
//! krew-index CI) rejects a manifest or an archive: every corruption must fail with
//! krew's reason.

use super::{self as render, PlatformEntry, Source};
use crate::archive::{self, File};
use crate::metadata::Plugin;
use crate::targets::{Format, Target};
use krew::check::check;

fn plugin() -> Plugin {
    Plugin {
        name: "rolling-update".into(),
        bin: "kubectl-rolling_update".into(),
        short_description: "Rolling update of a ReplicationController".into(),
        description: "Brings back kubectl rolling-update with the semantics of kubectl 1.17."
            .into(),
        caveats: None,
        homepage: "https://github.com/kubeplug/kubeplug".into(),
    }
}

fn files(exe: &str) -> Vec<File> {
    vec![
        File {
            name: format!("kubectl-rolling_update{exe}"),
            contents: b"#!/bin/sh\nexit 0\n".to_vec(),
            executable: true,
        },
        File {
            name: "kubectl-run_pod".into(),
            contents: b"#!/bin/sh\n".to_vec(),
            executable: true,
        },
        File {
            name: "LICENSE".into(),
            contents: b"Apache License 2.0".to_vec(),
            executable: false,
        },
        File {
            name: "THIRD-PARTY-NOTICES".into(),
            contents: b"Third-party notices".to_vec(),
            executable: false,
        },
    ]
}

struct Fixture {
    linux: Vec<u8>,
    windows: Vec<u8>,
    text: String,
}

const LINUX_URI: &str =
    "https://example.com/v0.1.0/kubeplug-v0.1.0-x86_64-unknown-linux-musl.tar.gz";
const WINDOWS_URI: &str = "https://example.com/v0.1.0/kubeplug-v0.1.0-x86_64-pc-windows-msvc.zip";

fn fixture_with(linux: Vec<u8>) -> Fixture {
    let windows = archive::write(Format::Zip, &files(".exe"), 1_700_000_000).unwrap();
    let linux_target = Target::from_triple("x86_64-unknown-linux-musl").unwrap();
    let windows_target = Target::from_triple("x86_64-pc-windows-msvc").unwrap();
    let linux_sha = archive::sha256_hex(&linux);
    let windows_sha = archive::sha256_hex(&windows);
    let text = render::manifest(
        &plugin(),
        "v0.1.0",
        &[
            PlatformEntry {
                target: &linux_target,
                source: Source::Archive {
                    uri: LINUX_URI.into(),
                    sha256: &linux_sha,
                },
            },
            PlatformEntry {
                target: &windows_target,
                source: Source::Archive {
                    uri: WINDOWS_URI.into(),
                    sha256: &windows_sha,
                },
            },
        ],
    );
    Fixture {
        linux,
        windows,
        text,
    }
}

fn fixture() -> Fixture {
    fixture_with(archive::write(Format::TarGz, &files(""), 1_700_000_000).unwrap())
}

impl Fixture {
    fn check_as(&self, file: &str, text: &str) -> Result<krew::check::Report, String> {
        let archive = |uri: &str| match uri {
            LINUX_URI => Some(self.linux.clone()),
            WINDOWS_URI => Some(self.windows.clone()),
            _ => None,
        };
        check(file, text, &archive)
    }

    fn check(&self, text: &str) -> Result<krew::check::Report, String> {
        self.check_as("rolling-update.yaml", text)
    }

    /// The text with `from` replaced by `to` (which must change something).
    fn corrupt(&self, from: &str, to: &str) -> String {
        assert!(
            self.text.contains(from),
            "fixture has no {from:?}:\n{}",
            self.text
        );
        self.text.replacen(from, to, 1)
    }
}

#[track_caller]
fn rejected(result: Result<krew::check::Report, String>, reason: &str) {
    match result {
        Ok(_) => panic!("accepted, expected: {reason}"),
        Err(e) => assert!(e.contains(reason), "expected {reason:?} in:\n{e}"),
    }
}

#[test]
fn the_generated_manifest_passes_without_warnings() {
    let f = fixture();
    let report = f.check(&f.text).unwrap();
    assert_eq!(report.platforms, ["linux/amd64", "windows/amd64"]);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Layout details krew-index reviewers look at.
    assert!(f.text.contains("  version: v0.1.0\n"));
    assert!(f.text.contains("    bin: \"kubectl-rolling_update.exe\"\n"));
    assert!(f.text.contains("kubectl_complete-rolling_update"));
}

#[test]
fn wrong_api_version_and_kind() {
    let f = fixture();
    rejected(
        f.check(&f.corrupt("v1alpha2", "v1beta1")),
        "plugin manifest has apiVersion=\"krew.googlecontainertools.github.com/v1beta1\", not supported in this version of krew",
    );
    rejected(
        f.check(&f.corrupt("kind: Plugin", "kind: Plugins")),
        "plugin manifest has kind=\"Plugins\", but only \"Plugin\" is supported",
    );
}

#[test]
fn names() {
    let f = fixture();
    rejected(
        f.check_as("rolling-update.yml", &f.text),
        "expected manifest extension \".yaml\" but found \".yml\"",
    );
    rejected(
        f.check_as("rolling_upd.yaml", &f.text),
        "plugin should be named \"rolling_upd\", not \"rolling-update\"",
    );
    rejected(
        f.check_as(
            "rolling update.yaml",
            &f.corrupt("name: rolling-update", "name: rolling update"),
        ),
        "the plugin name \"rolling update\" is not allowed, must match \"^[\\\\w-]+$\"",
    );
    rejected(
        f.check_as("Con.yaml", &f.corrupt("name: rolling-update", "name: Con")),
        "the plugin name \"Con\" is not allowed",
    );
}

#[test]
fn short_description() {
    let f = fixture();
    rejected(
        f.check(&f.corrupt(
            "shortDescription: \"Rolling update of a ReplicationController\"",
            "shortDescription: \"\"",
        )),
        "plugin validation error: should have a short description",
    );
    rejected(
        f.check(&f.corrupt(
            "of a ReplicationController\"",
            "of a\\nReplicationController\"",
        )),
        "should not have line breaks in short description",
    );
}

#[test]
fn versions() {
    let f = fixture();
    rejected(
        f.check(&f.corrupt("  version: v0.1.0", "  version: \"\"")),
        "should have a version specified",
    );
    rejected(
        f.check(&f.corrupt("  version: v0.1.0", "  version: 0.1.0")),
        "failed to parse plugin version: version string \"0.1.0\" does not start with 'v'",
    );
    rejected(
        f.check(&f.corrupt("  version: v0.1.0", "  version: v0.1")),
        "failed to parse plugin version: could not parse \"v0.1\" as version",
    );
}

#[test]
fn platforms_are_required() {
    let f = fixture();
    let head = f.text.split("  platforms:\n").next().unwrap();
    rejected(f.check(head), "should have a platform specified");
    rejected(
        f.check(&format!("{head}  platforms: []\n")),
        "should have a platform specified",
    );
}

#[test]
fn uri_sha256_and_bin() {
    let f = fixture();
    rejected(
        f.check(&f.corrupt(&format!("uri: \"{LINUX_URI}\""), "uri: \"\"")),
        "`uri` has to be set",
    );
    let sha = archive::sha256_hex(&f.linux);
    rejected(
        f.check(&f.corrupt(&format!("sha256: {sha}"), "sha256: \"\"")),
        "`sha256` sum has to be set",
    );
    rejected(
        f.check(&f.corrupt(&sha, &sha.to_ascii_uppercase())),
        &format!(
            "`sha256` value {} is not valid, must match pattern ^[a-f0-9]{{64}}$",
            sha.to_ascii_uppercase()
        ),
    );
    rejected(
        f.check(&f.corrupt(&sha, &sha[..40])),
        "is not valid, must match pattern",
    );
    rejected(
        f.check(&f.corrupt("    bin: \"kubectl-rolling_update\"", "    bin: \"\"")),
        "`bin` has to be set",
    );
}

#[test]
fn files_operations() {
    let f = fixture();
    let files = "    files:\n    - from: \"kubectl-rolling_update\"\n      to: \".\"\n    - from: LICENSE\n      to: \".\"\n    - from: THIRD-PARTY-NOTICES\n      to: \".\"\n";
    rejected(
        f.check(&f.corrupt(files, "    files: []\n")),
        "`files` is invalid: `files` has to be unspecified or non-empty",
    );
    rejected(
        f.check(&f.corrupt("- from: \"kubectl-rolling_update\"", "- from: \"\"")),
        "`files` is invalid: `from` field has to be set",
    );
    rejected(
        f.check(&f.corrupt(
            "- from: \"kubectl-rolling_update\"\n      to: \".\"",
            "- from: \"kubectl-rolling_update\"\n      to: \"\"",
        )),
        "`files` is invalid: `to` field has to be set",
    );
}

#[test]
fn selectors() {
    let f = fixture();
    let linux = "  - selector:\n      matchLabels:\n        os: linux\n        arch: amd64\n";
    rejected(
        f.check(&f.corrupt(linux, "  - selector: null\n")),
        "invalid platform selector: nil selector is not supported",
    );
    rejected(
        f.check(&f.corrupt(linux, "  - selector: {}\n")),
        "invalid platform selector: empty selector is not supported",
    );
    rejected(
        f.check(&f.corrupt("        os: linux\n", "        distro: debian\n")),
        "invalid platform selector: key \"distro\" not supported",
    );
    rejected(
        f.check(&f.corrupt(linux, "  - selector:\n      matchLabels: {}\n      matchExpressions: [{key: os, operator: In, values: [linux]}]\n")),
        "invalid platform selector: `matchLabels` specified but empty",
    );
    rejected(
        f.check(&f.corrupt("        os: linux\n", "        os: plan9\n")),
        "spec.platform[0]'s selector",
    );
    // Two entries for linux/amd64 (the second one by expression).
    rejected(
        f.check(&f.corrupt(
            "      matchLabels:\n        os: windows\n        arch: amd64\n",
            "      matchExpressions: [{key: os, operator: In, values: [linux, windows]}, {key: arch, operator: In, values: [amd64]}]\n",
        )),
        "overlapping platform selectors found: multiple spec.platforms (at indexes [0, 1]) have overlapping selectors that select os=linux/arch=amd64",
    );
}

#[test]
fn checksum_mismatch() {
    let f = fixture();
    let other = archive::sha256_hex(b"something else");
    let sha = archive::sha256_hex(&f.linux);
    rejected(
        f.check(&f.corrupt(&sha, &other)),
        &format!(
            "spec.platforms[0] failed to install: checksum does not match, want: {other}, got {sha}"
        ),
    );
}

/// Builds a tar.gz by hand (the writer refuses to make bad archives).
fn raw_tar_gz(entries: &[(&str, tar::EntryType, u32, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, kind, mode, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(*kind);
        h.set_mode(*mode);
        h.set_size(data.len() as u64);
        if *kind == tar::EntryType::Symlink {
            h.set_link_name("kubectl-run_pod").unwrap();
        }
        // set_path refuses `..`, which is the point of one of these archives.
        let bytes = name.as_bytes();
        h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
        h.set_cksum();
        tar.append(&h, *data).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

const BIN: &[u8] = b"#!/bin/sh\n";

#[test]
fn archive_rules() {
    use tar::EntryType::{Regular, Symlink};
    let cases: [(Vec<u8>, &str); 7] = [
        (
            raw_tar_gz(&[
                ("kubectl-rolling_update", Symlink, 0o777, b""),
                ("LICENSE", Regular, 0o644, b"L"),
                ("THIRD-PARTY-NOTICES", Regular, 0o644, b"N"),
            ]),
            "unable to handle file type 50 for \"kubectl-rolling_update\" in tar",
        ),
        (
            raw_tar_gz(&[
                ("../kubectl-rolling_update", Regular, 0o755, BIN),
                ("LICENSE", Regular, 0o644, b"L"),
                ("THIRD-PARTY-NOTICES", Regular, 0o644, b"N"),
            ]),
            "refusing to unpack archive with suspicious entry \"../kubectl-rolling_update\"",
        ),
        (
            raw_tar_gz(&[
                ("/kubectl-rolling_update", Regular, 0o755, BIN),
                ("LICENSE", Regular, 0o644, b"L"),
                ("THIRD-PARTY-NOTICES", Regular, 0o644, b"N"),
            ]),
            "refusing to unpack archive with absolute entry \"/kubectl-rolling_update\"",
        ),
        (
            raw_tar_gz(&[
                ("kubectl-rolling_update", Regular, 0o644, BIN),
                ("LICENSE", Regular, 0o644, b"L"),
                ("THIRD-PARTY-NOTICES", Regular, 0o644, b"N"),
            ]),
            "bin \"kubectl-rolling_update\" is not executable in the archive",
        ),
        (
            raw_tar_gz(&[
                ("kubectl-rolling_update", Regular, 0o755, BIN),
                ("README", Regular, 0o644, b"R"),
            ]),
            "no files in the plugin archive matched the glob pattern=LICENSE",
        ),
        (
            raw_tar_gz(&[
                ("kubectl-run_pod", Regular, 0o755, BIN),
                ("LICENSE", Regular, 0o644, b"L"),
                ("THIRD-PARTY-NOTICES", Regular, 0o644, b"N"),
            ]),
            "no files in the plugin archive matched the glob pattern=kubectl-rolling_update",
        ),
        (
            {
                // A plain (uncompressed) tar: krew sniffs the content, not the name.
                let mut t = tar::Builder::new(Vec::new());
                let mut h = tar::Header::new_ustar();
                h.set_size(BIN.len() as u64);
                h.set_mode(0o755);
                t.append_data(&mut h, "kubectl-rolling_update", BIN)
                    .unwrap();
                t.into_inner().unwrap()
            },
            "mime type \"application/octet-stream\" for archive file is not a supported archive format",
        ),
    ];
    for (bytes, reason) in cases {
        let f = fixture_with(bytes);
        rejected(f.check(&f.text), reason);
    }
}

#[test]
fn a_license_must_be_extracted_and_moves_must_be_clean() {
    let f = fixture();
    // Only the binary is extracted: no license reaches the install directory.
    rejected(
        f.check(&f.corrupt("    - from: LICENSE\n      to: \".\"\n", "")),
        "no license file (LICENSE, LICENSE.txt, COPYING, …) was extracted",
    );
    rejected(
        f.check(&f.corrupt(
            "    - from: LICENSE\n      to: \".\"\n",
            "    - from: LICENSE\n      to: \"./\"\n",
        )),
        "the provided path is not clean, \"./\" should be \".\"",
    );
    // `bin` must exist after the moves.
    rejected(
        f.check(&f.corrupt(
            "    bin: \"kubectl-rolling_update\"",
            "    bin: \"bin/kubectl-rolling_update\"",
        )),
        "bin \"bin/kubectl-rolling_update\" not found in the installation directory after the file moves",
    );
}

#[test]
fn windows_bins_must_be_exe() {
    let f = fixture();
    rejected(
        f.check(&f.corrupt(
            "    bin: \"kubectl-rolling_update.exe\"",
            "    bin: \"LICENSE\"",
        )),
        "bin \"LICENSE\" on windows must be an .exe",
    );
}

#[test]
fn unknown_fields_are_ignored_like_krew_does() {
    let f = fixture();
    let text = f.corrupt("  caveats: |", "  caveat: |");
    f.check(&text).unwrap();
}

#[test]
fn lints_flag_long_short_descriptions() {
    let f = fixture();
    let report = f
        .check(&f.corrupt(
            "Rolling update of a ReplicationController\"",
            "Rolling update of a ReplicationController, one pod at a time.\"",
        ))
        .unwrap();
    assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
}

#[test]
fn release_bot_template_has_a_platform_per_release_target() {
    let ws = crate::metadata::Workspace {
        version: "0.1.0".into(),
        repository: "https://github.com/kubeplug/kubeplug".into(),
        plugins: vec![plugin()],
    };
    let targets: Vec<Target> = crate::targets::RELEASE
        .iter()
        .map(|t| Target::from_triple(t).unwrap())
        .collect();
    let text = render::release_bot_template(&ws, &plugin(), &targets);
    assert_eq!(text.matches("{{addURIAndSha").count(), 5);
    assert!(text.contains(
        "    {{addURIAndSha \"https://github.com/kubeplug/kubeplug/releases/download/{{ .TagName }}/kubeplug-{{ .TagName }}-aarch64-apple-darwin.tar.gz\" .TagName }}\n"
    ));
    assert!(text.contains("  version: {{ .TagName }}\n"));
}
