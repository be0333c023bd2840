//! End-to-end: package a chart, push it to a real `docker-registry` (distribution
//! 2.8) on loopback, then pull and render it with real Helm 3 and Helm 4.
//!
//! Tools come from `SHIPSHAPE_REGISTRY` (the `docker-registry` binary),
//! `SHIPSHAPE_HELM3` and `SHIPSHAPE_HELM4`, else their usual places; a missing tool
//! fails the test.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use shipshape::publish::oci::{
    credentials_from_docker_config, helm_chart_artifact, parse_oci_reference, push_chart,
    rfc3339_utc, ChartArtifact, Credentials, OciError, OciReference,
};
use shipshape::publish::package::{package_chart, ChartFile, DEFAULT_SOURCE_DATE_EPOCH};

const TIMEOUT: Duration = Duration::from_secs(30);
const CHART_YAML: &str = "apiVersion: v2\nname: demo\nversion: 0.3.1+build.5\ndescription: shipshape e2e chart\nappVersion: \"1.10\"\nmaintainers:\n  - name: Platform\n    email: platform@example.org\n";
const CM_YAML: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  answer: {{ .Values.answer | quote }}\n";
/// `htpasswd -Bbn -C 5 shipshape test-password` (bcrypt: the only scheme distribution reads).
const HTPASSWD: &str = "shipshape:$2y$05$qA3.EujOKoPtRW2HMim8MO.1A1mSTnpJ4YX7nWhMX6T6L1P4o7i2m\n";

// ---- tools -------------------------------------------------------------------

/// A tool from `var`, else its usual place; a missing tool fails the test.
fn tool(var: &str) -> Option<PathBuf> {
    Some(match var {
        "SHIPSHAPE_REGISTRY" => match std::env::var_os(var) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => {
                let p = PathBuf::from("/usr/bin/docker-registry");
                assert!(p.exists(), "`docker-registry` missing: set `SHIPSHAPE_REGISTRY` or run `scripts/install-test-tools.sh`");
                p
            }
        },
        "SHIPSHAPE_HELM3" => crate::support::helm3(),
        _ => crate::support::helm4(),
    })
}

struct Tools {
    registry: PathBuf,
    helm3: PathBuf,
    helm4: PathBuf,
}

