//! The [`Builder`]: gathers inputs and options, then [`Builder::build`] runs the stages
//! in one fixed order (cli-runtime's `Builder.Do()`).
//!
//! The stages, in the order [`Builder::build`] runs them, one document at a time:
//! 1. sources in command-line order (files, directories with `-R` in lexical order,
//!    stdin, URLs, kustomize; files and stdin at most 256 MiB, a directory's files
//!    256 MiB together, a URL 32 MiB), each stream split into documents, empty and
//!    `null` ones skipped; text read as kubectl's decoder reads it (byte-order marks,
//!    invalid UTF-8 as U+FFFD, go-yaml's control characters refused), at most 128
//!    levels deep under an alias budget that grows with the document;
//! 2. strict validation, a `v1` List taken whole: a stream ends at its first document
//!    that does not parse or validate, as kubectl's `StreamVisitor` returns there;
//! 3. Lists mapped by their own kind (once discovery is prepared) and flattened;
//! 4. what any mode needs to send an item, and the top-level `metadata` checked
//!    against `ObjectMeta`'s Go types as kubectl's decoder does;
//! 5. the `-l` filter; 6. mapping (discovery, asked only about the group-versions the
//!    input uses, cached on disk); 7. namespaces; 8. stop at the first error unless
//!    continuing on errors.
//!
//! Errors name only the source, as kubectl's do; the document, line and item go to the
//! `-v=4` log. Files and stdin are read on the blocking pool.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;

use kube::core::{GroupVersionKind, Selector};

use super::decode::{check_metadata, decode_lazily, decode_on_disk};
use super::server_schema::{self, Kinds, SchemaSource, ServerSchema};
use super::source::{Body, Input, ReadContext, Stream, classify, read_input};
use super::validate::validate;
use super::{
    Entry, Info, ResourceError, RestMapper, UrlOptions, Validation, decorate, parse_selector,
};

/// kubectl's `FilenameOptions`: `-f` (repeatable, comma-separated), `-R`, `-k`.
#[derive(Debug, Clone, Default)]
pub struct FilenameOptions {
    /// Files, directories, `-` and URLs, in order.
    pub filenames: Vec<String>,
    /// Descend into subdirectories of directories given with `-f`.
    pub recursive: bool,
    /// A kustomization directory.
    pub kustomize: Option<PathBuf>,
}

impl FilenameOptions {
    /// Whether no input was given at all.
    pub fn is_empty(&self) -> bool {
        self.filenames.is_empty() && self.kustomize.is_none()
    }

    /// kubectl's checks on combining the flags, with its messages.
    pub fn validate(&self) -> Result<(), ResourceError> {
        if !self.filenames.is_empty() && self.kustomize.is_some() {
            return Err(ResourceError::Usage(
                "only one of -f or -k can be specified".into(),
            ));
        }
        if self.kustomize.is_some() && self.recursive {
            return Err(ResourceError::Usage(
                "the -k flag can't be used with -f or -R".into(),
            ));
        }
        Ok(())
    }
}

/// What a build produced: the inputs, read, and everything needed to turn them into
/// entries (one per object or error, in input order) each time [`Visited::entries`] is
/// called.
///
/// Only the raw bytes of the inputs are kept, not the decoded objects: a decoded
/// object takes several times the memory of its text, so a command that walks the
/// entries once creates 20,000 objects in the memory of a few. Each walk decodes one
/// document at a time, also within a stream (a single file may hold them all). A
/// large file of plain YAML is not even kept as bytes: each walk reads it from disk
/// again, one document at a time (`source::on_disk`). Decoding again per walk
/// costs little CPU and gives the same entries, because every stage is deterministic
/// and the mapper is fixed once the build is done.
pub struct Visited {
    streams: Vec<Stream>,
    /// How many documents each stream holds (for the origins, which name them).
    documents: Vec<usize>,
    stages: Stages,
    mapper: RestMapper,
}

