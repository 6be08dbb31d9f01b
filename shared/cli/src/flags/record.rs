//! `--record`: cli-runtime's `RecordFlags`, deprecated and hidden in kubectl 1.32 but
//! still honoured: with `--record` (or `--record=true`) every object the command
//! creates gets the `kubernetes.io/change-cause` annotation holding the command line.
//!
//! kubectl rebuilds that line from what pflag parsed: the program name, the positional
//! arguments (those after `--` included), then every flag in the order given, each as
//! `--long-name=value` (`-n t` becomes `--namespace=t`, a bare `--record` becomes
//! `--record=true`, a repeated flag appears once per occurrence). Ours does the same
//! from clap's matches, with one deliberate difference: kubectl writes a `--token`
//! given on the command line into the annotation in clear text, readable by anyone
//! who can read the object; here its value (and `--password`'s) is `CLASSIFIED`,
//! the placeholder pflag uses for flags marked secret.
//!
//! Giving the flag at all (even `--record=false`) prints pflag's deprecation notice on
//! stderr, before anything else: see [`RecordFlags::deprecation`].

use clap::ArgMatches;
use clap::parser::ValueSource;
use serde_json::Value;

/// The annotation `--record` writes.
pub const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

/// pflag's notice for the deprecated flag, as kubectl 1.32 prints it on stderr.
pub const DEPRECATION: &str =
    "Flag --record has been deprecated, --record will be removed in the future";

/// Flags whose values never go into the annotation.
const CLASSIFIED: [&str; 2] = ["token", "password"];

/// `--record` (hidden), a switch that the command's [`crate::flags::go_bool_flags`]
/// gives pflag's boolean syntax (`--record=false`), as every switch. Call
/// [`RecordFlags::complete`] with the matches after parsing.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RecordFlags {
    #[arg(
        long,
        hide = true,
        value_name = "BOOL",
        help = "Record current kubectl command in the resource annotation. If set to false, do not record the command. If set to true, record the command. If not set, default to updating the existing annotation value only if one already exists."
    )]
    pub record: bool,

    /// Whether `--record` appeared on the command line (any value).
    #[arg(skip)]
    pub given: bool,

    /// The command line as kubectl records it; empty until [`Self::complete`].
    #[arg(skip)]
    pub change_cause: String,
}

impl RecordFlags {
    /// kubectl's `RecordFlags.Complete`: remembers the command line of `matches` as
    /// the change cause, `program` (`kubectl run-pod`) standing for kubectl's
    /// `argv[0]` plus subcommand.
    pub fn complete(&mut self, program: &str, cmd: &clap::Command, matches: &ArgMatches) {
        self.given = matches.value_source("record") == Some(ValueSource::CommandLine);
        self.change_cause = change_cause(program, cmd, matches);
    }

    /// The deprecation notice to print on stderr when `--record` was given.
    pub fn deprecation(&self) -> Option<&'static str> {
        self.given.then_some(DEPRECATION)
    }

    /// The recorder: `Some` only with `--record=true` (kubectl's `ChangeCauseRecorder`;
    /// otherwise its `NoopRecorder`).
    pub fn to_recorder(&self) -> Option<ChangeCauseRecorder> {
        self.record.then(|| ChangeCauseRecorder {
            change_cause: self.change_cause.clone(),
        })
    }
}

/// Writes the change cause into objects (JSON, as every plugin holds them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeCauseRecorder {
    change_cause: String,
}

impl ChangeCauseRecorder {
    /// Sets `metadata.annotations["kubernetes.io/change-cause"]`, replacing any value
    /// the object had, as kubectl does. An object without metadata gets one.
    pub fn record(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        let meta = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        let Some(meta) = meta.as_object_mut() else {
            return;
        };
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if !annotations.is_object() {
            *annotations = Value::Object(Default::default());
        }
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(CHANGE_CAUSE.into(), Value::from(self.change_cause.clone()));
        }
    }

    /// The recorded command line.
    pub fn change_cause(&self) -> &str {
        &self.change_cause
    }
}

