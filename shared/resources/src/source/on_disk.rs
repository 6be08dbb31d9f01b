//! Large manifest files read from disk at every walk instead of held in memory.
//!
//! The Builder walks its inputs more than once (a survey for discovery and the schema,
//! then the command's own passes), and a stream held as bytes costs its whole size for
//! the life of the command: a 41 MB file of 20,000 ConfigMaps was most of create-file's
//! 50.8 MB peak, against kubectl's 66.9 MB (kubectl's `StreamVisitor` reads a file one
//! document at a time and never holds it whole). A file of [`STREAM_ABOVE`] bytes or more
//! that is plain YAML text is therefore read once at the start ([`scan`], which checks
//! what the in-memory decoder would decide about the text as a whole) and then again,
//! one document at a time, at every walk ([`Parts`]). Anything else — JSON, a
//! byte-order mark, UTF-16, invalid UTF-8, a control character, a small file — is
//! read into memory as before, so that decoding it is unchanged.
//!
//! The split is goyaml's (`goyaml::separator`, the rule of apimachinery's
//! `YAMLReader`) applied line by line, so both paths yield the same documents on the
//! same lines. A file that changes between two walks (its length or modification time
//! differs from the scan's) is an error of that walk, not a different set of objects.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Files this large or larger are read from disk at every walk (when [`scan`] finds them
/// plain YAML). Small files stay in memory: a directory of many small manifests
/// (the usual input) keeps one read per file, and their bytes are few.
pub(crate) const STREAM_ABOVE: u64 = 1 << 20;

/// A file whose documents are read from disk at every walk.
#[derive(Debug, Clone)]
pub(crate) struct OnDisk {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    /// Whether the text holds the word `List` anywhere (`builder::may_hold_lists`).
    pub(crate) mentions_list: bool,
}

/// What [`scan`] found: a file to read from disk, or one whose text needs the
/// in-memory decoder (read it whole).
pub(crate) enum Scanned {
    OnDisk(OnDisk),
    InMemory,
}

/// Whether the file opened as `file` is worth reading from disk: a regular file of
/// at least `above` bytes and at most `limit` (a pipe or a device is read whole, once).
pub(crate) fn large_enough(file: &std::fs::File, above: u64, limit: u64) -> bool {
    file.metadata()
        .is_ok_and(|m| m.is_file() && (above..=limit).contains(&m.len()))
}

/// Reads the regular file `path` (opened as `file`) once, line by line, and decides
/// whether its documents can be read from disk at every walk: valid UTF-8, no
/// character that go-yaml's reader refuses (`goyaml::text::is_control`), and not JSON (whose first non-blank
/// character is `{`). Errors as reading the file whole gives them (the same bound and
/// its words).
pub(crate) fn scan(path: &Path, file: std::fs::File, limit: u64) -> std::io::Result<Scanned> {
    let meta = file.metadata()?;
    let mut reader = BufReader::new(file.take(limit.saturating_add(1)));
    let mut line = Vec::new();
    let (mut len, mut mentions_list) = (0u64, false);
    let mut blank_so_far = true;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        len += line.len() as u64;
        if len > limit {
            return Err(std::io::Error::other(format!(
                "the document is larger than the limit of {limit} bytes"
            )));
        }
        // A line ends at `\n`, which never falls inside a UTF-8 sequence, so each
        // line checks on its own.
        let Ok(text) = std::str::from_utf8(&line) else {
            return Ok(Scanned::InMemory);
        };
        // A byte-order mark is one of them (`U+FEFF`): a file that starts with one
        // is read whole too, where the decoder drops it.
        if text.contains(goyaml::text::is_control) {
            return Ok(Scanned::InMemory);
        }
        if blank_so_far {
            let rest = text.trim_start();
            if rest.starts_with('{') {
                return Ok(Scanned::InMemory);
            }
            blank_so_far = rest.is_empty();
        }
        mentions_list |= text.contains("List");
    }
    // What was read is what the walks must find again.
    if len != meta.len() {
        return Ok(Scanned::InMemory);
    }
    Ok(Scanned::OnDisk(OnDisk {
        path: path.to_path_buf(),
        len,
        modified: meta.modified().ok(),
        mentions_list,
    }))
}

impl OnDisk {
    /// The file's size, as scanned.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The file opened again for a walk, or why it cannot be: it is gone, or it is not
    /// the file [`scan`] read.
    pub(crate) fn open(&self) -> std::io::Result<Parts> {
        let file = std::fs::File::open(&self.path)?;
        let meta = file.metadata()?;
        if meta.len() != self.len || meta.modified().ok() != self.modified {
            return Err(std::io::Error::other("the file changed while it was read"));
        }
        Ok(Parts {
            reader: BufReader::new(file.take(self.len)),
            line: 0,
            done: false,
        })
    }
}

/// One part of a split stream: a document's first line and text, or the line and
/// text of a separator line that carries something (the stream ends there), or an
/// error reading the file (the stream ends there too).
pub(crate) enum Part {
    Document(usize, String),
    BadSeparator(usize, String),
    Failed(std::io::Error),
}

/// The parts of a file in order, read as the iterator is advanced: the split of
/// `goyaml::split_yaml`, line by line.
pub(crate) struct Parts {
    reader: BufReader<std::io::Take<std::fs::File>>,
    /// Lines read so far.
    line: usize,
    done: bool,
}

impl Iterator for Parts {
    type Item = Part;

    fn next(&mut self) -> Option<Part> {
        if self.done {
            return None;
        }
        let start_line = self.line + 1;
        let mut body = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            match self.reader.read_line(&mut line) {
                Ok(0) => {
                    // The last part, empty or not (an empty one is blank: skipped).
                    self.done = true;
                    return Some(Part::Document(start_line, body));
                }
                Ok(_) => {}
                Err(error) => {
                    self.done = true;
                    return Some(Part::Failed(error));
                }
            }
            self.line += 1;
            match goyaml::separator(&line) {
                None => body.push_str(&line),
                Some(Ok(())) => return Some(Part::Document(start_line, body)),
                Some(Err(rest)) => {
                    self.done = true;
                    return Some(Part::BadSeparator(self.line, rest.to_string()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
