//! A terminal chat over the quickstart module: `quickstart-client [URL]` (default
//! `http://127.0.0.1:3000`). Each line typed is sent as a message; `/name NAME` chooses a
//! name. Messages and users coming and going are printed as the server reports them.

use quickstart_client::bindings::{DbConnection, Message, User};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::main]
async fn main() {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:3000".to_owned());
    if let Err(error) = chat(&url).await {
        eprintln!("quickstart-client: {error}");
        std::process::exit(1);
    }
}

/// Connects to `url`, prints the chat live and sends what is typed, until standard input ends.
async fn chat(url: &str) -> Result<(), wasmod_client::Error> {
    let connection = DbConnection::connect(url).await?;
    let (users, messages) = (connection.db().user(), connection.db().message());
    let names = users.clone();
    messages.on_insert(move |message: &Message| {
        let sender = names.find_by_identity(message.sender).ok().flatten();
        let sender =
            sender.map_or_else(|| message.sender.to_hex()[..8].to_owned(), |user| user.name);
        println!("{sender}: {}", message.text);
    });
    users.on_update(|old: &User, new: &User| match (old.online, new.online) {
        (false, true) => println!("* {} joined", new.name),
        (true, false) => println!("* {} left", new.name),
        _ if old.name != new.name => println!("* {} is now {}", old.name, new.name),
        _ => {}
    });
    users.on_insert(|user: &User| {
        if user.online {
            println!("* {} is here", user.name);
        }
    });
    let subscription = connection
        .client()
        .subscription()
        .subscribe(["SELECT * FROM user", "SELECT * FROM message"]);
    subscription.applied().await?;

    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let answer = match line.strip_prefix("/name ") {
            Some(name) => connection.reducers().set_name(name).await,
            None if line.trim().is_empty() => continue,
            None => connection.reducers().send(&line).await,
        };
        if let Err(error) = answer {
            eprintln!("! {error}");
        }
    }
    connection.client().disconnect().await;
    Ok(())
}
