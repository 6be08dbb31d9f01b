//! `--edit`: kubectl's edit-before-create (`EditOptions.Run` in `EditBeforeCreateMode`,
//! `k8s.io/kubectl/pkg/cmd/util/editor/editoptions.go`).
//!
//! As in kubectl, each object of the input gets its own editor session, in input
//! order, and is created as soon as its session ends:
//! - the object is written to `kubectl-create_file-edit-*.yaml` (`.json` with
//!   `-o json`, then without the comment header; KYAML with `-o kyaml`) and the editor
//!   is run on it; any other `-o` fails for each object before an editor opens, as
//!   kubectl's editor printer knows only json, kyaml and yaml;
//! - unchanged content (comments and formatting aside) cancels this object ("Edit
//!   cancelled, no changes made."), as does a file without content;
//! - a file that fails client-side validation or no longer reads (syntax, unknown
//!   kind) is reopened with the reasons as `#` comments under the header, kubectl's
//!   wording; reopened and saved without a change, the session gives up: "A copy of
//!   your changes has been stored to …" and "Edit cancelled, no valid changes were
//!   saved.". Validation is kubectl's: on the client only for kinds whose endpoint
//!   does not take `fieldValidation`; elsewhere the server validates the create;
//! - an object moved to another namespace, or a create the server refuses (an unknown
//!   field under `fieldValidation=Strict` among them), is not retried: the file is
//!   kept ("A copy of your changes …").
//!
//! A session that fails does not end the command: as kubectl's `ContinueOnError`
//! visitor, the next object gets its session, and every error (the first read's and
//! the sessions') is reported at the end, in input order.
//!
//! Deliberate difference: kubectl validates before checking for an empty file, so with
//! validation on its "an empty file will abort the edit" never happens (the empty file
//! "failed validation"); here an empty file always cancels, as the header promises.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use resources::{Builder, DiscoveryCache, Info, ResourceError, RestMapper, Validation, Visited};
use tempfile::NamedTempFile;

use crate::create::{CreateStep, create_entries, report, report_closed};
use crate::report::Failure;

mod text;

use text::{
    EDITED_SOURCE, Reason, has_lines, header, manual_strip, reasons_for, strip_comments,
    unreadable, without_edited_source,
};

/// What an editor session needs of the command's options (a small value: `options`
/// calls `edit`, nothing calls back).
pub struct EditStep<'a> {
    /// How each edited object is created.
    pub create: CreateStep<'a>,
    /// How the object is shown in the editor, or why `-o` has no editor printer.
    pub format: Result<EditFormat, String>,
    /// The discovery cache beside which the server's OpenAPI answers are cached (the
    /// edited text is validated as the first read was).
    pub cache: Option<&'a DiscoveryCache>,
    /// `--windows-line-endings`.
    pub windows_line_endings: bool,
    /// `--validate`, applied again to the edited text.
    pub validation: Validation,
    /// The command's namespace, which an edited object may not leave.
    pub namespace: &'a str,
}

/// How the object is written for the editor: kubectl's `editPrinterOptions`, which
/// bind `-o` to printer flags that have only JSON and YAML printers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditFormat {
    /// The default, and `-o yaml`: YAML under the comment header.
    Yaml,
    /// `-o kyaml`: KYAML under the comment header, in a `.yaml` file.
    Kyaml,
    /// `-o json`: JSON (Go's indent of four spaces), without the header.
    Json,
}

impl EditFormat {
    /// The editor's format for `-o` (`None`: not given); any format but json, kyaml
    /// and yaml is cli-runtime's `NoCompatiblePrinterError` of those three.
    pub fn from_output(output: Option<&str>) -> Result<Self, String> {
        match output.unwrap_or_default() {
            "" | "yaml" => Ok(Self::Yaml),
            "kyaml" => Ok(Self::Kyaml),
            "json" => Ok(Self::Json),
            other => Err(format!(
                "unable to match a printer suitable for the output format {other:?}, allowed formats are: json,kyaml,yaml"
            )),
        }
    }

    /// The object as the editor gets it (managed fields left out, as kubectl's
    /// `extractManagedFields` leaves them out).
    fn print(self, object: &serde_json::Value) -> anyhow::Result<String> {
        use cli::printers::{JsonPrinter, KyamlPrinter, Printer as _};
        let mut out = Vec::new();
        match self {
            Self::Yaml => return Ok(cli::printers::to_yaml(object)?),
            Self::Kyaml => KyamlPrinter::default().print(object, &mut out)?,
            Self::Json => JsonPrinter {
                show_managed_fields: false,
                typed: None,
            }
            .print(object, &mut out)?,
        }
        Ok(String::from_utf8(out)?)
    }
}

/// How one object's session ended.
enum Outcome {
    /// Nothing to create for this object.
    Cancelled,
    /// The edited objects, and the file they came from (kept if creating fails);
    /// boxed, being much larger than the other variant.
    Create(Box<(Visited, NamedTempFile)>),
}

