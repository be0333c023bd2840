//! The `shipshape` binary: parses arguments and calls the library.

use clap::{Parser, Subcommand};
use shipshape::commands::{self, RenderOptions};
use shipshape::render::Release;
use std::path::PathBuf;
use std::process::ExitCode;

/// Turns one typed description of a platform into a Helm chart, its values schema,
/// presets, the rendered manifests of every preset, and refuses unsafe presets.
///
/// Exit codes: 0 ok; 1 guard findings or stale committed output; 2 bad input (spec,
/// values, arguments); 3 an external tool or service failed.
#[derive(Parser)]
#[command(name = "shipshape", version)]
struct Cli {
    /// The platform spec.
    #[arg(long, global = true, default_value = "shipshape.yaml")]
    spec: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the chart (`OUT/chart`) and the render of the defaults and of every preset
    /// (`OUT/rendered`). Atomic: a failure leaves the previous output; reruns are
    /// byte-identical.
    Generate {
        /// Output folder [default: `generated/` beside the spec].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Exit 1 with a unified diff when the output folder differs from what `generate`
    /// would write.
    Check {
        /// Output folder [default: `generated/` beside the spec].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print the manifests `helm template` prints for the chart, without Helm.
    ///
    /// Values merge as in Helm: the preset, then each `-f` file in order, then `--set`;
    /// maps merge deeply, lists replace, `null` deletes a key. `--set` supports dotted
    /// keys, several pairs separated by `,`, and `{a,b}` lists of scalars; `true`,
    /// `false`, `null` and integers without a leading zero are typed, anything else is a
    /// string. Index syntax (`a[0]=x`), `--set-string` and `--set-file` are not
    /// supported.
    Render {
        /// Release name, as `helm template NAME`.
        #[arg(default_value = "release-name")]
        name: String,
        /// Namespace of the release.
        #[arg(long, short = 'n', default_value = "default")]
        namespace: String,
        /// A preset of the spec to apply first.
        #[arg(long)]
        preset: Option<String>,
        /// Values files, applied in order.
        #[arg(long = "values", short = 'f')]
        values: Vec<PathBuf>,
        /// `path.to.key=value` overrides, applied last.
        #[arg(long)]
        set: Vec<String>,
    },
    /// Print the JSON schema of `shipshape.yaml`.
    Schema,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out_or_default =
        |out: Option<PathBuf>| out.unwrap_or_else(|| commands::default_out_dir(&cli.spec));
    let result = match cli.command {
        Command::Generate { ref out } => {
            commands::generate(&cli.spec, &out_or_default(out.clone()))
        }
        Command::Check { ref out } => commands::check(&cli.spec, &out_or_default(out.clone())),
        Command::Render {
            ref name,
            ref namespace,
            ref preset,
            ref values,
            ref set,
        } => commands::render(
            &cli.spec,
            &RenderOptions {
                preset: preset.clone(),
                values_files: values.clone(),
                set: set.clone(),
                release: Release {
                    name: name.clone(),
                    namespace: namespace.clone(),
                },
            },
        ),
        Command::Schema => commands::schema(),
    };
    match result {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit() as u8)
        }
    }
}
