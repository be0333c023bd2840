//! The `shipshape` binary: parses arguments and calls the library.
// With glibc on Linux the binary starts at its own C `main` ([`main`]), not at the Rust
// runtime's.
#![cfg_attr(all(not(test), target_os = "linux", target_env = "gnu"), no_main)]

use clap::{Parser, Subcommand};
use shipshape::backends::native::Release;
use shipshape::commands::{self, RenderOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc instead of the system allocator: the pipeline builds and frees many small
/// trees (values, schemas, the object tree), and glibc's malloc and free were about a
/// quarter of `render`'s cycles. Its version 2 (the crate's `v2` feature): against
/// version 3 it touches fewer fresh pages (a 200-workload `render` 6,400 page faults
/// against 7,500) and peaks lower.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process, as `MIMALLOC_ALLOW_THP=0` would.
/// mimalloc asks for huge pages for its arenas, and each first touch of one zeroes
/// 2 MiB; with a heap per thread many are touched only in part. At 400 workloads
/// `render` peaks at about 86 MiB without them against 96 to 105 with them, in the
/// same time, and the examples spend less system time. `generate` of 400 workloads,
/// which touches some 230 MiB, took 160 ms with them against 210 ms without when run
/// back to back, but 0.9 to 1.45 s with them against 0.21 to 0.24 s without when run
/// once, 3 s after the previous run: on a virtual machine that hands free memory back
/// to its host, a huge page the kernel gives out is one the host has taken back, and
/// each first touch of one cost about 16 ms (127 of them, 2 s of system time; no
/// compaction). Nothing is refused if the kernel says no.
fn without_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Runs before `main`, before the first allocation: glibc calls each `.init_array`
/// entry (with `argc`, `argv` and `envp`, unused here). It turns huge pages off
/// ([`without_huge_pages`]) before mimalloc maps its first segment; called from Rust's
/// `main`, after clap had parsed the arguments, two 2 MiB pages had already been
/// zeroed (one for the runtime's first allocation, one for clap's), about 6 % of an
/// example's `render` cycles.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[link_section = ".init_array"]
static HUGE_PAGES_OFF_BEFORE_MAIN: extern "C" fn(
    libc::c_int,
    *const *const libc::c_char,
    *const *const libc::c_char,
) = huge_pages_off_before_main;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn huge_pages_off_before_main(
    _argc: libc::c_int,
    _argv: *const *const libc::c_char,
    _envp: *const *const libc::c_char,
) {
    without_huge_pages();
}

/// The subcommand among the arguments (without the program's name): the first that is
/// not an option, skipping the value of `--spec` (the only option before the
/// subcommand that takes one). `None` when there is none.
fn subcommand_of<'a>(mut args: impl Iterator<Item = &'a [u8]>) -> Option<&'a [u8]> {
    while let Some(arg) = args.next() {
        if arg == b"--spec" {
            args.next();
        } else if !arg.starts_with(b"-") {
            return Some(arg);
        }
    }
    None
}

/// The value of `--spec` among the arguments (without the program's name), as clap
/// reads it: after `--spec` or `--spec=`, before a `--` that ends the options. `None`
/// when there is none (clap then takes [`DEFAULT_SPEC`]). Only a guess that `render`
/// reads the spec ahead with while clap parses: clap's path is the one used.
fn spec_argument_of<'a>(mut args: impl Iterator<Item = &'a [u8]>) -> Option<&'a [u8]> {
    let mut spec = None;
    while let Some(arg) = args.next() {
        if arg == b"--" {
            break;
        } else if arg == b"--spec" {
            spec = args.next().or(spec);
        } else if let Some(value) = arg.strip_prefix(b"--spec=") {
            spec = Some(value);
        }
    }
    spec
}

/// The spec clap reads when `--spec` is not given.
const DEFAULT_SPEC: &str = "shipshape.yaml";

/// Turns one typed description of a platform into a Helm chart, its values schema,
/// presets, the rendered manifests of every preset, and refuses unsafe presets.
///
/// Exit codes: 0 ok; 1 guard findings or stale committed output; 2 bad input (spec,
/// values, arguments); 3 an external tool or service failed, or the output could not be
/// written or is held by another run; 128+N ended by signal N after cleaning up.
#[derive(Parser)]
#[command(name = "shipshape", version)]
struct Cli {
    /// The platform spec.
    #[arg(long, global = true, default_value = DEFAULT_SPEC)]
    spec: PathBuf,
    #[command(subcommand)]
    command: Command,
}