/// Runs a session for each object of `visited`, creating what each one produces.
pub async fn run(
    step: &EditStep<'_>,
    visited: Visited,
    mapper: &mut RestMapper,
) -> anyhow::Result<ExitCode> {
    let entries: Vec<_> = visited.entries().collect();
    if entries.is_empty() {
        anyhow::bail!("no objects passed to create");
    }
    // kubectl's `ContinueOnError` visitor: a failed read or session is kept for the
    // end, in input order, and the next object still gets its session.
    let mut failures = Vec::new();
    for entry in entries {
        let info = match entry {
            Ok(info) => info,
            Err(err) => {
                failures.push(Failure::from_resource(&err));
                continue;
            }
        };
        let (edited, file) = match session(step, &info, mapper).await {
            Ok(Outcome::Cancelled) => continue,
            Ok(Outcome::Create(created)) => *created,
            Err(err) => {
                failures.push(Failure::Other(err.to_string()));
                continue;
            }
        };
        let created = create_entries(&step.create, edited).await?;
        if apiclient::output::closed().is_some() {
            if !created.failures.is_empty() {
                keep(step, file)?;
            }
            return report_closed(&step.create, &created);
        }
        if !created.failures.is_empty() {
            // kubectl keeps the edited file of a refused create and reports the
            // server's error as it is (there is no file to name).
            keep(step, file)?;
            failures.extend(created.failures.into_iter().map(without_edited_source));
        }
    }
    report(&step.create, &failures)
}

/// Keeps `file` and says where, as kubectl's `preservedFile` does.
fn keep(step: &EditStep<'_>, file: NamedTempFile) -> anyhow::Result<()> {
    let (_, path) = file.keep().context("unable to keep the edited file")?;
    step.create.out.eprintln(format_args!(
        "A copy of your changes has been stored to {:?}",
        path.display().to_string()
    ));
    Ok(())
}

/// One object's editor session, reopened until the file reads or the user gives up.
async fn session(
    step: &EditStep<'_>,
    info: &Info,
    mapper: &mut RestMapper,
) -> anyhow::Result<Outcome> {
    // kubectl's printer fails here, before any editor opens.
    let format = step.format.clone().map_err(anyhow::Error::msg)?;
    let json = format == EditFormat::Json;
    let original = format.print(&info.object)?;
    let mut reasons: Vec<Reason> = Vec::new();
    // After an error: the text the user saved, and its file (kept until the next save).
    let mut failed: Option<(String, NamedTempFile)> = None;
    loop {
        let mut text = if json {
            // kubectl writes no comment header into JSON.
            String::new()
        } else {
            header(&reasons)
        };
        match &failed {
            None => text.push_str(&original),
            Some((edited, _)) => text.push_str(&manual_strip(edited)),
        }
        if step.windows_line_endings {
            text = text.replace("\r\n", "\n").replace('\n', "\r\n");
        }
        let (file, edited) = match edit_file(text, json).await? {
            Pass::Edited(file, edited) => (file, edited?),
            Pass::EditorFailed(err) => {
                if let Some((_, previous)) = failed {
                    keep(step, previous)?;
                }
                return Err(err);
            }
        };

        if let Some((previous, _)) = &failed
            && strip_comments(previous) == strip_comments(&edited)
        {
            keep(step, file)?;
            anyhow::bail!("Edit cancelled, no valid changes were saved.");
        }
        // The previous pass's file goes (dropping it removes it).
        drop(failed.take());
        if strip_comments(&original) == strip_comments(&edited) {
            step.create.out.eprintln("Edit cancelled, no changes made.");
            return Ok(Outcome::Cancelled);
        }
        if !has_lines(&edited) {
            step.create
                .out
                .eprintln("Edit cancelled, saved file was empty.");
            return Ok(Outcome::Cancelled);
        }

        // kubectl reads the edited text as the stream "edited-file", then requires
        // the command's namespace (whether or not -n was given). The selector already
        // chose the object: edited labels must not drop it now. Validated as the first
        // read was: where the server takes `fieldValidation`, by the server at create.
        let mut builder = Builder::new()
            .schema(step.validation)
            .continue_on_error()
            .namespace_param(step.namespace.to_string())
            .require_namespace()
            .stream(EDITED_SOURCE, edited.as_bytes())
            .flatten();
        if let Some(client) = step.create.client {
            builder = builder.server_schema_from(
                resources::server_schema::on_demand::OnDemand::new(client.clone(), step.cache),
            );
        }
        let rebuilt = builder.build(mapper).await?;
        let errors: Vec<ResourceError> = rebuilt.entries().filter_map(Result::err).collect();
        if let Some(moved) = errors
            .iter()
            .find(|e| matches!(e, ResourceError::NamespaceMismatch { .. }))
        {
            let message = moved.to_string();
            keep(step, file)?;
            return Err(anyhow::Error::msg(message));
        }
        if errors.is_empty() {
            return Ok(Outcome::Create(Box::new((rebuilt, file))));
        }
        let (next, complaint) = reasons_for(&errors, step.validation, info, unreadable(&edited));
        if let Some(line) = complaint {
            step.create.out.eprintln(line);
        }
        reasons = next;
        failed = Some((edited, file));
    }
}

