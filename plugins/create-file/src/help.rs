//! `kubectl create-file --help`: kubectl create's texts in kubectl's layout (`cli::help`).

const LONG: &str = "Create a resource from a file or from stdin.\n\n JSON and YAML formats are accepted.\n\n Input limits (kubectl has none): a file, standard input or the input of --raw at most 256 MiB, the files of a directory at most 256 MiB together, a URL at most 32 MiB. A YAML document nests at most 128 levels, and its aliases may expand it to at most four times its size (16 MiB at least).";

const EXAMPLES: &str = "  # Create a pod using the data in pod.json
  kubectl create-file -f ./pod.json
  
  # Create a pod based on the JSON passed into stdin
  cat pod.json | kubectl create-file -f -
  
  # Edit the data in registry.yaml in JSON then create the resource using the edited data
  kubectl create-file -f registry.yaml --edit -o json
  
  # Create everything under a directory tree, namespaces and CRDs first
  kubectl create-file -R -f ./manifests/";

const USAGE: &str = "kubectl create-file -f FILENAME [options]";

/// kubectl create's help texts around the flags.
pub const TEXT: cli::help::HelpText<'static> = cli::help::HelpText {
    long: LONG,
    examples: EXAMPLES,
    usage: USAGE,
};