/// `shipshape render`'s arguments.
#[derive(clap::Args, Debug, PartialEq)]
struct RenderArgs {
    /// Release name, as `helm template NAME`.
    #[arg(default_value = "release-name")]
    name: String,
    /// Namespace of the release.
    #[arg(long, short = 'n', default_value = "default")]
    namespace: String,
    #[command(flatten)]
    values: ValuesArgs,
}

/// [`Cli`] with its `render` command alone: what a `render` command line is parsed
/// with first. Building the whole command (every command's arguments and help) took
/// about 0.2 ms of an example's `render`; this one, a fraction of that. A line it
/// refuses (an error, `--help`, `--version`, another command) is parsed again with
/// [`Cli`], which says what [`Cli`] says. It accepts a line only as [`Cli`] reads it:
/// the same global `--spec` and the same [`RenderArgs`].
#[derive(Parser)]
#[command(name = "shipshape", version)]
struct RenderCli {
    /// The platform spec.
    #[arg(long, global = true, default_value = DEFAULT_SPEC)]
    spec: PathBuf,
    #[command(subcommand)]
    command: RenderOnly,
}

/// The one command of [`RenderCli`].
#[derive(Subcommand)]
enum RenderOnly {
    Render(RenderArgs),
}

/// Where a command's values come from, merged in this order.
#[derive(clap::Args, Debug, PartialEq)]
struct ValuesArgs {
    /// A preset of the spec to apply first.
    #[arg(long)]
    preset: Option<String>,
    /// Values files, applied in order.
    #[arg(long = "values", short = 'f')]
    values: Vec<PathBuf>,
    /// `path.to.key=value` overrides, applied last.
    #[arg(long)]
    set: Vec<String>,
}

