//! End-to-end tests against a real local control plane (see `tests::harness`).
//!
//! One test binary, one module per area:
//! - `smoke`: the foundation — the control plane, the real node, the real
//!   controller-manager, RBAC, and kubectl's plugin lookup of our binaries.
//! - `run_pod`: `kubectl run-pod`.
//! - `run_pod_attach`: `run-pod` attached to real processes: stdin, exit codes, TTY.
//! - `run_pod_output`: run-pod's objects byte for byte beside kubectl's (`-o json` in
//!   Go's field order), and client dry runs mapped through discovery.
//! - `create_file`: `kubectl create-file` — inputs, ordering, errors, dry runs.
//! - `create_file_edit`: `create-file --edit` beside `kubectl create --edit`, the same
//!   editor script in both: the server's refusal of an unknown field, an `-o` without
//!   an editor printer, a refused create, a reopened file, JSON and KYAML.
//! - `create_file_faults`: create-file against a throttling server and lost answers.
//! - `create_file_wait`: `create-file --wait` until ready, or ended early by a cause
//!   that cannot fix itself (a missing image, a crash loop, a failed Job, Pod
//!   Security), a full quota named until `--timeout`.
//! - `create_file_window`: how far create-file runs ahead of its output while the
//!   server holds an early object (an admission webhook), counted on the server; a
//!   SIGTERM in that state, then the same command finishing the job.
//! - `fidelity`: every manifest of `tests/fidelity/cases/` through kubectl and
//!   create-file, compared per exit code, object and stderr.
//! - `gitops`: the layouts of GitOps repositories (kustomize overlays with deprecated
//!   fields, components whose patch fails, trees with custom resources before other
//!   errors) from `tests/gitops/`, beside kubectl 1.37 byte for byte: kustomize's
//!   output passed through, several errors ordered and grouped.
//! - `rolling_update`: `kubectl rolling-update`.
//! - `rolling_update_faults`: rolling-update killed after every write, re-run,
//!   invariants checked; control-plane faults.
//! - `hostile`: odd encodings kubectl accepts, created on the server by both.
//! - `secrets`: no token, key or credential-plugin secret in any output, on every
//!   error path and at every `-v` level.
//! - `credentials`: the kubeconfig user's credential problems and exec plugins, beside
//!   kubectl (our credentials, not kube's).
//! - `tls`: the server-trust flags merged with the kubeconfig as client-go merges
//!   them, beside kubectl.
//! - `validation`: `--validate` against the server's published OpenAPI schema, beside
//!   kubectl.
//! - `differential`: the differential harness: every flag a plugin shares with its
//!   kubectl command, given values from classes (empty, not a number, overflow, a
//!   missing file, …), beside kubectl 1.37 byte for byte, with one list of deliberate
//!   differences.
//! - `dist`: installation the way krew does it, and plugin completion.
//! - `long_tail`: the long tail of kubectl's words beside kubectl 1.37: selectors,
//!   `--request-timeout`, unreadable files and URLs, an unreachable server, `--raw`'s
//!   plain errors, run-pod's `--overrides` and failing JSON patches.
//! - `flag_errors`: a bad flag refused in the words and exit code of the kubectl
//!   command each plugin stands for.
//! - `api_errors`: the API server's refusals (Invalid, AlreadyExists, Forbidden,
//!   Unauthorized, NotFound) printed by every plugin as kubectl prints them.
//! - `config_errors`: the errors users meet most — a missing context, cluster or
//!   user, a missing or unreadable kubeconfig, an unreachable or untrusted server —
//!   every class × three plugins beside kubectl; `--user=nope` sends nothing, by the
//!   audit log.
//! - `colour`: `NO_COLOR` and `TERM=dumb` on a real terminal.
//! - `pod_security`: Pod Security admission's warnings and refusals beside kubectl,
//!   on the current server.
//! - `waiting`: a stalled rolling update, and run-pod's attach wait, say why on stderr
//!   (Pod Security, a quota, a missing image, a crash loop, no node fits), and finish
//!   once the cause is gone.
//! - `interactive`: run-pod on a real pseudo-terminal beside kubectl run, typed into
//!   as a person types; Ctrl-C on rolling-update's bar and create-file `--wait`'s
//!   status line, which go with their `^C`.
//! - `yaml_output`: `-o yaml` of create-file and run-pod byte for byte beside kubectl.
//! - `kyaml_output`: `-o kyaml` of create-file and run-pod byte for byte beside
//!   kubectl 1.37.
//! - `in_cluster`: the plugins as a CI step in a pod: a ServiceAccount's rotated
//!   token, RBAC, no kubeconfig, output through pipes, SIGTERM.
//! - `goaway`: create-file, run-pod and rolling-update against an API server that
//!   sends GOAWAY at random (`--goaway-chance`): every object created and reported
//!   once, as kubectl.
//! - `attach_cut`: run-pod's attach cut by the fault proxy (closed, or gone silent)
//!   over a WebSocket and over SPDY, and its API server killed behind haproxy
//!   (`tests::ha`), beside kubectl 1.37: every line once, in order, and the
//!   container's exit code.
//! - `ha`: create-file through haproxy in front of two more API servers, the one
//!   serving it killed (`kill -9`) or stopped (SIGTERM) mid-command: every object
//!   created and printed once, exit 0 (kubectl's result logged beside it).
//! - `closed_pipe`: create-file and run-pod into a closed stdout or stderr (`| head`)
//!   beside kubectl: its exit status (SIGPIPE), the work in flight reported or
//!   finished, the `--rm` pod deleted, no hang.
//! - `real_node`: the plugins on a real kubelet and containerd (`--wait` with a
//!   Service, the kubelet's causes, attach over both transports), and the host left
//!   as it was after a cluster stops or its supervisor is killed.
//! - `first_output`: run-pod's `-i --rm` on a real kubelet, 100 runs, none losing or
//!   repeating the container's first output (kubectl's rate reported beside it).
//! - `global_flags`: the global flags kubectl gained since 1.35 (`--as-user-extra`,
//!   `--proxy-url`) and create-file's first look at the kubeconfig, beside kubectl.
//! - `kuberc`: kuberc's credential plugin policy, and kuberc read as kubectl reads it.
//! - `paused_server`: run-pod and create-file against a SIGSTOPped kube-apiserver,
//!   ended by their own bound on every request.
//! - `verbose`: `-v=1` … `-v=9` of run-pod and create-file beside kubectl's, line by
//!   line after normalisation; rolling-update's requests in the same forms.
//! - `terminal`: the pseudo-terminal helpers, not tests.

mod api_errors;
mod attach_cut;
mod closed_pipe;
mod colour;
mod config_errors;
mod create_file;
mod create_file_edit;
mod create_file_faults;
mod create_file_wait;
mod create_file_window;
mod credentials;
mod differential;
mod dist;
mod fidelity;
mod first_output;
mod flag_errors;
mod gitops;
mod global_flags;
mod goaway;
mod ha;
mod hostile;
mod in_cluster;
mod interactive;
mod kuberc;
mod kyaml_output;
mod long_tail;
mod paused_server;
mod pod_security;
mod real_node;
mod rolling_update;
mod rolling_update_faults;
mod run_pod;
mod run_pod_attach;
mod run_pod_output;
mod secrets;
mod smoke;
mod terminal;
mod tls;
mod validation;
mod verbose;
mod waiting;
mod yaml_output;
