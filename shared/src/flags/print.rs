//! `-o/--output` and `--show-managed-fields`: cli-runtime's `PrintFlags`.
//!
//! A command flattens [`PrintFlags`] into its arguments and, once it knows the
//! dry-run strategy, calls [`PrintFlags::to_printer`] with the verb it performs:
//!
//! ```
//! use shared::flags::{DryRunStrategy, PrintFlags};
//! let flags = PrintFlags::default(); // no -o
//! let printer = flags.to_printer("created", DryRunStrategy::Client).unwrap();
//! let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
//! let mut out = Vec::new();
//! printer.print(&pod, &mut out).unwrap();
//! assert_eq!(out, b"pod/web created (dry run)\n");
//! ```

use crate::flags::DryRunStrategy;
use crate::printers::{self, JsonPrinter, NamePrinter, OperationPrinter, Printer, YamlPrinter};

/// The output flags of a command that prints the objects it touched.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PrintFlags {
    /// `-o`: the output format, `None` when absent.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FORMAT",
        help = "Output format. One of: (json, yaml, name)."
    )]
    pub output: Option<String>,

    /// `--show-managed-fields`.
    #[arg(
        long = "show-managed-fields",
        help = "If true, keep the managedFields when printing objects in JSON or YAML format.",
        num_args = 0..=1,
        require_equals = true,
        default_value = "false",
        default_missing_value = "true",
        value_parser = crate::flags::parse_go_bool
    )]
    pub show_managed_fields: bool,
}

impl PrintFlags {
    /// The output format, `None` when `-o` is absent or empty (kubectl treats `-o ''`
    /// as absent).
    pub fn format(&self) -> Option<&str> {
        self.output.as_deref().filter(|f| !f.is_empty())
    }

    /// Whether `-o yaml` was asked for (kubectl run separates its two objects with an
    /// extra `---` in that case).
    pub fn is_yaml(&self) -> bool {
        self.format() == Some("yaml")
    }

    /// The printer for `-o`, or, without `-o`, the one printing `kind/name OPERATION`
    /// with kubectl's dry-run suffix (`pod/web created (server dry run)`).
    ///
    /// `operation` is the past-tense verb of the command (`created`, `configured`).
    pub fn to_printer(
        &self,
        operation: &str,
        dry_run: DryRunStrategy,
    ) -> Result<Box<dyn Printer>, printers::Error> {
        let show = self.show_managed_fields;
        Ok(match self.format() {
            None => Box::new(OperationPrinter {
                operation: format!("{operation}{}", dry_run.operation_suffix()),
            }),
            Some("json") => Box::new(JsonPrinter {
                show_managed_fields: show,
            }),
            Some("yaml") => Box::new(YamlPrinter::new(show)),
            Some("name") => Box::new(NamePrinter),
            Some(other) => {
                return Err(printers::Error::UnsupportedFormat {
                    format: other.to_string(),
                });
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(output: &str) -> PrintFlags {
        PrintFlags {
            output: Some(output.to_string()),
            show_managed_fields: false,
        }
    }

    fn render(flags: &PrintFlags, dry_run: DryRunStrategy) -> String {
        let printer = flags.to_printer("created", dry_run).expect("printer");
        let obj = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
        let mut out = Vec::new();
        printer.print(&obj, &mut out).expect("print");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn default_output_names_the_operation_and_the_dry_run() {
        assert_eq!(
            render(&PrintFlags::default(), DryRunStrategy::None),
            "deployment.apps/web created\n"
        );
        assert_eq!(
            render(&flags(""), DryRunStrategy::Client),
            "deployment.apps/web created (dry run)\n"
        );
        assert_eq!(
            render(&PrintFlags::default(), DryRunStrategy::Server),
            "deployment.apps/web created (server dry run)\n"
        );
    }

    #[test]
    fn name_output_has_no_operation() {
        assert_eq!(
            render(&flags("name"), DryRunStrategy::Client),
            "deployment.apps/web\n"
        );
    }

    #[test]
    fn json_and_yaml() {
        assert!(
            render(&flags("json"), DryRunStrategy::None)
                .starts_with("{\n    \"apiVersion\": \"apps/v1\",\n")
        );
        assert_eq!(
            render(&flags("yaml"), DryRunStrategy::None),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
        );
    }

    #[test]
    fn unsupported_formats_get_kubectls_message() {
        let err = flags("jsonpath={.metadata.name}")
            .to_printer("created", DryRunStrategy::None)
            .err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some(
                "unable to match a printer suitable for the output format \"jsonpath={.metadata.name}\", allowed formats are: json,name,yaml"
            )
        );
    }
}
