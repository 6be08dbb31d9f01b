//! The inputs of `-f`/`-k`: kubectl's `FileVisitor` (files, directories, `-R`), stdin,
//! `URLVisitor` and `KustomizeVisitor`, each producing a named byte stream.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{ResourceError, UrlOptions, kustomize, url};

mod on_disk;

pub(crate) use on_disk::{OnDisk, Part};

/// The extensions read from directories (explicitly named files may have any).
const FILE_EXTENSIONS: [&str; 3] = ["json", "yaml", "yml"];

/// One input as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// `-f -`.
    Stdin,
    /// `-f http://…` or `https://…`.
    Url(http::Uri),
    /// `-f PATH`, a file or a directory.
    Path { path: PathBuf, recursive: bool },
    /// `-k DIR`.
    Kustomize(PathBuf),
    /// Bytes already in memory under a name of the caller's (kubectl's `Stream(r, name)`).
    Bytes { name: String, bytes: Vec<u8> },
}

/// A named stream of manifests, or why it could not be read.
pub(crate) type Stream = Result<(String, Body), ResourceError>;

/// Where a stream's text is: in memory, or in a large file read again at every walk
/// (see [`on_disk`]).
#[derive(Debug)]
pub(crate) enum Body {
    Bytes(Vec<u8>),
    OnDisk(OnDisk),
}

impl Body {
    /// Its size in bytes (what a directory's bound counts).
    fn len(&self) -> u64 {
        match self {
            Body::Bytes(bytes) => bytes.len() as u64,
            Body::OnDisk(file) => file.len(),
        }
    }
}

/// Parses a `-f` value into an [`Input`], as kubectl's `FilenameParam` does.
pub(crate) fn classify(value: &str, recursive: bool) -> Result<Input, ResourceError> {
    if value == "-" {
        return Ok(Input::Stdin);
    }
    if value.starts_with("http://") || value.starts_with("https://") {
        return url::parse(value)
            .map(Input::Url)
            .map_err(|reason| ResourceError::InvalidUrl {
                url: value.to_string(),
                reason,
            });
    }
    // kubectl's `Builder.Path` looks before anything is read: a path that does not
    // exist is an error of the command line (`r.Err()`), and nothing is created.
    if let Err(e) = std::fs::metadata(value)
        && e.kind() == std::io::ErrorKind::NotFound
    {
        return Err(ResourceError::PathNotFound {
            path: value.to_string(),
        });
    }
    Ok(Input::Path {
        path: PathBuf::from(value),
        recursive,
    })
}

/// What reading needs besides the inputs: stdin and the URL and kustomize settings.
pub(crate) struct ReadContext<'a> {
    pub stdin: &'a mut Option<Box<dyn Read + Send>>,
    pub url: &'a UrlOptions,
    pub search_path: Option<&'a std::ffi::OsStr>,
    /// `KUBECTL_PATH`: the kubectl `-k` runs first.
    pub kubectl_path: Option<&'a std::ffi::OsStr>,
}

/// Reads one input into its streams, in order (a directory gives one per file).
pub(crate) async fn read_input(input: &Input, cx: &mut ReadContext<'_>) -> Vec<Stream> {
    match input {
        Input::Stdin => {
            // kubectl reads stdin once; a second `-f -` sees an empty stream.
            let bytes = match cx.stdin.take() {
                Some(reader) => {
                    off_the_runtime(move || read_bounded(reader, MAX_LOCAL_BYTES)).await
                }
                None => Ok(Vec::new()),
            };
            vec![
                bytes
                    .map(|bytes| ("STDIN".to_string(), Body::Bytes(bytes)))
                    .map_err(|error| ResourceError::Read {
                        path: "STDIN".into(),
                        error,
                    }),
            ]
        }
        Input::Url(u) => vec![
            url::fetch(u, cx.url)
                .await
                .map(|bytes| (apiclient::idn::shown_uri(u), Body::Bytes(bytes))),
        ],
        Input::Bytes { name, bytes } => vec![Ok((name.clone(), Body::Bytes(bytes.clone())))],
        Input::Kustomize(dir) => {
            vec![
                kustomize::build(dir, cx.search_path, cx.kubectl_path)
                    .await
                    .map(|bytes| (dir.display().to_string(), Body::Bytes(bytes))),
            ]
        }
        Input::Path { path, recursive } => {
            let (path, recursive) = (path.clone(), *recursive);
            off_the_runtime(move || match expand_path(&path, recursive) {
                Ok(files) if path.is_dir() => read_directory(&path, files, MAX_DIRECTORY_BYTES),
                Ok(files) => files.into_iter().map(|file| read_file(&file)).collect(),
                Err(err) => vec![Err(err)],
            })
            .await
        }
    }
}

