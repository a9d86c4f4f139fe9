//! The module's description (`GET /v1/module`), as the client reads it from the server it
//! connects to: the browser client before connecting (its rows and calls are converted
//! through it), and either client after a new build ended a query set (`new_build`).

use crate::platform;
use wasmod_protocol::description::ModuleDescription;

/// The description of the module served at `url` (a base URL or a subscribe endpoint), or
/// why it could not be read; over `https://` trusting `tls`.
pub(crate) async fn fetch(url: &str, tls: &platform::Tls) -> Result<ModuleDescription, String> {
    let address = description_url(url);
    let text = platform::http_get(&address, tls).await?;
    ModuleDescription::from_json(&text)
        .map_err(|error| format!("{address} is not a module's description: {error}"))
}

/// The module's description (`GET /v1/module`) of the server at `url`: a base URL or a
/// subscribe endpoint as `socket::subscribe_url` takes or makes them (its query dropped), over
/// `http(s)://`.
pub(crate) fn description_url(url: &str) -> String {
    let url = url.split_once('?').map_or(url, |(url, _)| url);
    let url = url.trim_end_matches('/');
    let url = url.strip_suffix("/v1/subscribe").unwrap_or(url);
    let base = if let Some(rest) = url.strip_prefix("ws://") {
        format!("http://{rest}")
    } else if let Some(rest) = url.strip_prefix("wss://") {
        format!("https://{rest}")
    } else {
        url.to_owned()
    };
    format!("{base}/v1/module")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_is_beside_the_subscribe_endpoint() {
        for url in [
            "http://h:1",
            "http://h:1/",
            "ws://h:1",
            "ws://h:1/v1/subscribe",
            "ws://h:1/v1/subscribe?compression=gzip",
        ] {
            assert_eq!(description_url(url), "http://h:1/v1/module", "{url}");
        }
        assert_eq!(
            description_url("wss://example.org/v1/subscribe"),
            "https://example.org/v1/module"
        );
    }
}
