//! TLS for `wss://` sockets and `https://` requests (the module's description), natively: what a
//! client trusts ([`Tls`]), and the certificates an application adds ([`Certificate`]).
//!
//! `wasmod serve` speaks plain HTTP; a deployment puts a TLS-terminating proxy in front of it
//! (`docs/deployment.md`), and the client connects to the proxy over `wss://`. The TLS is
//! rustls, with ring as its crypto provider (the one the workspace's HTTP client already
//! builds; rustls's default, aws-lc-rs, builds a C library), TLS 1.2 and 1.3.
//!
//! **Which roots by default: the platform's** (`rustls-native-certs`: the system's store on
//! Linux, the keychain on macOS, the certificate store on Windows), rather than a copy of
//! Mozilla's list compiled into the binary (`webpki-roots`). The client is shipped inside
//! applications that run on machines someone administers: a root that machine's owner added
//! (a company's own CA, a test CA on a developer's machine) is trusted without rebuilding the
//! application, and a root the operating system withdraws stops being trusted with the
//! system's update rather than the application's. The cost: a machine with no store (a bare
//! container without `ca-certificates`) trusts nothing, which a connection then says
//! ([`OpenError::Tls`](crate::socket::OpenError::Tls)) rather than connecting to anyone.
//! The store is read once per process, on the first TLS connection.
//!
//! An application whose server's certificate comes from its own CA adds that CA with
//! [`ClientBuilder::root_certificate`](crate::ClientBuilder::root_certificate) (or
//! [`Tls::with_root`] for the socket layer): it is trusted besides the platform's roots.
//! A browser client has the browser's TLS, and none of this.

use crate::transport::OpenError;
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A certificate authority's certificate, for a client to trust besides the platform's roots.
///
/// ```no_run
/// # async fn connect() -> Result<(), Box<dyn std::error::Error>> {
/// use wasmod_client::{Certificate, Client};
///
/// // The CA that signed the proxy's certificate.
/// let ca = Certificate::from_pem(&std::fs::read("ca.pem")?)?;
/// let client = Client::builder("wss://chat.example.org")
///     .root_certificate(ca)
///     .connect()
///     .await?;
/// # drop(client);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Certificate {
    der: CertificateDer<'static>,
}

impl Certificate {
    /// The first certificate (`-----BEGIN CERTIFICATE-----`) of `pem`; an error if it has
    /// none or it is not one a client can trust as a root.
    pub fn from_pem(pem: &[u8]) -> Result<Self, CertificateError> {
        let der = CertificateDer::from_pem_slice(pem)
            .map_err(|error| CertificateError(format!("no certificate in the PEM: {error}")))?;
        Self::checked(der)
    }

    /// The certificate `der` (its DER encoding); an error if it is not one a client can trust
    /// as a root.
    pub fn from_der(der: impl Into<Vec<u8>>) -> Result<Self, CertificateError> {
        Self::checked(CertificateDer::from(der.into()))
    }

    fn checked(der: CertificateDer<'static>) -> Result<Self, CertificateError> {
        RootCertStore::empty()
            .add(der.clone())
            .map_err(|error| CertificateError(format!("not a root certificate: {error}")))?;
        Ok(Self { der })
    }
}

impl fmt::Debug for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Certificate")
            .field("der_bytes", &self.der.len())
            .finish()
    }
}

/// Why bytes are not a [`Certificate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateError(String);

impl fmt::Display for CertificateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CertificateError {}

/// What a client's TLS connections trust: the platform's roots, and the certificates added
/// with [`with_root`](Self::with_root). The default adds none. Cheap to clone; the TLS
/// configuration is made on the first `wss://` connection and shared by the clones.
#[derive(Clone, Default)]
pub struct Tls {
    added: Vec<Certificate>,
    config: Arc<OnceLock<Result<Arc<ClientConfig>, String>>>,
}

impl Tls {
    /// The platform's roots, and `root` besides (and those added before).
    pub fn with_root(mut self, root: Certificate) -> Self {
        self.added.push(root);
        self.config = Arc::default();
        self
    }

    /// The rustls configuration of a `wss://` connection; an [`OpenError::Tls`] when nothing
    /// at all is trusted.
    pub(crate) fn rustls(&self) -> Result<Arc<ClientConfig>, OpenError> {
        self.config
            .get_or_init(|| self.make_config())
            .clone()
            .map_err(OpenError::Tls)
    }