/// Runs blocking reads (a file, a directory walk, a pipe that may never end) on
/// tokio's blocking pool, so that the runtime's workers go on with other work.
async fn off_the_runtime<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(read).await {
        Ok(value) => value,
        // Only a panic of `read` itself (the runtime is not shutting down while
        // this is awaited): the same as if it had run here.
        Err(err) => std::panic::resume_unwind(err.into_panic()),
    }
}

fn read_file(path: &Path) -> Stream {
    read_file_bounded(path, MAX_LOCAL_BYTES)
}

fn read_file_bounded(path: &Path, limit: u64) -> Stream {
    read_file_streaming_above(path, limit, on_disk::STREAM_ABOVE)
}

/// A file as its bytes, or, when it has at least `above` bytes of plain YAML, as a
/// file to read again at every walk ([`on_disk`]).
pub(crate) fn read_file_streaming_above(path: &Path, limit: u64, above: u64) -> Stream {
    let name = path.display().to_string();
    // Opened once whatever it is: a named pipe must not be opened twice.
    let body = std::fs::File::open(path).and_then(|file| {
        if !on_disk::large_enough(&file, above, limit) {
            return read_bounded(file, limit).map(Body::Bytes);
        }
        match on_disk::scan(path, file, limit)? {
            on_disk::Scanned::OnDisk(file) => Ok(Body::OnDisk(file)),
            // A regular file: reading it again is safe.
            on_disk::Scanned::InMemory => {
                read_bounded(std::fs::File::open(path)?, limit).map(Body::Bytes)
            }
        }
    });
    body.map(|body| (name.clone(), body))
        .map_err(|source| io_error(&name, source))
}

/// The files of a directory, at most `limit` bytes together: every file is read into
/// memory before the first is decoded, so the per-file bound alone would let a large
/// tree fill it. Reading stops at the file that crosses the limit.
fn read_directory(dir: &Path, files: Vec<PathBuf>, limit: u64) -> Vec<Stream> {
    let mut left = limit;
    let mut streams = Vec::with_capacity(files.len());
    for file in files {
        let stream = read_file_bounded(&file, left.min(MAX_LOCAL_BYTES));
        match &stream {
            Ok((_, body)) => left -= body.len(),
            // The file alone fits, so it is the directory that is too large.
            Err(ResourceError::Read { .. })
                if left < MAX_LOCAL_BYTES
                    && std::fs::metadata(&file).is_ok_and(|m| m.len() > left) =>
            {
                streams.push(Err(ResourceError::Read {
                    path: dir.display().to_string(),
                    error: std::io::Error::other(format!(
                        "the files of the directory are larger than the limit of {limit} bytes together"
                    )),
                }));
                break;
            }
            Err(_) => {}
        }
        streams.push(stream);
    }
    streams
}

/// The most a file or standard input may hold. kubectl reads without a bound, so a
/// mistaken `-f /dev/zero` or a runaway pipe fills memory until the process is
/// killed; this fails instead. Eight times the URL bound ([`UrlOptions`]), since a
/// local export of a large cluster is legitimately big.
///
/// [`UrlOptions`]: super::UrlOptions
pub const MAX_LOCAL_BYTES: u64 = 256 << 20;

/// The most the files of one `-f DIR` may hold together (see [`read_directory`]).
pub const MAX_DIRECTORY_BYTES: u64 = 256 << 20;

/// Reads `reader` (a file or standard input named by `--raw`'s `-f`) with the bound
/// of [`MAX_LOCAL_BYTES`].
pub fn read_local(reader: impl Read) -> std::io::Result<Vec<u8>> {
    read_bounded(reader, MAX_LOCAL_BYTES)
}

/// Reads everything, failing once more than `limit` bytes arrive.
fn read_bounded(reader: impl Read, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "the document is larger than the limit of {limit} bytes"
        )));
    }
    Ok(bytes)
}

fn io_error(path: &str, source: std::io::Error) -> ResourceError {
    if source.kind() == std::io::ErrorKind::NotFound {
        ResourceError::PathNotFound {
            path: path.to_string(),
        }
    } else {
        ResourceError::Read {
            path: path.to_string(),
            error: source,
        }
    }
}

/// A file is itself; a directory is its `.json`/`.yaml`/`.yml` files in lexical order
/// (descending into subdirectories with `-R`), like kubectl's `ExpandPathsToFileVisitors`.
/// A directory without any manifest is an error here; the Builder keeps it only where
/// kubectl's `Builder.Path` does (no earlier input gave a path or an error).
pub(crate) fn expand_path(path: &Path, recursive: bool) -> Result<Vec<PathBuf>, ResourceError> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| io_error(&name, e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    walk(path, recursive, &mut files)?;
    if files.is_empty() {
        return Err(ResourceError::EmptyDirectory { path: name });
    }
    Ok(files)
}

