//! Files, directories, stdin, URLs and kustomizations turned into objects ready to send:
//! cli-runtime's `pkg/resource`, made smaller.
//!
//! kubectl reads `-f` inputs through a `Builder` that stacks `Visitor`s: a source
//! visitor per input (`FileVisitor`, `StreamVisitor`, `URLVisitor`, `KustomizeVisitor`),
//! then decorators (`FlattenListVisitor`, `FilteredVisitor`, `DecoratedVisitor` with
//! `SetNamespace`/`RequireNamespace`, `ContinueOnErrorVisitor`), each handing an `Info`
//! to the next. Here the same stages are plain functions over `Vec<Entry>`
//! ([`decorate`]), applied in one fixed order. [`Builder::build`] reads the inputs and
//! walks them once so that discovery is asked, in one batch, about just the
//! group-versions that occur; [`Visited::entries`] then yields the objects lazily, in
//! input order, as often as needed (`create-file` walks twice: Namespaces and CRDs
//! first, then the rest), keeping only the raw input bytes in memory.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), resources::ResourceError> {
//! use resources::{Builder, FilenameOptions, RestMapper};
//! let mut mapper = RestMapper::for_client(client, None);
//! let visited = Builder::new()
//!     .continue_on_error()
//!     .namespace_param("default")
//!     .default_namespace()
//!     .filename_param(false, &FilenameOptions { filenames: vec!["manifests/".into()], recursive: true, kustomize: None })
//!     .flatten()
//!     .build(&mut mapper)
//!     .await?;
//! for entry in visited.entries() {
//!     match entry {
//!         Ok(info) => println!("{} {}", info.gvk.kind, info.name()),
//!         Err(err) => eprintln!("{err}"),
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! Besides the Builder's stages (`source`, `url`, `kustomize`, `decode`, `validate`,
//! [`decorate`], `selector`, `mapper`, `info`, `error`, `builtin`, [`server_schema`])
//! and the on-disk caches' one atomic write (`cache_file`),
//! the crate holds what the plugins send and check with: [`openapi`] (`--validate`
//! against the server's document), [`rest`] (the create verb), [`typed`] (typed models
//! through text) and [`generate`] (run-pod's pure generators). It uses `apiclient`
//! and `goyaml`; `cli` uses it.

mod builder;
mod builtin;
mod cache_file;
mod decode;
pub mod decorate;
mod error;
#[cfg(test)]
mod fake;
mod info;
mod kustomize;
mod mapper;
mod selector;
pub mod server_schema;
mod source;
mod url;
mod validate;

pub mod generate;
pub mod openapi;
pub mod rest;
pub mod typed;

pub use builder::{Builder, FilenameOptions, Visited};
pub use builtin::mapping_at;
pub use decode::MAX_YAML_DEPTH;
pub use error::{Entry, ObjectRef, ResourceError};
pub use info::{Info, Mapping, Origin};
pub use mapper::{Discover, DiscoveryCache, NoMapping, RestMapper, log_failed_discovery};
pub use selector::parse_selector;
pub use server_schema::{Kinds, SchemaSource, ServerSchema};
pub use source::{MAX_DIRECTORY_BYTES, MAX_LOCAL_BYTES, read_local};
pub use url::UrlOptions;
pub use validate::Validation;
