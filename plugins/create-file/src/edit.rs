//! `--edit`: kubectl's `RunEditOnCreate`. The objects are written to a temporary file,
//! the user's editor is run on it, and the edited file goes through the Builder again.
//!
//! Like `kubectl edit`, an empty file or unchanged content (comments aside) cancels
//! cleanly: nothing is created and the exit code is 0. Unlike kubectl, a file that no
//! longer parses is not reopened in the editor; its errors are reported as for any
//! input, with the temporary file's path.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use shared::resource::{FilenameOptions, ResourceError, RestMapper, Visited};

use crate::options::CreateFileOptions;

const HEADER: &str = "# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
";

/// What to create after editing: the errors of the first read, and the edited input.
pub type Edited = (Vec<ResourceError>, Visited);

/// Lets the user edit the objects of `visited`; `None` when the edit was cancelled.
pub async fn edit(
    opts: &CreateFileOptions,
    visited: Visited,
    mapper: &mut RestMapper,
) -> anyhow::Result<Option<Edited>> {
    let (objects, errors): (Vec<_>, Vec<_>) = visited.entries().partition(|e| e.is_ok());
    if objects.is_empty() {
        // Nothing to edit: report the errors as usual.
        return Ok(Some((Vec::new(), visited)));
    }
    let kept: Vec<ResourceError> = errors.into_iter().filter_map(Result::err).collect();
    let json = opts.print.format() == Some("json");
    let mut text = String::from(HEADER);
    for (i, object) in objects.iter().filter_map(|e| e.as_ref().ok()).enumerate() {
        if json {
            text.push_str(&serde_json::to_string_pretty(&object.object)?);
            text.push('\n');
        } else {
            if i > 0 {
                text.push_str("---\n");
            }
            text.push_str(&shared::printers::to_yaml(&object.object)?);
        }
    }
    if opts.windows_line_endings {
        text = text.replace('\n', "\r\n");
    }
    let mut file = tempfile::Builder::new()
        .prefix("kubectl-create-file-")
        .suffix(if json { ".json" } else { ".yaml" })
        .tempfile()
        .context("unable to create a temporary file for editing")?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    run_editor(file.path())?;
    let edited = std::fs::read_to_string(file.path()).context("unable to read the edited file")?;

    let meaningful = |s: &str| -> String {
        s.lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    };
    if meaningful(&edited).trim().is_empty() {
        eprintln!("Edit cancelled, saved file was empty.");
        return Ok(None);
    }
    if meaningful(&edited) == meaningful(&text) {
        eprintln!("Edit cancelled, no changes made.");
        return Ok(None);
    }
    let inputs = FilenameOptions {
        filenames: vec![file.path().display().to_string()],
        ..Default::default()
    };
    // The selector already chose the objects; edited labels must not drop them now.
    let rebuilt = opts.builder(&inputs, "").build(mapper).await?;
    Ok(Some((kept, rebuilt)))
}

/// Runs `$KUBE_EDITOR`, else `$EDITOR`, else `vi`, on `path`, as kubectl does: a value
/// with spaces (`code --wait`) goes through `sh -c`, a bare name is found on PATH.
fn run_editor(path: &Path) -> anyhow::Result<()> {
    let editor = ["KUBE_EDITOR", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    let editor = editor.trim();
    let program = editor.split_whitespace().next().unwrap_or(editor);
    let located = which::which(program).with_context(|| {
        format!("unable to launch the editor {editor:?}: {program:?} was not found in PATH")
    })?;
    let status = if editor.contains(char::is_whitespace) {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(path)
            .status()
    } else {
        std::process::Command::new(&located).arg(path).status()
    }
    .with_context(|| format!("unable to launch the editor {editor:?}"))?;
    if !status.success() {
        anyhow::bail!("there was a problem with the editor {editor:?}");
    }
    Ok(())
}
