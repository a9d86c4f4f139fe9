/**
 * Token providers (`Client.connect(url, { token: provider })`) against a real `wasmod serve`
 * of the quickstart that accepts an OpenID Connect issuer's ID tokens (`--oidc-issuer`): the
 * provider's token is the subject's identity, the provider is called again when the server
 * refuses its token as expired (at the first connection and at a reconnection after the
 * server restarted), and a provider that fails says why.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, type ConnectionState } from "../dist/node.js";
import { Issuer, oidcIdentity } from "./support/issuer.js";
import { Server, freePort, tempDir, until } from "./support/server.js";
import type { Chat } from "./support/chat.js";

/** The audience (client id) the server accepts the issuer's tokens for. */
const AUDIENCE = "spa";

/**
 * How far past its `exp` the server still accepts a token: `OidcSettings::leeway`'s default,
 * which `wasmod serve` keeps. A token whose `exp` is this far in the past, plus a few seconds,
 * is good for those few seconds only.
 */
const LEEWAY_S = 30;

describe("a client with a token provider", () => {
  const data = tempDir();
  let issuer: Issuer;
  let port: number;
  let server: Server;
  const clients: Client<Chat>[] = [];

  const now = () => Math.floor(Date.now() / 1000);
  const serve = async () => {
    server = await Server.start({
      port,
      data: data.path,
      args: ["--oidc-issuer", `${issuer.url}=${AUDIENCE}`, "--oidc-allow-http-loopback"],
    });
  };

  beforeAll(async () => {
    issuer = await Issuer.start();
    port = await freePort();
    await serve();
  });

  afterAll(async () => {
    for (const client of clients) {
      await client.disconnect();
    }
    await server?.stop();
    await issuer?.stop();
    data.remove();
  });

  it("connects as the subject of the provider's token, which may come as a Promise", async () => {
    const token = issuer.token({ sub: "alice", aud: AUDIENCE, exp: now() + 3600 });
    const client = await Client.connect<Chat>(server.url, { token: async () => token });
    clients.push(client);
    expect(client.identity).toBe(oidcIdentity(issuer.url, "alice"));
    // The server's greeting echoes the token it was given, not one of its own.
    expect(client.token).toBe(token);
    // A plain function, and another token of the same subject: the same identity.
    const again = await Client.connect<Chat>(server.url, {
      token: () => issuer.token({ sub: "alice", aud: AUDIENCE, exp: now() + 3600 }),
    });
    clients.push(again);
    expect(again.identity).toBe(client.identity);
  });

  it("asks the provider again when the server refuses its token as expired, then and on a reconnection", async () => {
    const given: { exp: number }[] = [];
    const provider = async () => {
      // 1: expired (refused at the first connection); 2: good for 4 s (kept, then refused
      // at the reconnection); 3: good for an hour.
      const exp = [now() - LEEWAY_S - 60, now() - LEEWAY_S + 4, now() + 3600][given.length] ?? now() + 3600;
      given.push({ exp });
      return issuer.token({ sub: "bob", aud: AUDIENCE, exp });
    };
    const client = await Client.connect<Chat>(server.url, { token: provider });
    clients.push(client);
    expect(given.length).toBe(2);
    expect(client.identity).toBe(oidcIdentity(issuer.url, "bob"));
    await client.subscribed(["SELECT * FROM user"]);
    const states: ConnectionState[] = [];
    client.onConnectionState((state) => states.push(state));

    await server.stop();
    await until("the client noticing", () => states.includes("reconnecting"));
    // The second token expires while the server is down: the reconnection is refused with it.
    const expired = given[1]!.exp + LEEWAY_S + 1;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expired * 1000 - Date.now())));
    await serve();
    await until("the client back", () => client.connectionState === "connected", 60_000);

    expect(given.length).toBe(3);
    expect(states).toEqual(["reconnecting", "connected"]);
    expect(client.identity).toBe(oidcIdentity(issuer.url, "bob"));
    await client.callReducer("set_name", { name: "bob, signed in again" });
    const me = client.rows("user").find((user) => user.identity === client.identity);
    expect(me?.name).toBe("bob, signed in again");
  }, 120_000); // A server stopped and started again, and a token left to expire.

  it("fails the connection with what the provider threw, or when it gives no string", async () => {
    const signedOut = Client.connect(server.url, {
      token: () => {
        throw new Error("the user signed out");
      },
    });
    await expect(signedOut).rejects.toThrow("the token provider gave no token: the user signed out");
    const rejected = Client.connect(server.url, { token: () => Promise.reject(new Error("no session")) });
    await expect(rejected).rejects.toThrow("the token provider gave no token: no session");
    const notAString = Client.connect(server.url, { token: (() => 42) as unknown as () => string });
    await expect(notAString).rejects.toThrow(
      "the token provider gave no token: it returned something other than a string",
    );
  });

  it("is refused with the server's reason for a token that is not the issuer's", async () => {
    const forged = issuer.token({ sub: "mallory", aud: "another-app", exp: now() + 3600 });
    await expect(Client.connect(server.url, { token: () => forged })).rejects.toThrow(/invalid_token|audience/);
  });
});
