//! `complete` → `validate`: the order in which their errors come, as 1.17's.

use super::*;

/// 1.17's `Complete` reads the namespace and builds its client set before `Validate`
/// checks the arguments: a kubeconfig that does not load is the first error. Without
/// any configuration kubectl would only fail at its first request, so the arguments'
/// errors come first.
#[test]
fn complete_resolves_the_kubeconfig_before_the_arguments_are_checked() {
    let dir = tempfile::tempdir().expect("a directory");
    let kubeconfig = dir.path().join("config");
    std::fs::write(&kubeconfig, "garbage: [\n").expect("written");
    let first_error = |flag: &str, argv: &[&str]| {
        let argv = ["kubectl-rolling_update", flag]
            .into_iter()
            .chain(argv.iter().copied());
        let plugin = &crate::args::PLUGIN;
        let (args, matches) = plugin.parse::<Args>(argv).expect("parses");
        let mut ctx = Context::new(plugin.name, &plugin.command(), matches).expect("a context");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        match runtime.block_on(RollingUpdateOptions::complete(args, &mut ctx)) {
            Ok(o) => o.validate(),
            Err(e) => Err(e),
        }
        .expect_err("fails")
        .to_string()
    };
    let unloadable = format!(
        "error loading config file \"{}\": yaml: line 1: did not find expected node content",
        kubeconfig.display()
    );
    let flag = format!("--kubeconfig={}", kubeconfig.display());
    for argv in [&["web"][..], &["web", "--image=x", "-o", "bogus"]] {
        assert_eq!(first_error(&flag, argv), unloadable, "{argv:?}");
    }
    // No configuration at all: the arguments' errors, then (in run) the missing one.
    let none = "--server=";
    assert_eq!(
        first_error(none, &["web", "--image=x", "-o", "bogus"]),
        "unable to match a printer suitable for the output format \"bogus\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml"
    );
}