fn tools() -> Option<Tools> {
    let registry = tool("SHIPSHAPE_REGISTRY");
    let helm3 = tool("SHIPSHAPE_HELM3");
    let helm4 = tool("SHIPSHAPE_HELM4");
    Some(Tools {
        registry: registry?,
        helm3: helm3?,
        helm4: helm4?,
    })
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("shipshape-{tag}-{}-{nanos}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs a process with a deadline; output goes to files (no pipe can fill up).
/// Returns (success, stdout, stderr).
fn run(
    program: &Path,
    args: &[&str],
    envs: &[(&str, &Path)],
    dir: &Path,
) -> (bool, String, String) {
    let out_path = dir.join("cmd.stdout");
    let err_path = dir.join("cmd.stderr");
    let mut child = Command::new(program)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, *v)))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", program.display()));
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{} {}` timed out", program.display(), args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    (status.success(), stdout, stderr)
}

/// Helm with every config, cache and credential path inside `home`.
fn helm(helm: &Path, home: &Path, args: &[&str]) -> String {
    let registry_config = home.join("registry/config.json");
    let cache = home.join("cache");
    let config = home.join("config");
    let data = home.join("data");
    let docker = home.join("docker");
    let envs = [
        ("HOME", home),
        ("HELM_REGISTRY_CONFIG", registry_config.as_path()),
        ("HELM_CACHE_HOME", cache.as_path()),
        ("HELM_CONFIG_HOME", config.as_path()),
        ("HELM_DATA_HOME", data.as_path()),
        ("DOCKER_CONFIG", docker.as_path()),
    ];
    let (ok, stdout, stderr) = run(helm, args, &envs, home);
    assert!(
        ok,
        "`{} {}` failed:\n{stdout}\n{stderr}",
        helm.display(),
        args.join(" ")
    );
    format!("{stdout}{stderr}")
}

// ---- registry ------------------------------------------------------------------

/// A `docker-registry` process on a free loopback port, killed on drop.
struct Registry {
    child: Child,
    port: u16,
    _dir: TempDir,
}

impl Registry {
    fn start(binary: &Path, htpasswd: bool) -> Registry {
        let dir = TempDir::new("registry");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: shipshape-test-secret\n",
            dir.0.join("data").display()
        );
        if htpasswd {
            let path = dir.0.join("htpasswd");
            fs::write(&path, HTPASSWD).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: shipshape-test\n    path: {}\n",
                path.display()
            ));
        }
        let config_path = dir.0.join("config.yml");
        fs::write(&config_path, config).unwrap();
        let child = Command::new(binary)
            .arg("serve")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(fs::File::create(dir.0.join("registry.log")).unwrap())
            .stderr(fs::File::create(dir.0.join("registry.err")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", binary.display()));
        let mut registry = Registry {
            child,
            port,
            _dir: dir,
        };
        registry.wait_ready();
        registry
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                let err = fs::read_to_string(self._dir.0.join("registry.err")).unwrap_or_default();
                panic!("`docker-registry` exited with {status}:\n{err}");
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "`docker-registry` did not listen on port {} within 15 s",
            self.port
        );
    }

    fn reference(&self) -> OciReference {
        parse_oci_reference(&format!("oci://127.0.0.1:{}/charts", self.port)).unwrap()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- chart -----------------------------------------------------------------------

fn demo_package() -> (Vec<u8>, ChartArtifact) {
    let files = [
        ChartFile {
            path: "Chart.yaml".into(),
            bytes: CHART_YAML.into(),
        },
        ChartFile {
            path: "values.yaml".into(),
            bytes: b"answer: 42\n".to_vec(),
        },
        ChartFile {
            path: "templates/cm.yaml".into(),
            bytes: CM_YAML.into(),
        },
    ];
    let tgz = package_chart("demo", &files, DEFAULT_SOURCE_DATE_EPOCH).unwrap();
    let created = rfc3339_utc(DEFAULT_SOURCE_DATE_EPOCH);
    let artifact = helm_chart_artifact(CHART_YAML, &tgz, &created).unwrap();
    (tgz, artifact)
}

fn get(url: &str, accept: &str) -> Vec<u8> {
    let mut response = ureq::get(url).header("Accept", accept).call().unwrap();
    response.body_mut().read_to_vec().unwrap()
}

// ---- tests ---------------------------------------------------------------------------

#[test]
fn push_twice_then_helm_3_and_4_pull_and_render() {
    let Some(tools) = tools() else { return };
    let registry = Registry::start(&tools.registry, false);
    let reference = registry.reference();
    let (tgz, artifact) = demo_package();
    assert_eq!(artifact.tag, "0.3.1_build.5");

    let first = push_chart(&reference, &artifact, None, true, TIMEOUT).unwrap();
    assert_eq!(first.manifest_digest, artifact.manifest.digest);
    assert_eq!(
        first.reference,
        format!("127.0.0.1:{}/charts/demo:0.3.1_build.5", registry.port)
    );
    assert_eq!((first.uploaded_blobs, first.existing_blobs), (2, 0));

    // A second push (rebuilt from scratch) uploads nothing and gives the same digest.
    let (_, rebuilt) = demo_package();
    let second = push_chart(&reference, &rebuilt, None, true, TIMEOUT).unwrap();
    assert_eq!(second.manifest_digest, first.manifest_digest);
    assert_eq!((second.uploaded_blobs, second.existing_blobs), (0, 2));

    let home = TempDir::new("helm-home");
    let url = format!("oci://127.0.0.1:{}/charts/demo", registry.port);
    let version = "0.3.1+build.5";

    // Helm 4 pull: the downloaded archive is our package, byte for byte.
    let pulled = home.0.join("pulled");
    fs::create_dir_all(&pulled).unwrap();
    let out = helm(
        &tools.helm4,
        &home.0,
        &[
            "pull",
            &url,
            "--version",
            version,
            "--plain-http",
            "-d",
            pulled.to_str().unwrap(),
        ],
    );
    assert!(out.contains(&first.manifest_digest), "{out}");
    let pulled_bytes = fs::read(pulled.join("demo-0.3.1+build.5.tgz")).unwrap();
    assert_eq!(pulled_bytes, tgz);

    for binary in [&tools.helm4, &tools.helm3] {
        let rendered = helm(
            binary,
            &home.0,
            &[
                "template",
                "rel",
                &url,
                "--version",
                version,
                "--plain-http",
            ],
        );
        assert!(
            rendered.contains("# Source: demo/templates/cm.yaml"),
            "{rendered}"
        );
        assert!(rendered.contains("name: rel-cm"), "{rendered}");
        assert!(rendered.contains("answer: \"42\""), "{rendered}");
    }

    // `helm push` of the same file (Helm 3 and 4): Helm takes `created` from the
    // file's modification time, so with the file dated SOURCE_DATE_EPOCH its
    // config blob and manifest are ours byte for byte, except that Helm's manifest
    // has no top-level `mediaType` (so its digest differs from ours).
    let tgz_path = home.0.join("demo-0.3.1+build.5.tgz");
    fs::write(&tgz_path, &tgz).unwrap();
    let epoch = std::time::UNIX_EPOCH + Duration::from_secs(DEFAULT_SOURCE_DATE_EPOCH);
    fs::File::options()
        .write(true)
        .open(&tgz_path)
        .unwrap()
        .set_modified(epoch)
        .unwrap();
    let ours_without_media_type = String::from_utf8(artifact.manifest.bytes.clone())
        .unwrap()
        .replacen(
            r#""mediaType":"application/vnd.oci.image.manifest.v1+json","#,
            "",
            1,
        );
    for (binary, ns) in [
        (&tools.helm3, "helm3-pushed"),
        (&tools.helm4, "helm4-pushed"),
    ] {
        let out = helm(
            binary,
            &home.0,
            &[
                "push",
                tgz_path.to_str().unwrap(),
                &format!("oci://127.0.0.1:{}/{ns}", registry.port),
                "--plain-http",
            ],
        );
        let base = format!("http://127.0.0.1:{}/v2/{ns}/demo", registry.port);
        let helm_manifest = get(
            &format!("{base}/manifests/0.3.1_build.5"),
            "application/vnd.oci.image.manifest.v1+json",
        );
        assert_eq!(
            String::from_utf8_lossy(&helm_manifest),
            ours_without_media_type
        );
        let helm_config = get(&format!("{base}/blobs/{}", artifact.config.digest), "*/*");
        assert_eq!(helm_config, artifact.config.bytes);
        assert!(!out.contains(&artifact.manifest.digest), "{out}");
    }
}

#[test]
fn htpasswd_registry_needs_credentials() {
    let Some(tools) = tools() else { return };
    let registry = Registry::start(&tools.registry, true);
    let reference = registry.reference();
    let (_, artifact) = demo_package();
    let host = format!("127.0.0.1:{}", registry.port);

    let err = push_chart(&reference, &artifact, None, true, TIMEOUT).unwrap_err();
    assert!(
        matches!(err, OciError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "registry `{host}` refused the credentials (401) at `HEAD http://{host}/v2/charts/demo/blobs/{}`: no credentials were given; pass `--username` and `--password-stdin`",
            artifact.config.digest
        )
    );

    let wrong = Credentials {
        username: "shipshape".into(),
        password: "wrong".into(),
    };
    let err = push_chart(&reference, &artifact, Some(&wrong), true, TIMEOUT).unwrap_err();
    assert!(
        err.to_string()
            .contains("the credentials of user `shipshape` were rejected"),
        "{err}"
    );

    // Credentials as `helm registry login` / `docker login` store them.
    let docker_config =
        format!(r#"{{"auths":{{"{host}":{{"auth":"c2hpcHNoYXBlOnRlc3QtcGFzc3dvcmQ="}}}}}}"#);
    let creds = credentials_from_docker_config(&docker_config, &host).unwrap();
    let first = push_chart(&reference, &artifact, Some(&creds), true, TIMEOUT).unwrap();
    assert_eq!(first.manifest_digest, artifact.manifest.digest);
    let second = push_chart(&reference, &artifact, Some(&creds), true, TIMEOUT).unwrap();
    assert_eq!(second.manifest_digest, first.manifest_digest);
    assert_eq!(second.uploaded_blobs, 0);

    // Helm 4 reads the chart back with the same credentials.
    let home = TempDir::new("helm-home-auth");
    let rendered = helm(
        &tools.helm4,
        &home.0,
        &[
            "template",
            "rel",
            &format!("oci://{host}/charts/demo"),
            "--version",
            "0.3.1+build.5",
            "--plain-http",
            "--username",
            "shipshape",
            "--password",
            "test-password",
        ],
    );
    assert!(rendered.contains("name: rel-cm"), "{rendered}");
}

