//! `kubectl rolling-update --help`: kubectl 1.17's texts in kubectl's layout
//! (`cli::help`), with this plugin's deliberate differences from 1.17 in the
//! description.

/// kubectl 1.17's `Long`, then what this plugin does differently.
const LONG: &str = "\
Perform a rolling update of the given ReplicationController.

 Replaces the specified replication controller with a new replication controller by updating one pod at a time to use the new PodTemplate. The new-controller.json must specify the same namespace as the existing replication controller and overwrite at least one (common) label in its replicaSelector.

 ![Workflow](http://kubernetes.io/images/docs/kubectl_rollingupdate.svg)

 Differences from kubectl 1.17 (same flags, annotations, output lines and exit codes):
  * --timeout is honoured (1.17 always used 5m).
  * --dry-run changes nothing in the cluster, also with --image; --dry-run=client|server are accepted.
  * --container is respected when comparing images.
  * -f (a file, - or a URL) is read and checked before the cluster is contacted, and its object must be in the command's namespace even without -n.
  * Waiting follows watch events: a step is taken as soon as replica counts and pod readiness allow; --update-period is the minimum time between a scale-up and the following scale-down.
  * --max-surge, --max-unavailable and --min-ready-seconds are flags (1.17 fixed them at 1, 0, 0).
  * --timeout also bounds each request: a server that stops answering ends the run.
  * Ctrl-C/SIGTERM stop between API calls (a second one at once); re-running the same command resumes. An update stopped at any point, kill -9 included, is finished by re-running it.";

/// kubectl 1.17's examples, indented as kubectl prints them.
const EXAMPLES: &str =
    "  # Update pods of frontend-v1 using new replication controller data in frontend-v2.json.
  kubectl rolling-update frontend-v1 -f frontend-v2.json
  
  # Update pods of frontend-v1 using JSON data passed into stdin.
  cat frontend-v2.json | kubectl rolling-update frontend-v1 -f -
  
  # Update the pods of frontend-v1 to frontend-v2 by just changing the image, and switching the
  # name of the replication controller.
  kubectl rolling-update frontend-v1 frontend-v2 --image=image:v2
  
  # Update the pods of frontend by just changing the image, and keeping the old name.
  kubectl rolling-update frontend --image=image:v2
  
  # Abort and reverse an existing rollout in progress (from frontend-v1 to frontend-v2).
  kubectl rolling-update frontend-v1 frontend-v2 --rollback";

const USAGE: &str = "kubectl rolling-update OLD_CONTROLLER_NAME ([NEW_CONTROLLER_NAME] --image=NEW_CONTAINER_IMAGE | -f NEW_CONTROLLER_SPEC) [options]";

/// kubectl rolling-update's help texts around the flags.
pub const TEXT: cli::help::HelpText<'static> = cli::help::HelpText {
    long: LONG,
    examples: EXAMPLES,
    usage: USAGE,
};
