//! A registry the tests start in-process: a correct minimal OCI distribution server
//! (blob uploads, manifests, HEAD and GET) that can misbehave in one chosen way.
//! `shipshape push` must succeed against the correct one and refuse every fault.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the registry misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// None: a correct registry.
    None,
    /// `200 OK` with an empty body to every request.
    AlwaysOk,
    /// Stores, but answers an upload and a manifest PUT with 200 instead of 201.
    OkInsteadOfCreated,
    /// Answers 201 with a `Docker-Content-Digest` that is not the content's.
    WrongDigest,
    /// Closes the connection in the middle of a blob upload.
    DropUpload,
    /// 401 with a Basic challenge without credentials, then 200 to everything.
    UnauthorizedThenOk,
    /// Accepts the manifest with 201 and the right digest, but does not keep it.
    ForgetsManifest,
}

impl Fault {
    /// The fault named in a fixture.
    pub fn from_name(name: &str) -> Fault {
        match name {
            "none" => Fault::None,
            "always-200" => Fault::AlwaysOk,
            "200-instead-of-201" => Fault::OkInsteadOfCreated,
            "wrong-digest" => Fault::WrongDigest,
            "drop-upload" => Fault::DropUpload,
            "401-then-200" => Fault::UnauthorizedThenOk,
            "forgets-manifest" => Fault::ForgetsManifest,
            other => panic!("unknown registry fault `{other}`"),
        }
    }
}

#[derive(Default)]
struct Store {
    blobs: HashMap<String, Vec<u8>>,
    manifests: HashMap<String, Vec<u8>>,
    uploads: usize,
}

/// A fake registry on a loopback port; it stops when dropped.
pub struct FakeRegistry {
    pub port: u16,
    stop: Arc<AtomicBool>,
    store: Arc<Mutex<Store>>,
}

struct Request {
    method: String,
    path: String,
    query: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn answer(status: u16) -> Answer {
    Answer {
        status,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

impl FakeRegistry {
    pub fn start(fault: Fault) -> FakeRegistry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let store = Arc::new(Mutex::new(Store::default()));
        let (stop2, store2) = (Arc::clone(&stop), Arc::clone(&store));
        std::thread::spawn(move || {
            while !stop2.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let store = Arc::clone(&store2);
                        std::thread::spawn(move || serve(stream, fault, &store));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FakeRegistry { port, stop, store }
    }

    /// `oci://127.0.0.1:PORT/charts`.
    pub fn reference(&self) -> String {
        format!("oci://127.0.0.1:{}/charts", self.port)
    }

    /// The manifest stored under `repository:tag`, if any.
    pub fn manifest(&self, repository: &str, tag: &str) -> Option<Vec<u8>> {
        let store = self.store.lock().unwrap();
        store.manifests.get(&format!("{repository}:{tag}")).cloned()
    }
}

impl Drop for FakeRegistry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Serves one connection, one request at a time (keep-alive), until it closes.
fn serve(stream: TcpStream, fault: Fault, store: &Mutex<Store>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let Some(head) = read_head(&mut reader) else {
            return;
        };
        let (method, target, headers) = head;
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        if fault == Fault::DropUpload && method == "PUT" && path.contains("/blobs/uploads/") {
            // Read part of the body, then hang up.
            let mut part = vec![0; length.min(16)];
            let _ = reader.read_exact(&mut part);
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request = Request {
            method: method.clone(),
            path: path.to_string(),
            query: query.to_string(),
            headers,
            body,
        };
        let reply = handle(&request, fault, store);
        let mut out = format!(
            "HTTP/1.1 {} X\r\nContent-Length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (k, v) in &reply.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        if method != "HEAD" {
            bytes.extend_from_slice(&reply.body);
        }
        if writer.write_all(&bytes).is_err() || writer.flush().is_err() {
            return;
        }
    }
}

type Head = (String, String, HashMap<String, String>);

fn read_head(reader: &mut BufReader<TcpStream>) -> Option<Head> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Some((method, target, headers))
}

fn handle(req: &Request, fault: Fault, store: &Mutex<Store>) -> Answer {
    match fault {
        Fault::AlwaysOk => return answer(200),
        Fault::UnauthorizedThenOk => {
            if req.headers.contains_key("authorization") {
                return answer(200);
            }
            let mut a = answer(401);
            a.headers
                .push(("WWW-Authenticate".into(), r#"Basic realm="fake""#.into()));
            return a;
        }
        _ => {}
    }
    let created = if fault == Fault::OkInsteadOfCreated {
        200
    } else {
        201
    };
    let claimed = |real: String| {
        if fault == Fault::WrongDigest {
            format!("sha256:{}", "0".repeat(64))
        } else {
            real
        }
    };
    let Some(rest) = req.path.strip_prefix("/v2/") else {
        return answer(404);
    };
    let mut store = store.lock().unwrap();
    if req.method == "GET" && rest.is_empty() {
        return answer(200);
    }
    if let Some((repo, blob)) = rest.split_once("/blobs/sha256:") {
        let _ = repo;
        let key = format!("sha256:{blob}");
        return match (req.method.as_str(), store.blobs.get(&key)) {
            ("HEAD" | "GET", Some(bytes)) => Answer {
                status: 200,
                headers: vec![("Docker-Content-Digest".into(), key.clone())],
                body: bytes.clone(),
            },
            _ => answer(404),
        };
    }
    if let Some((repo, upload)) = rest.split_once("/blobs/uploads/") {
        if req.method == "POST" && upload.is_empty() {
            store.uploads += 1;
            let mut a = answer(202);
            a.headers.push((
                "Location".into(),
                format!("/v2/{repo}/blobs/uploads/u{}", store.uploads),
            ));
            return a;
        }
        if req.method == "PUT" {
            let wanted = req
                .query
                .split('&')
                .find_map(|kv| kv.strip_prefix("digest="))
                .unwrap_or("")
                .replace("%3A", ":");
            let real = digest(&req.body);
            if wanted != real {
                return answer(400);
            }
            store.blobs.insert(real.clone(), req.body.clone());
            let mut a = answer(created);
            a.headers
                .push(("Docker-Content-Digest".into(), claimed(real)));
            return a;
        }
    }
    if let Some((repo, tag)) = rest.split_once("/manifests/") {
        let key = format!("{repo}:{tag}");
        match req.method.as_str() {
            "PUT" => {
                let real = digest(&req.body);
                if fault != Fault::ForgetsManifest {
                    store.manifests.insert(key, req.body.clone());
                }
                let mut a = answer(created);
                a.headers
                    .push(("Docker-Content-Digest".into(), claimed(real)));
                return a;
            }
            "GET" | "HEAD" => {
                return match store.manifests.get(&key) {
                    Some(bytes) => Answer {
                        status: 200,
                        headers: vec![
                            ("Docker-Content-Digest".into(), claimed(digest(bytes))),
                            (
                                "Content-Type".into(),
                                "application/vnd.oci.image.manifest.v1+json".into(),
                            ),
                        ],
                        body: bytes.clone(),
                    },
                    None => answer(404),
                }
            }
            _ => {}
        }
    }
    answer(404)
}