#[test]
fn unreachable_registry_is_a_connection_error() {
    // Needs no tool: a port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let reference = parse_oci_reference(&format!("oci://127.0.0.1:{port}/charts")).unwrap();
    let (_, artifact) = demo_package();
    let err = push_chart(&reference, &artifact, None, true, TIMEOUT).unwrap_err();
    assert!(matches!(err, OciError::Unreachable { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("cannot reach registry `127.0.0.1:{port}`")),
        "{err}"
    );
}

#[test]
fn shipshape_push_twice_same_digest_then_helm_4_renders_from_the_registry() {
    let tools = tools().unwrap();
    let registry = Registry::start(&tools.registry, false);
    let reference = registry.reference();
    let target = format!("oci://{}/charts", reference.host);
    let spec = crate::support::examples()[0]
        .1
        .to_string_lossy()
        .into_owned();
    let bin = Path::new(env!("CARGO_BIN_EXE_shipshape"));
    let push = || {
        crate::support::run(
            bin,
            &["--spec", &spec, "push", &target, "--plain-http"],
            &[],
        )
    };
    let (code, first, err) = push();
    assert_eq!(code, 0, "{err}");
    let (code, second, err) = push();
    assert_eq!(code, 0, "{err}");
    let digest = |out: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix("digest: "))
            .map(str::to_string)
    };
    assert!(
        digest(&first).is_some_and(|d| d.starts_with("sha256:")),
        "{first}"
    );
    assert_eq!(digest(&first), digest(&second));
    // The printed digest is the one of the manifest the registry serves under the tag.
    let served = get(
        &format!(
            "http://{}/v2/charts/agent-platform/manifests/0.1.0",
            reference.host
        ),
        "application/vnd.oci.image.manifest.v1+json",
    );
    use sha2::Digest;
    let hex: String = sha2::Sha256::digest(&served)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest(&first), Some(format!("sha256:{hex}")));
    let scratch = crate::support::Scratch::new("push-cli");
    let chart_ref = format!("{target}/agent-platform");
    let (code, out, err) = crate::support::helm(
        &tools.helm4,
        &["template", &chart_ref, "--version", "0.1.0", "--plain-http"],
        scratch.path(),
    );
    assert_eq!(code, 0, "{err}");
    let golden = std::fs::read_to_string(
        crate::support::repo_root().join("golden/agent-platform/rendered/default.yaml"),
    )
    .unwrap();
    assert_eq!(
        crate::support::parse_objects(&out),
        crate::support::parse_objects(&golden)
    );
    drop(registry);
    let (code, _, err) = push();
    assert_eq!(code, 3, "an unreachable registry is exit 3: {err}");
    assert!(err.contains("cannot reach registry"), "{err}");
}