/// What one editing pass gave: the file and its text as read back (or why it could
/// not be read), or the editor's failure.
enum Pass {
    Edited(NamedTempFile, anyhow::Result<String>),
    EditorFailed(anyhow::Error),
}

/// One editing pass: writes `text` to a new file, runs the editor on it and reads it
/// back, all on the blocking pool (the editor runs for as long as the user edits,
/// and the runtime's workers have other work meanwhile).
async fn edit_file(text: String, json: bool) -> anyhow::Result<Pass> {
    tokio::task::spawn_blocking(move || {
        let file = write_temp(&text, json)?;
        if let Err(err) = run_editor(file.path()) {
            return Ok(Pass::EditorFailed(err));
        }
        let edited = std::fs::read_to_string(file.path()).context("unable to read the edited file");
        Ok(Pass::Edited(file, edited))
    })
    .await?
}

/// A new file for one editing pass, named as kubectl names it after the binary.
fn write_temp(text: &str, json: bool) -> anyhow::Result<NamedTempFile> {
    let mut file = tempfile::Builder::new()
        .prefix("kubectl-create_file-edit-")
        .suffix(if json { ".json" } else { ".yaml" })
        .tempfile()
        .context("unable to create a temporary file for editing")?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    Ok(file)
}

/// The editor to run, chosen as kubectl's `editor.NewDefaultEditor` chooses it.
#[derive(Debug, PartialEq, Eq)]
enum Editor {
    /// A program name, or a command line without quotes or backslashes
    /// (`code --wait`), which kubectl splits at each space: run directly, with
    /// the file as its last argument.
    Program(String),
    /// A command line with quotes or backslashes, run by the shell.
    Shell(String),
}

impl Editor {
    /// `$KUBE_EDITOR`, else `$EDITOR`, else kubectl's platform default: `vi`, or
    /// `notepad` on Windows.
    fn choose(var: impl Fn(&str) -> Option<String>, windows: bool) -> Self {
        let editor = ["KUBE_EDITOR", "EDITOR"]
            .into_iter()
            .filter_map(var)
            .map(|v| v.trim().to_string())
            .find(|v| !v.is_empty())
            .unwrap_or_else(|| if windows { "notepad" } else { "vi" }.to_string());
        if editor.contains(' ') && editor.contains(['"', '\'', '\\']) {
            Editor::Shell(editor)
        } else {
            Editor::Program(editor)
        }
    }

    fn text(&self) -> &str {
        match self {
            Editor::Program(s) | Editor::Shell(s) => s,
        }
    }

    /// The process to start for `path`: the program itself, or on Unix `sh -c` with
    /// the path as `$1` (so no quoting of the path is ever needed) and on Windows
    /// `cmd /C` with the path quoted, as kubectl does (cmd has no `$1`).
    fn command(&self, path: &Path) -> std::process::Command {
        match self {
            Editor::Program(line) => {
                // Go's strings.Split: two spaces make an empty argument, as in kubectl.
                let mut words = line.split(' ');
                let mut cmd = std::process::Command::new(words.next().unwrap_or_default());
                cmd.args(words).arg(path);
                cmd
            }
            #[cfg(not(windows))]
            Editor::Shell(line) => {
                let mut cmd = std::process::Command::new("sh");
                cmd.arg("-c")
                    .arg(format!("{line} \"$1\""))
                    .arg("sh")
                    .arg(path);
                cmd
            }
            #[cfg(windows)]
            Editor::Shell(line) => {
                // cmd parses its own command line: Rust's argument quoting (for
                // CommandLineToArgvW) would reach the editor as literal backslashes.
                use std::os::windows::process::CommandExt as _;
                let mut cmd = std::process::Command::new("cmd");
                cmd.arg("/C")
                    .raw_arg(format!("{line} \"{}\"", path.display()));
                cmd
            }
        }
    }
}

/// Runs the editor (see [`Editor::choose`]) on `path` and waits for it.
fn run_editor(path: &Path) -> anyhow::Result<()> {
    let editor = Editor::choose(|v| std::env::var(v).ok(), cfg!(windows));
    let text = editor.text();
    // kubectl's two messages (`editor.Launch`): a program name that PATH does not
    // hold (Go's `exec.ErrNotFound`) cannot be launched; anything else that fails —
    // a path that cannot be run, the shell of an editor line, an editor exiting
    // non-zero — is a problem with the editor. No cause is appended, as in kubectl.
    if let Editor::Program(line) = &editor
        && let Some(program) = line.split(' ').next()
        && !program.contains('/')
        && which::which(program).is_err()
    {
        anyhow::bail!("unable to launch the editor {text:?}");
    }
    let ran = editor.command(path).status();
    if !ran.is_ok_and(|status| status.success()) {
        anyhow::bail!("there was a problem with the editor {text:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
