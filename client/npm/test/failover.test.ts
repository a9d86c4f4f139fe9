/**
 * A client given several servers (a replicated deployment's nodes), in Node: it passes over a
 * standby (a fake one, which serves the module's description as a standby serves reads and
 * closes every socket with 4004) and a server that is not there, and when the server it is
 * connected to stops, it follows the deployment to the next server that takes it, a real
 * `wasmod serve` started on what the first had written (as a standby holds the replicated log),
 * where it resumes its query set: the offsets are the same. The deployment's failover over
 * real nodes is cli/tests/failover.rs's; the rotation and what is retried are tested in Rust
 * (client/tests/live/failover.rs).
 */

import { cpSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { Client, type ConnectionState } from "../dist/node.js";
import { Server, freePort, tempDir, until } from "./support/server.js";
import type { Chat, Message } from "./support/chat.js";

const QUERIES = ["SELECT * FROM message", "SELECT * FROM user"];

/**
 * A fake standby on a loopback port: `GET /v1/module` answers `primary`'s description, and a
 * WebSocket is accepted, then closed at once with 4004 (not the primary). Its URL, how many
 * sockets it refused, and how to stop it.
 */
async function fakeStandby(primary: string): Promise<{ url: string; refused: () => number; stop: () => Promise<void> }> {
  const description = await (await fetch(`${primary}/v1/module`)).text();
  const http: HttpServer = createServer((_, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(description);
  });
  let refused = 0;
  const sockets = new WebSocketServer({ server: http });
  sockets.on("connection", (socket) => {
    refused += 1;
    socket.close(4004, "this server is a standby");
  });
  const port = await freePort();
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    refused: () => refused,
    stop: () =>
      new Promise((resolve) => {
        sockets.close();
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

describe("a client of several servers", () => {
  const data = tempDir();
  const next = tempDir();
  let first: Server;
  let second: Server | undefined;
  let standby: Awaited<ReturnType<typeof fakeStandby>>;
  const clients: Client<Chat>[] = [];

  beforeAll(async () => {
    first = await Server.start({ data: data.path });
    standby = await fakeStandby(first.url);
  });

  afterAll(async () => {
    for (const client of clients) {
      await client.disconnect();
    }
    await first?.stop();
    await second?.stop();
    await standby?.stop();
    data.remove();
    next.remove();
  });

  it("connects to the first server that takes it, past a standby and a server not there", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const client = await Client.connect<Chat>([nowhere, standby.url, first.url]);
    clients.push(client);
    expect(standby.refused()).toBe(1);
    await client.callReducer("send", ["through the third"]);
    await expect(Client.connect([standby.url])).rejects.toThrow(/4004/);
    await expect(Client.connect([])).rejects.toThrow(/no server URL/);
  });

  it("follows a stopped server to the next that takes it, and resumes its query set there", async () => {
    const port = await freePort();
    const client = await Client.connect<Chat>([first.url, standby.url, `http://127.0.0.1:${port}`]);
    clients.push(client);
    const subscription = await client.subscribed(QUERIES);
    const seen: Message[] = [];
    client.onInsert("message", (row) => seen.push(row));
    await client.callReducer("send", ["before the failover"]);
    const states: ConnectionState[] = [];
    client.onConnectionState((state) => states.push(state));
    const refusedBefore = standby.refused();

    await first.stop();
    await until("the client noticing", () => states.includes("reconnecting"));
    cpSync(data.path, join(next.path, "data"), { recursive: true });
    second = await Server.start({ port, data: join(next.path, "data") });
    await until("the client on the next server", () => client.connectionState === "connected", 60_000);
    expect(standby.refused()).toBeGreaterThan(refusedBefore);
    await until("the query set resumed", () => subscription.resumed, 30_000);

    await client.callReducer("send", ["after the failover"]);
    await until("the message after the failover", () => seen.some((row) => row.text === "after the failover"));
    expect(seen.map((row) => row.text)).toEqual(["before the failover", "after the failover"]);
    expect(states).toEqual(["reconnecting", "connected"]);
  }, 200_000); // A server started on a loaded machine, and a client back.
});
