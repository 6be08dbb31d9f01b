//! `kubectl run-pod` (binary `kubectl-run_pod`): Create and run a particular image in a pod.
//!
//! This is the thin entry point: parse, then hand over to [`options::RunPodOptions`]
//! (complete → validate → run). A client dry run never starts an async runtime nor
//! builds a client.

mod args;
mod attach;
mod create;
mod help;
mod options;

use std::io::Write;
use std::process::ExitCode;

const COMMAND: &str = "kubectl run-pod";

fn main() -> ExitCode {
    // `kubectl_complete-<plugin>` (a link to this binary), `__complete` and
    // `completion SHELL` are answered before any parsing; see shared::completion.
    if let Some(code) = shared::completion::maybe_handle(args::command(), &[]) {
        return code;
    }
    let (args, explicit) = match args::parse_from(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => return usage_exit(&e),
    };
    if args.help {
        print!("{}", help::render(&args::command()));
        return ExitCode::SUCCESS;
    }
    shared::cli::init_logging(args.config.verbosity);
    // Not locked for the whole run: the attach flow writes through tokio's stdout, from
    // another thread, and would wait forever on a lock held here.
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let result = (|| {
        let mut options = options::RunPodOptions::complete(args, explicit, &mut stderr)?;
        let validated = options.validate()?;
        options.run(validated, &mut stdout, &mut stderr)
    })();
    let _ = stdout.flush();
    shared::cli::finish(COMMAND, result)
}

/// Reports a command-line parse error the way cobra does for kubectl: one `error:` line
/// and a pointer to `--help`, exit 1.
fn usage_exit(e: &clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let message = match e.kind() {
        ErrorKind::UnknownArgument => match e.get(ContextKind::InvalidArg) {
            Some(ContextValue::String(arg)) => {
                let flag = arg.split('=').next().unwrap_or(arg);
                if flag.starts_with("--") {
                    format!("unknown flag: {flag}")
                } else {
                    format!(
                        "unknown shorthand flag: {:?} in {arg}",
                        flag.trim_start_matches('-').chars().next().unwrap_or('-')
                    )
                }
            }
            _ => first_line(e),
        },
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let arg = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(a)) => a
                    .split([' ', '=', '['])
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                _ => String::new(),
            };
            let value = match e.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(v)) => v.clone(),
                _ => String::new(),
            };
            let reason = std::error::Error::source(e)
                .map(|s| s.to_string())
                .unwrap_or_else(|| first_line(e));
            format!("invalid argument {value:?} for {arg:?} flag: {reason}")
        }
        _ => first_line(e),
    };
    // cobra's own flag errors start with a capital "Error:", unlike kubectl's.
    let _ = writeln!(
        std::io::stderr(),
        "Error: {message}\nSee '{COMMAND} --help' for usage."
    );
    ExitCode::from(1)
}

fn first_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}
