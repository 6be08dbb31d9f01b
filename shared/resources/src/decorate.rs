//! The stages between reading and sending, as small functions over entries: kubectl's
//! `FlattenListVisitor`, `FilteredVisitor` with `FilterByLabelSelector`, the mapping done
//! by its `mapper`, the `SetNamespace`/`RequireNamespace` helpers of `DecoratedVisitor`,
//! and `ContinueOnErrorVisitor`. [`Builder::build`](super::Builder::build) stacks them in
//! a fixed order; each keeps errors in place so the order of the input is preserved.

use kube::core::{Selector, SelectorExt};
use serde_json::Value;

use super::error::ObjectRef;
use super::mapper::{LookupError, RestMapper};
use super::{Entry, Info, ResourceError};

/// Replaces every `List` (kind `List` or `*List` with an `items` array) by its items,
/// which remember the List's origin and their position in it: kubectl's
/// `FlattenListVisitor`, in its order of failures. A List of items that are not all
/// maps fails as its decoding does; with `mapper` (once discovery is prepared) the
/// List is then mapped by its own kind, as kubectl maps every document before it
/// flattens it, so a list kind that does not map is one error and its items are not
/// read; and a List holding a list fails whole, as kubectl cannot flatten one.
pub fn flatten_lists(entries: Vec<Entry>, mapper: Option<&RestMapper>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        flatten_into(entry, mapper, &mut out);
    }
    out
}

fn flatten_into(entry: Entry, mapper: Option<&RestMapper>, out: &mut Vec<Entry>) {
    let mut info = match entry {
        Ok(info) if is_list(&info) => info,
        // kubectl's decoder takes any document with `items` for a list, whose items
        // must then be an array.
        Ok(info)
            if info
                .object
                .get("items")
                .is_some_and(|i| !i.is_null() && !i.is_array()) =>
        {
            let go_type = match &info.object["items"] {
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "bool",
                _ => "object",
            };
            return out.push(Err(ResourceError::Decode {
                origin: info.origin,
                reason: format!(
                    "json: cannot unmarshal {go_type} into Go struct field decodeList.items of type []json.RawMessage"
                ),
            }));
        }
        other => return out.push(other),
    };
    let items = match info.object.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    // kubectl decodes a List into maps before flattening it: an item that is not one
    // fails the whole List (its other items are not sent), in Go's words.
    if let Some(bad) = items.iter().find(|i| !i.is_object() && !i.is_null()) {
        let go_type = match bad {
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            _ => "array",
        };
        return out.push(Err(ResourceError::Decode {
            origin: info.origin,
            reason: format!(
                "json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
            ),
        }));
    }
    if let Some(Err(e)) = mapper.map(|m| m.lookup_list(&info.gvk)) {
        return out.push(Err(mapping_error(info, e)));
    }
    // An item with an `items` array is a list to kubectl whatever its kind (an
    // unstructured object's `IsList`), one it cannot extract items from.
    if items
        .iter()
        .any(|item| item.get("items").is_some_and(Value::is_array))
    {
        return out.push(Err(ResourceError::NestedList {
            origin: info.origin,
        }));
    }
    for (i, item) in items.into_iter().enumerate() {
        let mut origin = info.origin.clone();
        origin.item = Some(i + 1);
        // A null item decodes as an empty map (which then lacks a kind).
        let item = if item.is_null() {
            Value::Object(Default::default())
        } else {
            item
        };
        out.push(Ok(Info::from_object(item, origin)));
    }
}

pub(crate) fn is_list(info: &Info) -> bool {
    info.gvk.kind.ends_with("List") && info.object.get("items").is_some_and(Value::is_array)
}

/// Strict validation of every document with `check` (one object's validation; its
/// second argument says the object is a `v1` `List`'s item), a `v1` `List` as a whole:
/// kubectl's `validateList` checks each item and reports the problems of all of them
/// as one error for the List, which is then not sent at all. kubectl never asks the
/// server to validate a List (its `fieldValidation` verifier says no for `v1` `List`),
/// so its items are checked on the client even where their kind's endpoint validates.
/// Other lists (`ConfigMapList`) are objects of their own schema.
pub fn validate_documents(
    entries: Vec<Entry>,
    check: impl Fn(Info, bool) -> Result<Info, ResourceError>,
) -> Vec<Entry> {
    entries
        .into_iter()
        .map(|entry| {
            let info = entry?;
            if !is_plain_list(&info) {
                return check(info, false);
            }
            let items = info.object.get("items").and_then(Value::as_array);
            let mut problems = Vec::new();
            for item in items.into_iter().flatten() {
                // What does not stop validation (an item without a name) is found
                // again once the List is flattened, and skips only its item.
                if let Err(ResourceError::Invalid { problems: more, .. }) =
                    check(Info::from_object(item.clone(), info.origin.clone()), true)
                {
                    problems.extend(more);
                }
            }
            if problems.is_empty() {
                Ok(info)
            } else {
                Err(ResourceError::Invalid {
                    origin: info.origin,
                    problems,
                })
            }
        })
        .collect()
}

