/**
 * The package against a real `wasmod serve` of the quickstart, in Node 20 (which has no global
 * WebSocket: the Node entry uses the `ws` package): connect, subscribe, call reducers and see
 * their rows arrive in the cache and the callbacks, a second client's rows arriving too,
 * errors that say what went wrong, and a reconnection that resumes the query set after the
 * server restarts on the same port and data.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, type ConnectionState } from "../dist/node.js";
import { Server, freePort, tempDir, until } from "./support/server.js";
import type { Chat, Message } from "./support/chat.js";


const QUERIES = ["SELECT * FROM message", "SELECT * FROM user"];

describe("a client in Node against wasmod serve", () => {
  const data = tempDir();
  let port: number;
  let server: Server;
  const clients: Client<Chat>[] = [];

  async function connect(token?: string): Promise<Client<Chat>> {
    const client = await Client.connect<Chat>(server.url, { token });
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    port = await freePort();
    server = await Server.start({ port, data: data.path });
  });

  afterAll(async () => {
    for (const client of clients) {
      await client.disconnect();
    }
    await server?.stop();
    data.remove();
  });

  it("connects as a new identity, with a token to come back as it", async () => {
    const client = await connect();
    expect(client.identity).toMatch(/^[0-9a-f]{64}$/);
    expect(client.token.length).toBeGreaterThan(0);
    expect(client.connectionState).toBe("connected");
    const again = await connect(client.token);
    expect(again.identity).toBe(client.identity);
  });

  it("subscribes, calls a reducer, and sees its row in the cache and the callback", async () => {
    const client = await connect();
    await client.subscribed(QUERIES);
    const me = client.rows("user").find((user) => user.identity === client.identity);
    expect(me?.online).toBe(true);

    const inserted: Message[] = [];
    client.onInsert("message", (row) => inserted.push(row));
    const offset = await client.callReducer("send", ["hello from node"]);
    expect(typeof offset).toBe("number");
    // The call resolves once its changes are in the cache, callbacks run.
    const mine = inserted.filter((row) => row.sender === client.identity);
    expect(mine.map((row) => row.text)).toEqual(["hello from node"]);
    expect(client.rows("message").some((row) => row.text === "hello from node")).toBe(true);

    // Arguments by name work too.
    await client.callReducer("set_name", { name: "node-alice" });
    const renamed = client.rows("user").find((user) => user.identity === client.identity);
    expect(renamed?.name).toBe("node-alice");
  });

  it("sees another client's rows arrive", async () => {
    const [alice, bob] = [await connect(), await connect()];
    await Promise.all([alice.subscribed(QUERIES), bob.subscribed(QUERIES)]);
    const seen: Message[] = [];
    alice.onInsert("message", (row) => seen.push(row));
    await bob.callReducer("send", ["hi alice, from bob"]);
    await until("bob's message at alice's", () =>
      seen.some((row) => row.sender === bob.identity && row.text === "hi alice, from bob"),
    );
  });

  it("reads a write made over HTTP once caught up to its offset", async () => {
    const client = await connect();
    await client.subscribed(QUERIES);
    const answer = await fetch(`${server.url}/v1/reducers/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${client.token}`, "content-type": "application/json" },
      body: JSON.stringify(["written over http"]),
    });
    expect(answer.status).toBe(200);
    const { offset, status } = (await answer.json()) as { offset: number; status: string };
    expect(status).toBe("committed");
    await client.caughtUp(offset);
    expect(client.rows("message").some((row) => row.text === "written over http")).toBe(true);

    const handled = await fetch(`${server.url}/v1/http/messages`, { method: "POST", body: "from a handler" });
    expect(handled.status).toBe(201);
    const header = handled.headers.get("x-wasmod-offset");
    expect(header).toMatch(/^[0-9]+$/);
    await client.caughtUp(Number(header));
    expect(client.rows("message").some((row) => row.text === "from a handler")).toBe(true);
    await expect(client.caughtUp(-1)).rejects.toThrow(/whole number/);
  });

  it("rejects a failed call with the reducer's error, and an unknown reducer by name", async () => {
    const client = await connect();
    await expect(client.callReducer("send", [""])).rejects.toThrow(/cannot be empty/);
    await expect(client.callReducer("sned", ["x"])).rejects.toThrow(/sned/);
    expect(() => client.rows("mesage" as "message")).toThrow(/mesage/);
  });

  it("refuses a query the server refuses, with its message", async () => {
    const client = await connect();
    await expect(client.subscribed(["SELECT * FROM nowhere"])).rejects.toThrow(/nowhere/);
  });

  it("calls a view and returns its rows", async () => {
    const client = await connect();
    await client.callReducer("send", ["a message of mine"]);
    const mine = await client.callView<Message[]>("my_messages");
    expect(mine.map((row) => row.text)).toEqual(["a message of mine"]);
  });

  it("reconnects by itself after the server restarts, resuming its query set", async () => {
    const [watcher, writer] = [await connect(), await connect()];
    const [subscription] = await Promise.all([watcher.subscribed(QUERIES), writer.subscribed(QUERIES)]);
    expect(subscription.resumed).toBe(false);
    const states: ConnectionState[] = [];
    watcher.onConnectionState((state) => states.push(state));
    // Read inside the callback, as React's useSyncExternalStore does: it used to abort the wasm.
    const read: ConnectionState[] = [];
    watcher.onConnectionState(() => read.push(watcher.connectionState));
    const seen: Message[] = [];
    watcher.onInsert("message", (row) => seen.push(row));
    const before = watcher.rows("message").length;

    await server.stop();
    await until("the watcher noticing", () => states.includes("reconnecting"));
    server = await Server.start({ port, data: data.path });
    await until("the watcher back", () => watcher.connectionState === "connected", 60_000);
    await until("the writer back", () => writer.connectionState === "connected", 60_000);

    // The server (with its commit log) sent only what changed, not every row again...
    await until("the query set resumed", () => subscription.resumed, 30_000);
    // ...and the rows from before the restart are still there...
    expect(watcher.rows("message").length).toBe(before);
    // ...and the query set is live again.
    await writer.callReducer("send", ["after the restart"]);
    await until("the message after the restart", () =>
      seen.some((row) => row.text === "after the restart"),
    );
    expect(states).toEqual(["reconnecting", "connected"]);
    expect(read).toEqual(["reconnecting", "connected"]);
  }, 200_000); // A server stopped and started again, and two clients back, on a loaded machine.

  it("reads gzip frames (inflated by Node's DecompressionStream), and refuses to ask for brotli", async () => {
    const [reader, writer] = [await Client.connect<Chat>(server.url, { compression: "gzip" }), await connect()];
    clients.push(reader);
    await reader.subscribed(QUERIES);
    // A frame that did not inflate would drop the connection (and the row would come back
    // through the resumed query set): the reader must stay connected throughout.
    const states: ConnectionState[] = [];
    reader.onConnectionState((state) => states.push(state));
    // Its update is over 1 KiB (the text 987 characters, the most is 1000): the server
    // compresses it for the reader (a repetitive text: gzip gains).
    const long = "compressed with gzip ".repeat(47);
    await writer.callReducer("send", [long]);
    await until("the long message", () => reader.rows("message").some((row) => row.text === long));
    expect(states).toEqual([]);
    const brotli = Client.connect(server.url, { compression: "brotli" as never });
    await expect(brotli).rejects.toThrow(/built without brotli decoding.*ask for gzip or no compression/);
  });

  it("rejects a connection to a server that is not there, saying where", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    await expect(Client.connect(nowhere)).rejects.toThrow(/127\.0\.0\.1/);
  });
});