    fn make_config(&self) -> Result<Arc<ClientConfig>, String> {
        let mut store = RootCertStore::empty();
        store.add_parsable_certificates(self.roots());
        if store.is_empty() {
            return Err(nothing_trusted(&platform_roots().errors));
        }
        let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|error| format!("no TLS version to offer: {error}"))?
            .with_root_certificates(store)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }

    /// Every certificate trusted, DER-encoded: the platform's (the store is read on the first
    /// call in the process), then the added ones. For another TLS client of the application,
    /// such as an HTTP client's, to trust what this one does.
    pub fn roots_der(&self) -> Vec<Vec<u8>> {
        self.roots().into_iter().map(|root| root.to_vec()).collect()
    }

    /// Every certificate trusted: the platform's, then the added ones.
    pub(crate) fn roots(&self) -> Vec<CertificateDer<'static>> {
        let platform = &platform_roots().certs;
        let added = self.added.iter().map(|root| root.der.clone());
        platform.iter().cloned().chain(added).collect()
    }
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("added", &self.added)
            .finish_non_exhaustive()
    }
}

/// The platform's root certificates, read once per process, and what went wrong reading them.
struct PlatformRoots {
    certs: Vec<CertificateDer<'static>>,
    errors: Vec<String>,
}

fn platform_roots() -> &'static PlatformRoots {
    static ROOTS: OnceLock<PlatformRoots> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let loaded = rustls_native_certs::load_native_certs();
        PlatformRoots {
            certs: loaded.certs,
            errors: loaded.errors.iter().map(ToString::to_string).collect(),
        }
    })
}

/// Why a client with no root at all does not connect over TLS: the platform's store gave
/// none, with `errors` reading it.
fn nothing_trusted(errors: &[String]) -> String {
    let why = if errors.is_empty() {
        String::from("it has none")
    } else {
        errors.join("; ")
    };
    format!(
        "no root certificate to trust: the platform's store could not be read ({why}); \
         install the system's CA certificates, or give the server's CA with \
         `root_certificate`"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new CA's certificate, in PEM.
    fn ca_pem() -> String {
        let key = rcgen::KeyPair::generate().expect("a key");
        let mut params = rcgen::CertificateParams::new(Vec::new()).expect("parameters");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.self_signed(&key).expect("a certificate").pem()
    }

    #[test]
    fn a_pem_certificate_is_read_and_garbage_is_refused() {
        let ca = Certificate::from_pem(ca_pem().as_bytes()).expect("a certificate");
        assert_eq!(
            Certificate::from_der(ca.der.to_vec()).as_ref(),
            Ok(&ca),
            "its DER reads as the same certificate"
        );
        assert!(Certificate::from_pem(b"no PEM here").is_err());
        let refused = Certificate::from_der(b"not DER".to_vec()).expect_err("garbage");
        assert!(
            refused.to_string().contains("not a root certificate"),
            "{refused}"
        );
    }

    #[test]
    fn no_root_at_all_says_what_to_install_or_give() {
        let none = nothing_trusted(&[]);
        assert!(none.contains("it has none"), "{none}");
        assert!(none.contains("`root_certificate`"), "{none}");
        let unreadable = nothing_trusted(&["no such file".into(), "denied".into()]);
        assert!(
            unreadable.contains("(no such file; denied)"),
            "{unreadable}"
        );
    }

    #[test]
    fn debug_shows_sizes_not_bytes() {
        let ca = Certificate::from_pem(ca_pem().as_bytes()).expect("a certificate");
        let shown = format!("{:?}", Tls::default().with_root(ca.clone()));
        assert!(
            shown.contains(&format!("der_bytes: {}", ca.der.len())),
            "{shown}"
        );
        assert!(!shown.contains("48, 130"), "no DER dumped: {shown}");
    }

    #[test]
    fn an_added_root_is_trusted_besides_the_platforms() {
        let ca = Certificate::from_pem(ca_pem().as_bytes()).expect("a certificate");
        let platform = Tls::default().roots();
        let tls = Tls::default().with_root(ca.clone());
        let roots = tls.roots();
        assert_eq!(roots.len(), platform.len() + 1);
        assert_eq!(roots.last(), Some(&ca.der));
        assert!(tls.rustls().is_ok(), "one root is enough to connect");
    }
}