impl ValuesArgs {
    fn options(&self, release: Release) -> RenderOptions {
        RenderOptions {
            preset: self.preset.clone(),
            values_files: self.values.clone(),
            set: self.set.clone(),
            release,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Write a commented starter `shipshape.yaml` (at `--spec`) for a new app: a schema
    /// modeline for editors, budgets that fit, one workload per class, one preset. The
    /// spec's JSON schema is written beside it as `shipshape.schema.json` unless that
    /// file exists. Never overwrites a file (exit 2 when the spec exists).
    Init {
        /// The chart's name [default: the spec folder's name, as a DNS label].
        #[arg(long)]
        name: Option<String>,
        /// Workload classes, separated by `,`: api, jobs, pool, worker, migrate
        /// [default: api,worker,migrate].
        #[arg(long)]
        classes: Option<String>,
    },
    /// Write the chart (`OUT/chart`), the render of the defaults and of every preset
    /// (`OUT/rendered`) and their capacity reports, figures and records (`OUT/capacity`). Atomic: a failure leaves the previous output; reruns are
    /// byte-identical. Replaces only a folder holding shipshape's marker
    /// `.shipshape-output` (or an empty one); a second run on the same folder at the same
    /// time is refused (exit 3).
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
    /// Print the manifests `helm template` prints for the chart, without Helm. The values
    /// are checked against `values.schema.json` (exit 2) and by the guards (exit 1 with
    /// the findings; nothing is printed on stdout).
    ///
    /// Values merge as in Helm: the preset, then each `-f` file in order, then `--set`;
    /// maps merge deeply, lists replace, `null` deletes a key. `--set` supports dotted
    /// keys, several pairs separated by `,`, and `{a,b}` lists of scalars; `true`,
    /// `false`, `null` and integers without a leading zero are typed, anything else is a
    /// string. Index syntax (`a[0]=x`), `--set-string` and `--set-file` are not
    /// supported.
    Render(RenderArgs),
    /// Print the JSON schema of `shipshape.yaml`.
    Schema,
    /// Print the peak PostgreSQL connections and Redis clients of a preset across a
    /// rollout, per workload and in total, against the declared budgets; exit 1 when one
    /// is exceeded.
    ///
    /// peak processes of a workload = (max pods + surge pods + max pods x retiring
    /// generations) x processes per pod. Max pods is the autoscaler's maxReplicas when an
    /// HPA or KEDA is on, else replicas (0 when disabled); surge pods is the rendered
    /// maxSurge, a percentage rounded up; the migrate hook Job counts its one pod. The
    /// PostgreSQL peak is the sum of peak processes x the workload's enabled allocation
    /// sizes, plus the reservations, and must fit maxConnections - reserve; Redis the same
    /// per server (against its maxClients) and in total (against the declared total).
    Capacity {
        #[command(flatten)]
        values: ValuesArgs,
        /// `table`, `markdown`, `json`, or `svg`: a figure with a stacked bar per budget
        /// (one segment per workload and reservation, a line at the budget), as
        /// `generate` writes it to `capacity/<preset>.svg`.
        #[arg(long, value_enum, default_value = "table")]
        format: CapacityFormatArg,
    },
    /// Connect to the real PostgreSQL and Redis servers and check that they can hold
    /// the preset's peak: one table per server with its limit (`max_connections`,
    /// `maxclients`), the slots it reserves, the connections others hold now, the
    /// peak, the headroom and the verdict. Exit 1 when a server cannot hold the peak
    /// or a Redis server declared critical evicts (`maxmemory-policy` other than
    /// `noeviction`); 3 when a server cannot be reached (named by host:port); 2 for
    /// bad arguments, before any connection.
    ///
    /// available = limit - reserved - used by others; headroom = available - peak.
    /// For PostgreSQL, reserved is the larger of `superuser_reserved_connections` +
    /// `reserved_connections` (PostgreSQL 16+) and the spec's `reserve`; used by others
    /// counts the client backends in `pg_stat_activity` (by role and application) but
    /// preflight's own. For Redis, used by others is `connected_clients` minus
    /// preflight's own.
    ///
    /// A URL is given as `env:VAR` (read from the environment), `file:PATH` (read from
    /// a file, e.g. a mounted Secret) or literally; a literal URL with a password is
    /// refused (command lines are visible in `ps`). No URL or password is ever
    /// printed. TLS is not supported.
    Preflight {
        #[command(flatten)]
        values: ValuesArgs,
        /// The PostgreSQL server: `env:VAR`, `file:PATH`, or a URL without a password
        /// (`postgresql://USER:PASSWORD@HOST:PORT/DB` or the `key=value` form).
        #[arg(long, value_name = "URL")]
        postgres: Option<String>,
        /// A Redis server the spec declares, by name (repeatable): `NAME=env:VAR`,
        /// `NAME=file:PATH`, or `NAME=redis://HOST:PORT` without a password.
        #[arg(long, value_name = "NAME=URL")]
        redis: Vec<String>,
        /// `table`, `markdown`, or `json`.
        #[arg(long, value_enum, default_value = "table")]
        format: PreflightFormatArg,
        /// Seconds each server may take to connect and answer (1 to 600).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=600))]
        timeout_seconds: u64,
    },
    /// Render every preset and validate it with kubeconform (`-strict`), once per
    /// Kubernetes version; the project's CRD schemas (KEDA `ScaledObject`) are added
    /// as a schema location. Exit 1 on invalid manifests, 3 when kubeconform is missing,
    /// hangs, finds no schema or fails.
    Validate {
        /// Kubernetes version to check (repeatable) [default: the spec's
        /// `kubernetesVersions`, else 1.28.0 and 1.31.0].
        #[arg(long = "kube-version")]
        kube_versions: Vec<String>,
        /// Extra kubeconform schema location (repeatable), tried first.
        #[arg(long = "schema-location")]
        schema_locations: Vec<String>,
        /// The kubeconform binary [default: `kubeconform` on PATH].
        #[arg(long)]
        kubeconform: Option<PathBuf>,
        /// Seconds one kubeconform run may take before it and its children are killed
        /// (1 to 86400).
        #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout_seconds: u64,
    },
    /// What a change does against an output folder: first the capacity of every preset
    /// and budget (peak before -> after, budget, headroom; changed rows marked) and the
    /// guard findings that appear or disappear, then an object-aware diff of every
    /// preset's rendered objects: per object added, removed, or changed with each
    /// changed path and its old and new value. A change the guards refuse is reviewed
    /// too. Exit 1 when anything changes or a guard refuses.
    Diff {
        /// The committed output folder [default: `generated/` beside the spec].
        #[arg(long)]
        against: Option<PathBuf>,
        /// `text`, or `markdown` for a pull-request comment.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Write the chart as `<name>-<version>.tgz`: sorted entries, fixed modes and owners,
    /// mtime from `SOURCE_DATE_EPOCH` (else 1980-01-01), gzip without a timestamp, so the
    /// bytes are the same on every machine.
    Package {
        /// Output folder.
        #[arg(long, short = 'o', default_value = ".")]
        out: PathBuf,
    },
    /// Package the chart and push it as a Helm OCI artifact to `oci://HOST[:PORT]/NAMESPACE`
    /// (the repository is `NAMESPACE/<chart name>`, the tag the chart version with `+`
    /// as `_`). Credentials: `--username` with `--password-stdin`, else the Docker config
    /// file (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`).
    Push {
        /// `oci://HOST[:PORT]/NAMESPACE`.
        reference: String,
        /// Talk HTTP instead of HTTPS (a registry on loopback).
        #[arg(long)]
        plain_http: bool,
        /// Registry user name.
        #[arg(long)]
        username: Option<String>,
        /// Read the password from standard input.
        #[arg(long)]
        password_stdin: bool,
        /// Seconds each registry request may take (1 to 86400).
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout_seconds: u64,
    },
}

/// Output formats of `capacity`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum CapacityFormatArg {
    Table,
    Markdown,
    Json,
    Svg,
}

/// Output formats of `preflight`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum PreflightFormatArg {
    Table,
    Markdown,
    Json,
}

/// Output formats of `diff`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Text,
    Markdown,
}