/// The settings of the stages after reading.
struct Stages {
    flatten: bool,
    validation: Validation,
    server_schema: Option<ServerSchema>,
    always_client_side: bool,
    selector: Option<Selector>,
    namespace: String,
    default_namespace: bool,
    require_namespace: bool,
    continue_on_error: bool,
}

impl Stages {
    /// Stages 2–4 (validate, flatten, filter) on one stream, which decoding starts, one
    /// document at a time as the iterator is advanced (see [`decode_lazily`]).
    /// `documents` is the stream's count of documents, for the origins; `mapper`, once
    /// discovery is prepared, maps each list by its own kind before it is flattened.
    fn before_mapping<'s>(
        &'s self,
        stream: &'s Stream,
        documents: usize,
        mapper: &'s RestMapper,
    ) -> impl Iterator<Item = Entry> + 's {
        self.before_mapping_seeing(decoded(stream, documents), Some(mapper), |_| {})
    }

    /// [`Self::before_mapping`] on decoded documents, calling `seen` with every
    /// document that survives stage 2 (before flattening).
    fn before_mapping_seeing<'s>(
        &'s self,
        documents: impl Iterator<Item = Entry> + 's,
        mapper: Option<&'s RestMapper>,
        mut seen: impl FnMut(&Entry) + 's,
    ) -> impl Iterator<Item = Entry> + 's {
        // A document that does not parse or validate ends its stream: kubectl stops
        // reading the file there (what it read before is created). Errors found
        // later (decoding, mapping) skip only their object.
        let mut ended = false;
        documents
            .map_while(move |entry| {
                if ended {
                    return None;
                }
                let entry = self.validate_document(entry);
                ended = decorate::is_broken_document(&entry);
                seen(&entry);
                Some(self.after_validation(entry, mapper))
            })
            .flatten()
    }

    /// 2. Strict validation of each document as read, before flattening, as kubectl's
    ///    StreamVisitor does: a `v1` List is one document whose problems are all its
    ///    items' together (its `validateList`).
    fn validate_document(&self, entry: Entry) -> Entry {
        match self.validation {
            Validation::Strict => {
                decorate::validate_documents(vec![entry], |info, in_list| self.check(info, in_list))
                    .pop()
                    .expect("one document in, one out")
            }
            // kubectl's warn asks about each document's own kind, which for anything
            // but a `v1` List needs the document: without it the document fails as
            // read (ending its stream), a list before it is flattened.
            Validation::Warn => entry.and_then(|info| match &self.server_schema {
                Some(schema @ Err(_)) if !is_v1_list(&info) => {
                    server_schema::check(info, Validation::Warn, schema, false, false)
                }
                _ => Ok(info),
            }),
            Validation::Ignore => entry,
        }
    }

    /// Stages 3–4 on one document that passed stage 2: its entries (a List's items).
    fn after_validation(&self, entry: Entry, mapper: Option<&RestMapper>) -> Vec<Entry> {
        let strict = self.validation == Validation::Strict;
        let mut entries = vec![entry];
        // 3. Lists become their items, so later stages see (filter and map) every
        //    object on its own.
        if self.flatten {
            entries = decorate::flatten_lists(entries, mapper);
        }
        // What any mode needs to send an object (and `warn`'s warnings), for what
        // strict validation has not seen whole: a List's items. What kubectl's decoder
        // refuses in `metadata` comes after validation, as there; with validation off
        // the decoder speaks first.
        if self.validation == Validation::Ignore {
            entries = check_metadata(entries);
        }
        entries = entries
            .into_iter()
            .map(|e| {
                e.and_then(|info| {
                    if strict && info.origin.item.is_none() {
                        Ok(info)
                    } else {
                        self.check(info, false)
                    }
                })
            })
            .collect();
        if self.validation != Validation::Ignore {
            entries = check_metadata(entries);
        }
        // 4. The label selector before mapping, so that discovery is only asked about
        //    the kinds that will be sent. After validation: a malformed object is
        //    reported even when its labels would not match (they cannot be trusted).
        if let Some(selector) = &self.selector {
            entries = decorate::filter_by_selector(entries, selector);
        }
        entries
    }

    /// Validation of one object in the build's mode, against the server's schema when
    /// there is one, else the built-in kinds' schema. A `v1` List's items (`in_list`)
    /// are validated on the client whatever their kind's endpoint supports.
    fn check(&self, info: Info, in_list: bool) -> Result<Info, ResourceError> {
        match &self.server_schema {
            // The items of a `v1` List under warn, when the document could not be
            // fetched (every other document failed as read): kubectl's warn never
            // asks about them, and needs no document for the List itself.
            Some(Err(_)) if self.validation == Validation::Warn && info.origin.item.is_some() => {
                validate(info, Validation::Ignore)
            }
            Some(schema) => server_schema::check(
                info,
                self.validation,
                schema,
                self.always_client_side,
                in_list,
            ),
            None => validate(info, self.validation),
        }
    }

    /// Stages 5–6 (map, namespace) on the entries of one document.
    fn after_mapping(&self, entries: Vec<Entry>, mapper: &RestMapper) -> Vec<Entry> {
        // 5. Mapping: kind → resource and scope.
        let entries = decorate::map_all(entries, mapper);
        // 6. Namespaces need the scope from mapping: cluster-scoped objects never get
        //    one. With an explicit -n a different namespace is an error.
        if self.require_namespace {
            decorate::require_namespace(entries, &self.namespace)
        } else if self.default_namespace {
            decorate::set_namespace(entries, &self.namespace)
        } else {
            entries
        }
    }
}