#[test]
fn the_fake_registry_takes_a_push_only_without_a_fault() {
    use crate::fake_registry::{FakeRegistry, Fault};
    let (_, artifact) = demo_package();
    let creds = Credentials {
        username: "u".into(),
        password: "pw".into(),
    };
    let fake = FakeRegistry::start(Fault::None);
    let reference = parse_oci_reference(&fake.reference()).unwrap();
    let outcome = push_chart(&reference, &artifact, None, true, TIMEOUT).unwrap();
    let stored = fake.manifest("charts/demo", &artifact.tag).unwrap();
    assert_eq!(stored, artifact.manifest.bytes);
    assert_eq!(outcome.manifest_digest, artifact.manifest.digest);
    assert_eq!((outcome.uploaded_blobs, outcome.existing_blobs), (2, 0));

    type Refusal = fn(&OciError) -> bool;
    let cases: [(Fault, Refusal); 6] = [
        (Fault::AlwaysOk, |e| matches!(e, OciError::Mismatch { .. })),
        (Fault::OkInsteadOfCreated, |e| {
            matches!(e, OciError::UnexpectedStatus { status: 200, .. })
        }),
        (Fault::WrongDigest, |e| {
            matches!(e, OciError::Mismatch { .. })
        }),
        (Fault::DropUpload, |e| {
            matches!(e, OciError::Broken { method: "PUT", .. })
        }),
        (Fault::UnauthorizedThenOk, |e| {
            matches!(
                e,
                OciError::Mismatch { .. } | OciError::UnexpectedStatus { .. }
            )
        }),
        (Fault::ForgetsManifest, |e| {
            matches!(
                e,
                OciError::UnexpectedStatus {
                    method: "GET",
                    status: 404,
                    ..
                }
            )
        }),
    ];
    for (fault, expected) in cases {
        let fake = FakeRegistry::start(fault);
        let reference = parse_oci_reference(&fake.reference()).unwrap();
        let err = push_chart(&reference, &artifact, Some(&creds), true, TIMEOUT)
            .expect_err(&format!("{fault:?} must be refused"));
        assert!(expected(&err), "{fault:?}: {err:?}");
    }
}
