// The quickstart's chat in the browser, over wasmod's browser client (pkg/, built by
// client/web/build.sh): sign in with the token kept in localStorage (a new identity the first
// time), subscribe to the messages and the users, and keep the page in step with the row
// callbacks. Served with the module: `wasmod serve examples/quickstart --web examples/quickstart/web`.
import init, { WasmodClient } from "./pkg/wasmod_client_web.js";

const TOKEN = "wasmod.quickstart.token";
const $ = (id) => document.getElementById(id);

const users = new Map(); // identity (hex) -> user row
const messages = new Map(); // id -> message row

function nameOf(identity) {
  return users.get(identity)?.name ?? identity.slice(0, 8);
}

function renderMessages() {
  const list = $("messages");
  list.replaceChildren(
    ...[...messages.values()]
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((message) => {
        const item = document.createElement("li");
        const time = document.createElement("span");
        time.className = "time";
        time.textContent = new Date(Number(message.sent) / 1000).toLocaleTimeString();
        const sender = document.createElement("span");
        sender.className = "sender";
        sender.textContent = nameOf(message.sender);
        const text = document.createElement("span");
        text.className = "text";
        text.textContent = message.text;
        item.append(time, sender, text);
        return item;
      }),
  );
  list.scrollTop = list.scrollHeight;
}

function renderUsers() {
  const sorted = [...users.values()].sort((a, b) => a.name.localeCompare(b.name));
  const items = (online) =>
    sorted
      .filter((user) => user.online === online)
      .map((user) => {
        const item = document.createElement("li");
        item.textContent = user.name;
        return item;
      });
  $("online").replaceChildren(...items(true));
  $("away").replaceChildren(...items(false));
  renderMessages();
}

function showError(error) {
  $("error").textContent = error ? String(error.message ?? error) : "";
}

async function main() {
  await init();
  // `?compression=gzip`: large messages come compressed, inflated by the browser (the build
  // reads no brotli).
  const compression = new URLSearchParams(location.search).get("compression");
  const client = await WasmodClient.connect(location.origin, localStorage.getItem(TOKEN), compression);
  localStorage.setItem(TOKEN, client.token);
  $("identity").textContent = client.identity;
  // The status line follows the socket: "reconnecting" while the server is away.
  client.onConnectionState((state) => {
    $("status").textContent = state;
  });

  client.onInsert("user", (user) => {
    users.set(user.identity, user);
    renderUsers();
  });
  client.onUpdate("user", (_old, user) => {
    users.set(user.identity, user);
    renderUsers();
    if (user.identity === client.identity && document.activeElement !== $("name")) {
      $("name").value = user.name;
    }
  });
  client.onDelete("user", (user) => {
    users.delete(user.identity);
    renderUsers();
  });
  client.onInsert("message", (message) => {
    messages.set(message.id, message);
    renderMessages();
  });
  client.onDelete("message", (message) => {
    messages.delete(message.id);
    renderMessages();
  });

  client.subscribe(
    ["SELECT * FROM user", "SELECT * FROM message"],
    () => {
      $("status").textContent = "connected";
      document.body.dataset.ready = "true";
      $("name").value = users.get(client.identity)?.name ?? "";
    },
    (message) => showError(message),
  );

  $("send").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("text").value;
    try {
      await client.callReducer("send", [text]);
      $("text").value = "";
      showError(null);
    } catch (error) {
      showError(error);
    }
  });
  $("rename").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await client.callReducer("set_name", [$("name").value]);
      showError(null);
    } catch (error) {
      showError(error);
    }
  });
}

main().catch((error) => {
  $("status").textContent = "not connected";
  showError(error);
});