impl std::fmt::Debug for Visited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Visited")
            .field("streams", &self.streams.len())
            .finish_non_exhaustive()
    }
}

impl Visited {
    /// The objects and errors, in input order (decoded afresh on every call).
    pub fn entries(&self) -> Box<dyn Iterator<Item = Entry> + '_> {
        let all = self
            .streams
            .iter()
            .zip(&self.documents)
            .flat_map(|(stream, &documents)| {
                self.stages
                    .before_mapping(stream, documents, &self.mapper)
                    .flat_map(|entry| self.stages.after_mapping(vec![entry], &self.mapper))
            });
        // 7. Last: without continue-on-error, everything after the first error goes.
        if self.stages.continue_on_error {
            Box::new(all)
        } else {
            Box::new(decorate::stop_at_first_error(all))
        }
    }
}

/// kubectl's warning for objects the server cannot warn about, given runs of
/// documents of one kind and their length (`server_schema::warn_unsupported`).
type WarnUnsupported = fn(&[server_schema::Documents], Validation, &ServerSchema);

/// Collects inputs and options (cli-runtime's `resource.Builder`).
pub struct Builder {
    inputs: Vec<Input>,
    errors: Vec<ResourceError>,
    namespace: String,
    default_namespace: bool,
    require_namespace: bool,
    selector: Option<Selector>,
    flatten: bool,
    continue_on_error: bool,
    validation: Validation,
    server_schema: Option<ServerSchema>,
    always_client_side: bool,
    /// kubectl 1.32's klog warning for `warn` where the server cannot warn; set with
    /// the server's schema (see `server_schema::warn_unsupported`).
    warn_unsupported: Option<WarnUnsupported>,
    /// Fetches the server's schema once the first pass knows the input's kinds.
    schema_source: Option<Box<dyn SchemaSource>>,
    stdin: Option<Box<dyn Read + Send>>,
    url: UrlOptions,
    search_path: Option<OsString>,
    kubectl_path: Option<OsString>,
    input_crds_map: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// A builder with no inputs, reading stdin from the process.
    pub fn new() -> Self {
        Self {
            inputs: Vec::new(),
            errors: Vec::new(),
            namespace: String::new(),
            default_namespace: false,
            require_namespace: false,
            selector: None,
            flatten: false,
            continue_on_error: false,
            validation: Validation::Ignore,
            server_schema: None,
            always_client_side: false,
            warn_unsupported: None,
            schema_source: None,
            stdin: Some(Box::new(std::io::stdin())),
            url: UrlOptions::default(),
            search_path: None,
            // kubectl (1.33+) tells its plugins which kubectl the user ran; `-k` runs
            // that one's kustomize, as kubectl itself would.
            kubectl_path: std::env::var_os("KUBECTL_PATH").filter(|p| !p.is_empty()),
            input_crds_map: true,
        }
    }