/// The process's entry with glibc on Linux: what the Rust runtime's start would do
/// that this program needs, then [`shipshape_main`]. The runtime's start also reads
/// `/proc/self/maps` to find the main thread's stack guard, and maps and installs a
/// signal stack on every thread (freed again at each thread's end), all so that a
/// stack overflow is reported as one instead of as a plain `SIGSEGV`: about a dozen
/// system calls, measured at 0.05 ms of every run (an empty program, 500 runs each,
/// 0.985 ms with the runtime's start and 0.936 ms without). What this start keeps:
/// standard input, output and error opened on `/dev/null` when the caller left them
/// closed, so that no file this process opens takes their place; `SIGPIPE` ignored,
/// so that a closed pipe is a write error; and a panic ending the process with exit
/// code 101. The arguments are read as before (`std::env::args_os`): glibc hands
/// them to the standard library before `main`. A stack overflow now ends the process
/// with `SIGSEGV` and no message.
#[cfg(all(not(test), target_os = "linux", target_env = "gnu"))]
#[no_mangle]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    open_closed_standard_files();
    // SAFETY: setting a signal's disposition to "ignore" runs no code of ours.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let ended = std::panic::catch_unwind(shipshape_main);
    // The runtime's end would flush standard output; `exit_with` has flushed it.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    match ended {
        // Reached only where no command ends the process itself (`exit_with` does).
        Ok(code) => {
            if code == ExitCode::SUCCESS {
                0
            } else {
                1
            }
        }
        Err(_) => 101,
    }
}

/// Opens `/dev/null` in place of each of standard input, output and error that the
/// caller left closed, as the Rust runtime's start does: `poll` tells which (POLLNVAL).
#[cfg(all(not(test), target_os = "linux", target_env = "gnu"))]
fn open_closed_standard_files() {
    let mut files = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `files` is a valid array of three `pollfd`; a zero timeout returns at once.
    if unsafe { libc::poll(files.as_mut_ptr(), 3, 0) } <= 0 {
        return;
    }
    for file in files.iter().filter(|f| f.revents & libc::POLLNVAL != 0) {
        // SAFETY: a NUL-terminated path; the lowest free descriptor is the closed one.
        let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        if opened != file.fd {
            // SAFETY: `_exit` ends the process, as the runtime's start aborts.
            unsafe { libc::_exit(134) };
        }
    }
}

/// The program: `main` on every platform, called by [`main`]'s C entry on glibc.
#[cfg(any(test, not(all(target_os = "linux", target_env = "gnu"))))]
fn main() -> ExitCode {
    shipshape_main()
}

fn shipshape_main() -> ExitCode {
    // Again, for where the hook before `main` does not run (a libc other than glibc).
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    without_huge_pages();
    // `render` starts its helper thread before the arguments are parsed: the helper
    // parses them with clap while the main thread reads the spec they most likely
    // name (`spec_argument_of`), which is used only when clap names the same path
    // (`render_parsed_by`).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if subcommand_of(args.iter().map(|a| a.as_encoded_bytes())) == Some(b"render".as_slice()) {
        let mut other = None;
        // A path that is no UTF-8 is not read ahead: clap's is read after it.
        let likely_spec = match spec_argument_of(args.iter().map(|a| a.as_encoded_bytes())) {
            None => Some(PathBuf::from(DEFAULT_SPEC)),
            Some(spec) => std::str::from_utf8(spec).ok().map(PathBuf::from),
        };
        let rendered = commands::render_parsed_by(likely_spec.as_deref(), || {
            if let Ok(RenderCli {
                spec,
                command: RenderOnly::Render(render),
            }) = RenderCli::try_parse()
            {
                return Some(arguments_of_render(spec, &render));
            }
            let cli = Cli::parse();
            match render_arguments(&cli) {
                Some(arguments) => Some(arguments),
                None => {
                    other = Some(cli);
                    None
                }
            }
        });
        return match (rendered, other) {
            (Some(result), _) => exit_with(result),
            (None, Some(cli)) => exit_with(run(cli)),
            (None, None) => exit_with(run(Cli::parse())),
        };
    }
    exit_with(run(Cli::parse()))
}

