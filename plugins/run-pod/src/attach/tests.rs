//! The attach flow's pure rules: readiness, exit codes.

use super::*;

fn pod(value: serde_json::Value) -> Pod {
    serde_json::from_value(value).expect("pod")
}

#[test]
fn running_and_ready_needs_both() {
    let running = pod(serde_json::json!({"status": {"phase": "Running"}}));
    assert_eq!(running_and_ready(&running), Ok(false));
    let ready = pod(
        serde_json::json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
    );
    assert_eq!(running_and_ready(&ready), Ok(true));
    let done = pod(serde_json::json!({"status": {"phase": "Succeeded"}}));
    assert_eq!(running_and_ready(&done), Err(()));
    assert_eq!(running_and_ready(&pod(serde_json::json!({}))), Ok(false));
}

#[test]
fn exit_codes_come_from_the_container() {
    let ok = pod(serde_json::json!({"status": {"phase": "Succeeded"}}));
    assert_eq!(exit_code_of(&ok).ok(), Some(ExitCode::SUCCESS));
    let failed = pod(serde_json::json!({
        "metadata": {"name": "x", "namespace": "ns"},
        "status": {"phase": "Failed", "containerStatuses": [{
            "name": "x", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": 3, "reason": "Error"}}
        }]}
    }));
    let err = exit_code_of(&failed).expect_err("error");
    let exit = err.downcast_ref::<ContainerExit>().expect("container exit");
    assert_eq!(exit.code, 3);
    assert_eq!(exit.message, "pod ns/x terminated (Error)\n");
    // kubectl 1.32: `pod ns/x terminated (Error)` alone on stderr, exit code 3.
    assert_eq!(exit.report(), "pod ns/x terminated (Error)\n");
    let with_message = ContainerExit {
        message: "pod ns/x terminated (Error)\nout of memory".into(),
        code: 1,
    };
    assert_eq!(
        with_message.report(),
        "pod ns/x terminated (Error)\nout of memory\n"
    );
    let unknown = pod(
        serde_json::json!({"metadata": {"name": "x", "namespace": "ns"}, "status": {"phase": "Failed"}}),
    );
    assert_eq!(
        exit_code_of(&unknown)
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("pod ns/x failed with unknown exit code")
    );
    let pending = pod(
        serde_json::json!({"metadata": {"name": "x", "namespace": "ns"}, "status": {"phase": "Pending"}}),
    );
    assert_eq!(
        exit_code_of(&pending)
            .err()
            .map(|e| e.to_string())
            .as_deref(),
        Some("pod ns/x left in phase Pending")
    );
}
