//! The one way the on-disk caches (the discovery cache, the OpenAPI v2 document and
//! its ETag, the OpenAPI v3 answers) are written, so that every one of them is safe
//! against the runs that read and write it at the same time.
//!
//! A file is written whole to a temporary file in its own directory, then renamed
//! over its name: a rename within one file system is atomic, so a concurrent reader
//! sees the old file or the new one, never half a file (as client-go's disk cache
//! writes). The temporary file must be in the same directory, since a rename across
//! file systems (`/tmp` is often a tmpfs) is a copy. A cache that cannot be written
//! only costs a future download: the failure is logged at `-v=4` and otherwise
//! ignored.

use std::path::Path;

/// Writes `bytes` to `path` atomically (see the module docs), creating its directory;
/// a failure is logged as `could not write the {what}`. Returns whether it was
/// written.
pub(crate) fn store(path: &Path, bytes: &[u8], what: &str) -> bool {
    let result = (|| -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut tmp, bytes)?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    })();
    if let Err(e) = &result {
        tracing::debug!(path = %path.display(), error = %e, "could not write the {what}");
    }
    result.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_its_directory_made() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a/b/serverresources.json");
        assert!(store(&path, b"first", "test cache"));
        assert!(store(&path, b"second", "test cache"));
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        // Nothing is left beside it.
        let names: Vec<_> = std::fs::read_dir(path.parent().expect("parent"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["serverresources.json"]);
    }

    #[test]
    fn a_failure_is_reported_not_raised() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A file where the directory should be.
        std::fs::write(dir.path().join("a"), b"").expect("write");
        assert!(!store(&dir.path().join("a/b.json"), b"x", "test cache"));
    }
}
