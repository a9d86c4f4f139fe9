//! The harness against the real `oidc-provider`: discovery, sign-in through the authorization
//! code flow, the claims and the algorithm of the ID tokens, and a restart.

use std::time::{Duration, Instant, SystemTime};
use wasmod_oidc_provider::{jwt, Alg, Client, OidcProvider, Settings, User};

fn start(settings: Settings) -> OidcProvider {
    let started = Instant::now();
    let provider = OidcProvider::start(settings).unwrap_or_else(|err| panic!("{err}"));
    eprintln!("the provider started in {:?}", started.elapsed());
    provider
}

fn get_json(url: &str) -> serde_json::Value {
    let body = ureq::get(url)
        .call()
        .unwrap_or_else(|err| panic!("GET {url}: {err}"))
        .body_mut()
        .read_to_string()
        .unwrap_or_else(|err| panic!("GET {url}: {err}"));
    serde_json::from_str(&body).unwrap_or_else(|err| panic!("GET {url}: not JSON ({err}): {body}"))
}

#[test]
fn discovery_names_the_issuer_and_its_keys() {
    let provider = start(Settings::default());
    let issuer = provider.issuer();
    assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
    let document = get_json(&provider.discovery_url());
    assert_eq!(document["issuer"], issuer);
    assert_eq!(document["authorization_endpoint"], format!("{issuer}/auth"));
    assert!(document["code_challenge_methods_supported"]
        .as_array()
        .is_some_and(|methods| methods.iter().any(|method| method == "S256")));
    let algs: Vec<&str> = document["id_token_signing_alg_values_supported"]
        .as_array()
        .expect("the signing algorithms")
        .iter()
        .filter_map(|alg| alg.as_str())
        .collect();
    for alg in [Alg::Rs256, Alg::Es256, Alg::EdDsa] {
        assert!(algs.contains(&alg.name()), "{alg:?} not in {algs:?}");
    }
    let jwks = get_json(document["jwks_uri"].as_str().expect("jwks_uri"));
    let keys: Vec<(&str, &str)> = jwks["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .map(|key| (key["kid"].as_str().unwrap(), key["alg"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [("rs256", "RS256"), ("es256", "ES256"), ("eddsa", "EdDSA")]
    );
    assert!(
        jwks["keys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|key| key.get("d").is_none()),
        "the JWKS shows private keys: {jwks}"
    );
}

#[test]
fn a_sign_in_gives_an_id_token_of_the_user_for_the_client() {
    let provider = start(Settings::default());
    for client in ["app", "spa"] {
        let started = Instant::now();
        let tokens = provider
            .sign_in("alice", client)
            .unwrap_or_else(|err| panic!("{err}"));
        eprintln!("a sign-in as {client} took {:?}", started.elapsed());
        let claims = tokens.claims().unwrap();
        assert_eq!(claims["iss"], provider.issuer());
        assert_eq!(claims["sub"], "alice");
        assert_eq!(claims["aud"], client);
        assert_eq!(claims["name"], "Alice");
        assert_eq!(claims["email"], "alice@example.com");
        assert!(claims["nonce"].is_string(), "{claims}");
        assert_eq!(jwt::header(&tokens.id_token).unwrap()["alg"], "RS256");
        assert!(tokens.access_token.is_some());
        let ttl = tokens.expires_at.duration_since(SystemTime::now()).unwrap();
        assert!(
            ttl > Duration::from_secs(290) && ttl <= Duration::from_secs(300),
            "{ttl:?}"
        );
    }

    let bob = provider.sign_in("bob", "app").unwrap().claims().unwrap();
    assert_eq!(bob["sub"], "bob");
    assert_eq!(bob["name"], "Bob");

    let stranger = provider.sign_in("mallory", "app").unwrap_err().to_string();
    assert!(stranger.contains("refused user `mallory`"), "{stranger}");
    let unknown = provider.sign_in("alice", "nobody").unwrap_err().to_string();
    assert!(unknown.contains("no client `nobody`"), "{unknown}");
}

#[test]
fn clients_get_id_tokens_signed_with_their_algorithm_and_lifetime() {
    let mut settings = Settings {
        users: vec![User::new("carol", "Carol")],
        id_token_ttl: Duration::from_secs(3),
        ..Settings::default()
    };
    settings
        .clients
        .push(Client::confidential("es", "es-secret").signed_with(Alg::Es256));
    settings
        .clients
        .push(Client::public("ed", "http://127.0.0.1:5173/").signed_with(Alg::EdDsa));
    let provider = start(settings);
    for (client, alg, kid) in [
        ("app", "RS256", "rs256"),
        ("es", "ES256", "es256"),
        ("ed", "EdDSA", "eddsa"),
    ] {
        let tokens = provider
            .sign_in("carol", client)
            .unwrap_or_else(|err| panic!("{err}"));
        let header = jwt::header(&tokens.id_token).unwrap();
        assert_eq!(header["alg"], alg, "{client}");
        assert_eq!(header["kid"], kid, "{client}");
        let claims = tokens.claims().unwrap();
        assert_eq!(claims["aud"], client);
        let lifetime = claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap();
        assert_eq!(lifetime, 3);
    }
}

#[test]
fn a_restarted_provider_keeps_its_issuer_and_keys() {
    let mut provider = start(Settings::default());
    let issuer = provider.issuer().to_owned();
    let jwks = get_json(&format!("{issuer}/jwks"));
    assert!(provider.is_running());

    provider.kill();
    assert!(!provider.is_running());
    assert!(ureq::get(&provider.discovery_url()).call().is_err());
    assert!(provider.sign_in("alice", "app").is_err());

    let started = Instant::now();
    provider.restart().unwrap_or_else(|err| panic!("{err}"));
    eprintln!("the provider restarted in {:?}", started.elapsed());
    assert!(provider.is_running());
    assert_eq!(provider.issuer(), issuer);
    assert_eq!(get_json(&format!("{issuer}/jwks")), jwks);
    assert_eq!(
        provider.sign_in("alice", "app").unwrap().claims().unwrap()["iss"],
        issuer
    );
    assert!(
        provider.log().contains(&format!("listening {issuer}")),
        "{}",
        provider.log()
    );
}

#[test]
fn settings_the_provider_refuses_fail_the_start_with_its_log() {
    let mut settings = Settings::default();
    settings
        .clients
        .push(Client::public("broken", "not a redirect uri"));
    let error = OidcProvider::start(settings).unwrap_err().to_string();
    assert!(error.contains("ended before it listened"), "{error}");
    assert!(
        error.contains("redirect_uris"),
        "the provider's own reason: {error}"
    );
}
