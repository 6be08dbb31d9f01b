//! Release archives, written reproducibly (krew's reading of them is `krew::archive`):
//! flat archives (every file at the root), entries sorted by name, regular files only,
//! fixed owner (0/0, no names) and modification time, mode 0755 for
//! programs and 0644 for the rest, gzip header without a timestamp. The same inputs
//! give the same bytes, so the same commit gives the same sha256 — re-uploading a
//! rebuilt asset is what breaks krew installs with "checksum does not match".

use std::io::{Cursor, Write};

use anyhow::Context;
use flate2::Compression;
use sha2::{Digest, Sha256};

use crate::targets::Format;

/// A file to put in an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub name: String,
    pub contents: Vec<u8>,
    pub executable: bool,
}

/// Writes `files` as an archive of `format`, with `mtime` (seconds since the epoch)
/// on every entry.
pub fn write(format: Format, files: &[File], mtime: u64) -> anyhow::Result<Vec<u8>> {
    let mut files: Vec<&File> = files.iter().collect();
    files.sort_by(|a, b| a.name.cmp(&b.name));
    match format {
        Format::TarGz => write_tar_gz(&files, mtime),
        Format::Zip => write_zip(&files, mtime),
    }
}

fn mode(file: &File) -> u32 {
    if file.executable { 0o755 } else { 0o644 }
}

fn write_tar_gz(files: &[&File], mtime: u64) -> anyhow::Result<Vec<u8>> {
    // GzBuilder writes mtime 0 and OS "unknown" unless told otherwise: no host leaks in.
    let gz = flate2::GzBuilder::new().write(Vec::new(), Compression::best());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for file in files {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(file.contents.len() as u64);
        header.set_mode(mode(file));
        header.set_mtime(mtime);
        header.set_uid(0);
        header.set_gid(0);
        header.set_username("")?;
        header.set_groupname("")?;
        tar.append_data(&mut header, &file.name, file.contents.as_slice())
            .with_context(|| format!("adding {} to the archive", file.name))?;
    }
    let gz = tar.into_inner()?;
    Ok(gz.finish()?)
}

fn write_zip(files: &[&File], mtime: u64) -> anyhow::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let (y, mo, d, h, mi, s) = civil_time(mtime);
    let time = zip::DateTime::from_date_and_time(y, mo, d, h, mi, s).unwrap_or_default();
    for file in files {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(time)
            .unix_permissions(mode(file));
        zip.start_file(file.name.as_str(), options)?;
        zip.write_all(&file.contents)?;
    }
    Ok(zip.finish()?.into_inner())
}

/// Seconds since the epoch as a UTC calendar date and time, clamped to the zip range
/// (1980–2107). Hand-written (Howard Hinnant's days-to-civil) to avoid a date crate
/// for one conversion.
fn civil_time(secs: u64) -> (u16, u8, u8, u8, u8, u8) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    if year < 1980 {
        return (1980, 1, 1, 0, 0, 0);
    }
    if year > 2107 {
        return (2107, 12, 31, 23, 59, 58);
    }
    (
        year as u16,
        month,
        day,
        (rem / 3600) as u8,
        (rem / 60 % 60) as u8,
        (rem % 60) as u8,
    )
}

/// Lower-case hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use krew::archive::{EntryKind, read, sniff};

    fn files() -> Vec<File> {
        vec![
            File {
                name: "kubectl-run_pod".into(),
                contents: b"\x7fELF binary".to_vec(),
                executable: true,
            },
            File {
                name: "LICENSE".into(),
                contents: b"Apache License".to_vec(),
                executable: false,
            },
        ]
    }

    #[test]
    fn tar_gz_is_reproducible_sorted_and_keeps_modes() {
        let a = write(Format::TarGz, &files(), 1_700_000_000).unwrap();
        let mut reversed = files();
        reversed.reverse();
        let b = write(Format::TarGz, &reversed, 1_700_000_000).unwrap();
        assert_eq!(
            sha256_hex(&a),
            sha256_hex(&b),
            "input order does not matter"
        );
        let entries = read(&a).unwrap();
        let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["LICENSE", "kubectl-run_pod"]);
        assert_eq!(entries[0].mode, 0o644);
        assert_eq!(entries[1].mode, 0o755);
        assert_eq!(entries[1].contents, b"\x7fELF binary");
        assert!(entries.iter().all(|e| e.kind == EntryKind::File));
        // Owner and time are fixed in the headers.
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(a.as_slice()));
        for entry in tar.entries().unwrap() {
            let entry = entry.unwrap();
            let h = entry.header();
            assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
            assert_eq!(h.mtime().unwrap(), 1_700_000_000);
        }
    }

    #[test]
    fn zip_is_reproducible_and_keeps_unix_modes() {
        let a = write(Format::Zip, &files(), 1_700_000_000).unwrap();
        let b = write(Format::Zip, &files(), 1_700_000_000).unwrap();
        assert_eq!(a, b);
        assert_eq!(sniff(&a), "application/zip");
        let entries = read(&a).unwrap();
        assert_eq!(entries[1].name, "kubectl-run_pod");
        assert_eq!(entries[1].mode, 0o755);
    }

    #[test]
    fn civil_time_matches_known_dates() {
        assert_eq!(civil_time(1_700_000_000), (2023, 11, 14, 22, 13, 20));
        assert_eq!(civil_time(0), (1980, 1, 1, 0, 0, 0));
        assert_eq!(civil_time(951_782_400), (2000, 2, 29, 0, 0, 0));
    }
}
