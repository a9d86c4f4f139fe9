//! Members who sign in with one OpenID Connect provider, written as a wasmod module.
//!
//! The server verifies each client's token and hands its claims to the module, which reads
//! them with `ctx.claims()`. Here `client_connected` admits only the users of the one issuer
//! the operator chose, and refuses the rest with a message that says why: callers without
//! claims (a token of the server's own), and users of any other issuer (the server may accept
//! several). An admitted user becomes a member, under the name their token gives.
//!
//! The issuer is a setting, not a constant, so that one build serves any provider: the
//! operator sets it with the `configure` reducer, which only the host's own identity may call
//! (see the README for why, and how).

use wasmod::prelude::*;

/// The members module: its tables and entry points.
#[wasmod::module]
pub mod members {
    use super::*;

    /// The module's settings: the admitted issuer, under [`ISSUER`].
    #[table]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Setting {
        #[primary_key]
        /// The setting's name.
        pub key: String,
        /// Its value.
        pub value: String,
    }

    /// Someone the identity provider vouched for, who connected at least once.
    #[table(public)]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Member {
        #[primary_key]
        /// Who they are to wasmod (derived from their issuer and subject).
        pub identity: Identity,
        /// Their id at the issuer (the token's `sub`).
        pub subject: String,
        /// The name their token gives (`name`, else `preferred_username`, else the subject),
        /// as of their last connection.
        pub name: String,
        /// Whether they are connected now.
        pub online: bool,
    }

    /// Sets the issuer whose users are admitted (`https://accounts.example.com`, exactly as
    /// its tokens' `iss`). Only the host's own identity may call it: the operator, with
    /// `wasmod call` over the server's data directory (README).
    #[reducer]
    fn configure(ctx: &ReducerContext, issuer: String) -> Result<(), String> {
        if !is_host(ctx) {
            return Err("only the operator configures the identity provider".into());
        }
        if issuer.is_empty() {
            return Err(
                "the issuer is empty: give the provider's URL, as its tokens' `iss`".into(),
            );
        }
        let settings = ctx.db.setting();
        settings.key().delete(ISSUER);
        settings.insert(Setting {
            key: ISSUER.into(),
            value: issuer,
        });
        Ok(())
    }

    /// Admits the users of the configured issuer, and makes them members under the name their
    /// token gives; refuses everyone else, saying why.
    #[reducer(client_connected)]
    fn connected(ctx: &ReducerContext) -> Result<(), String> {
        if is_host(ctx) {
            return Ok(());
        }
        let issuer = ctx
            .db
            .setting()
            .key()
            .find(ISSUER)
            .ok_or("this server has no identity provider configured yet: try again later")?
            .value;
        let claims = ctx
            .claims()
            .ok_or_else(|| format!("sign in with {issuer} to join"))?;
        if claims.issuer() != issuer {
            return Err(format!(
                "sign in with {issuer} to join: tokens of {} are not accepted here",
                claims.issuer()
            ));
        }
        let members = ctx.db.member();
        members.identity().delete(ctx.sender());
        members.insert(Member {
            identity: ctx.sender(),
            subject: claims.subject().to_owned(),
            name: display_name(&claims).to_owned(),
            online: true,
        });
        Ok(())
    }

    /// Marks a member offline.
    #[reducer(client_disconnected)]
    fn disconnected(ctx: &ReducerContext) {
        let members = ctx.db.member();
        if let Some(mut member) = members.identity().find(ctx.sender()) {
            member.online = false;
            members.identity().update(member);
        }
    }

    /// The caller's membership, if they are a member.
    #[view]
    fn me(ctx: &ViewContext) -> Option<Member> {
        ctx.db.member().identity().find(ctx.sender())
    }

    /// The name the caller's token gives, as `client_connected` would keep it; `None` for a
    /// caller without claims. A view runs when called, with the claims of that call's token
    /// (over a socket, the token the connection was opened with).
    #[view]
    fn whoami(ctx: &ViewContext) -> Option<String> {
        ctx.claims().map(|claims| display_name(&claims).to_owned())
    }

    /// `GET /v1/http/hello` with `Authorization: Bearer <token>`: a greeting by the name the
    /// token gives, for a token of the configured issuer; `401` otherwise. A handler has no
    /// identity, but it has the claims of the request's verified token.
    #[http_handler(GET, "/hello")]
    fn hello(ctx: &mut HttpContext, _request: Request) -> Response {
        let issuer = ctx.with_read_tx(|tx| tx.db.setting().key().find(ISSUER));
        let claims = ctx.claims();
        match (issuer, claims) {
            (Some(issuer), Some(claims)) if claims.issuer() == issuer.value => {
                Response::text(format!("hello, {}", display_name(&claims)))
            }
            _ => Response::new(401).with_body(b"sign in with the configured issuer".to_vec()),
        }
    }

    /// The name the claims give: `name`, else `preferred_username`, else the subject.
    fn display_name(claims: &Claims) -> &str {
        ["name", "preferred_username"]
            .into_iter()
            .find_map(|claim| claims.get_str(claim))
            .unwrap_or(claims.subject())
    }

    /// Whether the call is the host's own: its identity is zero, which no client's token can
    /// name (the server signs tokens for identities it drew at random, and an identity
    /// provider's are derived from its issuer and subject), and it has no connection.
    fn is_host(ctx: &ReducerContext) -> bool {
        ctx.sender() == Identity::ZERO && ctx.connection_id().is_none()
    }
}

/// The key of the admitted issuer in the `setting` table.
pub const ISSUER: &str = "issuer";
