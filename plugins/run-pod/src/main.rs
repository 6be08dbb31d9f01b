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
    let argv: Vec<_> = std::env::args_os().collect();
    let (args, explicit) = match args::parse_from(&argv) {
        Ok(parsed) => parsed,
        Err(e) => return shared::cli::flag_error(COMMAND, &args::command(), &e, &argv),
    };
    // pflag prints it while parsing, before anything else.
    if let Some(notice) = args.record.deprecation() {
        eprintln!("{notice}");
    }
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
