//! Pure transformations of ReplicationControllers: the next RC for `--image`, the
//! marks on the old RC, the selector rule and the rollback swap.
//!
//! No IO here: the cluster calls that surround these live in `cluster.rs`, so each
//! rule can be tested on plain objects.

use std::collections::BTreeMap;

use crate::model::ReplicationController;

use crate::names::{
    DESIRED_REPLICAS_ANNOTATION, NEXT_CONTROLLER_ANNOTATION, ORIGINAL_REPLICAS_ANNOTATION,
    SOURCE_ID_ANNOTATION, annotation, hash_object, new_controller_name, set_annotation, source_id,
};

/// Errors of the rules below; their texts are kubectl 1.17's.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ControllerError {
    #[error("container {0} not found in pod")]
    ContainerNotFound(String),
    #[error("must specify container to update when updating a multi-container pod")]
    MultiContainer,
    #[error("pod has no containers! ({0})")]
    NoContainers(String),
    #[error("couldn't find original replica count of {0:?}")]
    NoOriginalReplicas(String),
}

/// What `--image` asks for (kubectl's `NewControllerConfig`).
#[derive(Debug, Clone, Default)]
pub struct NewControllerConfig {
    /// The new RC's name; empty means `<old>-<hash>`.
    pub new_name: String,
    pub image: String,
    /// `--container`; empty means "the only container".
    pub container: String,
    /// Only set when the image is unchanged (then it is what makes the pods differ).
    pub pull_policy: String,
    pub deployment_key: String,
}

/// The index of the container `--image` replaces (1.17's rules and messages).
pub fn container_index(
    rc: &ReplicationController,
    container: &str,
) -> Result<usize, ControllerError> {
    let containers = containers(rc);
    let index = if container.is_empty() {
        0
    } else {
        containers
            .iter()
            .position(|c| c.name == container)
            .ok_or_else(|| ControllerError::ContainerNotFound(container.to_string()))?
    };
    if containers.len() > 1 && container.is_empty() {
        return Err(ControllerError::MultiContainer);
    }
    if containers.is_empty() {
        let dump = serde_json::to_string(rc).unwrap_or_default();
        return Err(ControllerError::NoContainers(dump));
    }
    Ok(index)
}

/// The image of the container `--image` is compared with. 1.17 always read
/// container 0; we read the one `--container` names (documented deviation), which
/// is the same whenever `--container` is not given or names the first container.
pub fn current_image<'a>(rc: &'a ReplicationController, container: &str) -> Option<&'a str> {
    let containers = containers(rc);
    let c = if container.is_empty() {
        containers.first()
    } else {
        containers
            .iter()
            .find(|c| c.name == container)
            .or(containers.first())
    };
    c.and_then(|c| c.image.as_deref())
}

fn containers(rc: &ReplicationController) -> &[crate::model::Container] {
    rc.spec
        .as_ref()
        .and_then(|s| s.template.as_ref())
        .and_then(|t| t.spec.as_ref())
        .map(|s| s.containers.as_slice())
        .unwrap_or_default()
}

/// kubectl's `CreateNewControllerFromCurrentController`, minus the GET: `current` is
/// a fresh copy of the old RC, and the result is the new RC, not yet created.
pub fn new_controller_from_current(
    current: &ReplicationController,
    cfg: &NewControllerConfig,
) -> Result<ReplicationController, ControllerError> {
    let index = container_index(current, &cfg.container)?;
    let mut rc = current.clone();
    if let Some(c) = rc
        .spec
        .as_mut()
        .and_then(|s| s.template.as_mut())
        .and_then(|t| t.spec.as_mut())
        .and_then(|s| s.containers.get_mut(index))
    {
        c.image = Some(cfg.image.clone());
        if !cfg.pull_policy.is_empty() {
            c.image_pull_policy = Some(cfg.pull_policy.clone());
        }
    }
    // Hashed after the image change and before the rename, like 1.17: the
    // resourceVersion inside makes two identical updates get different hashes.
    let hash = hash_object(&rc);
    let old_name = current.metadata.name.clone().unwrap_or_default();
    rc.metadata.name = Some(new_controller_name(&old_name, &cfg.new_name, &hash));
    let spec = rc.spec.get_or_insert_with(Default::default);
    spec.selector
        .get_or_insert_with(BTreeMap::new)
        .insert(cfg.deployment_key.clone(), hash.clone());
    spec.template
        .get_or_insert_with(Default::default)
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(cfg.deployment_key.clone(), hash);
    // The old RC's own update marks are not the new RC's: a stale
    // original-replicas or next-controller-id would mislead a later rollback.
    if let Some(a) = rc.metadata.annotations.as_mut() {
        a.remove(ORIGINAL_REPLICAS_ANNOTATION);
        a.remove(NEXT_CONTROLLER_ANNOTATION);
    }
    // A create must not carry server-owned fields of the object it was cloned from.
    rc.metadata.resource_version = None;
    rc.metadata.uid = None;
    rc.metadata.creation_timestamp = None;
    rc.metadata.generation = None;
    rc.metadata.managed_fields = None;
    rc.status = None;
    Ok(rc)
}