    /// The chain every `-f` command starts with, kubectl's
    /// `NewBuilder().Unstructured().Schema(validation).NamespaceParam(namespace)
    /// .DefaultNamespace().FilenameParam(enforce_namespace, inputs).Flatten()`; a
    /// command adds what is its own (`ContinueOnError`, a label selector, stdin).
    pub fn files(
        validation: Validation,
        namespace: impl Into<String>,
        enforce_namespace: bool,
        inputs: &FilenameOptions,
    ) -> Self {
        Self::new()
            .schema(validation)
            .namespace_param(namespace)
            .default_namespace()
            .filename_param(enforce_namespace, inputs)
            .flatten()
    }

    /// The namespace used by [`Self::default_namespace`] and the enforcement of `-n`.
    pub fn namespace_param(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Namespaced objects without a namespace get the namespace parameter.
    pub fn default_namespace(mut self) -> Self {
        self.default_namespace = true;
        self
    }

    /// Objects naming another namespace than the parameter are errors (kubectl does
    /// this when `-n` was given explicitly).
    pub fn require_namespace(mut self) -> Self {
        self.require_namespace = true;
        self
    }

    /// Adds the `-f`/`-R`/`-k` inputs; `enforce_namespace` turns on
    /// [`Self::require_namespace`], as kubectl's `FilenameParam` does.
    pub fn filename_param(mut self, enforce_namespace: bool, opts: &FilenameOptions) -> Self {
        if let Err(e) = opts.validate() {
            self.errors.push(e);
        }
        for name in &opts.filenames {
            match classify(name, opts.recursive) {
                Ok(input) => self.inputs.push(input),
                Err(e) => self.errors.push(e),
            }
        }
        if let Some(dir) = &opts.kustomize {
            self.inputs.push(Input::Kustomize(dir.clone()));
        }
        if enforce_namespace {
            self.require_namespace = true;
        }
        self
    }

    /// Adds `bytes` as an input named `name` in messages (kubectl's `Stream`; `--edit`
    /// reads the edited text as `edited-file`).
    pub fn stream(mut self, name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.inputs.push(Input::Bytes {
            name: name.into(),
            bytes: bytes.into(),
        });
        self
    }

    /// Keeps only objects whose labels match `selector` (`-l`); empty selects all.
    pub fn label_selector_param(mut self, selector: &str) -> Self {
        if selector.trim().is_empty() {
            return self;
        }
        match parse_selector(selector) {
            Ok(sel) => self.selector = Some(sel),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Client-side validation mode (`--validate`); `Ignore` by default.
    pub fn schema(mut self, validation: Validation) -> Self {
        self.validation = validation;
        self
    }

    /// Validates against the server's OpenAPI document, as kubectl 1.32 does, instead
    /// of the built-in kinds' schema (see `server_schema.rs`); `Err` is why it could not be
    /// fetched, which `strict` and `warn` report for every object.
    pub fn server_schema(mut self, schema: ServerSchema) -> Self {
        self.server_schema = Some(schema);
        self.warn_unsupported = Some(server_schema::warn_unsupported);
        self
    }

    /// Like [`Self::server_schema`], with the schema fetched by `source` once the
    /// input's kinds are known, so that only what they need is downloaded (kubectl
    /// 1.37's order: OpenAPI v3 for the kinds' endpoints, v2 for what is validated on
    /// the client).
    pub fn server_schema_from(mut self, source: impl SchemaSource + 'static) -> Self {
        self.schema_source = Some(Box::new(source));
        self.warn_unsupported = Some(server_schema::warn_unsupported);
        self
    }

    /// Like [`Self::server_schema`], validating on the client whatever the server
    /// supports, as kubectl 1.17 did (rolling-update's `-f`).
    pub fn client_side_schema(mut self, schema: ServerSchema) -> Self {
        self.server_schema = Some(schema);
        self.always_client_side = true;
        // 1.17 had no server-side validation, so nothing to warn about its absence.
        self.warn_unsupported = None;
        self
    }

    /// Expands Lists into their items.
    pub fn flatten(mut self) -> Self {
        self.flatten = true;
        self
    }

    /// Keeps going past bad inputs and objects; every error stays in the result.
    pub fn continue_on_error(mut self) -> Self {
        self.continue_on_error = true;
        self
    }

    /// Reads `-f -` from `reader` instead of the process's stdin.
    pub fn stdin(mut self, reader: impl Read + Send + 'static) -> Self {
        self.stdin = Some(Box::new(reader));
        self
    }

    /// Limits for `-f http(s)://…`.
    pub fn url_options(mut self, opts: UrlOptions) -> Self {
        self.url = opts;
        self
    }

    /// Where to look for `kubectl`/`kustomize` for `-k`, instead of `PATH`.
    pub fn search_path(mut self, path: impl Into<OsString>) -> Self {
        self.search_path = Some(path.into());
        self
    }

    /// The `kubectl` that `-k` runs before looking in `PATH` (`KUBECTL_PATH` by
    /// default; `None` to look in `PATH` only).
    pub fn kubectl_path(mut self, path: Option<OsString>) -> Self {
        self.kubectl_path = path;
        self
    }

    /// Whether a CustomResourceDefinition of the input maps its own instances (the
    /// default, for a create that makes the CRD first, or offline). `false` maps them
    /// through the server only, as kubectl does: for a server dry run, which creates
    /// no CRD, the instances fail to map in kubectl's words.
    pub fn input_crds_map(mut self, yes: bool) -> Self {
        self.input_crds_map = yes;
        self
    }

    /// Reads every input, then runs the stages once to learn which kinds occur (and
    /// the CRDs of the input) and asks discovery about just those. Errors about the
    /// command line (a bad selector or URL, `-f` with `-k`) are returned at once,
    /// before anything is read; errors about inputs and objects are entries of the
    /// result.
    pub async fn build(self, mapper: &mut RestMapper) -> Result<Visited, ResourceError> {
        // Inputs that cannot be combined are refused first (kubectl's command checks
        // them before building); then kubectl's `Builder` returns every path or URL
        // that is wrong, as one aggregate; a bad selector only when they are right.
        let mut errors = self.errors;
        if let Some(i) = errors
            .iter()
            .position(|e| matches!(e, ResourceError::Usage(_)))
        {
            return Err(errors.swap_remove(i));
        }
        let (mut inputs, mut others): (Vec<_>, Vec<_>) = errors.into_iter().partition(|e| {
            matches!(
                e,
                ResourceError::PathNotFound { .. } | ResourceError::InvalidUrl { .. }
            )
        });
        match inputs.len() {
            0 if !others.is_empty() => return Err(others.swap_remove(0)),
            0 => {}
            1 => return Err(inputs.swap_remove(0)),
            _ => return Err(ResourceError::Several(inputs)),
        }
        let mut stdin = self.stdin;
        let mut cx = ReadContext {
            stdin: &mut stdin,
            url: &self.url,
            search_path: self.search_path.as_deref(),
            kubectl_path: self.kubectl_path.as_deref(),
        };
        let mut stages = Stages {
            flatten: self.flatten,
            validation: self.validation,
            server_schema: self.server_schema,
            always_client_side: self.always_client_side,
            selector: self.selector,
            namespace: self.namespace,
            default_namespace: self.default_namespace,
            require_namespace: self.require_namespace,
            continue_on_error: self.continue_on_error,
        };

        // The order of the stages is fixed, and each depends on the ones before it:
        // 1. sources, in command-line order (a directory yields its files in lexical
        //    order), each stream split into documents, empty and null ones skipped;
        // 2. validate (a stream ends at its first broken document); 3. flatten;
        // 4. label filter (Stages::before_mapping);
        // 5. map; 6. namespaces (Stages::after_mapping); 7. stop at the first error
        //    unless continuing on errors (Visited::entries).
        let streams = read_inputs(&self.inputs, &mut cx).await?;
        // Discovery is prepared from what survives stages 2–4, one stream at a time
        // so that the decoded objects never all sit in memory together. A schema
        // fetched on demand is not there yet: this pass checks only what any mode
        // needs (so discovery may be asked about a kind after a document that strict
        // validation refuses later), and tells the source which kinds to fetch for.
        let deferred = self.schema_source.is_some() && stages.validation != Validation::Ignore;
        let mode = stages.validation;
        if deferred {
            stages.validation = Validation::Ignore;
            if let Some(source) = &self.schema_source
                && !may_hold_lists(&streams)
            {
                source.prefetch();
            }
        }
        let Survey {
            gvks,
            documents,
            counts,
        } = stages.survey(&streams, mapper, self.input_crds_map);
        let (kinds, objects) = schema_kinds(documents);
        stages.validation = mode;
        match &self.schema_source {
            Some(source) if deferred => {
                // The schema and discovery are independent requests: in parallel.
                let (schema, ()) = futures::join!(source.fetch(&kinds, mode), mapper.prepare(gvks));
                stages.server_schema = Some(schema);
            }
            _ => mapper.prepare(gvks).await,
        }
        if let (Some(warn), Some(schema)) = (self.warn_unsupported, &stages.server_schema) {
            // Once per object: later walks decode the same objects again.
            warn(&objects, stages.validation, schema);
        }
        Ok(Visited {
            streams,
            documents: counts,
            stages,
            mapper: mapper.clone(),
        })
    }
}

/// Runs of documents of the same kind (and list-ness) in one stream (its index), in order: what the schema is
/// fetched for and kubectl's warn notice (one line per document) need, in memory that
/// does not grow with a run of like documents.
type DocumentRuns = Vec<((crate::openapi::Gvk, bool, usize), usize)>;

/// What the first pass over the streams learns.
struct Survey {
    /// The kinds of the objects that survive stages 2–4, for discovery.
    gvks: HashSet<GroupVersionKind>,
    documents: DocumentRuns,
    /// How many documents each stream holds.
    counts: Vec<usize>,
}

impl Stages {
    /// The first pass: stages 2–4 on every stream, the CRDs of the input learnt by
    /// `mapper` when `input_crds_map`.
    fn survey(&self, streams: &[Stream], mapper: &mut RestMapper, input_crds_map: bool) -> Survey {
        let mut gvks = HashSet::new();
        let mut documents: DocumentRuns = Vec::new();
        let mut counts = Vec::with_capacity(streams.len());
        for (index, stream) in streams.iter().enumerate() {
            let mut decoded = decoded(stream, 0);
            let mut count = 0;
            // Lists are mapped by their own kinds too before they are flattened.
            let mut lists = Vec::new();
            let seen = |entry: &Entry| {
                let Ok(info) = entry else { return };
                if decorate::is_list(info) {
                    lists.push(info.gvk.clone());
                }
                let gvk = &info.gvk;
                let kind = (gvk.group.clone(), gvk.version.clone(), gvk.kind.clone());
                let document = (kind, decorate::is_list(info), index);
                match documents.last_mut() {
                    Some((last, n)) if *last == document => *n += 1,
                    _ => documents.push((document, 1)),
                }
            };
            let entries =
                self.before_mapping_seeing(decoded.by_ref().inspect(|_| count += 1), None, seen);
            for info in entries.flatten() {
                if input_crds_map {
                    mapper.learn_crds([&info]);
                }
                gvks.insert(info.gvk);
            }
            gvks.extend(lists);
            // What follows a broken document is not read, but is counted, as the
            // origins count every document of their stream.
            counts.push(count + decoded.count());
        }
        Survey {
            gvks,
            documents,
            counts,
        }
    }
}

/// Whether `info` is a `v1` List (not another list kind).
fn is_v1_list(info: &Info) -> bool {
    crate::openapi::is_v1_list(&info.gvk.group, &info.gvk.version, &info.gvk.kind)
}

/// What the schema is fetched for, and the documents of kubectl's warn notice.
fn schema_kinds(documents: DocumentRuns) -> (Kinds, Vec<server_schema::Documents>) {
    let mut kinds = Kinds::default();
    let mut objects = Vec::new();
    for ((gvk, is_list, stream), n) in documents {
        if is_list {
            kinds.lists = true;
        } else {
            kinds.documents.insert(gvk.clone());
        }
        objects.push(server_schema::Documents {
            gvk,
            is_list,
            stream,
            count: n,
        });
    }
    (kinds, objects)
}

/// The documents of one stream, decoded lazily (an unreadable stream is its error).
fn decoded<'s>(stream: &'s Stream, documents: usize) -> Box<dyn Iterator<Item = Entry> + 's> {
    match stream {
        Ok((name, Body::Bytes(bytes))) => decode_lazily(name, bytes, documents),
        Ok((name, Body::OnDisk(file))) => decode_on_disk(name, file, documents),
        Err(err) => Box::new(std::iter::once(Err(err.duplicate()))),
    }
}

/// Whether some document of `streams` may be a List, from their text: any `List` in
/// it. A List-only input asks no OpenAPI v3 at all (as kubectl), so the index is not
/// prefetched for an input that may be one; a word `List` elsewhere only costs the
/// overlap.
fn may_hold_lists(streams: &[Stream]) -> bool {
    streams.iter().any(|stream| match stream {
        Ok((_, Body::Bytes(bytes))) => bytes.windows(4).any(|w| w == b"List"),
        Ok((_, Body::OnDisk(file))) => file.mentions_list,
        Err(_) => false,
    })
}

/// Every input's streams, in command-line order (stage 1).
async fn read_inputs(
    inputs: &[Input],
    cx: &mut ReadContext<'_>,
) -> Result<Vec<Stream>, ResourceError> {
    let mut streams = Vec::new();
    for input in inputs {
        let earlier = !streams.is_empty();
        let mut read = read_input(input, cx).await;
        let refused = read
            .iter()
            .position(|s| matches!(s, Err(ResourceError::EmptyDirectory { .. })))
            .filter(|_| !earlier);
        // kubectl's `Builder.Path` records it among the builder's errors, and `Do` then
        // refuses the whole command: nothing after it is read or created (`-f empty/
        // -f a.yaml` creates nothing).
        if let Some(i) = refused
            && let Err(err) = read.swap_remove(i)
        {
            return Err(err);
        }
        streams.extend(read.into_iter().filter(|s| path_keeps(earlier, s)));
    }
    Ok(streams)
}

/// Whether kubectl's `Builder.Path` keeps `stream` of an input: a directory without
/// a manifest is refused only while its list of paths (kept across `-f`) and of
/// errors are both empty; after an `earlier` input gave a file (or failed), the
/// directory is silence.
fn path_keeps(earlier: bool, stream: &Stream) -> bool {
    !(earlier && matches!(stream, Err(ResourceError::EmptyDirectory { .. })))
}

#[cfg(test)]
mod tests;
