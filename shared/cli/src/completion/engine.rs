//! The completion engine: given a plugin's clap command and the words typed after the
//! plugin name (the last one being completed), work out what to offer.
//!
//! It is pure — no IO — so every case is unit-tested. What needs the cluster (namespace
//! and ReplicationController names) or the kubeconfig (context names) comes back as a
//! [`Lookup`] for [`super::dynamic`] to resolve.
//!
//! It follows cobra's behaviour, which kubectl users know: flag names are offered when
//! the word starts with `-` (long and short forms, with the help text as description,
//! flags already given are left out unless repeatable); a flag's value is completed
//! after `--flag ` or in `--flag=`; otherwise the positional argument is completed and
//! required flags not yet given are suggested. Candidates are filtered by the typed
//! prefix, since kubectl does not filter what a plugin's helper prints.

use clap::{Arg, ArgAction, Command, ValueHint};

use super::protocol::{Candidate, Directive, Reply};

/// Where the names for a positional argument come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Nothing to suggest (and no file names either).
    Nothing,
    /// ReplicationController names in the namespace of the command.
    ReplicationControllers,
    /// Namespace names.
    Namespaces,
    /// File names (the shell's own completion).
    Files,
}

/// Names to fetch before replying, filtered by `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Namespaces {
        prefix: String,
    },
    ReplicationControllers {
        prefix: String,
    },
    /// Context names from the kubeconfig (no request is sent).
    Contexts {
        prefix: String,
    },
    /// Cluster names from the kubeconfig.
    Clusters {
        prefix: String,
    },
    /// User names from the kubeconfig.
    Users {
        prefix: String,
    },
}

/// The engine's answer: a reply, possibly completed by a lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub reply: Reply,
    pub lookup: Option<Lookup>,
}

impl Plan {
    fn reply(candidates: Vec<Candidate>, directive: Directive) -> Self {
        Self {
            reply: Reply::new(candidates, directive),
            lookup: None,
        }
    }

    fn lookup(lookup: Lookup) -> Self {
        Self {
            reply: Reply::new(Vec::new(), Directive::NO_FILE_COMP),
            lookup: Some(lookup),
        }
    }
}

/// `-o` formats our printers accept (shared's `PrintFlags`), in kubectl's order. A
/// plugin that declares possible values for `-o` in clap overrides this list.
pub const OUTPUT_FORMATS: &[&str] = crate::printers::OUTPUT_FORMATS;

/// Values of well-known kubectl flags, by long name, for flags that clap declares as
/// free strings (kubectl validates them itself, so our plugins do too). Possible
/// values declared in clap take precedence.
fn known_values(long: &str) -> Option<&'static [&'static str]> {
    Some(match long {
        "output" => OUTPUT_FORMATS,
        "restart" => &["Always", "OnFailure", "Never"],
        "dry-run" => &["none", "client", "server"],
        "image-pull-policy" => &["Always", "IfNotPresent", "Never"],
        "cascade" => &["background", "orphan", "foreground"],
        _ => return None,
    })
}

/// Completes `words` (the words after the plugin name; the last one is being typed,
/// `""` after a space) for `command`. `positionals[i]` says where the i-th positional
/// argument's candidates come from.
pub fn plan(command: &Command, words: &[String], positionals: &[Source]) -> Plan {
    let mut command = command.clone();
    command.build();
    let (current, before) = match words.split_last() {
        Some((current, before)) => (current.as_str(), before),
        None => ("", &[][..]),
    };
    let scan = Scan::of(&command, before);

    if let Some(flag) = scan.pending {
        return values(&command, flag, current);
    }
    if !scan.after_double_dash && current.starts_with('-') {
        if let Some((name, value)) = current.split_once('=') {
            // `--flag=val` and `-f=val`: cobra completes the value alone.
            let arg = match name.strip_prefix("--") {
                Some(long) => find_long(&command, long),
                None => name.chars().last().and_then(|c| find_short(&command, c)),
            };
            return match arg {
                Some(arg) if takes_value(arg) => values(&command, arg.get_id().as_str(), value),
                _ => Plan::reply(Vec::new(), Directive::NO_FILE_COMP),
            };
        }
        return Plan::reply(
            flag_names(&command, &scan, current),
            Directive::NO_FILE_COMP,
        );
    }
    if scan.after_double_dash {
        // After `--` come the container's command and arguments: nothing local applies.
        return Plan::reply(Vec::new(), Directive::NO_FILE_COMP);
    }
    let mut plan = match positionals.get(scan.positionals) {
        Some(Source::ReplicationControllers) => Plan::lookup(Lookup::ReplicationControllers {
            prefix: current.to_string(),
        }),
        Some(Source::Namespaces) => Plan::lookup(Lookup::Namespaces {
            prefix: current.to_string(),
        }),
        Some(Source::Files) => Plan::reply(Vec::new(), Directive::DEFAULT),
        Some(Source::Nothing) | None => Plan::reply(Vec::new(), Directive::NO_FILE_COMP),
    };
    if current.is_empty() {
        // cobra offers the required flags that are still missing along with the arguments.
        plan.reply
            .candidates
            .extend(required_flags(&command, &scan));
    }
    plan
}

/// What the words before the current one say.
struct Scan<'a> {
    /// A flag whose value is the word being completed (`-n <TAB>`), by arg id.
    pending: Option<&'a str>,
    /// Ids of the flags already given.
    given: Vec<&'a str>,
    /// How many positional arguments were given.
    positionals: usize,
    after_double_dash: bool,
}

