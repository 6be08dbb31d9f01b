//! A ReplicationController: its metadata, the spec members the update reads or
//! changes (replicas, selector, the template's labels and containers' images), the
//! status members its waits read. See the parent module.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

model! {
    /// A core/v1 ReplicationController.
    ReplicationController("v1", "ReplicationController", "replicationcontrollers") {
        "metadata" => metadata: ObjectMeta,
        "spec" => spec: Option<ReplicationControllerSpec>,
        "status" => status: Option<ReplicationControllerStatus>,
    }
}

model! {
    ReplicationControllerSpec {
        "replicas" => replicas: Option<i32>,
        "selector" => selector: Option<BTreeMap<String, String>>,
        "template" => template: Option<PodTemplateSpec>,
    }
}

model! {
    PodTemplateSpec {
        "metadata" => metadata: Option<ObjectMeta>,
        "spec" => spec: Option<PodSpec>,
    }
}

model! {
    /// The template's pod spec: its containers; the rest as it came.
    PodSpec {
        "containers" => containers: Vec<Container>,
    }
}

model! {
    /// A container: what `--image` reads and changes.
    Container {
        "image" => image: Option<String>,
        "imagePullPolicy" => image_pull_policy: Option<String>,
        "name" => name: String,
    }
}

model! {
    ReplicationControllerStatus {
        "availableReplicas" => available_replicas: Option<i32>,
        "conditions" => conditions: Option<Vec<ReplicationControllerCondition>>,
        "fullyLabeledReplicas" => fully_labeled_replicas: Option<i32>,
        "observedGeneration" => observed_generation: Option<i64>,
        "readyReplicas" => ready_replicas: Option<i32>,
        "replicas" => replicas: i32,
    }
}

model! {
    ReplicationControllerCondition {
        "lastTransitionTime" => last_transition_time: Option<Time>,
        "message" => message: Option<String>,
        "reason" => reason: Option<String>,
        "status" => status: String,
        "type" => type_: String,
    }
}
