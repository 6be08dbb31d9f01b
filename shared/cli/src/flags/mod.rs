//! Reusable clap flag groups, in the shape of cli-runtime's `genericclioptions`.
//!
//! Each group is a `#[derive(clap::Args)]` struct that a plugin flattens into its own
//! `Args`, and converts with a `to_*()` method. Nothing here sends a request except
//! `--match-server-version`'s one `/version` request in [`ConfigFlags::to_config`].
//!
//! - [`ConfigFlags`]: kubectl's global kubeconfig flags, mapped onto
//!   [`apiclient::kubeconfig`]'s loading rules and overrides.
//! - [`PrintFlags`]: `-o/--output` → a [`crate::printers::Printer`].
//! - [`pflag_arguments`]: a flag that needs an argument takes the next word, `-x` or not.
//! - [`go_path`], [`given_path`]: a path flag that takes an empty value as pflag does,
//!   meaning "not given" to kubectl.
//! - [`get_string_array`], [`get_string_slice`]: a repeatable flag's values as pflag's
//!   `GetStringArray` and `stringSlice` give them (empty values that are none).
//! - [`go_bool_flags`], [`parse_go_bool`]: `--flag=false` for boolean flags, as pflag allows.
//! - [`go_int`], [`go_int32`], [`klog_level`]: number flags parsed as Go's `strconv.ParseInt`.
//! - [`DryRunFlags`]: `--dry-run=none|client|server` → a [`DryRunStrategy`].
//! - [`FieldManagerFlags`]: `--field-manager`, with the command's own default.
//! - [`RecordFlags`]: the deprecated `--record` → a [`ChangeCauseRecorder`].
//! - [`SaveConfigFlags`]: `--save-config` → [`save_config`], the last-applied annotation.

mod argument;
mod array;
mod boolean;
mod config;
mod dry_run;
mod duration;
mod field_manager;
mod integer;
mod path;
mod print;
mod record;
mod save_config;

pub use argument::pflag_arguments;
pub use array::{get_string_array, get_string_slice};
pub use boolean::{go_bool_flags, parse_go_bool};
pub use config::ConfigFlags;
pub use dry_run::{DryRunFlags, DryRunStrategy, InvalidDryRun, parse_dry_run};
pub use duration::{go_duration, parse_go_duration, parse_go_duration_signed};
pub use field_manager::FieldManagerFlags;
pub use integer::{IntErrorKind, ParseIntError, go_int, go_int32, klog_level, parse_go_int};
pub use path::{given_path, go_path};
pub use print::PrintFlags;
pub use record::{CHANGE_CAUSE, ChangeCauseRecorder, RecordFlags, change_cause};
pub use save_config::{Held, LAST_APPLIED, SaveConfigFlags, save_config};
