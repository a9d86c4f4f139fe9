//! A TLS-terminating nginx in front of a `wasmod serve`, as `docs/deployment.md` deploys it:
//! Debian's nginx run by the test (`-g 'daemon off;'`) with the committed `deploy/nginx.conf`
//! rendered for its own port, certificate and server (each line it replaces must be there, so
//! the file and the tests cannot drift apart), its prefix, logs and temporary files in a
//! temporary directory; and a test CA with a certificate it signed for `127.0.0.1` (rcgen).
//! `.ci/run` installs nginx (not started as a service).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use wasmod_client::Certificate;
use wasmod_wasm_tests::workspace_root;

/// How long nginx may take to start.
const PATIENCE: Duration = Duration::from_secs(20);

/// The flags `docs/deployment.md` gives `wasmod serve` behind the proxy: the per-address limits
/// are nginx's, every connection the server sees coming from nginx's address.
pub const BEHIND_A_PROXY: [&str; 8] = [
    "--identities-per-minute",
    "0",
    "--anonymous-calls-per-minute",
    "0",
    "--max-connections-per-address",
    "10000",
    "--failed-tokens-per-second",
    "0",
];

/// A test CA and a certificate it signed for `127.0.0.1`, in PEM.
pub struct Certificates {
    /// The CA's certificate.
    pub ca: String,
    server: String,
    server_key: String,
}

impl Certificates {
    /// A new CA, and a certificate it signed for `127.0.0.1`.
    pub fn new() -> Self {
        let ca_key = rcgen::KeyPair::generate().expect("a key");
        let mut ca = rcgen::CertificateParams::new(Vec::new()).expect("parameters");
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "wasmod proxy test CA");
        let ca_certificate = ca.self_signed(&ca_key).expect("the CA's certificate");
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let server_key = rcgen::KeyPair::generate().expect("a key");
        let server = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .expect("parameters")
            .signed_by(&server_key, &issuer)
            .expect("the server's certificate");
        Self {
            ca: ca_certificate.pem(),
            server: server.pem(),
            server_key: server_key.serialize_pem(),
        }
    }

    /// The CA, as the SDK takes it.
    pub fn root(&self) -> Certificate {
        Certificate::from_pem(self.ca.as_bytes()).expect("the CA reads")
    }
}

/// The committed configuration of `docs/deployment.md`.
fn committed_config() -> PathBuf {
    workspace_root().join("deploy").join("nginx.conf")
}

/// `text` with `from` replaced by `to`, which must be there exactly once.
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "deploy/nginx.conf has `{from}` once (the test replaces it)"
    );
    text.replace(from, to)
}

/// Debian's nginx: `/usr/sbin/nginx`, which a user's `PATH` may lack, else whichever `nginx`
/// the `PATH` finds.
fn nginx_command() -> PathBuf {
    let debian = Path::new("/usr/sbin/nginx");
    if debian.exists() {
        debian.to_owned()
    } else {
        PathBuf::from("nginx")
    }
}

/// Debian's nginx, run by the test on a loopback port with the committed configuration.
pub struct Nginx {
    child: Option<Child>,
    dir: tempfile::TempDir,
    port: u16,
}

impl Nginx {
    /// nginx in front of the server at `upstream` (`127.0.0.1:PORT`), serving `certificates`'
    /// server certificate, on a free port.
    pub fn start(upstream: &str, certificates: &Certificates) -> Self {
        let dir = tempfile::tempdir().expect("a directory");
        let path = |name: &str| dir.path().join(name).display().to_string();
        std::fs::write(path("server.pem"), &certificates.server).expect("written");
        std::fs::write(path("server.key"), &certificates.server_key).expect("written");
        let port = super::free_port();
        let template = std::fs::read_to_string(committed_config()).expect("deploy/nginx.conf");
        let site = replaced(
            &template,
            "server 127.0.0.1:3000;",
            &format!("server {upstream};"),
        );
        let site = replaced(
            &site,
            "listen 443 ssl;",
            &format!("listen 127.0.0.1:{port} ssl;"),
        );
        let site = replaced(
            &site,
            "/etc/letsencrypt/live/chat.example.org/fullchain.pem",
            &path("server.pem"),
        );
        let site = replaced(
            &site,
            "/etc/letsencrypt/live/chat.example.org/privkey.pem",
            &path("server.key"),
        );
        let site = replaced(
            &site,
            "/var/log/nginx/wasmod.access.log",
            &path("wasmod.access.log"),
        );
        std::fs::write(path("wasmod.conf"), site).expect("written");
        // What Debian's /etc/nginx/nginx.conf would hold, in the test's directory: logs,
        // temporary files and the pid file in it, no other site.
        let main = format!(
            "worker_processes 1;\n\
             pid {pid};\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n\
                 access_log off;\n\
                 client_body_temp_path {temp}/body;\n\
                 proxy_temp_path {temp}/proxy;\n\
                 fastcgi_temp_path {temp}/fastcgi;\n\
                 uwsgi_temp_path {temp}/uwsgi;\n\
                 scgi_temp_path {temp}/scgi;\n\
                 include {site};\n\
             }}\n",
            pid = path("nginx.pid"),
            temp = dir.path().display(),
            site = path("wasmod.conf"),
        );
        std::fs::write(path("nginx.conf"), main).expect("written");
        let mut nginx = Self {
            child: None,
            dir,
            port,
        };
        nginx.resume();
        nginx
    }

    /// Starts it (again, on the same port) and waits until it accepts connections.
    pub fn resume(&mut self) {
        let dir = self.dir.path();
        let child = Command::new(nginx_command())
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-e")
            .arg(dir.join("error.log"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts (apt-get install nginx)");
        self.child = Some(child);
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self.child.as_mut().and_then(|child| child.try_wait().ok()?);
            assert!(exited.is_none(), "nginx exited: {}", self.log(dir));
            assert!(started.elapsed() < PATIENCE, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops it (SIGTERM: nginx closes every connection at once) and waits for it.
    pub fn halt(&mut self) {
        if let Some(mut child) = self.child.take() {
            super::stop(&mut child);
        }
    }

    fn log(&self, dir: &Path) -> String {
        std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
    }

    /// What nginx wrote in the site's access log.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("wasmod.access.log")).unwrap_or_default()
    }

    /// `wss://127.0.0.1:PORT`: nginx's address, over TLS.
    pub fn url(&self) -> String {
        format!("wss://127.0.0.1:{}", self.port)
    }

    /// `https://127.0.0.1:PORT`.
    pub fn https(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.halt();
    }
}
