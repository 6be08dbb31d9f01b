//! Reading an archive the way krew's downloader does: the format is sniffed from the
//! content (gzip or zip magic, like Go's `http.DetectContentType`), tar entries must be
//! regular files or directories, and no path may contain `..` or start with `/` or `\`.

use std::io::{Cursor, Read};

use anyhow::Context;

/// An entry read back from an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: EntryKind,
    /// Unix permission bits (`0` when the archive has none, e.g. a zip from Windows).
    pub mode: u32,
    pub contents: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    /// Anything else (symlink, hard link, device…), with its tar type byte.
    Other(u8),
}

/// Reads an archive the way krew's downloader does, failing with krew's reasons.
pub fn read(bytes: &[u8]) -> anyhow::Result<Vec<Entry>> {
    let entries = match sniff(bytes) {
        "application/x-gzip" => read_tar_gz(bytes)?,
        "application/zip" => read_zip(bytes)?,
        other => {
            anyhow::bail!("mime type {other:?} for archive file is not a supported archive format")
        }
    };
    for entry in &entries {
        suspicious_path(&entry.name)?;
    }
    Ok(entries)
}

/// The MIME type Go's `http.DetectContentType` reports for the archive types krew
/// accepts; anything else is reported by a coarse name.
pub fn sniff(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x1f\x8b\x08") {
        "application/x-gzip"
    } else if bytes.starts_with(b"PK\x03\x04") {
        "application/zip"
    } else {
        // Go has no rule for plain tar, xz or zstd: they all come out as octet-stream.
        "application/octet-stream"
    }
}

fn suspicious_path(path: &str) -> anyhow::Result<()> {
    if path.contains("..") {
        anyhow::bail!("refusing to unpack archive with suspicious entry {path:?}");
    }
    if path.starts_with('/') || path.starts_with('\\') {
        anyhow::bail!("refusing to unpack archive with absolute entry {path:?}");
    }
    Ok(())
}

fn read_tar_gz(bytes: &[u8]) -> anyhow::Result<Vec<Entry>> {
    let gz = flate2::read::GzDecoder::new(bytes);
    let mut tar = tar::Archive::new(gz);
    let mut out = Vec::new();
    for entry in tar.entries().context("tar extraction error")? {
        let mut entry = entry.context("tar extraction error")?;
        let header = entry.header();
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let type_byte = header.entry_type().as_byte();
        let mode = header.mode().unwrap_or(0);
        // Go's tar reader folds pax headers into the next entry; krew skips the
        // global one by name.
        if name == "pax_global_header" || matches!(type_byte, b'g' | b'x') {
            continue;
        }
        let kind = match type_byte {
            b'0' | b'\0' => EntryKind::File,
            b'5' => EntryKind::Dir,
            other => EntryKind::Other(other),
        };
        let mut contents = Vec::new();
        if kind == EntryKind::File {
            entry.read_to_end(&mut contents)?;
        }
        out.push(Entry {
            name,
            kind,
            mode,
            contents,
        });
    }
    Ok(out)
}

fn read_zip(bytes: &[u8]) -> anyhow::Result<Vec<Entry>> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))?;
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut file = zip.by_index(i)?;
        let name = file.name()?.into_owned();
        let kind = if file.is_dir() {
            EntryKind::Dir
        } else if file.is_symlink() {
            EntryKind::Other(b'2')
        } else {
            EntryKind::File
        };
        let mode = file.unix_mode().unwrap_or(0) & 0o7777;
        let mut contents = Vec::new();
        if kind == EntryKind::File {
            file.read_to_end(&mut contents)?;
        }
        out.push(Entry {
            name,
            kind,
            mode,
            contents,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn plain_tar_is_not_a_supported_format() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_ustar();
        h.set_size(1);
        h.set_mode(0o755);
        tar.append_data(&mut h, "x", &b"x"[..]).unwrap();
        let bytes = tar.into_inner().unwrap();
        let err = super::read(&bytes).unwrap_err().to_string();
        assert_eq!(
            err,
            "mime type \"application/octet-stream\" for archive file is not a supported archive format"
        );
    }
}