/// The spec and the options of a `render` command line (`None`: another command).
fn render_arguments(cli: &Cli) -> Option<(PathBuf, RenderOptions)> {
    match cli.command {
        Command::Render(ref render) => Some(arguments_of_render(cli.spec.clone(), render)),
        _ => None,
    }
}

/// The spec and the options of `render` with the arguments `render`.
fn arguments_of_render(spec: PathBuf, render: &RenderArgs) -> (PathBuf, RenderOptions) {
    let release = Release {
        name: render.name.clone(),
        namespace: render.namespace.clone(),
    };
    (spec, render.values.options(release))
}

/// Runs the command `cli` names.
fn run(cli: Cli) -> Result<commands::Exit, commands::CommandError> {
    let out_or_default =
        |out: Option<PathBuf>| out.unwrap_or_else(|| commands::default_out_dir(&cli.spec));
    let result = match cli.command {
        Command::Init {
            ref name,
            ref classes,
        } => commands::init(&cli.spec, name.as_deref(), classes.as_deref()),
        Command::Generate { ref out } => {
            commands::generate(&cli.spec, &out_or_default(out.clone()))
        }
        Command::Check { ref out } => commands::check(&cli.spec, &out_or_default(out.clone())),
        Command::Render(_) => {
            let (spec, options) = render_arguments(&cli).expect("a render command");
            commands::render(&spec, &options)
        }
        Command::Schema => commands::schema(),
        Command::Capacity { ref values, format } => commands::capacity(
            &cli.spec,
            &values.options(Release::default()),
            match format {
                CapacityFormatArg::Table => commands::CapacityFormat::Table,
                CapacityFormatArg::Markdown => commands::CapacityFormat::Markdown,
                CapacityFormatArg::Json => commands::CapacityFormat::Json,
                CapacityFormatArg::Svg => commands::CapacityFormat::Svg,
            },
        ),
        Command::Preflight {
            ref values,
            ref postgres,
            ref redis,
            format,
            timeout_seconds,
        } => commands::preflight(
            &cli.spec,
            &commands::PreflightOptions {
                values: values.options(Release::default()),
                postgres: postgres.clone(),
                redis: redis.clone(),
                format: match format {
                    PreflightFormatArg::Table => commands::PreflightFormat::Table,
                    PreflightFormatArg::Markdown => commands::PreflightFormat::Markdown,
                    PreflightFormatArg::Json => commands::PreflightFormat::Json,
                },
                timeout: std::time::Duration::from_secs(timeout_seconds),
            },
        ),
        Command::Validate {
            ref kube_versions,
            ref schema_locations,
            ref kubeconform,
            timeout_seconds,
        } => commands::validate(
            &cli.spec,
            &commands::ValidateOptions {
                kube_versions: kube_versions.clone(),
                schema_locations: schema_locations.clone(),
                kubeconform: kubeconform.clone(),
                timeout: std::time::Duration::from_secs(timeout_seconds),
            },
        ),
        Command::Diff {
            ref against,
            format,
        } => commands::diff(
            &cli.spec,
            &out_or_default(against.clone()),
            match format {
                Format::Text => commands::DiffFormat::Text,
                Format::Markdown => commands::DiffFormat::Markdown,
            },
        ),
        Command::Package { ref out } => commands::package(&cli.spec, out),
        Command::Push {
            ref reference,
            plain_http,
            ref username,
            password_stdin,
            timeout_seconds,
        } => commands::push(
            &cli.spec,
            &commands::PushOptions {
                reference: reference.clone(),
                plain_http,
                username: username.clone(),
                password_stdin,
                timeout: std::time::Duration::from_secs(timeout_seconds),
            },
        ),
    };
    result
}

/// Ends the process with the exit code of `result`, after printing its error.
fn exit_with(result: Result<commands::Exit, commands::CommandError>) -> ExitCode {
    let code = match result {
        Ok(exit) => exit as u8,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit() as u8
        }
    };
    exit_without_clean_up(code)
}

