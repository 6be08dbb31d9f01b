//! The [`Builder`]: gathers inputs and options, then [`Builder::build`] runs the stages
//! in one fixed order (cli-runtime's `Builder.Do()`).

use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;

use kube::core::Selector;

use super::decode::decode_stream;
use super::source::{Input, ReadContext, classify, read_input};
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

/// What a build produced: one entry per object or error, in input order.
#[derive(Debug)]
pub struct Visited {
    /// Objects and errors, in the order of the input.
    pub entries: Vec<Entry>,
}

impl Visited {
    /// The objects.
    pub fn infos(&self) -> impl Iterator<Item = &Info> {
        self.entries.iter().filter_map(|e| e.as_ref().ok())
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &ResourceError> {
        self.entries.iter().filter_map(|e| e.as_ref().err())
    }
}

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
    stdin: Option<Box<dyn Read + Send>>,
    url: UrlOptions,
    search_path: Option<OsString>,
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
            stdin: Some(Box::new(std::io::stdin())),
            url: UrlOptions::default(),
            search_path: None,
        }
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

    /// Reads every input and runs the stages. Errors about the command line (a bad
    /// selector or URL, `-f` with `-k`) are returned at once, before anything is read;
    /// errors about inputs and objects are entries of the result.
    pub async fn build(self, mapper: &mut RestMapper) -> Result<Visited, ResourceError> {
        if let Some(err) = self.errors.into_iter().next() {
            return Err(err);
        }
        let mut stdin = self.stdin;
        let mut cx = ReadContext {
            stdin: &mut stdin,
            url: &self.url,
            search_path: self.search_path.as_deref(),
        };

        // The order below is fixed, and each stage depends on the ones before it.
        //
        // 1. Sources, in command-line order; a directory yields its files in lexical
        //    order. Each stream is split into documents (empty and null ones skipped).
        let mut entries: Vec<Entry> = Vec::new();
        for input in &self.inputs {
            for stream in read_input(input, &mut cx).await {
                match stream {
                    Ok((name, bytes)) => entries.extend(decode_stream(&name, &bytes)),
                    Err(err) => entries.push(Err(err)),
                }
            }
        }
        // 2. Lists become their items, so later stages see (and validate, filter and
        //    map) every object on its own.
        if self.flatten {
            entries = decorate::flatten_lists(entries);
        }
        // 3. Validation before filtering: a malformed object is reported even when
        //    its labels would not match (its labels cannot be trusted).
        entries = decorate::validate_all(entries, self.validation);
        // 4. The label selector before mapping, so that discovery is only asked about
        //    the kinds that will be sent.
        if let Some(selector) = &self.selector {
            entries = decorate::filter_by_selector(entries, selector);
        }
        // 5. Mapping: kind → resource and scope (CRDs of the input are learned first).
        entries = decorate::map_all(entries, mapper).await;
        // 6. Namespaces need the scope from mapping: cluster-scoped objects never get
        //    one. With an explicit -n a different namespace is an error.
        if self.require_namespace {
            entries = decorate::require_namespace(entries, &self.namespace);
        } else if self.default_namespace {
            entries = decorate::set_namespace(entries, &self.namespace);
        }
        // 7. Last: without continue-on-error, everything after the first error goes.
        if !self.continue_on_error {
            entries = decorate::stop_at_first_error(entries);
        }
        Ok(Visited { entries })
    }
}

#[cfg(test)]
mod tests;
