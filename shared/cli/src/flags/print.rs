//! `-o/--output`, `--show-managed-fields`, `--template` and
//! `--allow-missing-template-keys`: cli-runtime's `PrintFlags` with its JSON/YAML, name,
//! Go-template and JSONPath printer flags, tried in kubectl's order.
//!
//! A command flattens [`PrintFlags`] into its arguments and, once it knows the
//! dry-run strategy, calls [`PrintFlags::to_printer`] with the verb it performs:
//!
//! ```
//! use cli::flags::{DryRunStrategy, PrintFlags};
//! let flags = PrintFlags::default(); // no -o
//! let printer = flags.to_printer("created", DryRunStrategy::Client).unwrap();
//! let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
//! let mut out = Vec::new();
//! printer.print(&pod, &mut out).unwrap();
//! assert_eq!(out, b"pod/web created (dry run)\n");
//! ```

use crate::flags::DryRunStrategy;
use crate::printers::{
    self, GoTemplatePrinter, JsonPathPrinter, JsonPrinter, NamePrinter, OperationPrinter, Printer,
    TypedPrinter, YamlPrinter,
};

/// The Go-template formats of `-o`, each also accepted as `FORMAT=TEMPLATE`
/// (cli-runtime's `templateFormats`).
const GO_TEMPLATE_FORMATS: [&str; 4] = [
    "go-template",
    "go-template-file",
    "template",
    "templatefile",
];

/// The JSONPath formats of `-o`, each also accepted as `FORMAT=TEMPLATE`
/// (cli-runtime's `jsonFormats`).
const JSONPATH_FORMATS: [&str; 3] = ["jsonpath", "jsonpath-file", "jsonpath-as-json"];

/// The output flags of a command that prints the objects it touched.
#[derive(clap::Args, Debug, Clone)]
pub struct PrintFlags {
    /// `-o`: the output format, `None` when absent.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FORMAT",
        help = "Output format. One of: (json, yaml, kyaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file)."
    )]
    pub output: Option<String>,

    /// `--template`: the template (or, for the `-file` formats, its path) when it is
    /// not given after `=`; without `-o` it means `-o go-template`. The help is
    /// kubectl's.
    #[arg(
        long = "template",
        value_name = "TEMPLATE",
        help = "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview]."
    )]
    pub template: Option<String>,

    /// `--allow-missing-template-keys` (default true).
    #[arg(
        long = "allow-missing-template-keys",
        help = "If true, ignore any errors in templates when a field or map key is missing in the template. Only applies to golang and jsonpath output formats.",
        default_value = "true"
    )]
    pub allow_missing_template_keys: bool,

    /// `--show-managed-fields`.
    #[arg(
        long = "show-managed-fields",
        help = "If true, keep the managedFields when printing objects in JSON or YAML format."
    )]
    pub show_managed_fields: bool,
}

impl Default for PrintFlags {
    /// No `-o`, kubectl's defaults for the rest (missing template keys allowed).
    fn default() -> Self {
        Self {
            output: None,
            show_managed_fields: false,
            template: None,
            allow_missing_template_keys: true,
        }
    }
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
    /// As cli-runtime's `PrintFlags.ToPrinter`, the printer families are tried in
    /// turn (JSON/YAML, name, Go template, JSONPath), each ignoring a format that is
    /// not its own.
    pub fn to_printer(
        &self,
        operation: &str,
        dry_run: DryRunStrategy,
    ) -> Result<Box<dyn Printer>, printers::Error> {
        self.printer(operation, dry_run, None)
    }

    /// [`Self::to_printer`] for objects kubectl holds in its typed structs (`run`'s
    /// objects and the server's answers to them): every printer sees them as
    /// kubectl's typed encoding has them, and `-o json` writes their fields in Go's
    /// struct order ([`printers::gojson`]). Kinds the typed table lacks print as
    /// [`Self::to_printer`] prints them.
    pub fn to_typed_printer(
        &self,
        operation: &str,
        dry_run: DryRunStrategy,
        structs: printers::gojson::Structs,
    ) -> Result<Box<dyn Printer>, printers::Error> {
        Ok(Box::new(TypedPrinter(
            self.printer(operation, dry_run, Some(structs))?,
            structs,
        )))
    }