/// Flushes standard output and ends the process with `code`, skipping what runs at
/// exit: the commands have written and closed every file, and removed what they
/// created, before they return, so all that is left is mimalloc giving each page back
/// to the system one at a time (about 0.2 ms of the agent platform's `render`, and 1 %
/// of a 400-workload one, in `perf` profiles), which the kernel does at once; and the
/// kernel's own freeing of the memory is left to a child
/// ([`leave_the_memory_to_a_child`]).
fn exit_without_clean_up(code: u8) -> ExitCode {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    leave_the_memory_to_a_child();
    #[cfg(target_os = "linux")]
    // SAFETY: `_exit` ends the process; nothing of ours runs after it.
    unsafe {
        libc::_exit(i32::from(code));
    }
    #[allow(unreachable_code)]
    ExitCode::from(code)
}

/// Lets the process end without waiting for the kernel to take its memory apart: a
/// child that shares the memory (`clone` with `CLONE_VM`) and holds no file is started
/// right before `_exit`, and is killed when this process has ended
/// (`PR_SET_PDEATHSIG`). The kernel frees an address space when its last user ends,
/// so that work (unmapping and freeing every page touched: about a tenth of an
/// example's `render`, 0.4 to 0.6 ms, and 7 ms of a 400-workload one, on the
/// benchmarks' VM) is done by the child after the caller has seen this process end,
/// as the `mold` linker leaves its own clean-up to a child. Nothing else changes: the
/// exit code is this process's, and the child closes its copy of every file before
/// this process ends, so a pipe reading the output ends when this process does (this
/// process's own files stay open to the end: a thread of its may still use one). The
/// child blocks every signal but `SIGKILL`, ends at once if this process has already
/// ended, and within 10 ms of its end if no signal came. Whoever reaps orphans (init,
/// or a subreaper) reaps it. If `clone` is refused, and under Valgrind, the process
/// ends as before.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn leave_the_memory_to_a_child() {
    use std::sync::atomic::{AtomicU32, Ordering};
    /// What the child is handed: its parent, and where it says it holds no file.
    struct Handed {
        parent: libc::pid_t,
        closed: AtomicU32,
    }
    /// The child: closes its copy of every file, says so, and waits, with every signal
    /// blocked, to be killed when its parent ends. It also looks every 10 ms whether
    /// its parent has ended (`getppid` then names another process), so that it ends
    /// even when no signal comes (the parent killed while the child was starting). It
    /// shares the parent's thread-local storage too (glibc's wrappers would read the
    /// parent thread's state there), so it makes raw system calls only.
    extern "C" fn hold_until_the_parent_ends(handed: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `handed` is the parent's leaked `Handed`; raw system calls on no
        // memory but their arguments and `nap`, on this stack.
        unsafe {
            let handed = &*handed.cast::<Handed>();
            libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
            handed.closed.store(1, Ordering::Release);
            libc::syscall(libc::SYS_prctl, libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let nap = libc::timespec {
                tv_sec: 0,
                tv_nsec: 10_000_000,
            };
            while libc::syscall(libc::SYS_getppid) == libc::c_long::from(handed.parent) {
                let rest = std::ptr::null_mut::<libc::timespec>();
                libc::syscall(libc::SYS_nanosleep, &nap, rest);
            }
        }
        0
    }
    if under_valgrind(&std::env::var_os("LD_PRELOAD").unwrap_or_default()) {
        return;
    }
    const STACK: usize = 16 * 1024;
    // 16-byte aligned, as the x86-64 ABI wants a stack; leaked, as `handed` is, so
    // that nothing frees them while the child runs.
    let stack = Box::leak(vec![0u128; STACK / 16].into_boxed_slice());
    let handed: &Handed = Box::leak(Box::new(Handed {
        // SAFETY: `getpid` has no preconditions.
        parent: unsafe { libc::getpid() },
        closed: AtomicU32::new(0),
    }));
    // SAFETY: blocking signals on this thread touches no Rust memory, and the child
    // inherits the mask: no signal handler of ours runs in it. The child runs on its
    // own stack and reads only `handed`, both leaked above.
    let started = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
        let top = stack.as_mut_ptr().add(stack.len()).cast::<libc::c_void>();
        let arg = std::ptr::from_ref(handed).cast_mut().cast::<libc::c_void>();
        libc::clone(hold_until_the_parent_ends, top, libc::CLONE_VM, arg) > 0
    };
    // Until the child holds no file (it starts at once on an idle core), at most 50 ms.
    if started {
        let since = std::time::Instant::now();
        while handed.closed.load(Ordering::Acquire) == 0
            && since.elapsed() < std::time::Duration::from_millis(50)
        {
            std::thread::yield_now();
        }
    }
}