/// kubectl's `v1` List (group-less, exactly `List`), which its validator treats as a
/// container rather than an object.
fn is_plain_list(info: &Info) -> bool {
    info.gvk.group.is_empty() && info.gvk.version == "v1" && info.gvk.kind == "List"
}

/// Drops everything after the first document that did not parse or validate: kubectl's
/// StreamVisitor returns there, so the rest of that stream is never read.
pub fn stop_stream_at_broken_document(entries: &mut Vec<Entry>) {
    let broken = entries.iter().position(is_broken_document);
    if let Some(at) = broken {
        entries.truncate(at + 1);
    }
}

/// Whether `entry` is a document that did not parse or validate, which ends its
/// stream (see [`stop_stream_at_broken_document`]).
pub fn is_broken_document(entry: &Entry) -> bool {
    matches!(
        entry,
        Err(ResourceError::Parse { .. } | ResourceError::Invalid { .. })
    )
}

/// Keeps the objects whose labels match `selector` (errors are kept).
pub fn filter_by_selector(entries: Vec<Entry>, selector: &Selector) -> Vec<Entry> {
    entries
        .into_iter()
        .filter(|e| {
            e.as_ref()
                .map_or(true, |info| selector.matches(&info.labels()))
        })
        .collect()
}

/// Teaches `mapper` the CRDs among `infos` and runs discovery for their group-versions,
/// in one batch: the preparation [`map_all`] needs.
pub async fn prepare_mapper<'a>(
    infos: impl IntoIterator<Item = &'a Info> + Clone,
    mapper: &mut RestMapper,
) {
    mapper.learn_crds(infos.clone());
    mapper
        .prepare(infos.into_iter().map(|info| info.gvk.clone()))
        .await;
}

/// Maps every object to its resource, from what [`prepare_mapper`] found.
pub fn map_all(entries: Vec<Entry>, mapper: &RestMapper) -> Vec<Entry> {
    entries
        .into_iter()
        .map(|e| {
            e.and_then(|mut info| match mapper.lookup(&info.gvk) {
                Ok(mapping) => {
                    info.mapping = Some(mapping);
                    Ok(info)
                }
                Err(e) => Err(mapping_error(info, e)),
            })
        })
        .collect()
}

/// Why `info` did not map, in kubectl's words for where it stands.
fn mapping_error(info: Info, e: LookupError) -> ResourceError {
    match e {
        // A List's item is mapped while kubectl flattens the List, which words the
        // failure its own way.
        LookupError::NoMatch if info.origin.item.is_some() => ResourceError::ItemNoMapping {
            kind: info.gvk.kind.clone(),
            // apimachinery's NoKindMatchError names the group-version.
            version: info.api_version(),
            origin: info.origin,
        },
        LookupError::NoMatch => ResourceError::NoMapping {
            object: Box::new(ObjectRef {
                name: info.name().to_string(),
                namespace: info.namespace().unwrap_or_default().to_string(),
                kind: info.gvk.kind.clone(),
                api_version: info.api_version(),
            }),
            origin: info.origin,
        },
        LookupError::Discovery(source) => ResourceError::Discovery {
            origin: info.origin,
            source,
        },
    }
}

fn is_namespaced(info: &Info) -> bool {
    info.mapping.as_ref().is_some_and(|m| m.namespaced)
}

/// kubectl's `SetNamespace`: namespaced objects without a namespace get `namespace`;
/// cluster-scoped objects are left alone. Needs the mapping (for the scope).
pub fn set_namespace(entries: Vec<Entry>, namespace: &str) -> Vec<Entry> {
    entries
        .into_iter()
        .map(|e| {
            e.map(|mut info| {
                if is_namespaced(&info) && info.namespace().is_none() {
                    info.set_namespace(namespace);
                }
                info
            })
        })
        .collect()
}

/// kubectl's `RequireNamespace` (with an explicit `-n`): like [`set_namespace`], and an
/// object naming another namespace is an error.
pub fn require_namespace(entries: Vec<Entry>, namespace: &str) -> Vec<Entry> {
    set_namespace(entries, namespace)
        .into_iter()
        .map(|e| {
            e.and_then(|info| match info.namespace() {
                Some(ns) if is_namespaced(&info) && ns != namespace => {
                    Err(ResourceError::NamespaceMismatch {
                        object: ns.to_string(),
                        flag: namespace.to_string(),
                        origin: info.origin,
                    })
                }
                _ => Ok(info),
            })
        })
        .collect()
}

/// Without kubectl's `ContinueOnError()`, visiting stops at the first error: the
/// entries up to and including it.
pub fn stop_at_first_error(entries: impl Iterator<Item = Entry>) -> impl Iterator<Item = Entry> {
    let mut done = false;
    entries.map_while(move |e| {
        if done {
            return None;
        }
        done = e.is_err();
        Some(e)
    })
}

#[cfg(test)]
mod tests;