    fn printer(
        &self,
        operation: &str,
        dry_run: DryRunStrategy,
        typed: Option<printers::gojson::Structs>,
    ) -> Result<Box<dyn Printer>, printers::Error> {
        let show = self.show_managed_fields;
        let template = self.template.as_deref().filter(|t| !t.is_empty());
        // kubectl reads `--template` without `-o` as `-o go-template`; an explicit
        // `-o ''` keeps the default output.
        let output = match (self.output.as_deref(), template) {
            (None, Some(_)) => "go-template",
            (output, _) => output.unwrap_or_default(),
        };
        match output {
            "json" => {
                return Ok(Box::new(JsonPrinter {
                    show_managed_fields: show,
                    typed,
                }));
            }
            "yaml" => return Ok(Box::new(YamlPrinter::new(show))),
            "kyaml" => {
                return Ok(Box::new(printers::KyamlPrinter {
                    show_managed_fields: show,
                    typed,
                }));
            }
            "name" => return Ok(Box::new(NamePrinter)),
            "" => {
                return Ok(Box::new(OperationPrinter {
                    operation: format!("{operation}{}", dry_run.operation_suffix()),
                }));
            }
            _ => {}
        }
        if let Some((format, text)) = template_format(output, template, &GO_TEMPLATE_FORMATS)? {
            let text = match format {
                "go-template-file" | "templatefile" => read_template(text)?,
                _ => text.to_string(),
            };
            let printer =
                GoTemplatePrinter::new(&text, self.allow_missing_template_keys)?.typed(typed);
            return Ok(Box::new(printer));
        }
        if let Some((format, text)) = template_format(output, template, &JSONPATH_FORMATS)? {
            let text = match format {
                "jsonpath-file" => read_template(text)?,
                _ => text.to_string(),
            };
            let printer = JsonPathPrinter::new(
                &text,
                self.allow_missing_template_keys,
                format == "jsonpath-as-json",
            )?;
            return Ok(Box::new(printer));
        }
        Err(printers::Error::UnsupportedFormat {
            format: output.to_string(),
        })
    }
}

/// cli-runtime's template printer flags (`GoTemplatePrintFlags`, `JSONPathPrintFlags`):
/// the format of `formats` that `output` names and its template, taken from
/// `--template` if given, else from after `FORMAT=`; `None` when `output` is no
/// format of the family.
fn template_format<'a>(
    output: &'a str,
    template: Option<&'a str>,
    formats: &[&'static str],
) -> Result<Option<(&'a str, &'a str)>, printers::Error> {
    let (format, value) = match template {
        Some(t) => (output, t),
        None => formats
            .iter()
            .find_map(|f| {
                output
                    .strip_prefix(f)
                    .and_then(|rest| rest.strip_prefix('='))
                    .map(|rest| (*f, rest))
            })
            .unwrap_or((output, "")),
    };
    if !formats.contains(&format) {
        return Ok(None);
    }
    if value.is_empty() {
        return Err(printers::Error::NoTemplate);
    }
    Ok(Some((format, value)))
}

