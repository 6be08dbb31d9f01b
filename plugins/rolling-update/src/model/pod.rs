//! A pod: its metadata (the labels the update adds, the owner it checks) and the
//! readiness its waits count. See the parent module.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

model! {
    /// A core/v1 Pod.
    Pod("v1", "Pod", "pods") {
        "metadata" => metadata: ObjectMeta,
        "status" => status: Option<PodStatus>,
    }
}

model! {
    PodStatus {
        "conditions" => conditions: Option<Vec<PodCondition>>,
    }
}

model! {
    PodCondition {
        "lastTransitionTime" => last_transition_time: Option<Time>,
        "status" => status: String,
        "type" => type_: String,
    }
}

impl Pod {
    /// The pod as `objectstatus` reads it (the stall watch's causes): through text,
    /// so the members kept in `rest` (container statuses, phase) are read too.
    pub fn to_status_object(&self) -> Result<objectstatus::objects::Pod, serde_json::Error> {
        objectstatus::objects::from_value(&resources::typed::to_value_as_text(self)?)
    }
}
