//! A chat, written as a wasmod module.
//!
//! Users connect and pick a name; they send messages; they keep drafts that only they can
//! read (a visibility filter); views show a user their own messages and everyone the recent
//! ones; an HTTP handler reports statistics; a procedure fetches a
//! message of the day over HTTP and posts it.

use wasmod::prelude::*;

/// The most messages the `recent` view returns.
pub const RECENT: usize = 50;

/// The chat module: its tables and entry points.
#[wasmod::module]
pub mod chat {
    use super::*;

    /// A message someone sent.
    #[table(public)]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Message {
        #[primary_key]
        #[auto_inc]
        /// Assigned by the table's sequence.
        pub id: u64,
        #[index(btree)]
        /// Who sent it.
        pub sender: Identity,
        /// When it was sent.
        pub sent: Timestamp,
        /// What it says.
        pub text: String,
    }

    /// A user: who they are, the name they chose, and whether they are connected.
    #[table(public)]
    #[derive(Clone, Debug, PartialEq)]
    pub struct User {
        #[primary_key]
        /// Who the user is.
        pub identity: Identity,
        #[unique]
        /// The name shown beside their messages.
        pub name: String,
        /// Whether they are connected now.
        pub online: bool,
    }

    /// Settings of the chat itself, written once by `init`.
    #[table]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Config {
        #[primary_key]
        /// The setting's name.
        pub key: String,
        /// Its value.
        pub value: String,
    }

    /// A message a user is still writing. Clients read only their own drafts: the table's
    /// visibility filter shows a client the rows whose `owner` is its identity, in every read
    /// (subscriptions, one-off queries, `GET /v1/tables/draft`).
    #[table(public, visibility = "owner = :sender")]
    #[derive(Clone, Debug, PartialEq)]
    pub struct Draft {
        #[primary_key]
        #[auto_inc]
        /// Assigned by the table's sequence.
        pub id: u64,
        #[index(btree)]
        /// Who may read it and work on it.
        pub owner: Identity,
        /// What it says so far.
        pub text: String,
    }

    #[reducer(init)]
    fn init(ctx: &ReducerContext) {
        ctx.db.config().insert(Config {
            key: "motd_url".into(),
            value: String::new(),
        });
        wasmod::info!("chat initialised");
    }

    #[reducer(client_connected)]
    fn connected(ctx: &ReducerContext) {
        let users = ctx.db.user();
        match users.identity().find(ctx.sender()) {
            Some(user) => {
                users.identity().update(User {
                    online: true,
                    ..user
                });
            }
            None => {
                let name = default_name(ctx.sender());
                users.insert(User {
                    identity: ctx.sender(),
                    name,
                    online: true,
                });
            }
        }
    }

    #[reducer(client_disconnected)]
    fn disconnected(ctx: &ReducerContext) {
        if let Some(user) = ctx.db.user().identity().find(ctx.sender()) {
            ctx.db.user().identity().update(User {
                online: false,
                ..user
            });
        }
    }

    /// Chooses the caller's name.
    #[reducer]
    fn set_name(ctx: &ReducerContext, name: String) -> Result<(), String> {
        let name = validate_name(name)?;
        let users = ctx.db.user();
        let Some(user) = users.identity().find(ctx.sender()) else {
            return Err("connect before choosing a name".into());
        };
        if users
            .name()
            .find(&name)
            .is_some_and(|other| other.identity != user.identity)
        {
            return Err(format!("the name `{name}` is taken"));
        }
        users.identity().update(User { name, ..user });
        Ok(())
    }

    /// Sends a message.
    #[reducer]
    fn send(ctx: &ReducerContext, text: String) -> Result<(), String> {
        let text = validate_message(text)?;
        ctx.db.message().insert(Message {
            id: 0,
            sender: ctx.sender(),
            sent: ctx.timestamp(),
            text,
        });
        Ok(())
    }

    /// Starts a draft owned by the caller.
    #[reducer]
    fn save_draft(ctx: &ReducerContext, text: String) -> Result<(), String> {
        let text = validate_message(text)?;
        ctx.db.draft().insert(Draft {
            id: 0,
            owner: ctx.sender(),
            text,
        });
        Ok(())
    }

    /// Hands the caller's draft `id` to `to`, who then reads it instead of the caller.
    #[reducer]
    fn hand_draft(ctx: &ReducerContext, id: u64, to: Identity) -> Result<(), String> {
        let drafts = ctx.db.draft();
        match drafts.id().find(id) {
            Some(draft) if draft.owner == ctx.sender() => {
                drafts.id().update(Draft { owner: to, ..draft });
                Ok(())
            }
            _ => Err(format!("you have no draft {id}")),
        }
    }

    /// Fetches the message of the day from the configured URL and posts it.
    #[procedure]
    fn fetch_motd(ctx: &mut ProcedureContext, url: String) -> Result<String, String> {
        let response = ctx.http_get(&url).map_err(|error| error.to_string())?;
        if response.status != 200 {
            return Err(format!("{url} answered {}", response.status));
        }
        let text =
            String::from_utf8(response.body).map_err(|_| "the body is not UTF-8".to_string())?;
        let text = validate_message(text)?;
        let sender = ctx.sender();
        ctx.with_tx(|tx| {
            tx.db.message().insert(Message {
                id: 0,
                sender,
                sent: tx.timestamp(),
                text: text.clone(),
            })
        });
        Ok(text)
    }

    /// The caller's own messages.
    #[view]
    fn my_messages(ctx: &ViewContext) -> Vec<Message> {
        ctx.db.message().sender().filter(ctx.sender()).collect()
    }

    /// The most recent messages, oldest first.
    #[view]
    fn recent(ctx: &AnonymousViewContext) -> Vec<Message> {
        let mut messages: Vec<Message> = ctx.db.message().iter().collect();
        messages.sort_by_key(|message| message.id);
        let skip = messages.len().saturating_sub(RECENT);
        messages.split_off(skip)
    }

    /// Counts of users and messages, as JSON.
    #[http_handler(GET, "/stats")]
    fn stats(ctx: &mut HttpContext, _request: Request) -> Response {
        let (users, online, messages) = ctx.with_read_tx(|tx| {
            let online = tx.db.user().iter().filter(|user| user.online).count();
            (tx.db.user().count(), online, tx.db.message().count())
        });
        let body = format!("{{\"users\":{users},\"online\":{online},\"messages\":{messages}}}");
        Response::new(200)
            .with_header("content-type", "application/json")
            .with_body(body)
    }

    /// Posts a message given as the request body.
    #[http_handler(POST, "/messages")]
    fn post_message(ctx: &mut HttpContext, request: Request) -> Result<Response, String> {
        let text =
            String::from_utf8(request.body).map_err(|_| "the body is not UTF-8".to_string())?;
        let text = match validate_message(text) {
            Ok(text) => text,
            Err(error) => return Ok(Response::new(400).with_body(error)),
        };
        let id = ctx.with_tx(|tx| {
            tx.db
                .message()
                .insert(Message {
                    id: 0,
                    sender: Identity::ZERO,
                    sent: tx.timestamp(),
                    text,
                })
                .id
        });
        Ok(Response::new(201)
            .with_header("content-type", "application/json")
            .with_body(format!("{{\"id\":{id}}}")))
    }

    /// The text of message `id`: `GET /v1/http/messages/1`.
    #[http_handler(GET, "/messages/{id}")]
    fn message_text(ctx: &mut HttpContext, _request: Request) -> Response {
        let Some(id) = ctx.param("id").and_then(|id| id.parse::<u64>().ok()) else {
            return Response::new(400).with_body("a message id is a number");
        };
        match ctx.with_read_tx(|tx| tx.db.message().id().find(id)) {
            Some(message) => Response::text(message.text),
            None => Response::new(404).with_body(format!("no message {id}")),
        }
    }
}

/// The name a user gets before choosing one: `user-` and the first bytes of their identity.
pub fn default_name(identity: Identity) -> String {
    format!("user-{}", &identity.to_hex()[..8])
}

/// A name is 1 to 32 characters, not all spaces.
pub fn validate_name(name: String) -> Result<String, String> {
    let trimmed = name.trim();
    match trimmed.chars().count() {
        0 => Err("a name cannot be empty".into()),
        1..=32 => Ok(trimmed.to_owned()),
        _ => Err("a name has at most 32 characters".into()),
    }
}

/// A message is 1 to 1000 characters, not all spaces.
pub fn validate_message(text: String) -> Result<String, String> {
    match text.trim().chars().count() {
        0 => Err("a message cannot be empty".into()),
        1..=1000 => Ok(text),
        _ => Err("a message has at most 1000 characters".into()),
    }
}