/// Reads a `-file` template, with Go's `os.ReadFile` wording on failure.
fn read_template(path: &str) -> Result<String, printers::Error> {
    use std::io::Read as _;
    let failed = |op: &str, err: std::io::Error| {
        // Rust says "No such file or directory (os error 2)", Go "no such file or
        // directory": the same strerror text, without the code, lower-cased.
        let text = err.to_string();
        let text = text.split(" (os error").next().unwrap_or_default();
        let mut chars = text.chars();
        let lowered = chars
            .next()
            .map(|c| c.to_lowercase().chain(chars).collect::<String>())
            .unwrap_or_default();
        printers::Error::TemplateFile {
            path: path.to_string(),
            reason: format!("{op} {path}: {lowered}"),
        }
    };
    let mut file = std::fs::File::open(path).map_err(|e| failed("open", e))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| failed("read", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(output: &str) -> PrintFlags {
        PrintFlags {
            output: Some(output.to_string()),
            ..PrintFlags::default()
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
        let err = flags("wide")
            .to_printer("created", DryRunStrategy::None)
            .err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some(
                "unable to match a printer suitable for the output format \"wide\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml"
            )
        );
    }

    fn to_err(flags: &PrintFlags) -> Option<String> {
        flags
            .to_printer("created", DryRunStrategy::None)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn jsonpath_formats_take_the_template_after_the_equals_sign() {
        assert_eq!(
            render(&flags("jsonpath={.metadata.name}"), DryRunStrategy::None),
            "web"
        );
        assert_eq!(
            render(&flags("jsonpath-as-json={.kind}"), DryRunStrategy::None),
            "[\n    \"Deployment\"\n]\n"
        );
    }

    #[test]
    fn template_flag_supplies_the_template() {
        let with_template = |output: &str| PrintFlags {
            output: Some(output.to_string()),
            template: Some("{.kind}".to_string()),
            ..PrintFlags::default()
        };
        assert_eq!(
            render(&with_template("jsonpath"), DryRunStrategy::None),
            "Deployment"
        );
        // kubectl: with --template, `-o jsonpath=…` is no known format.
        assert_eq!(
            to_err(&with_template("jsonpath={.a}")).as_deref(),
            Some(
                "unable to match a printer suitable for the output format \"jsonpath={.a}\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml"
            )
        );
        // kubectl reads --template without -o as go-template…
        let bare = PrintFlags {
            template: Some("{{.kind}}/{{.metadata.name}}".to_string()),
            ..PrintFlags::default()
        };
        assert_eq!(render(&bare, DryRunStrategy::None), "Deployment/web");
        // … but an explicit empty -o keeps the default output (kubectl run
        // x --image=nginx --dry-run=client -o '' --template='{{.kind}}').
        let empty = PrintFlags {
            output: Some(String::new()),
            ..bare
        };
        assert_eq!(
            render(&empty, DryRunStrategy::Client),
            "deployment.apps/web created (dry run)\n"
        );
    }

    #[test]
    fn jsonpath_without_template_is_kubectls_error() {
        for output in [
            "jsonpath",
            "jsonpath=",
            "jsonpath-file",
            "jsonpath-as-json=",
        ] {
            assert_eq!(
                to_err(&flags(output)).as_deref(),
                Some("template format specified but no template given"),
                "{output}"
            );
        }
    }

    #[test]
    fn jsonpath_file_reads_the_template_or_says_why_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("t.jsonpath");
        std::fs::write(&file, "{.metadata.name}/{.kind}").expect("write");
        let output = format!("jsonpath-file={}", file.display());
        assert_eq!(
            render(&flags(&output), DryRunStrategy::None),
            "web/Deployment"
        );

        let missing = dir.path().join("missing");
        assert_eq!(
            to_err(&flags(&format!("jsonpath-file={}", missing.display()))),
            Some(format!(
                "error reading --template {0}, open {0}: no such file or directory",
                missing.display()
            ))
        );
    }

    #[test]
    fn go_template_formats_take_the_template_after_the_equals_sign_or_from_template() {
        for output in [
            "go-template={{.kind}} {{.metadata.name}}",
            "template={{.kind}} {{.metadata.name}}",
        ] {
            assert_eq!(
                render(&flags(output), DryRunStrategy::None),
                "Deployment web",
                "{output}"
            );
        }
        let with_template = PrintFlags {
            output: Some("go-template".to_string()),
            template: Some("{{.apiVersion}}".to_string()),
            ..PrintFlags::default()
        };
        assert_eq!(render(&with_template, DryRunStrategy::None), "apps/v1");
    }

    #[test]
    fn go_template_errors_are_kubectls() {
        for output in [
            "go-template",
            "go-template=",
            "template",
            "go-template-file",
            "templatefile=",
        ] {
            assert_eq!(
                to_err(&flags(output)).as_deref(),
                Some("template format specified but no template given"),
                "{output}"
            );
        }
        // kubectl run x --image=nginx --dry-run=client -o go-template='{{.a'
        assert_eq!(
            to_err(&flags("go-template={{.a")).as_deref(),
            Some("error parsing template {{.a, template: output:1: unclosed action")
        );
        // The printer applies --allow-missing-template-keys.
        let strict = PrintFlags {
            allow_missing_template_keys: false,
            ..flags("go-template={{.nope}}")
        };
        let printer = strict
            .to_printer("created", DryRunStrategy::None)
            .expect("printer");
        let mut out = Vec::new();
        let err = printer
            .print(&serde_json::json!({"kind": "Pod"}), &mut out)
            .expect_err("missing key");
        assert_eq!(
            err.to_string(),
            "error executing template \"{{.nope}}\": template: output:1:2: executing \"output\" at <.nope>: map has no entry for key \"nope\""
        );
    }

    #[test]
    fn go_template_files_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("t.tmpl");
        std::fs::write(&file, "{{.metadata.name}}/{{.kind}}").expect("write");
        for format in ["go-template-file", "templatefile"] {
            let output = format!("{format}={}", file.display());
            assert_eq!(
                render(&flags(&output), DryRunStrategy::None),
                "web/Deployment"
            );
        }
        // --template is the path for the -file formats.
        let via_flag = PrintFlags {
            output: Some("go-template-file".to_string()),
            template: Some(file.display().to_string()),
            ..PrintFlags::default()
        };
        assert_eq!(render(&via_flag, DryRunStrategy::None), "web/Deployment");
        let missing = dir.path().join("missing");
        assert_eq!(
            to_err(&flags(&format!("templatefile={}", missing.display()))),
            Some(format!(
                "error reading --template {0}, open {0}: no such file or directory",
                missing.display()
            ))
        );
    }
}