/// Whether the libraries preloaded (`LD_PRELOAD`) are Valgrind's (`vgpreload_*.so`).
/// Valgrind runs no `clone` that shares memory without being a thread: it ends the
/// program instead, so under it the process ends without a child
/// ([`leave_the_memory_to_a_child`]).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn under_valgrind(preloaded: &std::ffi::OsStr) -> bool {
    const VALGRIND: &[u8] = b"vgpreload";
    preloaded
        .as_encoded_bytes()
        .windows(VALGRIND.len())
        .any(|w| w == VALGRIND)
}

#[cfg(test)]
mod tests {
    use super::subcommand_of;
    use super::{Cli, Command, RenderCli, RenderOnly};
    use clap::{CommandFactory, Parser};

    /// Valgrind's preloaded libraries are told apart from others, wherever they are in
    /// the list.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn valgrind_is_told_by_its_preloaded_libraries() {
        use super::under_valgrind;
        use std::ffi::OsStr;
        let vg = "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so";
        assert!(under_valgrind(OsStr::new(vg)));
        assert!(under_valgrind(OsStr::new(&format!("/lib/other.so:{vg}"))));
        for other in [
            "",
            "/lib/libfaketime.so.1",
            "vgprelo",
            "/opt/valgrind/lib.so",
        ] {
            assert!(!under_valgrind(OsStr::new(other)), "{other}");
        }
    }

    /// A `render` line as [`RenderCli`] reads it, or `None` when it refuses it.
    fn read_by_render_cli(line: &[&str]) -> Option<(std::path::PathBuf, super::RenderArgs)> {
        let cli = RenderCli::try_parse_from(line).ok()?;
        let RenderOnly::Render(render) = cli.command;
        Some((cli.spec, render))
    }

    /// A line as [`Cli`] reads it: `Ok(Some(_))` for `render`, `Ok(None)` for another
    /// command, `Err` for a line it refuses (an error, help, the version).
    fn read_by_cli(line: &[&str]) -> Result<Option<(std::path::PathBuf, super::RenderArgs)>, ()> {
        let cli = Cli::try_parse_from(line).map_err(|_| ())?;
        Ok(match cli.command {
            Command::Render(render) => Some((cli.spec, render)),
            _ => None,
        })
    }

    /// Every line [`RenderCli`] accepts, [`Cli`] reads the same; the lines it refuses
    /// (help, version, errors, other commands) are left to [`Cli`].
    #[test]
    fn the_render_line_reads_as_the_whole_command_reads_it() {
        let accepted: &[&[&str]] = &[
            &["shipshape", "render"],
            &["shipshape", "render", "rel"],
            &["shipshape", "--spec", "a.yaml", "render", "rel", "-n", "ns"],
            &["shipshape", "render", "--spec=b.yaml", "--namespace=x"],
            &[
                "shipshape",
                "render",
                "-fone.yaml",
                "-f",
                "two.yaml",
                "--values=3.yaml",
            ],
            &["shipshape", "render", "--set", "a.b=1,c=2", "--set=d={x,y}"],
            &["shipshape", "render", "--preset", "production", "--", "rel"],
            &[
                "shipshape",
                "render",
                "-n",
                "ns",
                "rel",
                "--preset=p",
                "--spec",
                "c.yaml",
            ],
        ];
        for line in accepted {
            let fast = read_by_render_cli(line);
            assert!(fast.is_some(), "{line:?} is refused");
            assert_eq!(read_by_cli(line), Ok(fast), "{line:?}");
        }
        let refused: &[&[&str]] = &[
            &["shipshape", "render", "--help"],
            &["shipshape", "render", "-h"],
            &["shipshape", "--version", "render"],
            &["shipshape", "render", "a", "b"],
            &["shipshape", "render", "--unknown"],
            &["shipshape", "render", "-n"],
            &["shipshape", "generate"],
            &["shipshape", "capacity", "--preset", "p"],
        ];
        // `Cli` refuses them too, or reads another command: none is a `render`.
        for line in refused {
            assert_eq!(read_by_render_cli(line), None, "{line:?} is accepted");
            assert!(!matches!(read_by_cli(line), Ok(Some(_))), "{line:?}");
        }
    }

    /// The two commands define `render`'s arguments and the global `--spec` alike.
    #[test]
    fn the_render_command_alone_has_the_arguments_of_the_whole() {
        fn described(args: Vec<&clap::Arg>) -> Vec<String> {
            let mut described: Vec<String> = args
                .into_iter()
                .map(|a| {
                    format!(
                        "{} {:?} {:?} {:?} {:?} {} {:?}",
                        a.get_id(),
                        a.get_long(),
                        a.get_short(),
                        a.get_default_values(),
                        a.get_num_args(),
                        a.is_global_set(),
                        a.get_action(),
                    )
                })
                .collect();
            described.sort();
            described
        }
        let (whole, alone) = (Cli::command(), RenderCli::command());
        let render_of = |c: &clap::Command| {
            described(
                c.find_subcommand("render")
                    .expect("render")
                    .get_arguments()
                    .collect(),
            )
        };
        assert_eq!(render_of(&whole), render_of(&alone));
        assert_eq!(
            described(whole.get_arguments().collect()),
            described(alone.get_arguments().collect())
        );
        assert_eq!(whole.get_version(), alone.get_version());
    }

    fn subcommand<'a>(args: &[&'a str]) -> Option<&'a str> {
        subcommand_of(args.iter().map(|a| a.as_bytes()))
            .map(|s| std::str::from_utf8(s).expect("utf-8"))
    }

    fn spec_argument<'a>(args: &[&'a str]) -> Option<&'a str> {
        super::spec_argument_of(args.iter().map(|a| a.as_bytes()))
            .map(|s| std::str::from_utf8(s).expect("utf-8"))
    }

    /// The spec `render` reads ahead is the value clap gives `--spec`, wherever the
    /// option is, up to a `--`; `None` without one.
    #[test]
    fn the_spec_argument_is_the_value_of_spec_up_to_a_double_dash() {
        assert_eq!(
            spec_argument(&["--spec", "a.yaml", "render"]),
            Some("a.yaml")
        );
        assert_eq!(
            spec_argument(&["render", "--spec=b.yaml", "x"]),
            Some("b.yaml")
        );
        assert_eq!(
            spec_argument(&["render", "x", "--spec", "c.yaml"]),
            Some("c.yaml")
        );
        assert_eq!(spec_argument(&["--spec=", "render"]), Some(""));
        assert_eq!(spec_argument(&["render", "--", "--spec", "d.yaml"]), None);
        assert_eq!(
            spec_argument(&["--spec", "e.yaml", "render", "--", "--spec=f"]),
            Some("e.yaml")
        );
        assert_eq!(spec_argument(&["render", "-f", "v.yaml"]), None);
        assert_eq!(spec_argument(&["render", "--spec"]), None);
        assert_eq!(
            spec_argument(&["--spec", "g.yaml", "render", "--spec"]),
            Some("g.yaml")
        );
        assert_eq!(spec_argument(&["render", "--specs", "h.yaml"]), None);
        // What clap reads for each line, where it reads one.
        for line in [
            &["--spec", "a.yaml", "render"][..],
            &["render", "--spec=b.yaml", "x"],
            &["render", "x", "--spec", "c.yaml"],
            &["render", "x"],
        ] {
            let cli = super::Cli::try_parse_from(
                std::iter::once("shipshape").chain(line.iter().copied()),
            )
            .expect("a render line");
            let clap = cli.spec.to_str().expect("utf-8").to_string();
            assert_eq!(
                spec_argument(line).unwrap_or(super::DEFAULT_SPEC),
                clap,
                "{line:?}"
            );
        }
    }

    #[test]
    fn the_subcommand_is_the_first_argument_that_is_no_option_nor_the_spec() {
        assert_eq!(subcommand(&["render", "rel"]), Some("render"));
        assert_eq!(
            subcommand(&["--spec", "render", "generate"]),
            Some("generate")
        );
        assert_eq!(subcommand(&["--spec=x.yaml", "render"]), Some("render"));
        assert_eq!(subcommand(&["-h", "render"]), Some("render"));
        assert_eq!(subcommand(&["--spec"]), None);
        assert_eq!(subcommand(&["--version"]), None);
        assert_eq!(subcommand(&[]), None);
    }

    /// The hook before `main` turns huge pages off, as the kernel reports it
    /// (`PR_GET_THP_DISABLE`), whatever the arguments.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_hook_before_main_turns_huge_pages_off() {
        fn huge_pages_on() -> bool {
            // SAFETY: no arguments; returns the flag.
            let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
            assert!(disabled >= 0, "PR_GET_THP_DISABLE failed");
            disabled == 0
        }
        fn turn_back_on() {
            // SAFETY: integer arguments only.
            unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0) };
        }
        turn_back_on();
        assert!(huge_pages_on());
        super::huge_pages_off_before_main(0, std::ptr::null(), std::ptr::null());
        let off = !huge_pages_on();
        turn_back_on();
        assert!(off, "huge pages stay on");
    }
}
