/**
 * The chat: the messages (oldest first, with their senders' names), a box to send one, the
 * user's name to change, and who is online and away. Every list is a `useTable` over the
 * client cache, so the page re-renders when the server's changes arrive, whoever made them;
 * calls go through the generated bindings (`db.reducers.send({ text })`), and their errors (a
 * reducer's `Err`) are shown.
 */

import { useMemo, useState, type FormEvent } from "react";
import { useCall, useSubscription } from "@wasmod/client/react";
import { DbConnection, QUERIES, useConnection, useTable, type Message, type User } from "./chat.ts";

export function App() {
  const { client, status, error } = useConnection();
  const { applied, error: refused } = useSubscription(QUERIES);
  const db = useMemo(() => (client === undefined ? undefined : new DbConnection(client)), [client]);
  const users = useTable("user");
  const names = useMemo(() => new Map(users.map((user) => [user.identity, user.name])), [users]);

  const [send, sending] = useCall((text: string) => db!.reducers.send({ text }));
  const [rename, renaming] = useCall((name: string) => db!.reducers.setName({ name }));
  const failure = error?.message ?? refused ?? sending.error?.message ?? renaming.error?.message;

  return (
    <>
      <header>
        <h1>wasmod chat</h1>
        <p id="status">{applied ? status : status === "connected" ? "subscribing" : status}</p>
      </header>
      <main>
        <section id="conversation">
          <Messages names={names} />
          <SendBox disabled={!applied} send={send} />
        </section>
        <aside>
          {client !== undefined && (
            <NameForm key={client.identity} me={users.find((user) => user.identity === client.identity)} rename={rename} />
          )}
          <People users={users} />
          <p id="error" role="alert">
            {failure ?? ""}
          </p>
          <p className="small">
            You are <code id="identity">{client?.identity ?? "…"}</code>
          </p>
        </aside>
      </main>
    </>
  );
}

/** The messages, oldest first. */
function Messages({ names }: { names: Map<string, string> }) {
  const messages = useTable("message");
  const sorted = useMemo(() => [...messages].sort((a, b) => Number(a.id) - Number(b.id)), [messages]);
  return (
    <ol id="messages">
      {sorted.map((message) => (
        <MessageItem key={String(message.id)} message={message} sender={names.get(message.sender)} />
      ))}
    </ol>
  );
}

function MessageItem({ message, sender }: { message: Message; sender: string | undefined }) {
  // Timestamps are microseconds since the Unix epoch (the JSON mapping: a number up to 2^53 - 1).
  const time = new Date(Number(message.sent) / 1000).toLocaleTimeString();
  return (
    <li>
      <span className="time">{time}</span>
      <span className="sender">{sender ?? message.sender.slice(0, 8)}</span>
      <span className="text">{message.text}</span>
    </li>
  );
}

/** The box to send a message: cleared once the server has it. */
function SendBox({ disabled, send }: { disabled: boolean; send: (text: string) => Promise<number | undefined> }) {
  const [text, setText] = useState("");
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if ((await send(text)) !== undefined) setText("");
  };
  return (
    <form id="send" onSubmit={submit}>
      <input
        id="text"
        autoComplete="off"
        placeholder="Say something"
        maxLength={1000}
        required
        value={text}
        onChange={(event) => setText(event.target.value)}
      />
      <button disabled={disabled}>Send</button>
    </form>
  );
}

/** The user's name: the server's until edited. */
function NameForm({ me, rename }: { me: User | undefined; rename: (name: string) => Promise<number | undefined> }) {
  const [edited, setEdited] = useState<string | undefined>(undefined);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (edited !== undefined && (await rename(edited)) !== undefined) setEdited(undefined);
  };
  return (
    <form id="rename" onSubmit={submit}>
      <label htmlFor="name">Your name</label>
      <input
        id="name"
        autoComplete="off"
        maxLength={32}
        required
        value={edited ?? me?.name ?? ""}
        onChange={(event) => setEdited(event.target.value)}
      />
      <button disabled={me === undefined}>Set</button>
    </form>
  );
}

/** Who is online and who is away, by name. */
function People({ users }: { users: User[] }) {
  const sorted = useMemo(() => [...users].sort((a, b) => a.name.localeCompare(b.name)), [users]);
  const list = (online: boolean) =>
    sorted.filter((user) => user.online === online).map((user) => <li key={user.identity}>{user.name}</li>);
  return (
    <>
      <h2>Online</h2>
      <ul id="online">{list(true)}</ul>
      <h2>Away</h2>
      <ul id="away">{list(false)}</ul>
    </>
  );
}
