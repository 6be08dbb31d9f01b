//! cobra's completion protocol, which kubectl (≥ 1.26) speaks with a plugin's
//! `kubectl_complete-<plugin>` helper: one candidate per line, optionally followed by a
//! tab and a description, then a last line `:<directive>`.

use std::fmt::Write as _;

/// cobra's `ShellCompDirective`: a bit mask telling the shell what to do with the
/// candidates (and whether to fall back to file names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directive(pub u32);

impl Directive {
    /// Let the shell complete file names when there are no candidates.
    pub const DEFAULT: Self = Self(0);
    /// Something went wrong: the shell ignores the candidates.
    pub const ERROR: Self = Self(1);
    /// No space after the completed word (e.g. `--flag=`).
    pub const NO_SPACE: Self = Self(2);
    /// Never fall back to file names.
    pub const NO_FILE_COMP: Self = Self(4);
    /// The candidates are file extensions to filter file names with (kubectl's `-f`).
    pub const FILTER_FILE_EXT: Self = Self(8);
}

/// One completion candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub value: String,
    pub description: Option<String>,
}

impl Candidate {
    pub fn new(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            description: None,
        }
    }

    pub fn described(value: impl Into<String>, description: impl Into<String>) -> Self {
        let description = description.into();
        Self {
            value: value.into(),
            description: (!description.is_empty()).then_some(description),
        }
    }
}

/// What a completion request answers: the candidates and the directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub candidates: Vec<Candidate>,
    pub directive: Directive,
}

impl Reply {
    pub fn new(candidates: Vec<Candidate>, directive: Directive) -> Self {
        Self {
            candidates,
            directive,
        }
    }

    /// Renders the reply for stdout. Descriptions are cut at the first line break and
    /// tabs inside them become spaces, since both would break the line protocol.
    pub fn render(&self, descriptions: bool) -> String {
        let mut out = String::new();
        for candidate in &self.candidates {
            // A value with a line break cannot be expressed; skip rather than corrupt.
            if candidate.value.contains(['\n', '\r']) || candidate.value.is_empty() {
                continue;
            }
            out.push_str(&candidate.value);
            if let Some(description) = candidate.description.as_deref().filter(|_| descriptions) {
                let first = description.lines().next().unwrap_or_default();
                out.push('\t');
                out.push_str(&first.replace('\t', " "));
            }
            out.push('\n');
        }
        let _ = writeln!(out, ":{}", self.directive.0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_candidates_descriptions_and_directive() {
        let reply = Reply::new(
            vec![
                Candidate::described("--restart", "The restart policy\nsecond line"),
                Candidate::new("Never"),
                Candidate::described("-n", "a\tb"),
            ],
            Directive::NO_FILE_COMP,
        );
        assert_eq!(
            reply.render(true),
            "--restart\tThe restart policy\nNever\n-n\ta b\n:4\n"
        );
        assert_eq!(reply.render(false), "--restart\nNever\n-n\n:4\n");
    }

    #[test]
    fn empty_reply_is_just_the_directive() {
        assert_eq!(Reply::new(vec![], Directive::DEFAULT).render(true), ":0\n");
    }
}