/// Rebuilds the command line of `matches` as kubectl records it (see the module doc).
pub fn change_cause(program: &str, cmd: &clap::Command, matches: &ArgMatches) -> String {
    let mut positionals: Vec<(usize, String)> = Vec::new();
    let mut flags: Vec<(usize, String)> = Vec::new();
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let (Some(indices), Some(values)) = (matches.indices_of(id), matches.get_raw(id)) else {
            continue;
        };
        for (index, value) in indices.zip(values) {
            let value = value.to_string_lossy();
            match arg.get_long() {
                None => positionals.push((index, value.into_owned())),
                Some(long) if CLASSIFIED.contains(&long) => {
                    flags.push((index, format!("--{long}=CLASSIFIED")));
                }
                Some(long) => flags.push((index, format!("--{long}={value}"))),
            }
        }
    }
    positionals.sort_by_key(|(i, _)| *i);
    flags.sort_by_key(|(i, _)| *i);
    std::iter::once(program.to_string())
        .chain(positionals.into_iter().map(|(_, s)| s))
        .chain(flags.into_iter().map(|(_, s)| s))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};
    use serde_json::json;

    #[derive(Parser, Debug)]
    struct Cmd {
        name: Option<String>,
        #[arg(last = true)]
        rest: Vec<String>,
        #[arg(long)]
        image: Option<String>,
        #[arg(long)]
        env: Vec<String>,
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        #[arg(short = 'i', long)]
        stdin: bool,
        #[arg(long)]
        token: Option<String>,
        #[command(flatten)]
        record: RecordFlags,
    }

    fn parse(argv: &[&str]) -> Cmd {
        let cmd = crate::flags::go_bool_flags(Cmd::command());
        let matches = cmd.clone().try_get_matches_from(argv).expect("parses");
        let mut parsed = Cmd::from_arg_matches(&matches).expect("from matches");
        parsed.record.complete("kubectl run-pod", &cmd, &matches);
        parsed
    }

    /// The shape kubectl 1.32 gave `kubectl run p5 --record --image=nginx -n t20
    /// -i --env=A=1 --env B=2 -- sh -c 'echo hi'` on the local cluster (flags in the
    /// order typed, long names, positionals first), token classified.
    #[test]
    fn the_command_line_as_kubectl_records_it() {
        let cmd = parse(&[
            "kubectl-run_pod",
            "p5",
            "--record",
            "--image=nginx",
            "-n",
            "t20",
            "--token=secret",
            "-i",
            "--env=A=1",
            "--env",
            "B=2",
            "--",
            "sh",
            "-c",
            "echo hi",
        ]);
        assert_eq!(
            cmd.record.change_cause,
            "kubectl run-pod p5 sh -c echo hi --record=true --image=nginx --namespace=t20 --token=CLASSIFIED --stdin=true --env=A=1 --env=B=2"
        );
        assert_eq!(cmd.record.deprecation(), Some(DEPRECATION));
        let mut obj = json!({"kind": "Pod", "metadata": {"name": "p5", "annotations": {"a": "b"}}});
        cmd.record
            .to_recorder()
            .expect("recording")
            .record(&mut obj);
        assert_eq!(
            obj["metadata"]["annotations"],
            json!({"a": "b", CHANGE_CAUSE: cmd.record.change_cause})
        );
    }

    #[test]
    fn false_warns_and_records_nothing_absent_is_silent() {
        let off = parse(&["kubectl-run_pod", "p", "--record=false"]);
        assert_eq!(off.record.deprecation(), Some(DEPRECATION));
        assert!(off.record.to_recorder().is_none());
        let absent = parse(&["kubectl-run_pod", "p"]);
        assert_eq!(absent.record.deprecation(), None);
        assert!(absent.record.to_recorder().is_none());
        assert_eq!(absent.record.change_cause, "kubectl run-pod p");
    }

    #[test]
    fn an_existing_change_cause_is_replaced_and_metadata_created() {
        let recorder = parse(&["kubectl-run_pod", "--record=true"])
            .record
            .to_recorder()
            .expect("recording");
        let mut obj = json!({"metadata": {"annotations": {CHANGE_CAUSE: "old"}}});
        recorder.record(&mut obj);
        assert_eq!(
            obj["metadata"]["annotations"][CHANGE_CAUSE],
            "kubectl run-pod --record=true"
        );
        let mut bare = json!({"kind": "ConfigMap"});
        recorder.record(&mut bare);
        assert_eq!(
            bare["metadata"]["annotations"][CHANGE_CAUSE],
            "kubectl run-pod --record=true"
        );
    }
}