/// The value the old RC gets under the deployment key: its own hash plus `-orig`,
/// so it differs from the new RC's even when the image is unchanged.
pub fn original_deployment_value(old: &ReplicationController) -> String {
    format!("{}-orig", hash_object(old))
}

/// Whether the old RC's selector still lacks the deployment key, i.e. whether
/// marking it needs the relabelling dance (template, pods, selector).
pub fn needs_deployment_key(old: &ReplicationController, key: &str) -> bool {
    !selector(old).contains_key(key)
}

/// Sets `next-controller-id`.
pub fn set_next_controller(rc: &mut ReplicationController, new_name: &str) {
    set_annotation(rc, NEXT_CONTROLLER_ANNOTATION, new_name);
}

/// Step 1 of adding the deployment key: the pod template label.
pub fn add_template_label(rc: &mut ReplicationController, key: &str, value: &str) {
    rc.spec
        .get_or_insert_with(Default::default)
        .template
        .get_or_insert_with(Default::default)
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_string(), value.to_string());
}

/// Step 3 of adding the deployment key: the selector.
pub fn add_selector_label(rc: &mut ReplicationController, key: &str, value: &str) {
    rc.spec
        .get_or_insert_with(Default::default)
        .selector
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_string(), value.to_string());
}

/// The RC's selector (empty when unset).
pub fn selector(rc: &ReplicationController) -> BTreeMap<String, String> {
    rc.spec
        .as_ref()
        .and_then(|s| s.selector.clone())
        .unwrap_or_default()
}

/// A selector as a label-selector query string (`a=b,c=d`).
pub fn selector_string(rc: &ReplicationController) -> String {
    selector(rc)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The rolling-update invariant: some key is in both selectors with different
/// values, so every new pod is invisible to the old RC and vice versa.
pub fn selectors_differ(old: &ReplicationController, new: &ReplicationController) -> bool {
    let new_sel = selector(new);
    selector(old)
        .iter()
        .any(|(k, v)| new_sel.get(k).is_some_and(|nv| nv != v))
}

/// `spec.replicas`, with the API default of 1 when unset... except that kubectl
/// reads the field after the server defaulted it, so for fetched objects it is set.
pub fn replicas(rc: &ReplicationController) -> i32 {
    rc.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0)
}

/// Sets `spec.replicas`.
pub fn set_replicas(rc: &mut ReplicationController, n: i32) {
    rc.spec.get_or_insert_with(Default::default).replicas = Some(n);
}

/// The RC's name.
pub fn name(rc: &ReplicationController) -> &str {
    rc.metadata.name.as_deref().unwrap_or_default()
}

/// kubectl's `AbortRollingUpdate`: the partially rolled-out RC becomes the old one
/// and the original becomes the target, annotated so the updater adopts it and
/// scales it back to its original size. Returns `(old, new, message)` where the
/// message is the `Setting "<name>" replicas to <n>` line.
pub fn abort_rolling_update(
    original: &ReplicationController,
    partial: &ReplicationController,
) -> Result<(ReplicationController, ReplicationController, String), ControllerError> {
    let mut target = original.clone();
    set_annotation(&mut target, SOURCE_ID_ANNOTATION, source_id(partial));
    let Some(count) = annotation(original, ORIGINAL_REPLICAS_ANNOTATION).map(str::to_string) else {
        return Err(ControllerError::NoOriginalReplicas(
            name(original).to_string(),
        ));
    };
    let message = format!("Setting {:?} replicas to {count}", name(original));
    set_annotation(&mut target, DESIRED_REPLICAS_ANNOTATION, count);
    Ok((partial.clone(), target, message))
}

#[cfg(test)]
mod tests;
