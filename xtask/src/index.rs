//! `cargo xtask index DIR`: a custom krew index — the layout `kubectl krew index add`
//! clones: `plugins/<name>.yaml` at the repository root. The manifests are the ones
//! `cargo xtask dist` wrote (use `dist --base-url` to point them at where the
//! archives are served), validated again before they are copied.

use std::path::Path;

use anyhow::{Context, bail};

use crate::flags;
use krew::{parse, validate};

pub fn run(flags: &flags::Index) -> anyhow::Result<()> {
    let out = flags.out.clone().unwrap_or_else(crate::dist::default_out);
    let source = out.join("krew");
    let ws = crate::metadata::load()?;
    let plugins_dir = flags.dir.join("plugins");
    std::fs::create_dir_all(&plugins_dir)
        .with_context(|| format!("cannot create {}", plugins_dir.display()))?;
    for plugin in &ws.plugins {
        let file = format!("{}.yaml", plugin.name);
        let from = source.join(&file);
        let text = std::fs::read_to_string(&from).with_context(|| {
            format!(
                "cannot read {}; run `cargo xtask dist` first",
                from.display()
            )
        })?;
        let manifest = parse(&text)?;
        if let Err(reason) = validate::validate_manifest_file(Path::new(&file), &manifest) {
            bail!("{}: {reason}", from.display());
        }
        let to = plugins_dir.join(&file);
        std::fs::write(&to, &text)?;
        eprintln!("index: wrote {}", to.display());
    }
    let dir = flags.dir.display();
    println!(
        "\nPublish the index as a git repository, then let users add it:\n\
         \n  git -C {dir} init && git -C {dir} add plugins && git -C {dir} commit -m \"kubeplug {tag}\"\n\
         \n  kubectl krew index add kubeplug <git-url-of-{dir}>\n\
         \x20 kubectl krew install kubeplug/rolling-update\n",
        tag = ws.tag()
    );
    Ok(())
}