fn walk(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> Result<(), ResourceError> {
    let read_err = |e| io_error(&dir.display().to_string(), e);
    let mut entries = std::fs::read_dir(dir)
        .map_err(read_err)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(read_err)?;
    entries.sort();
    for entry in entries {
        // symlink_metadata: like filepath.Walk, do not follow symlinked directories
        // (which could loop); symlinked files are read through the link.
        let Ok(meta) = std::fs::symlink_metadata(&entry) else {
            continue;
        };
        if meta.is_dir() {
            if recursive {
                walk(&entry, recursive, out)?;
            }
        } else if entry
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| FILE_EXTENSIONS.contains(&e))
        {
            out.push(entry);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, rel: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
        std::fs::write(p, "kind: X\n").expect("write");
    }

    fn rel(dir: &Path, files: Vec<PathBuf>) -> Vec<String> {
        files
            .iter()
            .map(|f| f.strip_prefix(dir).expect("inside").display().to_string())
            .collect()
    }

    #[test]
    fn directories_expand_to_manifests_in_lexical_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in [
            "b.yaml",
            "a.json",
            "c.yml",
            "notes.txt",
            "sub/d.yaml",
            "sub/deeper/e.yaml",
        ] {
            touch(dir.path(), f);
        }
        assert_eq!(
            rel(dir.path(), expand_path(dir.path(), false).expect("flat")),
            ["a.json", "b.yaml", "c.yml"]
        );
        assert_eq!(
            rel(
                dir.path(),
                expand_path(dir.path(), true).expect("recursive")
            ),
            [
                "a.json",
                "b.yaml",
                "c.yml",
                "sub/d.yaml",
                "sub/deeper/e.yaml"
            ]
        );
    }

    #[test]
    fn named_files_are_read_whatever_their_extension() {
        let dir = tempfile::tempdir().expect("tempdir");
        touch(dir.path(), "notes.txt");
        assert_eq!(
            expand_path(&dir.path().join("notes.txt"), false)
                .expect("file")
                .len(),
            1
        );
    }

    #[test]
    fn missing_paths_and_empty_directories_are_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("nope.yaml");
        let err = expand_path(&missing, false).expect_err("missing");
        assert_eq!(
            err.to_string(),
            format!("the path \"{}\" does not exist", missing.display())
        );
        touch(dir.path(), "readme.md");
        let err = expand_path(dir.path(), true).expect_err("no manifests");
        assert!(
            err.to_string()
                .ends_with("]: recognized file extensions are [.json .yaml .yml]"),
            "{err}"
        );
    }

    #[test]
    fn local_reads_are_bounded() {
        let ok = read_bounded(std::io::repeat(b'a').take(10), 10).expect("at the limit");
        assert_eq!(ok.len(), 10);
        let err = read_bounded(std::io::repeat(b'a'), 10).expect_err("endless input");
        assert_eq!(
            err.to_string(),
            "the document is larger than the limit of 10 bytes"
        );
    }

    #[test]
    fn a_directory_is_bounded_in_total() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["a.yaml", "b.yaml", "c.yaml"] {
            std::fs::write(dir.path().join(name), "kind: A\n").expect("write");
        }
        let files = expand_path(dir.path(), false).expect("files");
        // 8 bytes each: two fit in 20, the third crosses the limit.
        let streams = read_directory(dir.path(), files.clone(), 20);
        assert_eq!(streams.len(), 3);
        assert!(streams[..2].iter().all(Result::is_ok));
        let err = streams[2].as_ref().expect_err("over the limit");
        assert_eq!(
            err.to_string(),
            format!(
                "unable to read \"{}\": the files of the directory are larger than the limit of 20 bytes together",
                dir.path().display()
            )
        );
        assert!(
            read_directory(dir.path(), files, 24)
                .iter()
                .all(Result::is_ok)
        );
    }

    #[test]
    fn classify_recognises_stdin_urls_and_paths() {
        assert_eq!(classify("-", false).expect("stdin"), Input::Stdin);
        assert!(matches!(
            classify("https://example.com/a.yaml", false),
            Ok(Input::Url(_))
        ));
        assert!(matches!(
            classify("http://[::1", false),
            Err(ResourceError::InvalidUrl { .. })
        ));
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().display().to_string();
        assert_eq!(
            classify(&path, true).expect("path"),
            Input::Path {
                path: path.clone().into(),
                recursive: true
            }
        );
        // kubectl's `Builder.Path` looks first: a path that does not exist is an
        // error of the command line.
        let missing = dir.path().join("missing").display().to_string();
        assert!(matches!(
            classify(&missing, false),
            Err(ResourceError::PathNotFound { path }) if path == missing
        ));
    }
}
