//! [`DryRunStrategy`]: kubectl's `cmdutil.DryRunStrategy`, the one value a mutating
//! command carries from `--dry-run` to the request. It lives here, beside the
//! [`Helper`](super::Helper) that sends (or refuses to send) by it, so that the
//! strategy crosses no crate boundary as a `bool`; `cli::flags` parses the flag into it.

/// What a mutating command does with the objects it built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DryRunStrategy {
    /// Send the request and persist the result.
    #[default]
    None,
    /// Send nothing at all: print the object that would have been sent.
    Client,
    /// Send the request with `dryRun=All`: the server validates, defaults and admits
    /// the object but does not persist it.
    Server,
}

impl DryRunStrategy {
    /// The suffix kubectl appends to the operation in the default output
    /// (`pod/web created (dry run)`).
    pub fn operation_suffix(self) -> &'static str {
        match self {
            DryRunStrategy::None => "",
            DryRunStrategy::Client => " (dry run)",
            DryRunStrategy::Server => " (server dry run)",
        }
    }

    /// Whether a request must be sent to the server at all.
    pub fn sends_requests(self) -> bool {
        self != DryRunStrategy::Client
    }
}
