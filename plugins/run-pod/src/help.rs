//! `kubectl run-pod --help`: kubectl run's texts in kubectl's layout (`cli::help`).

/// kubectl run's examples, adjusted to the plugin's name, plus the legacy generators.
const EXAMPLES: &str = r#"  # Start a nginx pod
  kubectl run-pod nginx --image=nginx
  
  # Start a hazelcast pod and let the container expose port 5701
  kubectl run-pod hazelcast --image=hazelcast/hazelcast --port=5701
  
  # Start a hazelcast pod and set environment variables "DNS_DOMAIN=cluster" and "POD_NAMESPACE=default" in the container
  kubectl run-pod hazelcast --image=hazelcast/hazelcast --env="DNS_DOMAIN=cluster" --env="POD_NAMESPACE=default"
  
  # Start a hazelcast pod and set labels "app=hazelcast" and "env=prod" in the container
  kubectl run-pod hazelcast --image=hazelcast/hazelcast --labels="app=hazelcast,env=prod"
  
  # Dry run; print the corresponding API objects without creating them
  kubectl run-pod nginx --image=nginx --dry-run=client
  
  # Start a nginx pod, but overload the spec with a partial set of values parsed from JSON
  kubectl run-pod nginx --image=nginx --overrides='{ "apiVersion": "v1", "spec": { ... } }'
  
  # Start a busybox pod and keep it in the foreground, don't restart it if it exits
  kubectl run-pod -i -t busybox --image=busybox --restart=Never
  
  # Start the nginx pod using the default command, but use custom arguments (arg1 .. argN) for that command
  kubectl run-pod nginx --image=nginx -- <arg1> <arg2> ... <argN>
  
  # Start the nginx pod using a different command and custom arguments
  kubectl run-pod nginx --image=nginx --command -- <cmd> <arg1> ... <argN>
  
  # Start a deployment of 3 nginx replicas (legacy generator)
  kubectl run-pod nginx --image=nginx --replicas=3
  
  # Start a replication controller of 3 nginx replicas, for kubectl rolling-update (legacy generator)
  kubectl run-pod nginx --generator=run/v1 --image=nginx:1 --replicas=3
  
  # Start a cron job that prints the date every five minutes (legacy generator)
  kubectl run-pod date --image=busybox --schedule="*/5 * * * *" -- date"#;

const USAGE: &str = r#"kubectl run-pod NAME --image=image [--env="key=value"] [--port=port] [--dry-run=server|client] [--overrides=inline-json] [--command] -- [COMMAND] [args...] [options]"#;

/// kubectl run's help texts around the flags.
pub const TEXT: cli::help::HelpText<'static> = cli::help::HelpText {
    long: "Create and run a particular image in a pod.",
    examples: EXAMPLES,
    usage: USAGE,
};