impl<'a> Scan<'a> {
    fn of(command: &'a Command, words: &[String]) -> Self {
        let mut scan = Scan {
            pending: None,
            given: Vec::new(),
            positionals: 0,
            after_double_dash: false,
        };
        for word in words {
            if scan.after_double_dash {
                continue;
            }
            if scan.pending.take().is_some() {
                // This word was the value of the flag before it.
                continue;
            }
            if word == "--" {
                scan.after_double_dash = true;
            } else if let Some(long) = word.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((name, _)) => (name, true),
                    None => (long, false),
                };
                if let Some(arg) = find_long(command, name) {
                    scan.given.push(arg.get_id().as_str());
                    if !inline && consumes_next(arg) {
                        scan.pending = Some(arg.get_id().as_str());
                    }
                }
            } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
                // A cluster like `-it` or `-nkube-system`: a short flag that takes a
                // value swallows the rest of the word, or the next word if nothing is left.
                for (i, c) in shorts.char_indices() {
                    let Some(arg) = find_short(command, c) else {
                        break;
                    };
                    scan.given.push(arg.get_id().as_str());
                    if takes_value(arg) {
                        let rest = &shorts[i + c.len_utf8()..];
                        if rest.is_empty() && consumes_next(arg) {
                            scan.pending = Some(arg.get_id().as_str());
                        }
                        break;
                    }
                }
            } else {
                scan.positionals += 1;
            }
        }
        scan
    }
}

fn find_long<'c>(command: &'c Command, name: &str) -> Option<&'c Arg> {
    command.get_arguments().find(|a| {
        a.get_long() == Some(name)
            || a.get_all_aliases()
                .is_some_and(|aliases| aliases.contains(&name))
    })
}

fn find_short(command: &Command, c: char) -> Option<&Arg> {
    command.get_arguments().find(|a| {
        a.get_short() == Some(c)
            || a.get_all_short_aliases()
                .is_some_and(|aliases| aliases.contains(&c))
    })
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// Whether `--flag value` (with a space) gives the flag its value. Flags whose value
/// is optional (pflag's `NoOptDefVal`, e.g. `--dry-run`) take it only after `=`.
fn consumes_next(arg: &Arg) -> bool {
    takes_value(arg) && arg.get_num_args().is_none_or(|n| n.min_values() > 0)
}

fn repeatable(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Append | ArgAction::Count)
}

fn description(arg: &Arg) -> String {
    arg.get_help()
        .or_else(|| arg.get_long_help())
        .map(|h| h.to_string())
        .unwrap_or_default()
}

fn flag_names(command: &Command, scan: &Scan<'_>, prefix: &str) -> Vec<Candidate> {
    let mut out = Vec::new();
    for arg in command.get_arguments() {
        if arg.is_positional() || arg.is_hide_set() {
            continue;
        }
        if scan.given.contains(&arg.get_id().as_str()) && !repeatable(arg) {
            continue;
        }
        let help = description(arg);
        if let Some(long) = arg.get_long() {
            let name = format!("--{long}");
            if name.starts_with(prefix) {
                out.push(Candidate::described(name, help.clone()));
            }
        }
        if let Some(short) = arg.get_short() {
            let name = format!("-{short}");
            if name.starts_with(prefix) {
                out.push(Candidate::described(name, help));
            }
        }
    }
    out
}

fn required_flags(command: &Command, scan: &Scan<'_>) -> Vec<Candidate> {
    command
        .get_arguments()
        .filter(|a| !a.is_positional() && a.is_required_set() && !a.is_hide_set())
        .filter(|a| !scan.given.contains(&a.get_id().as_str()))
        .filter_map(|a| {
            a.get_long()
                .map(|long| Candidate::described(format!("--{long}"), description(a)))
        })
        .collect()
}

fn is_path(arg: &Arg) -> bool {
    matches!(
        arg.get_value_hint(),
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath | ValueHint::ExecutablePath
    ) || arg.get_value_names().is_some_and(|names| {
        names
            .iter()
            .any(|n| n.contains("PATH") || n.contains("FILE"))
    })
}

/// The values of the flag with id `id` that start with `prefix`.
fn values(command: &Command, id: &str, prefix: &str) -> Plan {
    let Some(arg) = command.get_arguments().find(|a| a.get_id() == id) else {
        return Plan::reply(Vec::new(), Directive::NO_FILE_COMP);
    };
    let prefixed = |v: &str| v.starts_with(prefix);
    let possible: Vec<Candidate> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set() && prefixed(v.get_name()))
        .map(|v| match v.get_help() {
            Some(help) => Candidate::described(v.get_name(), help.to_string()),
            None => Candidate::new(v.get_name()),
        })
        .collect();
    if !arg.get_possible_values().is_empty() {
        return Plan::reply(possible, Directive::NO_FILE_COMP);
    }
    let long = arg.get_long().unwrap_or_default();
    let prefix = prefix.to_string();
    match long {
        "namespace" => return Plan::lookup(Lookup::Namespaces { prefix }),
        "context" => return Plan::lookup(Lookup::Contexts { prefix }),
        "cluster" => return Plan::lookup(Lookup::Clusters { prefix }),
        "user" => return Plan::lookup(Lookup::Users { prefix }),
        // kubectl's answer for `-f`: the manifest extensions, as a file filter.
        "filename" => {
            return Plan::reply(
                ["json", "yaml", "yml"].map(Candidate::new).to_vec(),
                Directive::FILTER_FILE_EXT,
            );
        }
        _ => {}
    }
    if let Some(known) = known_values(long) {
        let candidates = known
            .iter()
            .filter(|v| v.starts_with(prefix.as_str()))
            .map(|v| Candidate::new(*v))
            .collect();
        return Plan::reply(candidates, Directive::NO_FILE_COMP);
    }
    if is_path(arg) {
        return Plan::reply(Vec::new(), Directive::DEFAULT);
    }
    Plan::reply(Vec::new(), Directive::NO_FILE_COMP)
}
